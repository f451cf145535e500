package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/labrun/labrun/internal/boundary/cluster"
	"github.com/labrun/labrun/internal/heavy/kube"
)

// The Cilium agent, as the playbook's cilium steps address it.
var agent = cluster.PodTarget{Namespace: "kube-system", Pod: "ds/cilium", Container: "cilium-agent"}

// benchExec measures a command's round trip in the Cilium agent: labrun's
// in-process exec (package kube) against kubectl exec, for a single exec
// and for repeated commands to one container (Reuse: a shell session).
// Every labrun sample resolves ds/cilium to its pod first, as every
// cilium step of a playbook does; kubectl exec ds/cilium does the same.
func benchExec(ctx context.Context, b *bench) ([]Row, error) {
	c, err := kube.Connect(kube.ConnectOptions{Kubeconfig: b.kubeconfig})
	if err != nil {
		return nil, err
	}
	defer c.Close()
	s, err := sampleExec(ctx, b, c)
	if err != nil {
		return nil, err
	}
	return s.rows(), nil
}

// execSamples are benchExec's samples: one list per variant, their nth
// samples taken in the same turn, and how long the session took to open.
type execSamples struct {
	// through kube.Client.Exec: cilium-dbg status, true and cilium-dbg
	// --help, single execs or repeated through the session
	single, repeated, trueRepeated, trueSingle, helpRepeated []time.Duration
	// kubectl exec, a fresh labrun process, and resolving ds/cilium
	kubectlStatus, kubectlTrue, fresh, resolve []time.Duration
	sessionOpen                                time.Duration
}

// execInProcess runs one command as a playbook step does and times it.
// That Reuse runs it through a session is kube's e2e test's to prove.
func execInProcess(ctx context.Context, c *kube.Client, argv []string, reuse bool) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	start := time.Now()
	r, err := c.Exec(ctx, agent, cluster.ExecRequest{Argv: argv, Reuse: reuse})
	d := time.Since(start)
	if err != nil {
		return 0, err
	}
	if r.ExitCode != 0 {
		return 0, fmt.Errorf("%s exited with %d: %s", strings.Join(argv, " "), r.ExitCode, r.Stderr)
	}
	return d, nil
}

// sampleExec takes b.n samples of each variant through c, kubectl and a
// fresh labrun process.
func sampleExec(ctx context.Context, b *bench, c *kube.Client) (*execSamples, error) {
	status := []string{"cilium-dbg", "status"}
	// --help starts cilium-dbg and asks the agent nothing: the command's
	// own start, which status pays too.
	help := []string{"cilium-dbg", "--help"}
	kubectl := func(argv ...string) []string {
		return append([]string{b.kubectl, "--kubeconfig", b.kubeconfig, "-n", agent.Namespace, "exec", agent.Pod, "-c", agent.Container, "--"}, argv...)
	}
	inProcess := func(argv []string, reuse bool) (time.Duration, error) { return execInProcess(ctx, c, argv, reuse) }
	// One exec first, not measured: discovery, the TLS session, the
	// WebSocket dialer are set up once per labrun run. Then the session.
	if _, err := inProcess(status, false); err != nil {
		return nil, err
	}
	var s execSamples
	open := time.Now()
	if _, err := inProcess(status, true); err != nil {
		return nil, err
	}
	s.sessionOpen = time.Since(open)

	// A fresh labrun process running one cilium step, as a single
	// kubectl exec is a fresh process.
	oneStep := filepath.Join(b.work, "one-exec.yaml")
	if err := os.WriteFile(oneStep, []byte("name: one-exec\nsteps:\n  - id: status\n    cilium: {args: [status], separate: true}\n"), 0o644); err != nil {
		return nil, err
	}
	process := []string{b.labrun, "run", "--kubeconfig", b.kubeconfig, "--no-progress", oneStep}

	// The variants take turns, so that a change in the machine's load
	// falls on all of them.
	for range b.n {
		for _, m := range []struct {
			into *[]time.Duration
			run  func() (time.Duration, error)
		}{
			{&s.single, func() (time.Duration, error) { return inProcess(status, false) }},
			{&s.repeated, func() (time.Duration, error) { return inProcess(status, true) }},
			{&s.trueRepeated, func() (time.Duration, error) { return inProcess([]string{"true"}, true) }},
			{&s.trueSingle, func() (time.Duration, error) { return inProcess([]string{"true"}, false) }},
			{&s.helpRepeated, func() (time.Duration, error) { return inProcess(help, true) }},
			{&s.kubectlStatus, timeProc(ctx, kubectl(status...))},
			{&s.kubectlTrue, timeProc(ctx, kubectl("true"))},
			{&s.fresh, timeProc(ctx, process)},
			{&s.resolve, func() (time.Duration, error) {
				start := time.Now()
				_, err := c.ResolvePod(ctx, agent)
				return time.Since(start), err
			}},
		} {
			d, err := m.run()
			if err != nil {
				return nil, err
			}
			*m.into = append(*m.into, d)
		}
	}
	return &s, nil
}

// rows are benchExec's rows, with the notes that say what bounds each.
func (s *execSamples) rows() []Row {
	kStatus := durations("kubectl exec", "ms", s.kubectlStatus)
	med := func(ds []time.Duration) float64 { return durations("", "ms", ds).Median }
	// What the command costs in the agent, whoever starts it: through the
	// session, minus the session's transport (resolve included).
	command := med(s.repeated) - med(s.trueRepeated)
	start := med(s.helpRepeated) - med(s.trueRepeated)
	// No client can do better than the exec's own setup plus the command
	// (single), or the command alone (repeated).
	singleFloor := med(s.trueSingle) + command
	return []Row{
		compare("exec `cilium-dbg status`, single exec (in a lab run: open connection, no session)",
			durations("kube.Client.Exec", "ms", s.single), kStatus, 2).
			withNote("A new exec costs %s ms before the command runs (the single `true` row: pod lookup, then the API server, kubelet and container runtime start the process), "+
				"and `cilium-dbg status` itself about %s ms (next note): %s ms that any client looking the pod up as kubectl does pays, so none could be more than %.2fx faster than kubectl exec here.",
				fmtNum(med(s.trueSingle)), fmtNum(command), fmtNum(singleFloor), kStatus.Median/singleFloor),
		compare("exec `cilium-dbg status`, repeated to one container",
			durations("kube.Client.Exec, Reuse", "ms", s.repeated), kStatus, 10).
			withNote("The session (opened once, in %s ms here) runs each command through one shell in the container. "+
				"`cilium-dbg status` itself takes about %s ms in the agent (this row minus the transport row), and cilium-dbg's start-up alone about %s ms "+
				"(`cilium-dbg --help` through the session, which asks the agent nothing, minus the transport): the ratio for this command cannot exceed %.2fx whatever the transport.",
				fmtNum(ms(s.sessionOpen)), fmtNum(command), fmtNum(start), kStatus.Median/command),
		compare("exec `true`, repeated to one container (transport only)",
			durations("kube.Client.Exec, Reuse", "ms", s.trueRepeated), durations("kubectl exec", "ms", s.kubectlTrue), 10).
			withNote("Each labrun sample, in every exec row, includes resolving ds/cilium to its pod (a Get and a List, %s ms median here), as each cilium step of a playbook does.",
				fmtNum(med(s.resolve))),
		compare("exec `true`, single exec (transport and the exec's setup)",
			durations("kube.Client.Exec", "ms", s.trueSingle), durations("kubectl exec", "ms", s.kubectlTrue), 0),
		compare("exec `cilium-dbg status`, single exec from a fresh process",
			durations("labrun run, one cilium step", "ms", s.fresh), kStatus, 0).
			withNote("A one-step playbook (`cilium: {args: [status], separate: true}`) run by a new labrun process: process start, kubeconfig, pod lookup and exec, like one kubectl exec."),
	}
}
