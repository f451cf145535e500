//go:build e2e

package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// labCmd runs `labrun CMD` (check or test) on a lab with out=dir and the
// extra flags, and returns its exit code and combined output.
type labCmd func(cmd, dir string, extra ...string) (int, string)

// testSummary is labrun test's last line when no change survived and each
// was rejected naming the value it changed.
var testSummary = regexp.MustCompile(`labrun test: \d+ changes to \d+ graded files: \d+ rejected naming the value, \d+ declared loose, 0 survived, 0 rejected naming another value\nlabrun test: \d+ graded files written other ways with the same meaning: [1-9]\d* passed, 0 refused`)

// reportTask is a task of check's JSON report (--report json=FILE).
type reportTask struct {
	ID     string   `json:"id"`
	Status string   `json:"status"`
	Reason string   `json:"reason"`
	Files  []string `json:"files"`
}

// checkReport runs check with a JSON report and returns its exit code,
// output and tasks.
func checkReport(t *testing.T, run labCmd, dir string, extra ...string) (int, string, []reportTask) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "report.json")
	code, text := run("check", dir, append([]string{"--report", "json=" + path}, extra...)...)
	var rep struct {
		Tasks []reportTask `json:"tasks"`
	}
	b, err := os.ReadFile(path)
	if err == nil {
		err = json.Unmarshal(b, &rep)
	}
	if err != nil {
		t.Fatalf("check's JSON report: %v\n%s", err, text)
	}
	return code, text, rep.Tasks
}

// gradeByTask proves a lab's grader as lab platforms use it, on the live
// cluster. `labrun test --no-solve` on the solved files: every changed
// value fails the check naming it, or is declared loose by the playbook.
// Then learner, whose files each hold one wrong value (wrong maps each file
// to the text check prints for it): a whole check fails every task, and
// `check --task T` fails T naming its files' values while grading no other
// task. On the solved files, the last task alone passes.
func gradeByTask(t *testing.T, run labCmd, solved, learner string, wrong map[string]string) {
	t.Helper()
	if code, text := run("test", solved, "--no-solve"); code != 0 || !testSummary.MatchString(text) {
		t.Errorf("labrun test --no-solve on the solved files exited %d:\n%s", code, text)
	}
	_, text, tasks := checkReport(t, run, learner)
	if len(tasks) == 0 {
		t.Fatalf("check's JSON report lists no task:\n%s", text)
	}
	graded := 0
	for _, tk := range tasks {
		if tk.Status != "failed" {
			t.Errorf("check of files with wrong values: task %s is %s (%s), want failed:\n%s", tk.ID, tk.Status, tk.Reason, text)
		}
		graded += len(tk.Files)
	}
	if graded != len(wrong) {
		t.Errorf("check's tasks name %d files, the lab leaves %d", graded, len(wrong))
	}
	for _, tk := range tasks {
		code, text, got := checkReport(t, run, learner, "--task", tk.ID)
		if code != 1 {
			t.Errorf("check --task %s on files with wrong values exited %d, want 1:\n%s", tk.ID, code, text)
			continue
		}
		for _, f := range tk.Files {
			if !strings.Contains(text, wrong[f]) {
				t.Errorf("check --task %s does not name %s's wrong value (%q):\n%s", tk.ID, f, wrong[f], text)
			}
		}
		for _, o := range got {
			switch {
			case o.ID == tk.ID && o.Status != "failed":
				t.Errorf("check --task %s: the task is %s (%s), want failed", tk.ID, o.Status, o.Reason)
			case o.ID != tk.ID && (o.Status == "failed" || o.Status == "passed"):
				t.Errorf("check --task %s graded task %s as well: %s (%s)", tk.ID, o.ID, o.Status, o.Reason)
			}
		}
	}
	last := tasks[len(tasks)-1].ID
	if code, text := run("check", solved, "--task", last); code != 0 {
		t.Errorf("check --task %s on the solved files exited %d:\n%s", last, code, text)
	}
}
