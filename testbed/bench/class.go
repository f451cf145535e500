package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/labrun/labrun/runner"
	"github.com/labrun/labrun/runner/fleet"
)

// classLab is the lab a class is graded with, and what fleet render and
// check --targets need besides the targets file.
type classLab struct {
	playbook string
	// render and check are more arguments of fleet render and of check
	// --targets (the files the lab reads, the learners' files).
	render, check []string
	// job ends the Job's name, so that a second Job of one class and
	// parallelism does not meet the first while it is being deleted.
	job string
}

// smallLab is the namespace-scoped lab the class is graded with by
// default: the learner's answer is the ConfigMap "answer" in their
// namespace.
var smallLab = classLab{playbook: "cmd/labrun/testdata/fleet/lab.yaml"}

// benchClass grades a class of b.classSize learner namespaces (one in ten
// with a wrong answer) with each parallelism of b.classParallel (1, 4
// and 20), as labrun fleet render's sharded Indexed Job in labrun's image
// (-image, imported by make image and testbed/lib/labrun-image.sh) and
// with labrun check --targets, beside a bash loop of kubectl doing the
// same checks one after another, and the floor of any Job: one pod
// grading one learner. Then b.classGrowth learners both ways at the
// largest parallelism, with the growth from the first class. Every
// grading must find exactly the wrong answers.
func benchClass(ctx context.Context, b *bench) ([]Row, error) {
	if b.classLab == "classroom" {
		return benchClassroom(ctx, b)
	}
	n := b.classSize
	if n == 0 {
		n = 20 // a short run (CI's), so the section cannot rot
		if b.n >= 5 {
			n = 200
		}
	}
	grow := b.classGrowth
	if grow < 0 {
		grow = 0
		if n == 200 {
			grow = 1000
		}
	}
	if err := b.waitQuiet(ctx); err != nil {
		return nil, err
	}
	run := fmt.Sprintf("bench-class-%d", time.Now().UnixNano()%100000)
	defer b.kubectlRun(context.Background(), nil, "delete", "namespace", "-l", "labrun-bench="+run, "--wait=false")
	namespaces, err := b.makeClass(ctx, run, run, n)
	if err != nil {
		return nil, err
	}
	targets, err := b.writeTargets("class-targets.yaml", namespaces)
	if err != nil {
		return nil, err
	}
	rows, graded, err := b.gradeEach(ctx, smallLab, run, targets, n)
	if err != nil {
		return nil, err
	}
	floor, err := b.jobFloor(ctx, run, namespaces[0])
	if err != nil {
		return nil, err
	}
	rows = append(rows, floor)
	bash, err := b.gradeBash(ctx, namespaces)
	if err != nil {
		return nil, err
	}
	rows = append(rows, Row{Name: fmt.Sprintf("bash loop of kubectl over %d namespaces, wall", n), Labrun: durations("bash", "s", []time.Duration{bash})}.
		withNote("for ns in ...; do kubectl -n $ns get configmap answer -o jsonpath={.data.value}; compare; done: the same read and comparison per learner, one kubectl process each, one after another."))
	if grow > 0 {
		more, err := b.classGrows(ctx, run, n, grow, graded)
		if err != nil {
			return nil, err
		}
		rows = append(rows, more...)
	}
	return rows, nil
}

// classGrows grades grow learners both ways at the largest parallelism
// and prints each way's growth from the class of n, graded before at
// that parallelism (first).
func (b *bench) classGrows(ctx context.Context, run string, n, grow int, first map[int][2]grading) ([]Row, error) {
	p := slices.Max(b.classParallel)
	namespaces, err := b.makeClass(ctx, run+"-g", run, grow)
	if err != nil {
		return nil, err
	}
	targets, err := b.writeTargets("class-growth-targets.yaml", namespaces)
	if err != nil {
		return nil, err
	}
	fan, err := b.gradeFanOut(ctx, smallLab, targets, p, grow)
	if err != nil {
		return nil, err
	}
	job, err := b.gradeJob(ctx, smallLab, run, targets, p, grow)
	if err != nil {
		return nil, err
	}
	rows := fan.rows(fmt.Sprintf("check --targets, parallel %d", p), grow)
	rows = append(rows, job.rows(fmt.Sprintf("sharded Job, parallel %d", p), grow)...)
	goal := 1.1 * float64(grow) / float64(n)
	for k, way := range []string{fmt.Sprintf("check --targets, parallel %d", p), fmt.Sprintf("sharded Job, parallel %d", p)} {
		before, now := first[p][k], []grading{fan, job}[k]
		g := now.wall.Seconds() / before.wall.Seconds()
		met := g <= goal
		rows = append(rows, Row{Name: fmt.Sprintf("%s: growth of the wall from %d to %d learners (x%d)", way, n, grow, grow/n),
			Labrun: newSeries("labrun", "x", []float64{g}), Goal: fmt.Sprintf("≤ %gx", goal), Met: &met}.
			withNote("%.2f s for %d, %.2f s for %d", before.wall.Seconds(), n, now.wall.Seconds(), grow))
	}
	return rows, nil
}

// waitQuiet waits until no namespace is being deleted: the namespace
// controller deleting a class's hundreds of namespaces (an earlier run's)
// makes thousands of requests, which the API request counts would
// include and which slow every grading.
func (b *bench) waitQuiet(ctx context.Context) error {
	for start := time.Now(); ; {
		out, err := b.kubectlRun(ctx, nil, "get", "namespaces", "-o", `jsonpath={range .items[?(@.status.phase=="Terminating")]}{.metadata.name}{" "}{end}`)
		if err != nil {
			return err
		}
		left := strings.Fields(string(out))
		if len(left) == 0 {
			return nil
		}
		if time.Since(start) > 10*time.Minute {
			return fmt.Errorf("%d namespaces still being deleted after 10 minutes", len(left))
		}
		fmt.Fprintf(os.Stderr, "   waiting for %d namespaces being deleted\n", len(left))
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(5 * time.Second):
		}
	}
}

// writeTargets writes a class's targets file, name in the work directory.
func (b *bench) writeTargets(name string, namespaces []string) (string, error) {
	targets := filepath.Join(b.work, name)
	var tb strings.Builder
	tb.WriteString("targets:\n")
	for _, ns := range namespaces {
		fmt.Fprintf(&tb, "  - namespace: %s\n", ns)
	}
	return targets, os.WriteFile(targets, []byte(tb.String()), 0o644)
}

// gradeEach grades the class with check --targets and as the Job, at
// each parallelism; graded holds both gradings by parallelism.
func (b *bench) gradeEach(ctx context.Context, lab classLab, run, targets string, n int) (rows []Row, graded map[int][2]grading, err error) {
	graded = map[int][2]grading{}
	for _, p := range b.classParallel {
		fan, err := b.gradeFanOut(ctx, lab, targets, p, n)
		if err != nil {
			return nil, nil, err
		}
		job, err := b.gradeJob(ctx, lab, run, targets, p, n)
		if err != nil {
			return nil, nil, err
		}
		graded[p] = [2]grading{fan, job}
		rows = append(rows, fan.rows(fmt.Sprintf("check --targets, parallel %d", p), n)...)
		rows = append(rows, job.rows(fmt.Sprintf("sharded Job, parallel %d", p), n)...)
	}
	return rows, graded, nil
}

// makeClass creates the learners' namespaces, prefix-NNN, labelled
// labrun-bench=run for cleanup, each with its answer, and the grading
// namespace run.
func (b *bench) makeClass(ctx context.Context, prefix, run string, n int) ([]string, error) {
	var m bytes.Buffer
	var names []string
	for i := range n {
		ns := fmt.Sprintf("%s-%03d", prefix, i)
		names = append(names, ns)
		answer := "42"
		if i%10 == 9 {
			answer = "41"
		}
		fmt.Fprintf(&m, "apiVersion: v1\nkind: Namespace\nmetadata: {name: %s, labels: {labrun-bench: %s}}\n---\n"+
			"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: answer, namespace: %s}\ndata: {value: %q}\n---\n", ns, run, ns, answer)
	}
	fmt.Fprintf(&m, "apiVersion: v1\nkind: Namespace\nmetadata: {name: %s, labels: {labrun-bench: %s}}\n", run, run)
	_, err := b.kubectlRun(ctx, &m, "apply", "--server-side", "-f", "-")
	return names, err
}

// grading is one grading of the class.
type grading struct {
	wall     time.Duration
	results  []fleet.Result
	requests float64 // API server requests during the grading
	peakMB   float64 // the grading process's peak memory (0: not measured)
	mem      podMem  // the Job's pods' peak memory (none: not a Job)
	pods     int     // the Job's pods, its shards (0: not a Job)
	// timeline is where the Job's wall went (nil: not a Job)
	timeline *jobTimeline
	// requestGoal: the goal of at most 5 API requests a learner
	// applies (the small lab's Job: two reads a learner)
	requestGoal bool
}

// checkMillis are the targets' check times in milliseconds, sorted.
func (g grading) checkMillis() []float64 {
	var secs []float64
	for _, r := range g.results {
		secs = append(secs, r.Seconds*1000)
	}
	slices.Sort(secs)
	return secs
}

// checkP50 is the median target's check time in milliseconds.
func (g grading) checkP50() float64 { return nearestRank(g.checkMillis(), 50) }

func (g grading) rows(name string, n int) []Row {
	secs := g.checkMillis()
	if g.pods > 0 {
		name += fmt.Sprintf(" (%d pods)", g.pods)
		if g.pods == 1 {
			name = strings.TrimSuffix(name, "s)") + ")"
		}
	}
	wall := Row{Name: fmt.Sprintf("%s: %d targets, wall", name, n), Labrun: durations("labrun", "s", []time.Duration{g.wall})}
	if n == 200 && g.pods > 0 && strings.Contains(name, "parallel 20") {
		wall = wall.withLimit(10)
	}
	if g.timeline != nil {
		wall = wall.withNote("%s", g.timeline)
	}
	per := Row{Name: name + ": one target's check, p50", Labrun: newSeries("labrun", "ms", []float64{nearestRank(secs, 50)})}.
		withNote("p95 %.0f ms%s", nearestRank(secs, 95), peakNote(g.peakMB))
	reqs := Row{Name: name + ": API server requests per target", Labrun: newSeries("labrun", "", []float64{g.requests / float64(n)})}.
		withNote("apiserver_request_total before and after the grading, over the targets; the cluster's own background included")
	if g.requestGoal {
		met := g.requests/float64(n) <= 5
		reqs.Goal, reqs.Met = "≤ 5", &met
	}
	rows := []Row{wall, per, reqs}
	if len(g.mem.pod) > 0 {
		rows = append(rows, g.mem.row(name))
	}
	return rows
}

// row is the pods' peak memory: p50 of the labrun containers, with their
// max and the pods' own in the note.
func (m podMem) row(name string) Row {
	c, p := slices.Sorted(slices.Values(m.container)), slices.Sorted(slices.Values(m.pod))
	return Row{Name: name + ": a pod's labrun container, peak memory p50", Labrun: newSeries("labrun", "MB", []float64{nearestRank(c, 50)})}.
		withNote("max %.1f MB over %d containers (their memory cgroup's high-water mark, read every %s until the container ended); "+
			"the pod's cgroup (labrun and the pause sandbox) p50 %.1f MB, max %.1f MB over %d pods, %d of them read after a container ended",
			nearestRank(c, 100), len(c), pollEvery, nearestRank(p, 50), nearestRank(p, 100), len(p), m.final)
}

func peakNote(mb float64) string {
	if mb == 0 {
		return ""
	}
	return fmt.Sprintf("; peak memory of the labrun process %.0f MB", mb)
}

// nearestRank is the p-th percentile of sorted values (nearest rank).
func nearestRank(sorted []float64, p float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := int(math.Ceil(p/100*float64(len(sorted)))) - 1
	return sorted[max(i, 0)]
}

// gradeFanOut grades the class with check --targets.
func (b *bench) gradeFanOut(ctx context.Context, lab classLab, targets string, parallel, n int) (grading, error) {
	report := filepath.Join(b.work, fmt.Sprintf("class-fanout-%d.jsonl", parallel))
	before, err := b.apiRequests(ctx)
	if err != nil {
		return grading{}, err
	}
	argv := append([]string{b.labrun, "check", "--kubeconfig", b.kubeconfig, "--targets", targets,
		"--parallel", strconv.Itoa(parallel), "--report", "json=" + report}, lab.check...)
	p, err := runProc(ctx, append(argv, lab.playbook), procOpts{rss: true, timeout: 30 * time.Minute})
	if err != nil {
		return grading{}, fmt.Errorf("check --targets: %v\n%s", err, tail(p.stdout))
	}
	after, err := b.apiRequests(ctx)
	if err != nil {
		return grading{}, err
	}
	g := grading{wall: p.wall, requests: after - before, peakMB: mb(p.maxRSS)}
	g.results, err = readClass(report, n)
	fmt.Fprintf(os.Stderr, "   check --targets --parallel %d: %.1f s\n", parallel, p.wall.Seconds())
	return g, err
}

// gradeJob grades the class with the rendered Job: the wall time from
// kubectl apply to collect's end.
func (b *bench) gradeJob(ctx context.Context, lab classLab, run, targets string, parallel, n int) (grading, error) {
	name := fmt.Sprintf("class-%d-p%d%s", n, parallel, lab.job)
	argv := []string{b.labrun, "fleet", "render", lab.playbook, "--targets", targets, "-n", run, "--name", name,
		"--image", b.image, "--parallel", strconv.Itoa(parallel)}
	render, err := runProc(ctx, append(argv, lab.render...), procOpts{})
	if err != nil {
		return grading{}, fmt.Errorf("fleet render: %v\n%s", err, tail(render.stderr))
	}
	report := filepath.Join(b.work, fmt.Sprintf("class-job-%d.jsonl", parallel))
	before, err := b.apiRequests(ctx)
	if err != nil {
		return grading{}, err
	}
	mem, err := newPodMemory(b.testbedEnv)
	if err != nil {
		return grading{}, err
	}
	stopMem := mem.start()
	start := time.Now()
	if _, err := b.kubectlRun(ctx, bytes.NewReader(render.stdout), "apply", "--server-side", "-f", "-"); err != nil {
		stopMem()
		return grading{}, err
	}
	c, err := runProc(ctx, []string{b.labrun, "fleet", "collect", "--kubeconfig", b.kubeconfig, "-n", run, "--job", name,
		"--wait", "30m", "--targets", targets, "--report", "json=" + report}, procOpts{timeout: 31 * time.Minute})
	wall := time.Since(start)
	// The last pods' cgroups outlive collect's end by about a second.
	mem.waitGone(30 * time.Second)
	stopMem()
	if err != nil {
		return grading{}, fmt.Errorf("fleet collect: %v\n%s", err, tail(c.stdout))
	}
	after, err := b.apiRequests(ctx)
	if err != nil {
		return grading{}, err
	}
	g := grading{wall: wall, requests: after - before, pods: renderedPods(render.stdout), requestGoal: lab.playbook == smallLab.playbook}
	if g.mem, err = mem.forJob(ctx, b, run, name); err != nil {
		return grading{}, err
	}
	tl, err := b.readJobTimeline(ctx, run, name, start, start.Add(wall))
	if err != nil {
		return grading{}, err
	}
	g.timeline = &tl
	g.results, err = readClass(report, n)
	fmt.Fprintf(os.Stderr, "   sharded Job, parallel %d, %d pods: %.1f s; pods' peak memory read from their cgroups: %d of %d after a container ended\n",
		parallel, g.pods, wall.Seconds(), g.mem.final, len(g.mem.pod))
	b.kubectlRun(ctx, nil, "delete", "job", name, "-n", run, "--wait=false")
	b.kubectlRun(ctx, nil, "delete", "clusterrole", fleet.SharedRoleName(fleet.Job{Name: name, Namespace: run}), "--ignore-not-found")
	return g, err
}

// renderedPods is the completions of the Job fleet render printed: its
// shards, one pod each.
func renderedPods(manifest []byte) int {
	m := regexp.MustCompile(`(?m)^  completions: (\d+)$`).FindSubmatch(manifest)
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(string(m[1]))
	return n
}

// jobFloor is the floor of a Job's time on this machine: the Job of one
// pod grading one learner, from kubectl apply to collect's end: a pod to
// schedule, start and end, watched by collect, beside a check of a few
// milliseconds.
func (b *bench) jobFloor(ctx context.Context, run, namespace string) (Row, error) {
	targets, err := b.writeTargets("class-one-target.yaml", []string{namespace})
	if err != nil {
		return Row{}, err
	}
	var walls []time.Duration
	for k := range max(b.n, 3) {
		name := fmt.Sprintf("floor-%d", k)
		render, err := runProc(ctx, []string{b.labrun, "fleet", "render", smallLab.playbook, "--targets", targets, "-n", run, "--name", name, "--image", b.image}, procOpts{})
		if err != nil {
			return Row{}, fmt.Errorf("fleet render: %v\n%s", err, tail(render.stderr))
		}
		start := time.Now()
		if _, err := b.kubectlRun(ctx, bytes.NewReader(render.stdout), "apply", "--server-side", "-f", "-"); err != nil {
			return Row{}, err
		}
		c, err := runProc(ctx, []string{b.labrun, "fleet", "collect", "--kubeconfig", b.kubeconfig, "-n", run, "--job", name, "--wait", "5m", "--targets", targets},
			procOpts{timeout: 6 * time.Minute})
		if err != nil {
			return Row{}, fmt.Errorf("fleet collect: %v\n%s", err, tail(c.stdout))
		}
		walls = append(walls, time.Since(start))
		b.kubectlRun(ctx, nil, "delete", "job", name, "-n", run, "--wait=false")
	}
	return Row{Name: "floor: the Job of one pod grading one learner, wall", Labrun: durations("labrun", "s", walls)}.
		withNote("kubectl apply to fleet collect's end, %d runs: what any Job costs on this machine before it grades anything (the pod scheduled, its sandbox and container started, labrun started, the result stored and read); a Job cannot be faster than this", len(walls)), nil
}

// readClass reads a class's JSON lines and checks the verdicts: every
// tenth learner wrong, the others passed.
func readClass(path string, n int) ([]fleet.Result, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []fleet.Result
	for line := range strings.Lines(string(data)) {
		r, err := fleet.ParseLine([]byte(line))
		if err != nil {
			return nil, fmt.Errorf("%s: %v", path, err)
		}
		want := runner.VerdictPassed
		if r.Index%10 == 9 {
			want = runner.VerdictWrong
		}
		if r.Verdict != want {
			return nil, fmt.Errorf("%s: target %s is %s, want %s: %s", path, r.Target, r.Verdict, want, r.FirstFailure)
		}
		out = append(out, r)
	}
	if len(out) != n {
		return nil, fmt.Errorf("%s: %d results, want %d", path, len(out), n)
	}
	return out, nil
}

// gradeBash runs the same checks as a bash loop of kubectl.
func (b *bench) gradeBash(ctx context.Context, namespaces []string) (time.Duration, error) {
	script := `wrong=0
for ns in "$@"; do
  v=$("$KUBECTL" --kubeconfig "$KUBECONFIG" -n "$ns" get configmap answer -o jsonpath='{.data.value}') || exit 3
  [ "$v" = 42 ] || wrong=$((wrong + 1))
done
echo "$wrong wrong"`
	p, err := runProc(ctx, append([]string{"bash", "-c", script, "bash"}, namespaces...), procOpts{env: []string{"KUBECTL=" + b.kubectl, "KUBECONFIG=" + b.kubeconfig}, timeout: 30 * time.Minute})
	if err != nil {
		return 0, fmt.Errorf("bash loop: %v", err)
	}
	if want := fmt.Sprintf("%d wrong", len(namespaces)/10); strings.TrimSpace(string(p.stdout)) != want {
		return 0, fmt.Errorf("bash loop said %q, want %q", p.stdout, want)
	}
	return p.wall, nil
}

// apiRequests is the API server's count of requests served so far (the
// sum of apiserver_request_total).
func (b *bench) apiRequests(ctx context.Context) (float64, error) {
	out, err := b.kubectlRun(ctx, nil, "get", "--raw", "/metrics")
	if err != nil {
		return 0, err
	}
	var sum float64
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "apiserver_request_total{") {
			continue
		}
		v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
		if err == nil {
			sum += v
		}
	}
	return sum, sc.Err()
}

// kubectlRun runs kubectl on the test cluster with stdin, returning stdout.
func (b *bench) kubectlRun(ctx context.Context, stdin interface{ Read([]byte) (int, error) }, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, b.kubectl, append([]string{"--kubeconfig", b.kubeconfig}, args...)...)
	if stdin != nil {
		cmd.Stdin = stdin
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("kubectl %s: %v: %s", strings.Join(args, " "), err, stderr.String())
	}
	return out, nil
}
