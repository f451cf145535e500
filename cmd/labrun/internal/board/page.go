// Package board renders a grading as one self-contained HTML page: the
// class board of labrun check --targets and labrun fleet collect (a
// learners x tasks grid coloured by verdict and class, each task's pass
// rate, sorting and a cell's message and hint on hover or click), and,
// from the same template, a learner's page of one labrun check (their
// tasks, status and hints). It reads what the JSON reports carry (the
// result lines of runner/fleet, a check's outcome), renders with
// html/template, which escapes everything a playbook, a cluster or a
// learner wrote, and fetches nothing: the CSS and the script are inlined
// from files embedded in labrun, and the page's Content-Security-Policy
// forbids any request.
package board

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/labrun/labrun/runner"
	"github.com/labrun/labrun/runner/fleet"
)

// About is what the page's summary says of the grading beyond its
// results: which labrun, which playbook, from what, when and how long.
type About struct {
	// Version is labrun's version line (labrun version).
	Version string
	// Playbook is the playbook's file.
	Playbook string
	// Source says where the results come from: a targets file, a Job.
	Source string
	// Started is when the grading started, Seconds how long it took;
	// zero when unknown.
	Started time.Time
	Seconds float64
}

// Page is what the template renders: a class's grid, or one learner's
// tasks (Learner).
type Page struct {
	Title string
	// Kind names the page above its title: a class board, a learner's
	// check, a run.
	Kind string
	// Learner: the page of one learner's check, not a class's board.
	Learner bool
	About   About
	Counts  fleet.Counts
	// Total is the number of learners.
	Total int
	Tasks []Task
	Rows  []Row
	// Legend lists the states that occur, in the order of their rank.
	Legend []State
}

// Task is a column: one graded task (a step, for a lab without tasks),
// with how the class did on it.
type Task struct {
	// Name is the case's name in the results ("task 1: Title", or a
	// step's id); Label the column's short heading, Title the rest.
	Name, Label, Title string
	// Passed, Wrong and NotGraded count the learners whose cell is in
	// each verdict.
	Passed, Wrong, NotGraded int
	// Hardest: of several tasks, the class passes none less often (and
	// this one not always).
	Hardest bool
}

// PassedPct, WrongPct and NotGradedPct are the shares of all learners,
// the widths of the task's bar.
func (t Task) PassedPct(total int) float64    { return pct(t.Passed, total) }
func (t Task) WrongPct(total int) float64     { return pct(t.Wrong, total) }
func (t Task) NotGradedPct(total int) float64 { return pct(t.NotGraded, total) }

// PassRate is the share of the learners graded on the task who passed
// it, in percent; -1 when none was graded.
func (t Task) PassRate() float64 {
	if t.Passed+t.Wrong == 0 {
		return -1
	}
	return pct(t.Passed, t.Passed+t.Wrong)
}

func pct(n, of int) float64 {
	if of == 0 {
		return 0
	}
	return float64(int(float64(n)*1000/float64(of)+0.5)) / 10
}

// Row is one learner: their result and a cell per task.
type Row struct {
	Index   int
	Name    string
	Verdict runner.Verdict
	Class   runner.Class
	// Rank orders rows by failure class: those not graded first, the most
	// decisive class first (runner.Classes), then wrong, then passed.
	Rank          int
	Passed, Tasks int
	Seconds       float64
	Attempts      int
	Message       string
	Truncated     bool
	Cells         []Cell
	VerdictLabel  string
	VerdictState  string
}

// Hinted reports whether a cell of the row has a hint.
func (r Row) Hinted() bool {
	for _, c := range r.Cells {
		if c.Hint != "" {
			return true
		}
	}
	return false
}

// Cell is one learner's result on one task.
type Cell struct {
	State   string
	Glyph   string
	Message string
	Hint    string
}

// State is one colour of the grid: a verdict, and for a task not
// passed, its class.
type State struct {
	Name    string
	Label   string
	Glyph   string
	Verdict string
	Meaning string
	Rank    int
}

// states are the cells' states, in the order a sort by a task puts them:
// the learner's wrong answers first, then what kept a task from being
// graded (most decisive class first), passed last.
var states = []State{
	{Name: "wrong", Label: "wrong", Glyph: "✗", Verdict: "wrong", Meaning: "graded: the learner's answer is wrong"},
	{Name: "not-started", Label: "not started", Glyph: "○", Verdict: "wrong", Meaning: "none of the task's files exists yet"},
	{Name: "transport", Label: "transport", Glyph: "net", Verdict: "not graded", Meaning: "the cluster did not answer"},
	{Name: "forbidden", Label: "forbidden", Glyph: "403", Verdict: "not graded", Meaning: "labrun lacks a permission"},
	{Name: "config", Label: "config", Glyph: "cfg", Verdict: "not graded", Meaning: "the playbook or the target is broken"},
	{Name: "timeout", Label: "timeout", Glyph: "time", Verdict: "not graded", Meaning: "the check ran out of time"},
	{Name: "interrupted", Label: "interrupted", Glyph: "int", Verdict: "not graded", Meaning: "the check was stopped"},
	{Name: "skipped", Label: "skipped", Glyph: "skip", Verdict: "not graded", Meaning: "an earlier failure ended the check before it"},
	{Name: "missing", Label: "missing", Glyph: "?", Verdict: "not graded", Meaning: "no pod of the Job left a result"},
	{Name: "none", Label: "no result", Glyph: "", Verdict: "not graded", Meaning: "the learner's result has no line for this task"},
	{Name: "passed", Label: "passed", Glyph: "✓", Verdict: "passed", Meaning: "the learner's work is right"},
}

func stateOf(name string) State {
	for i, s := range states {
		if s.Name == name {
			s.Rank = i
			return s
		}
	}
	return stateOf("none")
}

// caseState is the state of a case: passed; failed, by its class (a
// failed case without a class is a wrong answer, as runner counts it);
// or why it was not graded.
func caseState(c fleet.Case) string {
	switch c.Status {
	case runner.Passed:
		return "passed"
	case runner.Failed:
		if c.Class == "" || c.Class == runner.ClassAssertion {
			return "wrong"
		}
		return string(c.Class)
	case runner.NotStarted, runner.Interrupted, runner.Skipped:
		return string(c.Status)
	}
	return "none"
}

// resultState is the state of a learner's cells that their result has
// no case for: that of the learner when it was not graded (the check
// could not start, or the Job left no result), else none.
func resultState(r fleet.Result) string {
	switch {
	case r.Verdict == fleet.Missing:
		return "missing"
	case r.Graded():
		return "none"
	case r.Class != "":
		return string(r.Class)
	case r.FirstFailure == "interrupted":
		return "interrupted"
	}
	return "none"
}

// rowRank orders learners by their verdict and class (see Row.Rank).
func rowRank(r fleet.Result) int {
	switch r.Verdict {
	case runner.VerdictPassed:
		return len(runner.Classes) + 3
	case runner.VerdictWrong:
		return len(runner.Classes) + 2
	case fleet.Missing:
		return len(runner.Classes) + 1
	}
	if i := slices.Index(runner.Classes, r.Class); i >= 0 {
		return i
	}
	return len(runner.Classes)
}

// verdictLabel is how the grid's verdict column names a learner's
// result.
func verdictLabel(r fleet.Result) (label, state string) {
	switch r.Verdict {
	case runner.VerdictPassed:
		return "passed", "passed"
	case runner.VerdictWrong:
		return "wrong", "wrong"
	case fleet.Missing:
		return "missing", "missing"
	}
	if r.Class != "" {
		return "not graded: " + string(r.Class), string(r.Class)
	}
	return "not graded", resultState(r)
}

// Class is the board of a class from its results, one per learner in
// index order (check --targets, fleet collect). It builds each row and
// each column's counts in one pass over the results' cases.
func Class(results []fleet.Result, about About) *Page {
	p := &Page{Title: "Class board", Kind: "Class board", About: about, Counts: fleet.Count(results), Total: len(results)}
	if about.Playbook != "" {
		p.Title = baseName(about.Playbook)
	}
	column := map[string]int{}
	for _, r := range results {
		for _, c := range r.Cases {
			if _, ok := column[c.Name]; !ok {
				column[c.Name] = len(p.Tasks)
				p.Tasks = append(p.Tasks, newTask(c.Name))
			}
		}
	}
	used := make([]bool, len(states))
	for _, r := range results {
		row := newRow(r)
		fill := Cell{State: resultState(r)}
		row.Cells = make([]Cell, len(p.Tasks))
		for i := range row.Cells {
			row.Cells[i] = fill
		}
		for _, c := range r.Cases {
			msg, hint := splitHint(c.Message, c.Hint)
			row.Cells[column[c.Name]] = Cell{State: caseState(c), Message: msg, Hint: hint}
		}
		for i := range row.Cells {
			s := stateOf(row.Cells[i].State)
			row.Cells[i].Glyph = s.Glyph
			used[s.Rank] = true
			switch s.Verdict {
			case "passed":
				p.Tasks[i].Passed++
			case "wrong":
				p.Tasks[i].Wrong++
			default:
				p.Tasks[i].NotGraded++
			}
		}
		p.Rows = append(p.Rows, row)
	}
	for i, s := range states {
		if used[i] {
			s.Rank = i
			p.Legend = append(p.Legend, s)
		}
	}
	lowest := 100.0
	for _, t := range p.Tasks {
		if rate := t.PassRate(); rate >= 0 {
			lowest = min(lowest, rate)
		}
	}
	for i, t := range p.Tasks {
		p.Tasks[i].Hardest = len(p.Tasks) > 1 && lowest < 100 && t.PassRate() == lowest
	}
	return p
}

// Learner is the page of one learner's check (or run) that ended in o:
// their tasks (the steps, for a lab without tasks), each with its status,
// message and hint, made as the class board's cells are, by the result
// line check --targets would write for it.
func Learner(o *runner.Outcome, about About) *Page {
	about.Playbook = cmp.Or(about.Playbook, o.Playbook)
	if about.Started.IsZero() {
		about.Started, about.Seconds = o.Started, o.Seconds
	}
	r := fleet.FromOutcome(0, fleet.Target{Name: o.Name}, o, 0)
	p := Class([]fleet.Result{r}, about)
	p.Learner, p.Kind = true, "Your check"
	if o.Mode != "check" {
		p.Kind = "Run"
	}
	p.Title = cmp.Or(o.Name, p.Title)
	return p
}

func newRow(r fleet.Result) Row {
	label, state := verdictLabel(r)
	return Row{
		Index: r.Index, Name: r.Target, Verdict: r.Verdict, Class: r.Class, Rank: rowRank(r),
		Passed: r.Passed, Tasks: r.Tasks, Attempts: r.Attempts,
		Message: r.FirstFailure, Truncated: r.Truncated, VerdictLabel: label, VerdictState: state,
	}
}

// newTask is the column of the case named name: "task N: Title" is
// headed N, with Title beside it; a step's id heads its own column.
func newTask(name string) Task {
	t := Task{Name: name, Label: name, Title: name}
	if rest, ok := strings.CutPrefix(name, "task "); ok {
		if num, title, ok := strings.Cut(rest, ": "); ok {
			if _, err := strconv.Atoi(num); err == nil {
				t.Label, t.Title = num, title
			}
		}
	}
	return t
}

// splitHint parts a case's message from its hint, which the page shows
// apart: runner ends a task's reason with its hint, " (hint: ...)", and
// a write step's problem carries the hint of the key at fault the same
// way with no hint of the case's own.
func splitHint(msg, hint string) (string, string) {
	if hint != "" {
		return strings.TrimSuffix(msg, " (hint: "+hint+")"), hint
	}
	if i := strings.LastIndex(msg, " (hint: "); i >= 0 && strings.HasSuffix(msg, ")") {
		return msg[:i], msg[i+len(" (hint: ") : len(msg)-1]
	}
	return msg, ""
}

// Redact passes every text of the page through f (a run's secret
// redactor) before it is escaped into HTML, where a secret's value could
// no longer be found as it was written.
func (p *Page) Redact(f func(string) string) {
	p.Title = f(p.Title)
	p.About.Playbook, p.About.Source = f(p.About.Playbook), f(p.About.Source)
	for i := range p.Tasks {
		t := &p.Tasks[i]
		t.Name, t.Label, t.Title = f(t.Name), f(t.Label), f(t.Title)
	}
	for i := range p.Rows {
		r := &p.Rows[i]
		r.Name, r.Message = f(r.Name), f(r.Message)
		for k := range r.Cells {
			r.Cells[k].Message, r.Cells[k].Hint = f(r.Cells[k].Message), f(r.Cells[k].Hint)
		}
	}
}

// baseName is a playbook's file name without its directory.
func baseName(path string) string {
	if i := strings.LastIndexAny(path, `/\`); i >= 0 {
		return path[i+1:]
	}
	return path
}

// duration says a number of seconds as people read it.
func duration(secs float64) string {
	switch {
	case secs <= 0:
		return ""
	case secs < 1:
		return fmt.Sprintf("%dms", max(1, int(secs*1000+0.5)))
	case secs < 10:
		return fmt.Sprintf("%.2fs", secs)
	case secs < 120:
		return fmt.Sprintf("%.1fs", secs)
	}
	return time.Duration(secs * float64(time.Second)).Round(time.Second).String()
}
