package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/labrun/labrun/runner/fleet"
)

// classroom is playbooks/classroom.yaml as a class grades it: the schemas
// its write steps read go with it into the Job, and each learner's four
// files, solved into <work>/classroom-out/<namespace>, are read by both
// ways through --outputs.
func classroom(outputs string) classLab {
	lab := classLab{playbook: "playbooks/classroom.yaml", check: []string{"--outputs", "out=" + outputs}}
	lab.render = append(lab.render, "--outputs", "out="+outputs)
	for _, s := range []string{"deploy", "scale", "expose", "policy"} {
		lab.render = append(lab.render, "--include", "classroom/schemas/"+s+".schema.json")
	}
	return lab
}

// classroomGoal is the class the issue asks for: this many classroom
// namespaces graded in under 180 s at parallelism 20.
const classroomGoal = 200

// benchClassroom solves the classroom lab in as many learner namespaces
// as the cluster holds with room left for the Job's most pods at once
// (each solved namespace keeps its pods running: the lab grades them),
// every tenth with one wrong value in its files (scale.json's replicas),
// and grades them as the Job and with check --targets at each
// parallelism, beside a bash loop of testbed/bench/classroom-check.sh.
// -class-size caps the count.
func benchClassroom(ctx context.Context, b *bench) ([]Row, error) {
	run := fmt.Sprintf("bench-room-%d", time.Now().UnixNano()%100000)
	defer b.kubectlRun(context.Background(), nil, "delete", "namespace", "-l", "labrun-bench="+run, "--wait=false")
	outputs := filepath.Join(b.work, "classroom-out")
	if err := os.RemoveAll(outputs); err != nil {
		return nil, err
	}
	if err := b.makeNamespaces(ctx, run, []string{run}); err != nil {
		return nil, err
	}
	first := fmt.Sprintf("%s-%03d", run, 0)
	firstSolve, err := b.solveClassroom(ctx, run, first, outputs)
	if err != nil {
		return nil, err
	}
	bashSolve, err := b.classroomBashSolution(ctx, first, filepath.Join(outputs, first))
	if err != nil {
		return nil, err
	}
	c, err := b.classroomCapacity(ctx, first)
	if err != nil {
		return nil, err
	}
	n := c.fit
	if b.classSize > 0 {
		n = min(n, b.classSize)
	}
	fmt.Fprintf(os.Stderr, "   %s; solving %d namespaces\n", c, n)
	namespaces := []string{first}
	for i := 1; i < n; i++ {
		namespaces = append(namespaces, fmt.Sprintf("%s-%03d", run, i))
	}
	start := time.Now()
	solves, err := b.solveAll(ctx, run, namespaces[1:], outputs)
	if err != nil {
		return nil, err
	}
	solveWall := time.Since(start)
	solves = append(solves, firstSolve)
	for i, ns := range namespaces {
		if i%10 == 9 {
			if err := wrongReplicas(filepath.Join(outputs, ns, "scale.json")); err != nil {
				return nil, err
			}
		}
	}
	targets, err := b.writeTargets("class-targets.yaml", namespaces)
	if err != nil {
		return nil, err
	}
	solved := c.solveRow(solves, solveWall, n)
	solved.Note += fmt.Sprintf("; the bash solution (testbed/bench/classroom.sh) run again in %s took %.1f s and wrote the same 4 files as labrun (served_by, whichever pod answered, compared by type)",
		first, bashSolve.Seconds())
	rows := []Row{solved}
	lab := classroom(outputs)
	graded, byParallel, err := b.gradeEach(ctx, lab, run, targets, n)
	if err != nil {
		return nil, err
	}
	rows = append(rows, graded...)
	full, err := b.gradeFullJob(ctx, lab, run, targets, n, byParallel)
	if err != nil {
		return nil, err
	}
	rows = append(rows, full...)
	rows = append(rows, jobRatios(n, byParallel, b.classParallel)...)
	bash, err := b.classroomBash(ctx, namespaces, outputs)
	if err != nil {
		return nil, err
	}
	return append(rows, Row{Name: fmt.Sprintf("bash loop of classroom-check.sh over %d namespaces, wall", n), Labrun: durations("bash", "s", []time.Duration{bash})}.
		withNote("testbed/bench/classroom-check.sh NS DIR per learner, one after another: kubectl reads the same objects, client and intruder make one request each (intruder's waits out curl's 3 s), jq compares the 4 files.")), nil
}

// classroomFiles are the files the classroom lab asks for; classroomPerRun
// the key that differs between two solves of one namespace: whichever of
// web's pods answered the request.
var (
	classroomFiles  = []string{"deploy.json", "scale.json", "expose.json", "policy.json"}
	classroomPerRun = map[string]bool{"expose.json served_by": true}
)

// classroomBashSolution runs the bash solution testbed/bench/classroom.sh
// in namespace ns, which labrun solved into labrunDir, and compares its
// files with labrun's key by key: both read the same objects, so every
// value but classroomPerRun's must be the same. It returns the script's
// wall time.
func (b *bench) classroomBashSolution(ctx context.Context, ns, labrunDir string) (time.Duration, error) {
	out := filepath.Join(b.work, "classroom-bash", ns)
	if err := os.RemoveAll(out); err != nil {
		return 0, err
	}
	p, err := runProc(ctx, []string{"testbed/bench/classroom.sh", ns, out}, procOpts{
		env: []string{"KUBECTL=" + b.kubectl, "KUBECONFIG=" + b.kubeconfig}, timeout: 10 * time.Minute})
	if err != nil {
		return 0, fmt.Errorf("the bash solution classroom.sh in %s: %v", ns, err)
	}
	diffs, err := compareFiles(classroomFiles, classroomPerRun, labrunDir, out)
	if err != nil {
		return 0, err
	}
	if len(diffs) > 0 {
		return 0, fmt.Errorf("the bash solution's classroom files differ from labrun's (%s vs %s):\n  %s", out, labrunDir, strings.Join(diffs, "\n  "))
	}
	fmt.Fprintf(os.Stderr, "   the bash solution in %s: %.1f s, the same %d files as labrun's\n", ns, p.wall.Seconds(), len(classroomFiles))
	return p.wall, nil
}

// classroomRatioGoal is the goal for the classroom class: the
// sharded Job within 1.3 times check --targets' wall at the same
// parallelism.
const classroomRatioGoal = 1.3

// gradeFullJob grades the class again as the Job at the largest
// parallelism with as many pods as that parallelism runs at once, when
// fleet render's default chose fewer: what the default's choice costs or
// saves. The classroom lab's check runs programs, so the default takes
// that many since fleet.Size gives an open check as many pods as run at
// once, and nothing is graded again; before, it took 2 of 5 at
// --parallel 20 (results.classroom-sharded-2pods.json).
func (b *bench) gradeFullJob(ctx context.Context, lab classLab, run, targets string, n int, graded map[int][2]grading) ([]Row, error) {
	p := slices.Max(b.classParallel)
	pods := min(n, max(1, p/min(p, fleet.DefaultParallel)))
	if graded[p][1].pods >= pods {
		return nil, nil
	}
	lab.render = append(slices.Clip(lab.render), "--pods", strconv.Itoa(pods))
	lab.job = "-full"
	job, err := b.gradeJob(ctx, lab, run, targets, p, n)
	if err != nil {
		return nil, err
	}
	rows := job.rows(fmt.Sprintf("sharded Job, parallel %d, --pods %d", p, pods), n)
	return append(rows, ratioRow(n, p, job, graded[p][0])), nil
}

// jobRatios are the Job's wall over check --targets' at each parallelism,
// against the goal.
func jobRatios(n int, graded map[int][2]grading, parallel []int) []Row {
	var rows []Row
	for _, p := range parallel {
		rows = append(rows, ratioRow(n, p, graded[p][1], graded[p][0]))
	}
	return rows
}

func ratioRow(n, p int, job, fan grading) Row {
	r := job.wall.Seconds() / fan.wall.Seconds()
	met := r <= classroomRatioGoal
	return Row{Name: fmt.Sprintf("classroom class of %d, parallel %d: the sharded Job's wall (%s) over check --targets'", n, p, plural(job.pods, "pod")),
		Labrun: newSeries("labrun", "x", []float64{r}), Goal: fmt.Sprintf("≤ %gx", classroomRatioGoal), Met: &met}.
		withNote("%.1f s against %.1f s; one target's check p50 %.0f ms in the Job's pods, %.0f ms in check --targets",
			job.wall.Seconds(), fan.wall.Seconds(), job.checkP50(), fan.checkP50())
}

// plural is "1 pod", "2 pods".
func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// makeNamespaces creates namespaces labelled for cleanup.
func (b *bench) makeNamespaces(ctx context.Context, run string, names []string) error {
	var m strings.Builder
	for _, ns := range names {
		fmt.Fprintf(&m, "apiVersion: v1\nkind: Namespace\nmetadata: {name: %s, labels: {labrun-bench: %s}}\n---\n", ns, run)
	}
	_, err := b.kubectlRun(ctx, strings.NewReader(m.String()), "apply", "-f", "-")
	return err
}

// solveClassroom creates the namespace and solves the lab in it, its
// files in outputs/<namespace>; it returns how long the solve took.
func (b *bench) solveClassroom(ctx context.Context, run, ns, outputs string) (time.Duration, error) {
	if err := b.makeNamespaces(ctx, run, []string{ns}); err != nil {
		return 0, err
	}
	p, err := runProc(ctx, []string{b.labrun, "run", "--no-progress", "--kubeconfig", b.kubeconfig, "--vars", "playbooks/classroom.testbed.yaml",
		"--set", "namespace=" + ns, "--set", "out=" + filepath.Join(outputs, ns), "playbooks/classroom.yaml"}, procOpts{timeout: 10 * time.Minute})
	if err != nil {
		return 0, fmt.Errorf("solving the classroom lab in %s: %v\n%s", ns, err, tail(p.stdout))
	}
	return p.wall, nil
}

// solveParallel is how many solves run at once: each waits on pods to
// start and on curl's 3 s limit more than it computes.
const solveParallel = 4

// solveAll solves the lab in each namespace, solveParallel at once.
func (b *bench) solveAll(ctx context.Context, run string, namespaces []string, outputs string) ([]time.Duration, error) {
	var mu sync.Mutex
	var times []time.Duration
	var firstErr error
	work := make(chan string)
	var wg sync.WaitGroup
	for range solveParallel {
		wg.Go(func() {
			for ns := range work {
				d, err := b.solveClassroom(ctx, run, ns, outputs)
				mu.Lock()
				times = append(times, d)
				if err != nil && firstErr == nil {
					firstErr = err
				}
				mu.Unlock()
			}
		})
	}
	for _, ns := range namespaces {
		work <- ns
	}
	close(work)
	wg.Wait()
	if len(times) > 0 {
		fmt.Fprintf(os.Stderr, "   solved %d namespaces\n", len(times))
	}
	return times, firstErr
}

// wrongReplicas makes one value of a learner's scale.json wrong: its
// replicas one more than the solve wrote.
func wrongReplicas(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		return fmt.Errorf("%s: %v", path, err)
	}
	r, ok := doc["replicas"].(float64)
	if !ok {
		return fmt.Errorf("%s: no replicas number", path)
	}
	doc["replicas"] = r + 1
	out, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(out, '\n'), 0o644)
}

// capacity is how many solved classroom namespaces the cluster holds.
type capacity struct {
	allocatable int // pods the nodes' kubelets admit (maxPods), summed
	taken       int // pods not yet ended with the first namespace solved
	perNS       int // pods one solved namespace keeps running
	jobPods     int // the Job's most pods at once (the largest parallelism)
	fit         int // solved namespaces that fit beside the Job's pods
}

func (c capacity) String() string {
	return fmt.Sprintf("%d pods allocatable, %d taken with one namespace solved (%d pods each), %d kept for the Job: %d namespaces fit",
		c.allocatable, c.taken, c.perNS, c.jobPods, c.fit)
}

// classroomCapacity reads the nodes' allocatable pods and the pods that
// have not ended, with the lab solved in first.
func (b *bench) classroomCapacity(ctx context.Context, first string) (capacity, error) {
	c := capacity{jobPods: slices.Max(b.classParallel)}
	out, err := b.kubectlRun(ctx, nil, "get", "nodes", "-o", "jsonpath={range .items[*]}{.status.allocatable.pods}{\"\\n\"}{end}")
	if err != nil {
		return c, err
	}
	for f := range strings.FieldsSeq(string(out)) {
		v, err := strconv.Atoi(f)
		if err != nil {
			return c, fmt.Errorf("a node's allocatable pods %q: %v", f, err)
		}
		c.allocatable += v
	}
	if c.taken, err = b.activePods(ctx, "--all-namespaces"); err != nil {
		return c, err
	}
	if c.perNS, err = b.activePods(ctx, "--namespace="+first); err != nil {
		return c, err
	}
	if c.perNS == 0 || c.allocatable == 0 {
		return c, fmt.Errorf("the cluster has %d allocatable pods and %s %d pods", c.allocatable, first, c.perNS)
	}
	c.fit = max(0, (c.allocatable-c.taken-c.jobPods)/c.perNS) + 1
	return c, nil
}

// activePods counts the pods not yet ended (the kubelet admits no more
// than maxPods of them) in scope.
func (b *bench) activePods(ctx context.Context, scope string) (int, error) {
	out, err := b.kubectlRun(ctx, nil, "get", "pods", scope, "--field-selector=status.phase!=Succeeded,status.phase!=Failed", "-o", "name")
	if err != nil {
		return 0, err
	}
	return len(strings.Fields(string(out))), nil
}

// solveRow is the solves' figures, with the capacity they were sized by
// and why the class does not fit.
func (c capacity) solveRow(solves []time.Duration, wall time.Duration, n int) Row {
	r := Row{Name: fmt.Sprintf("classroom lab solved in %d namespaces: one solve, p50", n), Labrun: newSeries("labrun", "s", []float64{percentile(solves, 50) / 1000})}
	return r.withNote("max %.1f s, all %d in %.0f s, %d at once; capacity: %s; %d namespaces would need %d pods beside the Job's",
		percentile(solves, 100)/1000, n, wall.Seconds(), solveParallel, c, classroomGoal, classroomGoal*c.perNS)
}

// classroomBash runs testbed/bench/classroom-check.sh for each namespace,
// one after another, in one bash loop; it must find exactly the wrong
// learners.
func (b *bench) classroomBash(ctx context.Context, namespaces []string, outputs string) (time.Duration, error) {
	script := `wrong=0
for ns in "$@"; do
  testbed/bench/classroom-check.sh "$ns" "$OUTPUTS/$ns" >/dev/null || wrong=$((wrong + 1))
done
echo "$wrong wrong"`
	p, err := runProc(ctx, append([]string{"bash", "-c", script, "bash"}, namespaces...), procOpts{
		env: []string{"KUBECTL=" + b.kubectl, "KUBECONFIG=" + b.kubeconfig, "OUTPUTS=" + outputs}, timeout: 30 * time.Minute})
	if err != nil {
		return 0, fmt.Errorf("bash loop: %v", err)
	}
	if want := fmt.Sprintf("%d wrong", len(namespaces)/10); strings.TrimSpace(string(p.stdout)) != want {
		return 0, fmt.Errorf("bash loop said %q, want %q", p.stdout, want)
	}
	return p.wall, nil
}
