package board

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/labrun/labrun/runner"
	"github.com/labrun/labrun/runner/fleet"
)

// class makes the results of n learners on tasks tasks, as check
// --targets writes them: every seventh learner has task 2 wrong, every
// eleventh has not started the last task, learner 5 could not be graded
// (config, no cases), learner 9's cluster did not answer on task 1.
func class(n, tasks int) []fleet.Result {
	out := make([]fleet.Result, n)
	for i := range out {
		r := fleet.Result{Index: i, Target: fmt.Sprintf("learner-%04d", i), Verdict: runner.VerdictPassed, Seconds: 0.04}
		for k := 1; k <= tasks; k++ {
			c := fleet.Case{Name: fmt.Sprintf("task %d: Task number %d of the lab", k, k), Status: runner.Passed}
			switch {
			case k == 2 && i%7 == 3:
				c.Status, c.Class = runner.Failed, runner.ClassAssertion
				c.Message, c.Hint = "deployment web has 1 ready replica, expected 3 (hint: scale it)", "scale it"
			case k == tasks && i%11 == 4:
				c.Status, c.Message = runner.NotStarted, "none of its files exists"
			case k == 1 && i == 9:
				c.Status, c.Class, c.Message = runner.Failed, runner.ClassTransport, "connection refused"
			}
			if c.Status == runner.Passed {
				r.Passed++
			} else if r.FirstFailure == "" {
				r.FirstFailure = c.Name + ": " + c.Message
			}
			r.Tasks++
			r.Cases = append(r.Cases, c)
		}
		if r.Passed < r.Tasks {
			r.Verdict, r.Class = runner.VerdictWrong, runner.ClassAssertion
		}
		if i == 9 {
			r.Verdict, r.Class = runner.VerdictNotGraded, runner.ClassTransport
		}
		if i == 5 {
			r = fleet.Refused(i, fleet.Target{Name: r.Target}, fmt.Errorf("--set answers: variable answers is a mapping"), 2)
		}
		out[i] = r
	}
	return out
}

func render(t testing.TB, p *Page) string {
	t.Helper()
	b, err := p.HTML()
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The grid has a row per learner and a column per task, coloured by
// state; each column counts its verdicts, and the task passed least often
// is marked.
func TestClass(t *testing.T) {
	p := Class(class(30, 3), About{Playbook: "labs/deploy.yaml", Version: "labrun dev"})
	if p.Title != "deploy.yaml" || p.Total != 30 || len(p.Tasks) != 3 || len(p.Rows) != 30 {
		t.Fatalf("page %q: %d learners, %d tasks, %d rows", p.Title, p.Total, len(p.Tasks), len(p.Rows))
	}
	if p.Tasks[1].Label != "2" || p.Tasks[1].Title != "Task number 2 of the lab" {
		t.Errorf("column 2 headed %q, %q", p.Tasks[1].Label, p.Tasks[1].Title)
	}
	// task 2: learners 3, 10, 17, 24 wrong; learner 5 not graded, as 9 is not
	// (its task 2 passed: graded)
	if got := p.Tasks[1]; got.Passed != 25 || got.Wrong != 4 || got.NotGraded != 1 {
		t.Errorf("task 2 counts %+v", got)
	}
	for i, task := range p.Tasks {
		if task.Hardest != (i == 1) {
			t.Errorf("task %d marked hardest: %v; want only task 2", i+1, task.Hardest)
		}
	}
	for _, tt := range []struct {
		row, col         int
		state, msg, hint string
	}{
		{3, 1, "wrong", "deployment web has 1 ready replica, expected 3", "scale it"},
		{4, 2, "not-started", "none of its files exists", ""},
		{5, 0, "config", "", ""},
		{9, 0, "transport", "connection refused", ""},
		{0, 0, "passed", "", ""},
	} {
		c := p.Rows[tt.row].Cells[tt.col]
		if c.State != tt.state || c.Message != tt.msg || c.Hint != tt.hint {
			t.Errorf("row %d column %d: %+v, want %s %q %q", tt.row, tt.col, c, tt.state, tt.msg, tt.hint)
		}
	}
	if r := p.Rows[5]; r.VerdictLabel != "not graded: config" || !strings.Contains(r.Message, "variable answers") {
		t.Errorf("learner 5: %q %q", r.VerdictLabel, r.Message)
	}
	if one := Class(class(30, 1), About{}); one.Tasks[0].Hardest {
		t.Errorf("the one task of a lab is marked the hardest")
	}
	var legend []string
	for _, s := range p.Legend {
		legend = append(legend, s.Name)
	}
	if got := strings.Join(legend, " "); got != "wrong not-started transport config passed" {
		t.Errorf("legend %s", got)
	}
}

// Every text from a playbook, a cluster or a learner is escaped: a
// learner's name, a message and a hint that hold markup come out as text.
func TestEscapes(t *testing.T) {
	evil := `<script>alert(1)</script>"'><img src=x onerror=alert(2)>`
	results := []fleet.Result{{Target: evil, Verdict: runner.VerdictWrong, Class: runner.ClassAssertion, Tasks: 1, FirstFailure: evil, Cases: []fleet.Case{
		{Name: "task 1: " + evil, Status: runner.Failed, Class: runner.ClassAssertion, Message: evil, Hint: evil},
	}}}
	for _, p := range []*Page{Class(results, About{Playbook: evil, Source: evil, Version: evil}), learnerOf(results[0], evil)} {
		html := render(t, p)
		for _, bad := range []string{"<script>alert", "<img src=x", `"'><img`} {
			if strings.Contains(html, bad) {
				t.Errorf("page holds %q unescaped", bad)
			}
		}
		if !strings.Contains(html, "&lt;script&gt;alert(1)&lt;/script&gt;") {
			t.Errorf("page lost the learner's text")
		}
		if n := strings.Count(html, "<script>"); n != 1-boolInt(p.Learner) {
			t.Errorf("%d script elements", n)
		}
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// learnerOf is the learner page of a result, as Learner makes it from an
// outcome.
func learnerOf(r fleet.Result, playbook string) *Page {
	p := Class([]fleet.Result{r}, About{Playbook: playbook})
	p.Learner = true
	return p
}

// Redact reaches every text the page shows, before it is escaped.
func TestRedact(t *testing.T) {
	p := Class(class(12, 2), About{Playbook: "s3cret.yaml", Source: "s3cret"})
	p.Rows[3].Cells[1].Hint = "use s3cret"
	p.Redact(func(s string) string { return strings.ReplaceAll(s, "s3cret", "[redacted]") })
	if html := render(t, p); strings.Contains(html, "s3cret") || !strings.Contains(html, "use [redacted]") {
		t.Errorf("a secret is left, or the hint lost")
	}
}

// A page of 1,000 learners x 8 tasks is rendered in one pass: its size is
// printed (and bounded), and twice the learners make twice the page, not
// four times.
func TestLargeClassSize(t *testing.T) {
	start := time.Now()
	html := render(t, Class(class(1000, 8), About{Playbook: "lab.yaml"}))
	took := time.Since(start)
	double := render(t, Class(class(2000, 8), About{Playbook: "lab.yaml"}))
	t.Logf("board of 1,000 learners x 8 tasks: %d bytes (%.0f KiB), rendered in %s; 2,000 learners: %d bytes",
		len(html), float64(len(html))/1024, took.Round(time.Millisecond), len(double))
	if len(html) > 1<<20 {
		t.Errorf("a board of 1,000 learners takes %d bytes, more than 1 MiB", len(html))
	}
	if float64(len(double)) > 2.1*float64(len(html)) {
		t.Errorf("2,000 learners take %d bytes, more than twice the %d of 1,000", len(double), len(html))
	}
	if dir := os.Getenv("LABRUN_ARTIFACTS"); dir != "" {
		if err := os.WriteFile(filepath.Join(dir, "board-1000.html"), []byte(html), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// BenchmarkClass renders the board of 1,000 learners x 8 tasks and
// reports its size.
func BenchmarkClass(b *testing.B) {
	results := class(1000, 8)
	var size int
	for b.Loop() {
		html, err := Class(results, About{Playbook: "lab.yaml"}).HTML()
		if err != nil {
			b.Fatal(err)
		}
		size = len(html)
	}
	b.ReportMetric(float64(size), "page-bytes")
}

// A learner's page is made from their check's outcome: its tasks (the
// steps, for a lab without tasks) with status, message and hint apart,
// and a first line that says passed, wrong, or not checked at all.
func TestLearner(t *testing.T) {
	wrong := &runner.Outcome{Name: "lab", Playbook: "labs/lab.yaml", Mode: "check", Status: runner.Failed, Class: runner.ClassAssertion, Seconds: 0.2,
		Tasks: []*runner.TaskRecord{
			{Number: 1, Title: "Scale web", Status: runner.Failed, Class: runner.ClassAssertion, Reason: "replicas is 1, expected 3 (hint: scale it)", Hint: "scale it"},
			{Number: 2, Title: "Expose web", Status: runner.Passed},
		}}
	down := &runner.Outcome{Name: "lab", Mode: "check", Status: runner.Failed, Class: runner.ClassTransport,
		Steps: []*runner.StepRecord{{ID: "pods", Status: runner.Failed, Class: runner.ClassTransport, Error: "connection refused"}}}
	passed := &runner.Outcome{Name: "lab", Mode: "solve", Status: runner.Passed, Steps: []*runner.StepRecord{{ID: "pods", Status: runner.Passed}}}
	for _, tt := range []struct {
		o    *runner.Outcome
		want []string
	}{
		{wrong, []string{"Your check", "1 of 2 tasks passed. The hints below say what to look at.", "<span class=\"num\">Task 1</span> Scale web",
			`<p class="msg">replicas is 1, expected 3</p>`, "<b>Hint</b> scale it", "✓ passed", "labs/lab.yaml"}},
		{down, []string{"Your work could not be checked (transport): this is not about your answer.", "<span class=\"num\">Step</span> pods", "connection refused"}},
		{passed, []string{"<p class=\"kind\">Run</p>", "Well done: every task graded passed."}},
	} {
		p := Learner(tt.o, About{Version: "labrun test"})
		if !p.Learner || p.Title != "lab" {
			t.Errorf("page %q, learner %v", p.Title, p.Learner)
		}
		html := render(t, p)
		for _, w := range tt.want {
			if !strings.Contains(html, w) {
				t.Errorf("the page of a %s check lacks %q", tt.o.Status, w)
			}
		}
		if strings.Contains(html, `id="grid"`) || strings.Contains(html, "(hint: scale it)") {
			t.Errorf("a learner's page shows the class grid, or the hint inside the message")
		}
	}
}
