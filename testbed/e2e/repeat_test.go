//go:build e2e

package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/labrun/labrun/internal/heavy/kube/kubetest"
)

// repeatReport is what these tests read of labrun test --repeat's JSON
// report (schemas/test-repeat.schema.json).
type repeatReport struct {
	Fresh  string `json:"fresh"`
	Status string `json:"status"`
	Runs   []struct {
		Fresh   bool    `json:"fresh"`
		Seconds float64 `json:"seconds"`
	} `json:"runs"`
	Tasks []struct {
		ID     string `json:"id"`
		Runs   int    `json:"runs"`
		Passed int    `json:"passed"`
		Flaky  bool   `json:"flaky"`
	} `json:"tasks"`
}

// repeatLab runs labrun test --repeat 2 on lab with its testbed vars and
// wants every task passed on each of its 3 runs (2 on a fresh lab, made
// as fresh says, then 1 on the lab as the second left it), and every
// change to the last run's files rejected.
func repeatLab(t *testing.T, bin, lab, fresh string) {
	t.Helper()
	kc := kubetest.Kubeconfig(t)
	dir := t.TempDir()
	report := filepath.Join(dir, "repeat.json")
	code, text := labrun(t, bin, kc, "test", "--repeat", "2", "--no-progress", "--kubeconfig", kc,
		"--vars", "../../playbooks/"+lab+".testbed.yaml", "--set", "out="+filepath.Join(dir, "out"),
		"--report", "json="+report, "../../playbooks/"+lab+".yaml")
	if code != 0 {
		t.Fatalf("labrun test --repeat 2 of %s exited %d:\n%s", lab, code, text)
	}
	data, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	var rep repeatReport
	if err := json.Unmarshal(data, &rep); err != nil {
		t.Fatalf("%s: %v", report, err)
	}
	if rep.Status != "passed" || rep.Fresh != fresh || len(rep.Runs) != 3 || !rep.Runs[0].Fresh || !rep.Runs[1].Fresh || rep.Runs[2].Fresh {
		t.Errorf("%s: status %q, fresh %q, %d runs; want passed, %q, 2 fresh runs then 1 as left:\n%s", lab, rep.Status, rep.Fresh, len(rep.Runs), fresh, text)
	}
	for _, task := range rep.Tasks {
		if task.Runs != 3 || task.Passed != 3 || task.Flaky {
			t.Errorf("%s: task %s passed %d of %d runs; want 3 of 3", lab, task.ID, task.Passed, task.Runs)
		}
	}
	if !strings.Contains(text, "labrun test: no flaky task:") || !strings.Contains(text, " 0 survived, 0 rejected naming another value") {
		t.Errorf("%s: no line saying no task is flaky, or a change survived:\n%s", lab, text)
	}
	for i, r := range rep.Runs {
		t.Logf("%s: run %d (fresh %v) took %.1f s", lab, i+1, r.Fresh, r.Seconds)
	}
}

// The two labs of the tunnel profile, each solved and checked 3 times by
// labrun test --repeat 2 (issue: every right answer accepted, every
// time): cca-identity made fresh by its cleanup playbook (namespace shop
// and the node labels), cca-services by deleting the namespace it makes
// (cca-svc); the Helm release cca-services upgrades is rolled back by the
// lab itself each run. Every task must pass every run.
func TestTunnelLabsRepeat(t *testing.T) {
	twoNodes(t, "tunnel")
	bin := buildLabrun(t)
	kc := kubetest.Kubeconfig(t)
	t.Cleanup(func() {
		if code, text := labrun(t, bin, kc, "run", "--no-progress", "--kubeconfig", kc, "../../playbooks/cca-identity/cleanup.yaml"); code != 0 {
			t.Errorf("cca-identity's cleanup exited %d:\n%s", code, text)
		}
	})
	t.Run("cca-identity", func(t *testing.T) {
		repeatLab(t, bin, "cca-identity", "run the cleanup playbook ../../playbooks/cca-identity/cleanup.yaml")
	})
	t.Run("cca-services", func(t *testing.T) {
		repeatLab(t, bin, "cca-services", "delete namespace cca-svc")
	})
}
