//go:build e2e

package main

import (
	"bytes"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/labrun/labrun/internal/kube/kubetest"
)

// labrun test on cca-datapath, the lab of the single-node profile: the lab
// solves, check passes on its files, and every change to a value of them
// fails the check naming that value, but the one the playbook declares
// loose with its reason (ghost.json's seconds, curl's time). Afterwards
// the solved files still pass check: the changes were made elsewhere.
func TestLabrunTestCCADatapath(t *testing.T) {
	if v := kubetest.ReadVars(t); v.Profile != "single" {
		t.Skipf("test cluster runs profile %q; cca-datapath is the single profile's lab", v.Profile)
	}
	kc := kubetest.Kubeconfig(t)
	out := t.TempDir()
	labrun := func(cmd string) (int, string) {
		var stdout, stderr bytes.Buffer
		code := Main([]string{cmd, "--no-progress", "--kubeconfig", kc,
			"--vars", "../../playbooks/cca-datapath.testbed.yaml", "--set", "out=" + out,
			"../../playbooks/cca-datapath.yaml"}, &stdout, &stderr)
		return code, stdout.String() + stderr.String()
	}
	code, text := labrun("test")
	if code != 0 {
		t.Fatalf("labrun test exited %d:\n%s", code, text)
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
	if !strings.Contains(text, "ghost.json: seconds ") || !strings.Contains(text, "accepted, declared loose: curl's time") {
		t.Errorf("ghost.json's seconds is not reported as declared loose:\n%s", text)
	}
	if code, text := labrun("check"); code != 0 {
		t.Errorf("check of the solved files after labrun test exited %d:\n%s", code, text)
	}
}
