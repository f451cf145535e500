//go:build e2e

package e2e

// A class graded by one Indexed Job (labrun fleet render, then labrun
// fleet collect), in labrun's own image on the test cluster: 20 learner
// namespaces of the lab cmd/labrun/testdata/fleet/lab.yaml in 4 shards of
// 5, 5 learners with a wrong answer; one shard's pod is stopped while one
// of its checks is under way (held in the lab's pause step until the
// pod's log shows the shard's other four graded) and the shard is graded
// again; one target is broken (a variable of the wrong type, edited into
// the Job's ConfigMap after render, which refuses it), which is a result
// not graded (config) of its shard, stored like the others. collect must
// report exactly that, and again after the finished pods are deleted,
// and after the Job itself is (as its TTL would): the results live in
// the ConfigMaps the shards stored. The Job's pods are given no
// kubeconfig: labrun connects in-cluster, as the Job's ServiceAccount, by
// the token Kubernetes mounts.
//
// The image is the tarball LABRUN_IMAGE_TARBALL names, else the one make
// image builds (in a clone: go build stamps no commit in a worktree). As
// root, with the test cluster up:
//
//	LABRUN_KUBECONFIG=/var/lib/labrun-testbed/kubeconfig \
//	  go test -count=1 -tags e2e -run TestFleetJob -v ./testbed/e2e/

import (
	"bytes"
	"context"
	"encoding/xml"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/labrun/labrun/internal/boundary/cluster"
	"github.com/labrun/labrun/internal/heavy/kube"
	"github.com/labrun/labrun/internal/heavy/kube/kubetest"
	"github.com/labrun/labrun/internal/leaf/k8sobj"
	"github.com/labrun/labrun/runner"
	"github.com/labrun/labrun/runner/fleet"
)

const fleetPlaybook = "../../cmd/labrun/testdata/fleet/lab.yaml"

// The class: 20 learners in 4 shards of 5, those at wrongAt answer 41,
// the one at heldAt (shard 1) is held and its pod stopped, the one at
// brokenAt is broken.
const (
	fleetLearners = 20
	fleetShards   = 4
	heldAt        = 7
	heldShard     = 1
	brokenAt      = 12
)

var wrongAt = map[int]bool{2: true, 5: true, 9: true, 14: true, 18: true}

func TestFleetJob(t *testing.T) {
	c := kubetest.Connect(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	ref := importLabrunImage(t)
	bin := buildLabrun(t)
	dir := t.TempDir()

	run := kubetest.NamespaceName("e2e-fleet")
	targets := classNamespaces(ctx, t, c, run)
	targetsFile := filepath.Join(dir, "targets.yaml")
	writeTargets(t, targetsFile, targets)

	job := fleetRender(t, bin, targetsFile, run, ref)
	if strings.Contains(job, "kubeconfig") || !strings.Contains(job, "automountServiceAccountToken: true") {
		t.Fatalf("the rendered Job gives its pods a kubeconfig, or not their ServiceAccount's token:\n%s", job)
	}
	// The broken target, after render (which refuses it): its check is
	// refused when the pod loads the playbook with its variables.
	broken := fmt.Sprintf("{namespace: %s}", targets[brokenAt])
	if !strings.Contains(job, broken) {
		t.Fatalf("the rendered Job's ConfigMap does not list %s:\n%s", broken, job)
	}
	job = strings.Replace(job, broken, fmt.Sprintf("{namespace: %s, set: [expected=forty-two]}", targets[brokenAt]), 1)
	deleteSharedRole(t, c, "labrun-fleet-e2e-fleet", run)
	kubetest.ApplyInNamespace(ctx, t, c, run, "the rendered Job", job)

	stopHeldPod(ctx, t, c, run, targets[heldAt])

	jsonReport, junitReport := filepath.Join(dir, "class.jsonl"), filepath.Join(dir, "class.xml")
	collect := func(report ...string) {
		t.Helper()
		code, out := runLabrun(t, bin, append([]string{"fleet", "collect", "--kubeconfig", kubetest.Kubeconfig(t), "-n", run, "--job", "labrun-fleet-e2e-fleet",
			"--wait", "5m", "--targets", targetsFile}, report...)...)
		t.Logf("labrun fleet collect exited %d:\n%s", code, out)
		if code != 2 {
			t.Errorf("collect exited %d: want 2, the class of the one target not graded (config)", code)
		}
	}
	collect("--report", "json="+jsonReport, "--report", "junit="+junitReport)
	jobAttempts := func(i int) int {
		if fleet.ShardOf(i, fleetLearners, fleetShards) == heldShard {
			return 2
		}
		return 1
	}
	checkClassResults(t, readResults(t, jsonReport), targets, jobAttempts)
	checkJobStatus(ctx, t, c, run)
	checkJUnit(t, junitReport)

	// The results outlast the pods, and the Job: the finished pods
	// deleted, then the Job, collect finds every result still.
	jobPods := cluster.ObjectQuery{APIVersion: "v1", Kind: "Pod", Namespace: run, Selector: fleet.LabelJobName + "=labrun-fleet-e2e-fleet"}
	if deleted, err := c.Delete(ctx, jobPods, cluster.DeleteRequest{Wait: true}); err != nil || len(deleted) < fleetShards {
		t.Fatalf("deleting the Job's pods: %d deleted, %v; want the %d shards'", len(deleted), err, fleetShards)
	}
	afterPods := filepath.Join(dir, "after-pods.jsonl")
	collect("--report", "json="+afterPods)
	checkClassResults(t, readResults(t, afterPods), targets, jobAttempts)
	if _, err := c.Delete(ctx, cluster.ObjectQuery{APIVersion: "batch/v1", Kind: "Job", Namespace: run, Name: "labrun-fleet-e2e-fleet"}, cluster.DeleteRequest{Wait: true}); err != nil {
		t.Fatal(err)
	}
	afterJob := filepath.Join(dir, "after-job.jsonl")
	collect("--report", "json="+afterJob)
	checkClassResults(t, readResults(t, afterJob), targets, jobAttempts)

	// The same class graded from here by check --targets, through the
	// same check of each target: the same verdicts, each in one attempt,
	// the broken target given the same broken variable.
	brokenFile := filepath.Join(dir, "targets-broken.yaml")
	data, err := os.ReadFile(targetsFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(brokenFile, []byte(strings.Replace(string(data), broken, fmt.Sprintf("{namespace: %s, set: [expected=forty-two]}", targets[brokenAt]), 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	fanOut := filepath.Join(dir, "fanout.jsonl")
	code, out := runLabrun(t, bin, "check", "--kubeconfig", kubetest.Kubeconfig(t), "--targets", brokenFile, "--parallel", "4",
		"--report", "json="+fanOut, fleetPlaybook)
	t.Logf("labrun check --targets exited %d:\n%s", code, out)
	if code != 2 {
		t.Errorf("check --targets exited %d: want 2, the class of the one target not graded (config)", code)
	}
	checkClassResults(t, readResults(t, fanOut), targets, func(int) int { return 0 })
}

// deleteSharedRole deletes, when the test ends, the ClusterRole the Job
// job of namespace ns shares among its targets' namespaces (if render
// made one), which deleting the namespaces leaves.
func deleteSharedRole(t *testing.T, c *kube.Client, job, ns string) {
	t.Cleanup(func() {
		name := fleet.SharedRoleName(fleet.Job{Name: job, Namespace: ns})
		c.Delete(context.Background(), cluster.ObjectQuery{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole", Name: name}, cluster.DeleteRequest{IgnoreNotFound: true})
	})
}

// importLabrunImage imports labrun's image into the nodes and returns its
// name.
func importLabrunImage(t *testing.T) string {
	tarball := os.Getenv("LABRUN_IMAGE_TARBALL")
	if tarball == "" {
		command(t, "make", "-C", "../..", "image")
		tarball = imageTarball
	}
	ref, digest := imageName(t, tarball)
	t.Logf("importing %s (%s)\n%s", ref, digest, command(t, "../../testbed/lib/labrun-image.sh", tarball))
	return ref
}

// classNamespaces makes the learners' namespaces (deleted when the test
// ends) with their answers, the grading namespace run, and the held
// learner's hold ConfigMap; it returns the learners' namespaces.
func classNamespaces(ctx context.Context, t *testing.T, c *kube.Client, run string) []string {
	var b strings.Builder
	var names []string
	for i := range fleetLearners {
		ns := fmt.Sprintf("%s-l%02d", run, i)
		names = append(names, ns)
		answer := "42"
		if wrongAt[i] {
			answer = "41"
		}
		fmt.Fprintf(&b, "apiVersion: v1\nkind: Namespace\nmetadata: {name: %s}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: answer, namespace: %s}\ndata: {value: %q}\n---\n", ns, ns, answer)
		t.Cleanup(func() {
			c.Delete(context.Background(), cluster.ObjectQuery{Kind: "Namespace", Name: ns}, cluster.DeleteRequest{IgnoreNotFound: true})
		})
	}
	fmt.Fprintf(&b, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: hold, namespace: %s, labels: {labrun-e2e: hold}}\ndata: {seconds: 10m}\n---\n", names[heldAt])
	fmt.Fprintf(&b, "apiVersion: v1\nkind: Namespace\nmetadata: {name: %s}\n", run)
	kubetest.ApplyInNamespace(ctx, t, c, run, "the class", b.String())
	return names
}

// writeTargets writes the targets file, a flow mapping per target.
func writeTargets(t *testing.T, path string, namespaces []string) {
	var b strings.Builder
	b.WriteString("targets:\n")
	for _, ns := range namespaces {
		fmt.Fprintf(&b, "  - {namespace: %s}\n", ns)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// fleetRender runs labrun fleet render and returns the YAML it printed.
func fleetRender(t *testing.T, bin, targetsFile, ns, image string) string {
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(bin, "fleet", "render", fleetPlaybook, "--targets", targetsFile, "-n", ns,
		"--image", image, "--pods", fmt.Sprint(fleetShards), "--parallel", "16")
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("labrun fleet render: %v\n%s", err, stderr.String())
	}
	return stdout.String()
}

// runLabrun runs labrun and returns its exit code and its output.
func runLabrun(t *testing.T, bin string, args ...string) (int, string) {
	var out bytes.Buffer
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), out.String()
	} else if err != nil {
		t.Fatalf("labrun %v: %v", args, err)
	}
	return 0, out.String()
}

// stopHeldPod waits until the held shard's pod has graded the shard's
// other four targets (its log says so) while the held one pauses, lets
// the learner's namespace go (the hold ConfigMap deleted: the next pod
// does not pause), and deletes the pod, whose labrun is stopped
// mid-check before it stored anything.
func stopHeldPod(ctx context.Context, t *testing.T, c *kube.Client, ns, learner string) {
	selector := fmt.Sprintf("%s=labrun-fleet-e2e-fleet,batch.kubernetes.io/job-completion-index=%d", fleet.LabelJobName, heldShard)
	pods, err := c.Wait(ctx, cluster.ObjectQuery{APIVersion: "v1", Kind: "Pod", Namespace: ns, Selector: selector}, func(pods []map[string]any) (bool, error) {
		return len(pods) == 1 && k8sobj.String(pods[0], "status", "phase") == "Running", nil
	}, nil)
	if err != nil {
		t.Fatalf("the held shard's pod never ran: %v", err)
	}
	pod := k8sobj.String(pods[0], "metadata", "name")
	target := cluster.PodTarget{Namespace: ns, Pod: pod, Container: fleet.Container}
	perShard := fleetLearners / fleetShards
	waitLogLine(ctx, t, c, target, fmt.Sprintf("[%d/%d] ", perShard-1, perShard))
	if _, err := c.Delete(ctx, cluster.ObjectQuery{APIVersion: "v1", Kind: "ConfigMap", Namespace: learner, Name: "hold"}, cluster.DeleteRequest{Wait: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Delete(ctx, cluster.ObjectQuery{APIVersion: "v1", Kind: "Pod", Namespace: ns, Name: pod}, cluster.DeleteRequest{}); err != nil {
		t.Fatal(err)
	}
	t.Logf("deleted pod %s while its check of %s paused", pod, learner)
}

// waitLogLine reads the container's log until it has line, which the
// container prints once: each read follows a change the test waits on,
// the log growing, not a fixed time.
func waitLogLine(ctx context.Context, t *testing.T, c *kube.Client, target cluster.PodTarget, line string) {
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	last := ""
	for {
		logs, err := c.Logs(ctx, target, cluster.LogRequest{})
		if err == nil && strings.Contains(logs.Text, line) {
			return
		}
		if err == nil {
			last = logs.Text
		}
		select {
		case <-ctx.Done():
			t.Fatalf("pod %s never printed %q; its log:\n%s", target.Pod, line, last)
		case <-tick.C:
		}
	}
}

// readResults reads a JSON lines report.
func readResults(t *testing.T, path string) []fleet.Result {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []fleet.Result
	for line := range strings.Lines(string(data)) {
		r, err := fleet.ParseLine([]byte(line))
		if err != nil {
			t.Fatalf("%s: %v: %s", path, err, line)
		}
		out = append(out, r)
	}
	return out
}

// checkClassResults compares collect's results with the class.
// attempts is how many attempts target i took: 2 for the held shard's in
// the Job, else 1; 0 (not counted) from check --targets.
func checkClassResults(t *testing.T, results []fleet.Result, targets []string, attempts func(i int) int) {
	t.Helper()
	if len(results) != fleetLearners {
		t.Fatalf("collect reported %d targets, want %d", len(results), fleetLearners)
	}
	for i, r := range results {
		want, class, attempts := runner.VerdictPassed, runner.Class(""), attempts(i)
		switch {
		case wrongAt[i]:
			want, class = runner.VerdictWrong, runner.ClassAssertion
		case i == brokenAt:
			want, class = runner.VerdictNotGraded, runner.ClassConfig
		}
		if r.Index != i || r.Target != targets[i] || r.Verdict != want || r.Class != class || r.Attempts != attempts {
			t.Errorf("index %d: got %+v\nwant target %s, verdict %s, class %q, %d attempt(s)", i, r, targets[i], want, class, attempts)
		}
	}
	if r := results[brokenAt]; !strings.Contains(r.FirstFailure, "variable expected is a whole number") {
		t.Errorf("the broken target's first failure is %q: want the refused variable", r.FirstFailure)
	}
}

// checkJobStatus: the Job completed, every shard stored its results (a
// broken target is a result), the held shard on its second attempt.
// collect ends once every shard stored its results, which the Job's end
// follows: it is waited for.
func checkJobStatus(ctx context.Context, t *testing.T, c *kube.Client, ns string) {
	jobs, err := c.Wait(ctx, cluster.ObjectQuery{APIVersion: "batch/v1", Kind: "Job", Namespace: ns, Name: "labrun-fleet-e2e-fleet"}, func(jobs []map[string]any) (bool, error) {
		return len(jobs) == 1 && fleet.State(jobs[0]).Finished != "", nil
	}, nil)
	if err != nil || len(jobs) != 1 {
		t.Fatalf("the Job: %v", err)
	}
	s := fleet.State(jobs[0])
	if s.Finished != "Complete" || s.FailedIndexes != "" || s.Succeeded != fleetShards || s.Failed != 1 {
		t.Errorf("the Job's status: %+v; want Complete, %d shards succeeded, one pod failed (the stopped one)", s, fleetShards)
	}
}

// checkJUnit: one suite per target, the wrong ones with a failure, the
// broken one with an error.
func checkJUnit(t *testing.T, path string) {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Suites []struct {
			Name     string `xml:"name,attr"`
			Failures int    `xml:"failures,attr"`
			Errors   int    `xml:"errors,attr"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	var failures, errors int
	for _, s := range doc.Suites {
		failures += s.Failures
		errors += s.Errors
	}
	if len(doc.Suites) != fleetLearners || failures != len(wrongAt) || errors != 1 {
		t.Errorf("JUnit: %d suites, %d failures, %d errors; want %d, %d, 1", len(doc.Suites), failures, errors, fleetLearners, len(wrongAt))
	}
}

// TestFleetJobClassroom grades the classroom lab (playbooks/classroom.yaml:
// 5 pods per solved namespace, 4 files per learner) with the rendered Job
// of two pods: the schemas its write steps read go with it (--include),
// each learner's files to the pod of that learner's shard only
// (--outputs). Two learners solve it; the
// second's scale.json then holds one wrong value. collect and check
// --targets --outputs must both find exactly that.
func TestFleetJobClassroom(t *testing.T) {
	c := kubetest.Connect(t)
	kc := kubetest.Kubeconfig(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	ref := importLabrunImage(t)
	bin := buildLabrun(t)
	dir, answers := t.TempDir(), filepath.Join(t.TempDir(), "answers")

	run := kubetest.NamespaceName("e2e-fleet-room")
	learners := twoLearners(ctx, t, c, run)
	for _, ns := range learners {
		command(t, bin, "run", "--no-progress", "--kubeconfig", kc, "--vars", "../../playbooks/classroom.testbed.yaml",
			"--set", "namespace="+ns, "--set", "out="+filepath.Join(answers, ns), "../../playbooks/classroom.yaml")
	}
	scale := filepath.Join(answers, learners[1], "scale.json")
	data := readFile(t, scale)
	if !strings.Contains(data, `"replicas": 3,`) {
		t.Fatalf("%s does not hold replicas 3:\n%s", scale, data)
	}
	if err := os.WriteFile(scale, []byte(strings.Replace(data, `"replicas": 3,`, `"replicas": 4,`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	targetsFile := filepath.Join(dir, "targets.yaml")
	writeTargets(t, targetsFile, learners)

	args := []string{"../../playbooks/classroom.yaml", "--outputs", "out=" + answers, "--pods", "2"}
	for _, s := range []string{"deploy", "scale", "expose", "policy"} {
		args = append(args, "--include", "classroom/schemas/"+s+".schema.json")
	}
	report := filepath.Join(dir, "class.jsonl")
	code := renderAndCollect(ctx, t, c, bin, run, ref, targetsFile, report, "labrun-classroom-fleet", args...)
	checkClassroom(t, code, readResults(t, report), learners)

	code, out := runLabrun(t, bin, "check", "--kubeconfig", kc, "--targets", targetsFile, "--outputs", "out="+answers,
		"--report", "json="+report, "../../playbooks/classroom.yaml")
	t.Logf("labrun check --targets exited %d:\n%s", code, out)
	checkClassroom(t, code, readResults(t, report), learners)
}

// renderAndCollect grades the class in targetsFile with a Job in the
// namespace run: labrun fleet render (of the playbook and the flags in
// render, with the image ref), applied, then labrun fleet collect of the
// Job named job into the JSON report. It returns collect's exit code.
func renderAndCollect(ctx context.Context, t *testing.T, c *kube.Client, bin, run, ref, targetsFile, report, job string, render ...string) int {
	t.Helper()
	code, manifest := runLabrun(t, bin, append([]string{"fleet", "render", "--targets", targetsFile, "-n", run, "--image", ref}, render...)...)
	if code != 0 {
		t.Fatalf("labrun fleet render exited %d:\n%s", code, manifest)
	}
	deleteSharedRole(t, c, job, run)
	kubetest.ApplyInNamespace(ctx, t, c, run, "the rendered Job", manifest)
	code, out := runLabrun(t, bin, "fleet", "collect", "--kubeconfig", kubetest.Kubeconfig(t), "-n", run, "--job", job,
		"--wait", "5m", "--targets", targetsFile, "--report", "json="+report)
	t.Logf("labrun fleet collect exited %d:\n%s", code, out)
	return code
}

// twoLearners makes the grading namespace run and two learners'
// namespaces (each deleted when the test ends), and returns the
// learners'.
func twoLearners(ctx context.Context, t *testing.T, c *kube.Client, run string) []string {
	learners := []string{run + "-l00", run + "-l01"}
	var b strings.Builder
	for _, ns := range append([]string{run}, learners...) {
		fmt.Fprintf(&b, "apiVersion: v1\nkind: Namespace\nmetadata: {name: %s}\n---\n", ns)
		t.Cleanup(func() {
			c.Delete(context.Background(), cluster.ObjectQuery{Kind: "Namespace", Name: ns}, cluster.DeleteRequest{IgnoreNotFound: true})
		})
	}
	kubetest.ApplyInNamespace(ctx, t, c, run, "the class", b.String())
	return learners
}

// TestFleetJobHelm grades a lab whose check reads a Helm release
// (testdata/helm/class.yaml) with the rendered Job: labrun in the image
// starts labrun-helm beside it, which connects in-cluster as the Job's
// ServiceAccount, with the rules render derived from the playbook (get
// and list of Secrets in each learner's namespace, no more). Two learners
// install the release with labrun run; the second greets with another
// word. collect must find the first passed and the second wrong, by the
// release's values: a pod without labrun-helm, or without the rules,
// fails as config or forbidden.
func TestFleetJobHelm(t *testing.T) {
	c := kubetest.Connect(t)
	kc := kubetest.Kubeconfig(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	ref := importLabrunImage(t)
	bin := buildLabrun(t)
	dir := t.TempDir()
	const playbook = "testdata/helm/class.yaml"

	run := kubetest.NamespaceName("e2e-fleet-helm")
	learners := twoLearners(ctx, t, c, run)
	for i, ns := range learners {
		greeting := []string{"hello", "hola"}[i]
		command(t, bin, "run", "--no-progress", "--kubeconfig", kc, "--set", "namespace="+ns,
			"--set", "greeting="+greeting, "--set", "expected="+greeting, playbook)
	}
	targetsFile := filepath.Join(dir, "targets.yaml")
	writeTargets(t, targetsFile, learners)
	report := filepath.Join(dir, "class.jsonl")
	code := renderAndCollect(ctx, t, c, bin, run, ref, targetsFile, report, "labrun-helm-class-fleet", playbook)
	results := readResults(t, report)
	if code != 0 || len(results) != 2 {
		t.Fatalf("exit %d, %d results: want 0 (every target graded) and 2", code, len(results))
	}
	if r := results[0]; r.Target != learners[0] || r.Verdict != runner.VerdictPassed || r.Passed != 1 {
		t.Errorf("%s: %+v; want passed", learners[0], r)
	}
	if r := results[1]; r.Target != learners[1] || r.Verdict != runner.VerdictWrong ||
		!strings.Contains(r.FirstFailure, "the release demo must greet with the expected greeting") {
		t.Errorf("%s: %+v; want wrong, by the release's greeting", learners[1], r)
	}
}

// checkClassroom: the first learner passed all 4 tasks, the second is
// wrong in task 2 by the one value.
func checkClassroom(t *testing.T, code int, results []fleet.Result, learners []string) {
	t.Helper()
	if code != 0 || len(results) != 2 {
		t.Fatalf("exit %d, %d results: want 0 and 2", code, len(results))
	}
	if r := results[0]; r.Target != learners[0] || r.Verdict != runner.VerdictPassed || r.Passed != 4 {
		t.Errorf("%s: %+v; want passed, 4 tasks", learners[0], r)
	}
	if r := results[1]; r.Target != learners[1] || r.Verdict != runner.VerdictWrong || r.Passed != 3 ||
		!strings.Contains(r.FirstFailure, "scale.json: replicas is 4, expected 3") {
		t.Errorf("%s: %+v; want wrong in scale.json's replicas alone", learners[1], r)
	}
}
