//go:build e2e

package e2e

// A grader must accept every right answer, not only the one its own solve
// wrote. The bash solutions in testbed/bench/ solve the labs by other
// means (kubectl, jq, awk, cilium-dbg through kubectl exec): their files
// differ from labrun's in key order, spacing and the order of lists, and
// are written from reads made at other moments. labrun check must pass
// every task on them, run right after each solution.

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/labrun/labrun/internal/heavy/kube/kubetest"
)

// bashSolution runs testbed/bench/SCRIPT into a fresh directory, from the
// repository's root as its usage says, and returns the directory.
func bashSolution(t *testing.T, script string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "bash")
	cmd := exec.Command("testbed/bench/"+script, out)
	cmd.Dir = "../.."
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kubetest.Kubeconfig(t), "BENCH_WAITS="+out+".waits")
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Run(); err != nil {
		t.Fatalf("the bash solution %s failed: %v\n%s", script, err, log.String())
	}
	return out
}

// checkSolution runs labrun check on a solution's files with the lab's
// testbed vars, and wants every task passed.
func checkSolution(t *testing.T, bin, lab, dir string) {
	t.Helper()
	kc := kubetest.Kubeconfig(t)
	run := func(cmd, dir string, extra ...string) (int, string) {
		args := append([]string{cmd, "--no-progress", "--kubeconfig", kc, "--vars", "../../playbooks/" + lab + ".testbed.yaml", "--set", "out=" + dir}, extra...)
		return labrun(t, bin, kc, append(args, "../../playbooks/"+lab+".yaml")...)
	}
	code, text, tasks := checkReport(t, run, dir)
	if code != 0 {
		t.Errorf("labrun check of %s's bash solution exited %d, want 0 (the grader refuses a right answer):\n%s", lab, code, text)
	}
	if len(tasks) == 0 {
		t.Fatalf("check's report of %s lists no task:\n%s", lab, text)
	}
	for _, tk := range tasks {
		if tk.Status != "passed" {
			t.Errorf("%s: task %s is %s on the bash solution's files (%s)", lab, tk.ID, tk.Status, tk.Reason)
		}
	}
}

func TestBashSolutionPassesCheckCCADatapath(t *testing.T) {
	if v := kubetest.ReadVars(t); v.Profile != "single" {
		t.Skipf("test cluster runs profile %q; cca-datapath is the single-node lab", v.Profile)
	}
	bin := buildLabrun(t)
	checkSolution(t, bin, "cca-datapath", bashSolution(t, "cca-datapath.sh"))
}

func TestTunnelBashSolutionsPassCheck(t *testing.T) {
	twoNodes(t, "tunnel")
	bin := buildLabrun(t)
	kc := kubetest.Kubeconfig(t)
	t.Cleanup(func() {
		for _, cleanup := range []string{"cca-identity/cleanup.yaml", "cca-services/cleanup.yaml"} {
			if _, err := os.Stat("../../playbooks/" + cleanup); err != nil {
				continue
			}
			if code, text := labrun(t, bin, kc, "run", "--no-progress", "--kubeconfig", kc, "../../playbooks/"+cleanup); code != 0 {
				t.Errorf("%s exited %d:\n%s", cleanup, code, text)
			}
		}
	})
	t.Run("cca-identity", func(t *testing.T) {
		checkSolution(t, bin, "cca-identity", bashSolution(t, "cca-identity.sh"))
	})
	t.Run("cca-services", func(t *testing.T) {
		checkSolution(t, bin, "cca-services", bashSolution(t, "cca-services.sh"))
	})
}
