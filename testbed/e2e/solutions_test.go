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
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/labrun/labrun/internal/heavy/kube/kubetest"
)

// bashSolution runs testbed/bench/SCRIPT [ARGS] into a fresh directory
// (its last argument), from the repository's root as its usage says, and
// returns the directory.
func bashSolution(t *testing.T, script string, args ...string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "bash")
	cmd := exec.Command("testbed/bench/"+script, append(args, out)...)
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
// testbed vars (and the flags in sets), and wants every task passed.
func checkSolution(t *testing.T, bin, lab, dir string, sets ...string) {
	t.Helper()
	code, text, tasks := checkReport(t, labCheck(t, bin, lab, sets...), dir)
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

// labCheck runs labrun on lab with its testbed vars, the flags in sets and
// --set out=DIR.
func labCheck(t *testing.T, bin, lab string, sets ...string) labCmd {
	kc := kubetest.Kubeconfig(t)
	return func(cmd, dir string, extra ...string) (int, string) {
		args := append([]string{cmd, "--no-progress", "--kubeconfig", kc, "--vars", "../../playbooks/" + lab + ".testbed.yaml", "--set", "out=" + dir}, sets...)
		return labrun(t, bin, kc, append(append(args, extra...), "../../playbooks/"+lab+".yaml")...)
	}
}

// The classroom lab solved by its bash solution (testbed/bench/classroom.sh:
// kubectl apply, scale, expose, exec and logs, jq and awk, nothing outside
// the learner's namespace) in a fresh namespace, then graded by labrun
// check: every task must pass on its files. Then the same files with
// scale.json's replicas one more: check must fail task scale naming that
// value, and pass the others, so the test cannot pass on a check that
// accepts anything. The lab reads no node, so it runs on every profile (in
// CI on single, beside the classroom lab's other tests).
func TestBashSolutionPassesCheckClassroom(t *testing.T) {
	bin := buildLabrun(t)
	ns := kubetest.NamespaceName("e2e-room-bash")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	kubetest.ApplyInNamespace(ctx, t, kubetest.Connect(t), ns, "the learner's namespace",
		"apiVersion: v1\nkind: Namespace\nmetadata: {name: "+ns+"}\n")
	dir := bashSolution(t, "classroom.sh", ns)
	set := []string{"--set", "namespace=" + ns}
	checkSolution(t, bin, "classroom", dir, set...)

	wrong := filepath.Join(t.TempDir(), "wrong")
	if err := os.CopyFS(wrong, os.DirFS(dir)); err != nil {
		t.Fatal(err)
	}
	scale := filepath.Join(wrong, "scale.json")
	data := readFile(t, scale)
	changed := regexp.MustCompile(`"replicas": 3\b`).ReplaceAllString(data, `"replicas": 4`)
	if changed == data {
		t.Fatalf("%s does not hold replicas 3:\n%s", scale, data)
	}
	if err := os.WriteFile(scale, []byte(changed), 0o644); err != nil {
		t.Fatal(err)
	}
	code, text, tasks := checkReport(t, labCheck(t, bin, "classroom", set...), wrong)
	if code == 0 {
		t.Errorf("labrun check passed the bash solution's files with replicas 4 in scale.json:\n%s", text)
	}
	for _, tk := range tasks {
		if want := map[bool]string{true: "failed", false: "passed"}[tk.ID == "scale"]; tk.Status != want {
			t.Errorf("replicas 4 in scale.json: task %s is %s (%s), want %s", tk.ID, tk.Status, tk.Reason, want)
		}
	}
	if !strings.Contains(text, "replicas") {
		t.Errorf("check's output does not name replicas, the changed value:\n%s", text)
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
