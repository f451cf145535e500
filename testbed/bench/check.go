package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// benchCheck measures `labrun check playbooks/cca-datapath.yaml` on the
// files of a solve (labrun's, made once before, not measured) against
// testbed/bench/cca-datapath-check.sh, a bash check of the same files and values,
// taking turns on the same cluster state. Both must pass. Beside them it
// prints the floor: the slowest single step of each labrun check, from its
// JSON report, which the check cannot go below however it orders or
// overlaps its reads. Then --rerun-failed against the full check
// (rerun.go).
func benchCheck(ctx context.Context, b *bench) ([]Row, error) {
	out := filepath.Join(b.work, "check-out")
	if _, err := b.solveLabrun(ctx, out); err != nil {
		return nil, err
	}
	report := out + ".check.json"
	checkArgv := b.checkArgv(out, "--report", "json="+report)
	bashEnv := []string{"KUBECTL=" + b.kubectl, "KUBECONFIG=" + b.kubeconfig, "NODE_EXEC=" + b.nodeExec}
	var labrun, bash, floor []time.Duration
	var slowest string
	for i := range b.n {
		p, err := runProc(ctx, checkArgv, procOpts{})
		if err != nil {
			return nil, fmt.Errorf("labrun check of a solve did not pass: %v\n%s", err, tail(p.stdout))
		}
		f, step, err := slowestStep(report)
		if err != nil {
			return nil, err
		}
		s, err := runProc(ctx, []string{"testbed/bench/cca-datapath-check.sh", out}, procOpts{env: bashEnv})
		if err != nil {
			return nil, fmt.Errorf("the bash check of labrun's solve did not pass: %v\n%s", err, tail(s.stdout))
		}
		fmt.Fprintf(os.Stderr, "   check %d: labrun %.0f ms (slowest step %s %.0f ms), bash %.0f ms\n", i,
			ms(p.wall), step, ms(f), ms(s.wall))
		labrun, bash, floor = append(labrun, p.wall), append(bash, s.wall), append(floor, f)
		slowest = step
	}
	l := durations("labrun check", "ms", labrun)
	rerun, err := benchRerun(ctx, b, out)
	if err != nil {
		return nil, err
	}
	return append([]Row{
		compare("`labrun check` of cca-datapath on solved files, whole process", l, durations("bash check (testbed/bench/cca-datapath-check.sh)", "ms", bash), 5).
			withNote("Both grade the same 8 files of one labrun solve against the cluster as it is, reading without changing anything; the bash check reads each source once, one after another " +
				"(kubectl, kubectl exec cilium-dbg as the lab's pages do, node-exec), and compares with jq. labrun takes the same facts from the agent's API socket and the pinned maps " +
				"(cmd/labrun's TestAgentAPISocket shows they agree with cilium-dbg) and runs each read once what it reads is there; what only a program prints still starts one (iptables-save, ss, bpftool, tc and curl in the node's shell, netstat and curl in pods). Goal: under 300 ms and at least 5x the bash check."),
		Row{Name: "`labrun check` of cca-datapath, whole process (goal 300 ms)", Labrun: l}.withLimit(300),
		Row{Name: "floor: the check's slowest single step", Labrun: durations("labrun", "ms", floor)}.
			withNote("The longest step of each labrun check (from its JSON report; in the last run %s), which no ordering or overlap of the other reads can go below. "+
				"The goal beyond 300 ms is a check within 2x of it.", slowest),
	}, rerun...), nil
}

// slowestStep returns the longest step of a labrun JSON report.
func slowestStep(report string) (time.Duration, string, error) {
	data, err := os.ReadFile(report)
	if err != nil {
		return 0, "", err
	}
	var o struct {
		Steps []struct {
			ID      string  `json:"id"`
			Action  string  `json:"action"`
			Seconds float64 `json:"seconds"`
		} `json:"steps"`
	}
	if err := json.Unmarshal(data, &o); err != nil {
		return 0, "", fmt.Errorf("%s: %v", report, err)
	}
	var max float64
	var id string
	for _, st := range o.Steps {
		if st.Action != "parallel" && st.Seconds > max {
			max, id = st.Seconds, st.ID+" ("+st.Action+")"
		}
	}
	return time.Duration(max * float64(time.Second)), id, nil
}
