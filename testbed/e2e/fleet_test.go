//go:build e2e

package e2e

// A class graded by one Indexed Job (labrun fleet render, then labrun
// fleet collect), in labrun's own image on the test cluster: 20 learner
// namespaces of the lab cmd/labrun/testdata/fleet/lab.yaml, 5 with a wrong
// answer; one index's pod is stopped while its check is under way (it is
// held in the lab's pause step until the test has seen it there, in its
// log) and its index is checked again; one index's target is broken (a
// variable of the wrong type, edited into the Job's ConfigMap after
// render, which refuses it), so it fails at once, exit 2, and is not
// retried. collect must report exactly that, and the Job's own status
// must agree. The Job's pods are given no kubeconfig: labrun connects
// in-cluster, as the Job's ServiceAccount, by the token Kubernetes mounts.
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
	"github.com/labrun/labrun/testbed/browser"
	"golang.org/x/net/html"
)

const fleetPlaybook = "../../cmd/labrun/testdata/fleet/lab.yaml"

// The class: 20 learners, those at wrongAt answer 41, the one at heldAt
// is held and stopped, the one at brokenAt is broken.
const (
	fleetLearners = 20
	heldAt        = 7
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
	kubetest.ApplyInNamespace(ctx, t, c, run, "the rendered Job", job)

	stopHeldPod(ctx, t, c, run, targets[heldAt])

	jsonReport, junitReport, boardReport := filepath.Join(dir, "class.jsonl"), filepath.Join(dir, "class.xml"), filepath.Join(dir, "class.html")
	code, out := runLabrun(t, bin, "fleet", "collect", "--kubeconfig", kubetest.Kubeconfig(t), "-n", run, "--job", "labrun-fleet-e2e-fleet",
		"--wait", "5m", "--targets", targetsFile, "--report", "json="+jsonReport, "--report", "junit="+junitReport, "--report", "html="+boardReport)
	t.Logf("labrun fleet collect exited %d:\n%s", code, out)
	if code != 2 {
		t.Errorf("collect exited %d: want 2, the class of the one target not graded (config)", code)
	}
	results := readResults(t, jsonReport)
	checkClassResults(t, results, targets, 2)
	checkJobStatus(ctx, t, c, run)
	checkJUnit(t, junitReport)
	checkBoard(t, boardReport, results)

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
	code, out = runLabrun(t, bin, "check", "--kubeconfig", kubetest.Kubeconfig(t), "--targets", brokenFile, "--parallel", "4",
		"--report", "json="+fanOut, fleetPlaybook)
	t.Logf("labrun check --targets exited %d:\n%s", code, out)
	if code != 2 {
		t.Errorf("check --targets exited %d: want 2, the class of the one target not graded (config)", code)
	}
	checkClassResults(t, readResults(t, fanOut), targets, 0)
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
		"--image", image, "--parallel", "5", "--max-failed", "3")
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

// stopHeldPod waits until the held index's pod is in the lab's pause step
// (its log says the step started), lets the learner's namespace go (the
// hold ConfigMap deleted: the next pod does not pause), and deletes the
// pod, whose labrun is stopped mid-check.
func stopHeldPod(ctx context.Context, t *testing.T, c *kube.Client, ns, learner string) {
	selector := fmt.Sprintf("%s=labrun-fleet-e2e-fleet,batch.kubernetes.io/job-completion-index=%d", fleet.LabelJobName, heldAt)
	pods, err := c.Wait(ctx, cluster.ObjectQuery{APIVersion: "v1", Kind: "Pod", Namespace: ns, Selector: selector}, func(pods []map[string]any) (bool, error) {
		return len(pods) == 1 && k8sobj.String(pods[0], "status", "phase") == "Running", nil
	}, nil)
	if err != nil {
		t.Fatalf("the held index's pod never ran: %v", err)
	}
	pod := k8sobj.String(pods[0], "metadata", "name")
	target := cluster.PodTarget{Namespace: ns, Pod: pod, Container: fleet.Container}
	waitLogLine(ctx, t, c, target, "[2/3] pause (sleep) ...")
	if _, err := c.Delete(ctx, cluster.ObjectQuery{APIVersion: "v1", Kind: "ConfigMap", Namespace: learner, Name: "hold"}, cluster.DeleteRequest{Wait: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Delete(ctx, cluster.ObjectQuery{APIVersion: "v1", Kind: "Pod", Namespace: ns, Name: pod}, cluster.DeleteRequest{}); err != nil {
		t.Fatal(err)
	}
	t.Logf("deleted pod %s while its check paused", pod)
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
// heldAttempts is how many attempts the held index took: 2 in the Job,
// 0 (not counted) from check --targets.
func checkClassResults(t *testing.T, results []fleet.Result, targets []string, heldAttempts int) {
	if len(results) != fleetLearners {
		t.Fatalf("collect reported %d targets, want %d", len(results), fleetLearners)
	}
	for i, r := range results {
		want, class, attempts := fleet.Passed, runner.Class(""), min(heldAttempts, 1)
		switch {
		case wrongAt[i]:
			want, class = fleet.Wrong, runner.ClassAssertion
		case i == brokenAt:
			want, class = fleet.NotGraded, runner.ClassConfig
		case i == heldAt:
			attempts = heldAttempts
		}
		if r.Index != i || r.Target != targets[i] || r.Verdict != want || r.Class != class || r.Attempts != attempts {
			t.Errorf("index %d: got %+v\nwant target %s, verdict %s, class %q, %d attempt(s)", i, r, targets[i], want, class, attempts)
		}
	}
	if r := results[brokenAt]; !strings.Contains(r.FirstFailure, "variable expected is a whole number") {
		t.Errorf("the broken target's first failure is %q: want the refused variable", r.FirstFailure)
	}
}

// checkJobStatus: the Job ended Failed, by its one failed index, the
// broken one; the others succeeded.
func checkJobStatus(ctx context.Context, t *testing.T, c *kube.Client, ns string) {
	jobs, err := c.List(ctx, cluster.ObjectQuery{APIVersion: "batch/v1", Kind: "Job", Namespace: ns, Name: "labrun-fleet-e2e-fleet"})
	if err != nil || len(jobs) != 1 {
		t.Fatalf("the Job: %v", err)
	}
	s := fleet.State(jobs[0])
	if s.Finished != "Failed" || s.FailedIndexes != fmt.Sprint(brokenAt) || s.Succeeded != fleetLearners-1 {
		t.Errorf("the Job's status: %+v; want Failed by index %d alone, %d succeeded", s, brokenAt, fleetLearners-1)
	}
	// what the class board says of the Job, from the Job as the API
	// server gives it
	if filepath.Base(s.Playbook) != filepath.Base(fleetPlaybook) || s.Started.IsZero() || !s.Ended.After(s.Started) {
		t.Errorf("the Job's playbook %q, started %s, ended %s: want %s, a start and a later end", s.Playbook, s.Started, s.Ended, filepath.Base(fleetPlaybook))
	}
}

// checkBoard: collect's class board has a row per target with the
// verdict its JSON report gives, each task's cell in the state of its
// case (a wrong answer's with its message), the report's counts, and the
// playbook the Job's pods checked: as the file holds it and, with
// Chromium (always in CI), as a browser shows it once the page's script
// ran; the browser's screenshot is kept.
func checkBoard(t *testing.T, path string, results []fleet.Result) {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	checkBoardDoc(t, "the board's file", browser.Parse(t, data), results)
	bin, ok := browser.Find(t)
	if !ok {
		return
	}
	checkBoardDoc(t, "the board in Chromium", browser.DOM(t, bin, "file://"+path), results)
	shot := filepath.Join(browser.Artifacts(t), "fleet-collect-board.png")
	browser.Screenshot(t, bin, "file://"+path, shot, 1400, 900)
	t.Logf("the class board of the Job: %s", shot)
}

func checkBoardDoc(t *testing.T, what string, d browser.Doc, results []fleet.Result) {
	rows := map[string]*html.Node{}
	for _, tr := range d.All(func(n *html.Node) bool { return n.Data == "tr" && browser.HasAttr(n, "data-n") }) {
		rows[browser.Attr(tr, "data-n")] = tr
	}
	if len(rows) != len(results) {
		t.Errorf("%s: %d rows for %d targets", what, len(rows), len(results))
	}
	for _, r := range results {
		tr := rows[r.Target]
		if tr == nil || browser.Attr(tr, "data-v") != string(r.Verdict) {
			t.Errorf("%s: no row of %s with its verdict %s", what, r.Target, r.Verdict)
			continue
		}
		// the lab's one task: the cell after the learner's name, tasks
		// passed and verdict
		cell := browser.Children(tr, "td")[2]
		want, msg := "s-passed", ""
		switch {
		case r.Verdict == fleet.NotGraded:
			want = "s-" + string(r.Class)
		case r.Verdict == fleet.Wrong:
			want, msg = "s-wrong", r.Cases[0].Message
		}
		if browser.Attr(cell, "class") != want || browser.Attr(cell, "data-m") != msg {
			t.Errorf("%s: the cell of %s is %v; want %s %q", what, r.Target, cell.Attr, want, msg)
		}
	}
	c := fleet.Count(results)
	for key, want := range map[string]int{"passed": c.Passed, "wrong": c.Wrong, "not-graded": c.NotGraded} {
		got := d.All(func(n *html.Node) bool { return browser.Attr(n, "data-count") == key })
		if len(got) != 1 || browser.Text(got[0]) != fmt.Sprint(want) {
			t.Errorf("%s: count %s is not %d", what, key, want)
		}
	}
	dd := d.All(func(n *html.Node) bool { return n.Data == "dd" })
	if len(dd) == 0 || filepath.Base(browser.Text(dd[0])) != filepath.Base(fleetPlaybook) {
		t.Errorf("%s: the summary does not name the playbook %s first", what, filepath.Base(fleetPlaybook))
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
// 5 pods per solved namespace, 4 files per learner) with the rendered Job:
// the schemas its write steps read go with it (--include), each learner's
// files to that learner's pod only (--outputs). Two learners solve it; the
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

	args := []string{"../../playbooks/classroom.yaml", "--outputs", "out=" + answers}
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
	if r := results[0]; r.Target != learners[0] || r.Verdict != fleet.Passed || r.Passed != 1 {
		t.Errorf("%s: %+v; want passed", learners[0], r)
	}
	if r := results[1]; r.Target != learners[1] || r.Verdict != fleet.Wrong ||
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
	if r := results[0]; r.Target != learners[0] || r.Verdict != fleet.Passed || r.Passed != 4 {
		t.Errorf("%s: %+v; want passed, 4 tasks", learners[0], r)
	}
	if r := results[1]; r.Target != learners[1] || r.Verdict != fleet.Wrong || r.Passed != 3 ||
		!strings.Contains(r.FirstFailure, "scale.json: replicas is 4, expected 3") {
		t.Errorf("%s: %+v; want wrong in scale.json's replicas alone", learners[1], r)
	}
}
