package main

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/labrun/labrun/internal/boundary/cluster"
	"github.com/labrun/labrun/internal/heavy/kube"
)

// The lab's namespace and what the bench reads there to check scale.json.
const labNamespace = "cca-dp"

// labRun is one solve of the lab by either tool.
type labRun struct {
	proc
	dir string
	// waited is the time spent waiting for Kubernetes objects (pods
	// Ready, holder's CiliumEndpoint): labrun's wait steps, the bash
	// solution's wait_for loops.
	waited time.Duration
	// clusterWork is, for a labrun run, the time of the steps that wait
	// on the cluster's own work on the lab's critical path (see
	// criticalWaits); 0 for the bash solution and labs without them.
	clusterWork time.Duration
}

// criticalWaits are, per lab, the steps whose time is the cluster's own
// work on the critical path of a parallel solve, one after another. Every
// other step runs beside one of them or takes labrun's own time, which is
// what the "beyond the cluster's work" rows measure. A step that only
// reads (an exec, a cilium-dbg, a Helm command) is labrun's time, however
// slow the cluster makes it.
var criticalWaits = map[string][]string{
	// web's pods going back to 2 and Ready, the 4 pods of the scale-up
	// Ready, then the agent putting their 4 backends in the services map
	// (polled)
	"cca-datapath": {"web_ready", "scaled_ready", "scaled_slots"},
	// the pods Ready (at once on a re-run), frontend's rollout, intruder's
	// request that must time out (the curls step, beside which the other
	// reads run), node 1's agent giving visitor an identity twice (its own
	// labels back on a re-run, then frontend's, each after its jitter) and
	// node 2 dropping visitor's requests meanwhile, then node 1's ipcache
	"cca-identity": {"rolled_out", "probes", "pods", "restarted", "curls", "visitor_agent_before", "visitor_curl_before", "visitor_agent", "visitor_ipcache"},
	// the pods Ready, the agent's map update after the scale, the agents'
	// rollouts after each Helm upgrade, both agents up with the new mode
	// (their status polled) and the datapath following them (requests
	// polled until DSR, then SNAT, shows); the Helm commands are labrun's
	// time
	"cca-services": {"settle", "scaled_slots", "dsr_rollout", "dsr_agents", "dsr_curl", "restore_rollout", "restored_agents", "snat_again"},
}

// beyondGoal is a lab's goal for its time beyond the cluster's work
// where it is not 0.5 s: cca-services changes Cilium's Helm release
// twice, and the goal leaves room for that.
var beyondGoal = map[string]float64{"cca-services": 1.5}

// beyondRow is a lab's row of what labrun adds to the cluster's pace: its
// runs, whole process, minus the time of the lab's criticalWaits (goal
// 0.5 s, or the lab's beyondGoal); more says what those steps are, or
// what else counts.
func beyondRow(lab string, lr []labRun, more string) Row {
	beyond := func(r labRun) time.Duration { return r.wall - r.clusterWork }
	work := func(r labRun) time.Duration { return r.clusterWork }
	goal := cmp.Or(beyondGoal[lab], 0.5)
	return Row{Name: fmt.Sprintf("%s lab, beyond the cluster's work on its critical path (goal %s s)", lab, fmtNum(goal)), Labrun: durations("labrun", "s", each(lr, beyond))}.withLimit(goal).
		withNote("The runs, whole process, minus the steps that wait on the cluster's own work one after another (%s; %s s median): what labrun itself adds to the cluster's pace. %s",
			strings.Join(criticalWaits[lab], ", "), fmtNum(durations("", "s", each(lr, work)).Median), more)
}

// benchLab solves cca-datapath with labrun (as the playbook is written,
// with its parallel steps, and with --sequential), and with the bash
// reference solution, in turn, on the same cluster, and compares their
// files.
// A first labrun run, not measured, brings the cluster to the state every
// measured run starts from (web at 4 replicas, holder, probe, web-np and
// ghost present), whatever ran before.
func benchLab(ctx context.Context, b *bench) ([]Row, error) {
	c, err := kube.Connect(kube.ConnectOptions{Kubeconfig: b.kubeconfig})
	if err != nil {
		return nil, err
	}
	defer c.Close()

	dir := func(name string) string { return filepath.Join(b.work, "lab", name) }
	if _, err := b.solveLabrun(ctx, dir("warm-up")); err != nil {
		return nil, err
	}
	var lr, sr, br []labRun
	for i := 1; i <= b.n; i++ {
		l, err := b.solveLabrun(ctx, dir(fmt.Sprintf("labrun-%d", i)))
		if err != nil {
			return nil, err
		}
		if err := checkRun(ctx, c, "labrun", l, nil); err != nil {
			return nil, err
		}
		q, err := b.solveLabrun(ctx, dir(fmt.Sprintf("labrun-sequential-%d", i)), "--sequential")
		if err != nil {
			return nil, err
		}
		if err := checkRun(ctx, c, "labrun --sequential", q, &l); err != nil {
			return nil, err
		}
		s, err := b.solveBash(ctx, dir(fmt.Sprintf("bash-%d", i)))
		if err != nil {
			return nil, err
		}
		if err := checkRun(ctx, c, "the bash solution", s, &l); err != nil {
			return nil, err
		}
		fmt.Fprintf(os.Stderr, "   run %d: labrun %.2f s, labrun --sequential %.2f s, bash %.2f s, same 8 files\n", i, l.wall.Seconds(), q.wall.Seconds(), s.wall.Seconds())
		lr, sr, br = append(lr, l), append(sr, q), append(br, s)
	}

	wall := func(r labRun) time.Duration { return r.wall }
	waited := func(r labRun) time.Duration { return r.waited }
	outside := func(r labRun) time.Duration { return r.wall - r.waited }
	rss := func(runs []labRun) []float64 {
		var v []float64
		for _, r := range runs {
			v = append(v, mb(r.maxRSS))
		}
		return v
	}
	return []Row{
		compare("cca-datapath lab, end to end",
			durations("labrun", "s", each(lr, wall)), durations("bash + kubectl", "s", each(br, wall)), 2).
			withNote("Both solve the whole lab (labrun: every step of the playbook as written, with its three parallel steps, reading the kernel's services and conntrack maps where it needs their contents) on the same cluster, one after the other, from the same state: web scaled back from 4 pods to 2, then to 4 again. " +
				"The bash solution (testbed/bench/cca-datapath.sh) polls without sleeping, runs the lab's sections one after another as lab solutions are written (backgrounding them with & would need its own error handling per job), and leaves out the playbook's read-only cross-checks (EndpointSlices, netstat in the backend pod). " +
				"Each run's 8 files are compared key by key: same keys in the same order, same types, same values, except ghost.json's seconds (type only) " +
				"and scale.json's lists, which hold the two pods each run's scale-up creates: compared by length and element types, and checked against the pods in the cluster after each run."),
		compare("cca-datapath lab, end to end, labrun --sequential",
			durations("labrun --sequential", "s", each(sr, wall)), durations("bash + kubectl", "s", each(br, wall)), 0).
			withNote("The same playbook with the branches of its parallel steps run one after another, in the order written: one step at a time, like the bash solution, so the difference is the client's alone. Its files are compared with the parallel run's like the bash solution's."),
		compare("cca-datapath lab, outside the waits for pods",
			durations("labrun --sequential", "s", each(sr, outside)), durations("bash + kubectl", "s", each(br, outside)), 0).
			withNote("The sequential runs minus the time spent waiting for Kubernetes objects (pods terminating, starting and Ready; holder's CiliumEndpoint): "+
				"labrun's wait steps (%s s median) and the bash solution's wait_for loops (%s s median): "+
				"the cluster's time more than the client's.",
				fmtNum(durations("", "s", each(sr, waited)).Median), fmtNum(durations("", "s", each(br, waited)).Median)),
		beyondRow("cca-datapath", lr, "They are web's pods going back to 2 and Ready, the scale-up's pods Ready, and the agent's update of the services map."),
		newRow("peak memory (max RSS) of a full lab run",
			newSeries("labrun", "MB", rss(lr)), newSeries("largest process of the bash run (kubectl)", "MB", rss(br))).withLimit(100).
			withNote("GNU time's %%M (ru_maxrss): the largest resident set of the process and of the descendants it waited for (for labrun, its node-exec commands; for bash, kubectl, jq, awk)."),
	}, nil
}

// checkRun checks a run's scale.json against the cluster right after the
// run and, given labrun's run ref, that its files are the same as ref's.
func checkRun(ctx context.Context, c *kube.Client, who string, r labRun, ref *labRun) error {
	if err := checkScale(ctx, c, r.dir); err != nil {
		return fmt.Errorf("%s's %w", who, err)
	}
	if ref == nil {
		return nil
	}
	diffs, err := compareLabDirs(ref.dir, r.dir)
	if err != nil {
		return err
	}
	if len(diffs) > 0 {
		return fmt.Errorf("%s's lab files differ from labrun's (%s vs %s):\n  %s", who, r.dir, ref.dir, strings.Join(diffs, "\n  "))
	}
	return nil
}

// each maps runs to one of their durations.
func each(runs []labRun, f func(labRun) time.Duration) []time.Duration {
	var d []time.Duration
	for _, r := range runs {
		d = append(d, f(r))
	}
	return d
}

// newRow is a row comparing sizes: no speed goal.
func newRow(name string, labrun, alt Series) Row { return compare(name, labrun, alt, 0) }

func (b *bench) solveLabrun(ctx context.Context, out string, flags ...string) (labRun, error) {
	return b.solvePlaybook(ctx, "cca-datapath", out, flags...)
}

// solvePlaybook solves playbooks/LAB.yaml with labrun and its testbed vars
// file, writing to out.
func (b *bench) solvePlaybook(ctx context.Context, lab, out string, flags ...string) (labRun, error) {
	if err := os.RemoveAll(out); err != nil {
		return labRun{}, err
	}
	argv := []string{b.labrun, "run", "--kubeconfig", b.kubeconfig,
		"--vars", "playbooks/" + lab + ".testbed.yaml", "--set", "out=" + out,
		"--no-progress", "--report", "json=" + out + ".report.json"}
	argv = append(append(argv, flags...), "playbooks/"+lab+".yaml")
	p, err := runProc(ctx, argv, procOpts{rss: true})
	if err != nil {
		return labRun{}, fmt.Errorf("labrun did not solve %s: %v\n%s", lab, err, tail(p.stdout))
	}
	w, critical, err := reportWaits(out+".report.json", criticalWaits[lab])
	return labRun{proc: p, dir: out, waited: w, clusterWork: critical}, err
}

func (b *bench) solveBash(ctx context.Context, out string) (labRun, error) {
	return b.solveScript(ctx, "testbed/bench/cca-datapath.sh", out)
}

// solveScript runs a bash solution (SCRIPT OUTDIR), which writes the time
// it waited for objects to $BENCH_WAITS.
func (b *bench) solveScript(ctx context.Context, script, out string) (labRun, error) {
	if err := os.RemoveAll(out); err != nil {
		return labRun{}, err
	}
	waits := out + ".waits"
	env := []string{"KUBECTL=" + b.kubectl, "KUBECONFIG=" + b.kubeconfig, "NODE_EXEC=" + b.nodeExec, "BENCH_WAITS=" + waits}
	p, err := runProc(ctx, []string{script, out}, procOpts{env: env, rss: true})
	if err != nil {
		return labRun{}, fmt.Errorf("the bash solution %s failed: %v", script, err)
	}
	data, err := os.ReadFile(waits)
	if err != nil {
		return labRun{}, err
	}
	us, err := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
	if err != nil {
		return labRun{}, fmt.Errorf("%s: %v", waits, err)
	}
	return labRun{proc: p, dir: out, waited: time.Duration(us) * time.Microsecond}, nil
}

// reportWaits sums the wait steps of a labrun JSON report, and apart the
// steps whose ids are in named.
func reportWaits(report string, named []string) (waited, inNamed time.Duration, err error) {
	data, err := os.ReadFile(report)
	if err != nil {
		return 0, 0, err
	}
	var o struct {
		Steps []struct {
			ID      string  `json:"id"`
			Action  string  `json:"action"`
			Seconds float64 `json:"seconds"`
		} `json:"steps"`
	}
	if err := json.Unmarshal(data, &o); err != nil {
		return 0, 0, fmt.Errorf("%s: %v", report, err)
	}
	var s, n float64
	for _, st := range o.Steps {
		if st.Action == "wait" {
			s += st.Seconds
		}
		if slices.Contains(named, st.ID) {
			n += st.Seconds
		}
	}
	return time.Duration(s * float64(time.Second)), time.Duration(n * float64(time.Second)), nil
}

// checkScale checks scale.json against the cluster right after the run
// that wrote it: backends are the web pods' IP:8080 now, new_backends are
// those not in svc.json.
func checkScale(ctx context.Context, c *kube.Client, dir string) error {
	var scale struct {
		Backends    []string `json:"backends"`
		NewBackends []string `json:"new_backends"`
	}
	var svc struct {
		Backends []string `json:"backends"`
	}
	for f, v := range map[string]any{"scale.json": &scale, "svc.json": &svc} {
		data, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			return err
		}
		if err := json.Unmarshal(data, v); err != nil {
			return fmt.Errorf("%s: %v", f, err)
		}
	}
	pods, err := c.List(ctx, cluster.ObjectQuery{Kind: "Pod", Namespace: labNamespace, Selector: "app=web"})
	if err != nil {
		return err
	}
	var want []string
	for _, p := range pods {
		if st, ok := p["status"].(map[string]any); ok {
			if ip, ok := st["podIP"].(string); ok {
				want = append(want, ip+":8080")
			}
		}
	}
	slices.Sort(want)
	if !slices.Equal(scale.Backends, want) {
		return fmt.Errorf("scale.json backends %v are not the web pods' addresses %v", scale.Backends, want)
	}
	var added []string
	for _, a := range scale.Backends {
		if !slices.Contains(svc.Backends, a) {
			added = append(added, a)
		}
	}
	if !slices.Equal(scale.NewBackends, added) {
		return fmt.Errorf("scale.json new_backends %v should be %v (backends not in svc.json)", scale.NewBackends, added)
	}
	return nil
}
