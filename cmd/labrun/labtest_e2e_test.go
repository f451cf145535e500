//go:build e2e

package main

import (
	"bytes"
	"context"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/labrun/labrun/internal/boundary/cluster"
	"github.com/labrun/labrun/internal/heavy/kube/kubetest"
)

// labrun test --protocol --repeat 2 on cca-datapath, the lab of the
// single-node profile, from a cluster where the lab was never solved (its
// namespace deleted) and an empty output directory: every one of its 8
// tasks fails there; then the lab is solved and checked 3 times, twice
// after deleting its namespace cca-dp and once on the lab as the second
// run left it, and every task passes every run (none flaky); every change
// to a value of the last run's files fails the check naming that value,
// but the one the playbook declares loose with its reason (ghost.json's
// seconds, curl's time). Afterwards the solved files still pass check:
// the changes were made elsewhere.
func TestLabrunTestCCADatapath(t *testing.T) {
	if v := kubetest.ReadVars(t); v.Profile != "single" {
		t.Skipf("test cluster runs profile %q; cca-datapath is the single profile's lab", v.Profile)
	}
	kc := kubetest.Kubeconfig(t)
	c := kubetest.Connect(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	// The lab untouched: its namespace (web, holder, probe, the Services)
	// gone, as on a cluster it was never solved on; the test solves it
	// again.
	if _, err := c.Delete(ctx, cluster.ObjectQuery{Kind: "Namespace", Name: "cca-dp"}, cluster.DeleteRequest{Wait: true, IgnoreNotFound: true}); err != nil {
		t.Fatalf("deleting namespace cca-dp: %v", err)
	}
	out := t.TempDir()
	labrun := func(cmd string, flags ...string) (int, string) {
		var stdout, stderr bytes.Buffer
		code := Main(append(append([]string{cmd}, flags...), "--no-progress", "--kubeconfig", kc,
			"--vars", "../../playbooks/cca-datapath.testbed.yaml", "--set", "out="+out,
			"../../playbooks/cca-datapath.yaml"), &stdout, &stderr)
		return code, stdout.String() + stderr.String()
	}
	code, text := labrun("test", "--protocol", "--repeat", "2")
	if code != 0 {
		t.Fatalf("labrun test --protocol --repeat 2 exited %d:\n%s", code, text)
	}
	if !strings.Contains(text, "labrun test: each run of --repeat but the last starts from a fresh lab: delete namespace cca-dp first") ||
		!strings.Contains(text, "labrun test: no flaky task: 8 tasks passed all 3 runs") {
		t.Errorf("want 3 runs, the first 2 after deleting cca-dp, and no flaky task:\n%s", text)
	}
	if passed := regexp.MustCompile(`(?m)^repeat: task \d \(\w+\): passed 3 of 3 runs$`).FindAllString(text, -1); len(passed) != 8 {
		t.Errorf("want each of the 8 tasks passed 3 of 3 runs, %d did:\n%s", len(passed), text)
	}
	// Every task fails as a wrong answer: tasks 2, 3, 5 and 7 read
	// objects a get did not find (web's ClusterIP, holder's endpoint id),
	// and an expression that cannot be evaluated for that takes the class
	// of the get, not config (a broken lab).
	untouched := regexp.MustCompile(`(?m)^untouched: task (\d) \((\w+)\) fails, as it must \[assertion\]: `).FindAllStringSubmatch(text, -1)
	if len(untouched) != 8 || !strings.Contains(text, "labrun test: protocol: 8 tasks failed on the untouched lab and passed once solved") {
		t.Errorf("want each of the 8 tasks failed on the untouched lab, %d did:\n%s", len(untouched), text)
	}
	summary := regexp.MustCompile(`labrun test: (\d+) changes to (\d+) graded files: (\d+) rejected naming the value, 1 declared loose, 0 survived, 0 rejected naming another value`).FindStringSubmatch(text)
	if summary == nil {
		t.Fatalf("no summary with 1 declared loose and no survivor:\n%s", text)
	}
	// Each of the 8 files' values changed and each key removed make 92
	// changes (more when ct.json is graded twice, holder having
	// reconnected).
	changes, _ := strconv.Atoi(summary[1])
	files, _ := strconv.Atoi(summary[2])
	if files < 8 || changes < 92 {
		t.Errorf("%d changes to %d files; want at least 92 changes to the 8 files", changes, files)
	}
	// The other half: each file written other ways with the same meaning
	// passes (the test's exit code says it too; this names the line).
	if !regexp.MustCompile(`graded files written other ways with the same meaning: [1-9]\d* passed, 0 refused`).MatchString(text) {
		t.Errorf("a right answer written another way was refused, or none was tried:\n%s", text)
	}
	if !strings.Contains(text, "ghost.json: seconds ") || !strings.Contains(text, "accepted, declared loose: curl's time") {
		t.Errorf("ghost.json's seconds is not reported as declared loose:\n%s", text)
	}
	if code, text := labrun("check"); code != 0 {
		t.Errorf("check of the solved files after labrun test exited %d:\n%s", code, text)
	}
}
