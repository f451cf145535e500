package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// taskReport is the part of a JSON report about the lab's tasks.
type taskReport struct {
	Status string `json:"status"`
	Tasks  []struct {
		Number int      `json:"number"`
		Status string   `json:"status"`
		Reason string   `json:"reason"`
		Files  []string `json:"files"`
	} `json:"tasks"`
}

// labrunReport runs labrun with args (the playbook last) and a JSON
// report, and returns its exit code, its output and the report.
func labrunReport(t *testing.T, args []string) (int, string, taskReport) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "report.json")
	args = append([]string{args[0], "--no-progress", "--report", "json=" + path}, args[1:]...)
	var stdout, stderr bytes.Buffer
	code := Main(args, &stdout, &stderr)
	var rep taskReport
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("labrun %v exited %d without a report: %v\n%s%s", args, code, err, stdout.String(), stderr.String())
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	return code, stdout.String() + stderr.String(), rep
}

// checkEveryPartialSolve proves check's grading by task on a lab solved
// into solved (whose run report is solvedReport): for every N, a
// learner's directory holding the files of tasks 1 to N only gets, from
// check --task N, task N passed, the tasks before it not graded and those
// after it not started; from check --upto N and a plain check, tasks 1 to
// N passed and the rest not started. A plain check passes only once every
// task is done. flags are check's flags (connection, vars) before the
// playbook.
func checkEveryPartialSolve(t *testing.T, solvedReport taskReport, solved string, flags []string, playbook string) {
	t.Helper()
	n := len(solvedReport.Tasks)
	if n == 0 {
		t.Fatal("the solve's report lists no tasks")
	}
	for upto := 1; upto <= n; upto++ {
		learner := t.TempDir()
		for _, task := range solvedReport.Tasks[:upto] {
			if len(task.Files) == 0 {
				t.Fatalf("task %d lists no files", task.Number)
			}
			for _, f := range task.Files {
				b, err := os.ReadFile(filepath.Join(solved, f))
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(learner, f), b, 0o600); err != nil {
					t.Fatal(err)
				}
			}
		}
		want := func(name string, wantCode int, status func(task int) string, extra ...string) {
			t.Run(fmt.Sprintf("%d/%s", upto, name), func(t *testing.T) {
				args := append(append(append([]string{"check"}, extra...), flags...), "--set", "out="+learner, playbook)
				code, text, rep := labrunReport(t, args)
				if code != wantCode {
					t.Errorf("exit %d, want %d\n%s", code, wantCode, text)
				}
				if len(rep.Tasks) != n {
					t.Fatalf("report has %d tasks, want %d", len(rep.Tasks), n)
				}
				for _, task := range rep.Tasks {
					if w := status(task.Number); task.Status != w {
						t.Errorf("task %d is %s (%s), want %s\n%s", task.Number, task.Status, task.Reason, w, text)
					}
				}
			})
		}
		upToN := func(task int) string {
			if task <= upto {
				return "passed"
			}
			return "not-started"
		}
		want("task", 0, func(task int) string {
			switch {
			case task == upto:
				return "passed"
			case task < upto:
				return "skipped"
			}
			return "not-started"
		}, "--task", fmt.Sprint(upto))
		want("upto", 0, upToN, "--upto", fmt.Sprint(upto))
		plain := 1
		if upto == n {
			plain = 0
		}
		want("all", plain, upToN)
	}
}

// The shell-only example lab with tasks, solved, then checked after every
// partial solve.
func TestCheckTasksAfterPartialSolve(t *testing.T) {
	solved := t.TempDir()
	playbook := "../../examples/tasks.yaml"
	code, text, rep := labrunReport(t, []string{"run", "--set", "out=" + solved, playbook})
	if code != 0 {
		t.Fatalf("solve exited %d:\n%s", code, text)
	}
	checkEveryPartialSolve(t, rep, solved, nil, playbook)
}
