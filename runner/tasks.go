package runner

import (
	"fmt"
	"slices"
	"strings"

	"github.com/labrun/labrun/internal/lang/diag"
	"github.com/labrun/labrun/internal/lang/eval"
	"github.com/labrun/labrun/internal/lang/syntax"
)

// The lab's tasks in a run: which files each writes, and what became of
// each task (which are graded, and which steps that takes, is the check's
// scope: grading.go). A playbook without tasks has none of this.

// NotStarted is the status of a task labrun check did not grade because
// none of its files exists: the learner has not got to it yet. A task
// asked for by --task or --upto is graded all the same (its missing file
// fails it), and a plain check of a lab with a task not started fails.
const NotStarted Status = "not-started"

// TaskRecord is what became of one task of the lab, for progress, reports
// and lab platforms.
type TaskRecord struct {
	Number int    `json:"number"`
	ID     string `json:"id"`
	Title  string `json:"title"`
	// Status is passed, failed, skipped (its steps did not run: an
	// earlier failure, or check was asked for other tasks), not-started
	// (check: none of its files exists) or interrupted.
	Status Status `json:"status"`
	// Class is a failed task's kind of failure: the class of the step
	// failure its reason names.
	Class Class `json:"class,omitempty"`
	// Reason is why it failed (its first problem) or was skipped or not
	// started.
	Reason string `json:"reason,omitempty"`
	// Hint is what the playbook tells the learner to look at for the
	// problem Reason names (the failed assertion's hint, else its step's),
	// when it gives one. Reason says it too, after the problem; a page
	// that shows the learner the hint apart takes it from here.
	Hint string `json:"hint,omitempty"`
	// Files are the files its write steps write, relative to outputDir
	// when known before the run.
	Files []string `json:"files,omitempty"`
}

// TaskFiles returns the files task t's write steps write, as far as they
// are known before the run: literal paths, and paths whose expressions
// read only variables (evaluated in env when it is not nil). known is
// false when a path depends on a step's result.
func (p *Plan) TaskFiles(t *syntax.Task, env *eval.Env) (files []string, known bool) {
	known = true
	for _, s := range p.Steps {
		if s.Task != t || s.Action == nil || s.Action.WritesKey == "" || s.Spec == nil {
			continue
		}
		v := s.Spec.Lookup(s.Action.WritesKey)
		if v == nil {
			continue
		}
		if lit, ok := v.Literal(); ok {
			files = appendNew(files, fmt.Sprint(lit))
			continue
		}
		if env == nil || readsSteps(v) {
			known = false
			continue
		}
		x, err := v.Eval(env)
		if err != nil {
			known = false
			continue
		}
		files = appendNew(files, fmt.Sprint(eval.Plain(x)))
	}
	return files, known
}

// appendNew appends x to list unless it holds it already.
func appendNew[T comparable](list []T, x T) []T {
	if slices.Contains(list, x) {
		return list
	}
	return append(list, x)
}

// readsSteps reports whether a value's expressions read a step's result.
func readsSteps(v *eval.Value) bool {
	for _, e := range v.Exprs() {
		for _, r := range e.Refs {
			if strings.HasPrefix(r, "steps.") {
				return true
			}
		}
	}
	return false
}

// taskRecords tells what became of each task from its steps' records (in
// plan order): failed with the first problem of its own steps or of the
// support steps it read; skipped when a step of it did not get
// to run; passed when every step that ran passed.
func (r *Runner) taskRecords(recs []*StepRecord) []*TaskRecord {
	var out []*TaskRecord
	for _, t := range r.Plan.Tasks {
		files, _ := r.Plan.TaskFiles(t, r.env)
		tr := &TaskRecord{Number: t.Number, ID: t.ID, Title: t.Title, Status: Passed, Files: files}
		out = append(out, tr)
		if sc := r.scope; sc != nil && !sc.graded[t] {
			tr.Status, tr.Reason = sc.status[t], sc.why[t]
			continue
		}
		var support []*StepPlan
		if r.scope != nil {
			support = r.scope.reads[t]
		}
		for _, rec := range recs {
			s := rec.Step
			if s == nil || (s.Task != t && !slices.Contains(support, s)) || s.Parallel != nil {
				continue
			}
			switch {
			case rec.Status == Failed && tr.Status != Failed:
				tr.Status, tr.Reason, tr.Class, tr.Hint = Failed, rec.FirstReason(), rec.Class, rec.FirstHint()
				if s.Task != t {
					tr.Reason = fmt.Sprintf("step %s of task %d, which it reads: %s", s.ID, s.Task.Number, tr.Reason)
				}
			case rec.Status == Interrupted && tr.Status == Passed:
				tr.Status, tr.Reason = Interrupted, "interrupted"
			case rec.Status == Skipped && !rec.skip.final() && tr.Status == Passed:
				tr.Status, tr.Reason = Skipped, rec.Reason
			}
		}
	}
	return out
}

// FirstReason is the first problem of a failed step in one line: its
// error's first line, or its first failed assertion's message (or
// condition) with the hint.
func (rec *StepRecord) FirstReason() string {
	if rec.Error != "" {
		return eval.FirstLine(rec.Error)
	}
	for _, a := range rec.Assertions {
		if a.Passed {
			continue
		}
		msg := a.Message
		if msg == "" {
			msg = a.Failure()
		}
		if a.Error != "" {
			msg += ": " + eval.FirstLine(a.Error)
		}
		if a.Hint != "" {
			msg += " (hint: " + a.Hint + ")"
		}
		return msg
	}
	return "failed"
}

// FirstHint is the hint for the problem FirstReason names: its failed
// assertion's hint, else the step's own ("" when the playbook gives none).
func (rec *StepRecord) FirstHint() string {
	if rec.Error == "" {
		for _, a := range rec.Assertions {
			if !a.Passed && a.Hint != "" {
				return a.Hint
			}
			if !a.Passed {
				break
			}
		}
	}
	return rec.Hint
}

// Task finds a task by its number (from 1) or its id, as --task and
// --upto name it.
func (p *Plan) Task(arg string) (*syntax.Task, error) {
	if len(p.Tasks) == 0 {
		return nil, fmt.Errorf("the playbook declares no tasks")
	}
	var names []string
	for _, t := range p.Tasks {
		if arg == t.ID || arg == fmt.Sprint(t.Number) {
			return t, nil
		}
		names = append(names, t.ID)
	}
	return nil, fmt.Errorf("no task %q%s; the tasks are 1 to %d: %s", arg, diag.DidYouMean(arg, names), len(p.Tasks), strings.Join(names, ", "))
}

// SelectTasks gives the tasks --task (each) and --upto (1 to it) ask
// for, in the lab's order; nil when neither is given.
func (p *Plan) SelectTasks(tasks []string, upto string) ([]*syntax.Task, error) {
	if len(tasks) == 0 && upto == "" {
		return nil, nil
	}
	var out []*syntax.Task
	for _, a := range tasks {
		t, err := p.Task(a)
		if err != nil {
			return nil, fmt.Errorf("--task %s: %w", a, err)
		}
		out = appendNew(out, t)
	}
	if upto != "" {
		last, err := p.Task(upto)
		if err != nil {
			return nil, fmt.Errorf("--upto %s: %w", upto, err)
		}
		for _, t := range p.Tasks[:last.Number] {
			out = appendNew(out, t)
		}
	}
	slices.SortFunc(out, func(a, b *syntax.Task) int { return a.Number - b.Number })
	return out, nil
}
