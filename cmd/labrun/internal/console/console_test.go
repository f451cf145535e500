package console

import (
	"bytes"
	"strings"
	"testing"

	"github.com/labrun/labrun/internal/lang/eval"
	"github.com/labrun/labrun/internal/lang/syntax"
	"github.com/labrun/labrun/runner"
)

// While branches of a parallel step run, the status line names each
// running step with its branch, and each end line says its branch.
func TestParallelSteps(t *testing.T) {
	var buf bytes.Buffer
	p := New(&buf, false, false, false)
	g := &runner.StepPlan{ID: "g", Index: 0, Parallel: []*runner.BranchPlan{{Name: "web"}, {Name: "holder"}}}
	a := &runner.StepPlan{ID: "scaled_ready", Name: "Wait until 4 web pods are Ready", Index: 1, Group: g, Branch: "web"}
	b := &runner.StepPlan{ID: "ct", Index: 2, Group: g, Branch: "holder"}
	p.total = 3
	p.StepStart(g)
	p.StepStart(a)
	p.StepStart(b)
	p.StepProgress(a, "result.ready = 3")
	line := p.statusLine()
	for _, want := range []string{"[2/3] web: Wait until 4 web pods are Ready", "result.ready = 3", " | [3/3] holder: ct"} {
		if !strings.Contains(line, want) {
			t.Errorf("status line %q lacks %q", line, want)
		}
	}
	if strings.Contains(line, "[1/3]") {
		t.Errorf("status line %q shows the parallel step itself while its branches run", line)
	}
	p.StepEnd(&runner.StepRecord{ID: "ct", Action: "cilium", Status: runner.Passed, Seconds: 0.25, Step: b})
	if got := buf.String(); got != "ok   [3/3] holder: ct (cilium) 0.2s\n" && got != "ok   [3/3] holder: ct (cilium) 0.3s\n" {
		t.Errorf("end line %q", got)
	}
	if line := p.statusLine(); strings.Contains(line, "holder") || !strings.Contains(line, "web:") {
		t.Errorf("after ct ended, status line %q", line)
	}
}

// A failure's class follows what failed, in brackets: the step's FAIL
// line, the task's FAIL: line (check -q's too) and the summary; lines of
// steps and tasks that did not fail are as they were.
func TestFailureLinesCarryClass(t *testing.T) {
	var buf bytes.Buffer
	p := New(&buf, false, false, false)
	s := &runner.StepPlan{ID: "pods", Index: 0}
	p.total = 2
	p.StepEnd(&runner.StepRecord{ID: "pods", Action: "get", Status: runner.Failed, Class: runner.ClassTransport, Seconds: 0.25, Step: s,
		Error: "list pods: connect: connection refused"})
	p.StepEnd(&runner.StepRecord{ID: "later", Action: "run", Status: runner.Skipped, Reason: "an earlier step failed", Step: &runner.StepPlan{ID: "later", Index: 1}})
	tasks := []*runner.TaskRecord{
		{Number: 1, Title: "Scale web", Status: runner.Failed, Class: runner.ClassTransport, Reason: "list pods: connect: connection refused"},
		{Number: 2, Title: "Label it", Status: runner.NotStarted, Reason: "not started: no label.json yet"},
	}
	p.RunEnd(&runner.Outcome{Name: "lab", Status: runner.Failed, Class: runner.ClassTransport, Seconds: 1, Tasks: tasks,
		Steps: []*runner.StepRecord{{Status: runner.Failed}, {Status: runner.Skipped}}})
	want := `FAIL [1/2] pods (get) 0.2s [transport]
       list pods: connect: connection refused
skip [2/2] later (run) - an earlier step failed
FAIL: task 1 (Scale web) [transport]: list pods: connect: connection refused
TODO: task 2 (Label it): not started: no label.json yet
lab: FAILED [transport] in 1.0s (0 passed, 1 failed, 1 skipped)
`
	if got := strings.Replace(buf.String(), " 0.3s ", " 0.2s ", 1); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	buf.Reset()
	New(&buf, false, false, true).RunEnd(&runner.Outcome{Name: "lab", Status: runner.Failed, Class: runner.ClassConfig,
		Steps: []*runner.StepRecord{{Status: runner.Failed, Class: runner.ClassConfig, Error: "expression `int(vars.n)`: invalid operation"}}})
	if got, want := buf.String(), "FAIL: lab [config]: expression `int(vars.n)`: invalid operation\n"; got != want {
		t.Errorf("quiet line %q, want %q", got, want)
	}
}

// Names, titles, messages and values hold what a playbook, a cluster or a
// learner put there: the console escapes their control characters and
// bidi controls, newlines too inside one line (a step name or a title
// cannot forge the line after it), and keeps a message's own lines.
func TestControlCharactersEscaped(t *testing.T) {
	var buf bytes.Buffer
	p := New(&buf, false, true, false)
	s := &runner.StepPlan{ID: "s", Name: "name\x1b[2J\nok   [2/2] forged", Index: 0}
	p.RunStart(&runner.Plan{Playbook: &syntax.Playbook{Name: "lab\x1b]0;title\a"}, Steps: []*runner.StepPlan{s}})
	p.StepStart(s)
	p.StepEnd(&runner.StepRecord{ID: "s", Name: s.Name, Action: "run", Status: runner.Failed, Class: runner.ClassAssertion, Step: s,
		Error: "first line\u202e\nsecond \u009b line",
		Assertions: []runner.AssertRecord{{That: "x", Message: "m\x7f", Hint: "h\u2066",
			Operands: []eval.Operand{{Expr: "result.stdout", Value: "v\u200f"}}}}})
	p.RunEnd(&runner.Outcome{Name: "lab\x1b]0;title\a", Status: runner.Failed, Class: runner.ClassAssertion,
		Tasks: []*runner.TaskRecord{{Number: 1, Title: "t\r\nPASS: task 2", Status: runner.Failed, Reason: "r\x1b[K"}}})
	want := `labrun: lab\u001b]0;title\u0007 (1 step)
[1/1] name\u001b[2J\nok   [2/2] forged (assert) ...
FAIL [1/1] s: name\u001b[2J\nok   [2/2] forged (run) 0.0s [assertion]
       first line\u202e
       second \u009b line
       assertion failed: x
         m\u007f
         result.stdout = v\u200f
         hint: h\u2066
FAIL: task 1 (t\r\nPASS: task 2): r\u001b[K
lab\u001b]0;title\u0007: FAILED [assertion] in 0.0s (0 passed, 0 failed, 0 skipped)
`
	if got := buf.String(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}
