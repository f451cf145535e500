package runner

import (
	"fmt"
	"slices"
	"strings"

	"github.com/labrun/labrun/actions"
	"github.com/labrun/labrun/internal/lang/diag"
	"github.com/labrun/labrun/internal/lang/eval"
	"github.com/labrun/labrun/internal/lang/syntax"
)

// The lab's tasks in a run: which are graded, which steps that takes, and
// what became of each task. A playbook without tasks has none of this.

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
	// Reason is why it failed (its first problem) or was skipped or not
	// started.
	Reason string `json:"reason,omitempty"`
	// Files are the files its write steps write, relative to outputDir
	// when known before the run.
	Files []string `json:"files,omitempty"`
}

// grading is how labrun check takes the tasks: the tasks it grades (those
// asked for whose learner has started them), and the steps that run for
// them: their own and, transitively, the steps they read. A step of
// another task that runs only to be read (support) grades nothing: its
// write renders what it would write and compares no file.
type grading struct {
	graded  map[*syntax.Task]bool
	why     map[*syntax.Task]string // why a task is not graded
	status  map[*syntax.Task]Status // NotStarted or Skipped, for those
	runs    map[*StepPlan]bool
	support map[*StepPlan]bool
	// deps are, per graded task, the support steps it reads: a failure
	// there is the task's, since nothing else grades them.
	deps map[*syntax.Task][]*StepPlan
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

// planGrading decides, in check mode of a playbook with tasks, which
// tasks are graded and which steps run; nil otherwise, when every step
// runs. Only, when not nil, are the tasks asked for (--task, --upto).
func (r *Runner) planGrading() *grading {
	p := r.Plan
	if len(p.Tasks) == 0 || r.Runtime.Mode != actions.Check {
		return nil
	}
	g := &grading{graded: map[*syntax.Task]bool{}, why: map[*syntax.Task]string{}, status: map[*syntax.Task]Status{},
		runs: map[*StepPlan]bool{}, support: map[*StepPlan]bool{}, deps: map[*syntax.Task][]*StepPlan{}}
	for _, t := range p.Tasks {
		asked := r.Only != nil && slices.Contains(r.Only, t)
		files, known := p.TaskFiles(t, r.env)
		switch {
		case asked:
			// a task asked for is graded: a missing file fails it
		case known && len(files) > 0 && !slices.ContainsFunc(files, r.fileExists):
			g.status[t], g.why[t] = NotStarted, fmt.Sprintf("not started: no %s yet", strings.Join(files, ", no "))
			continue
		case r.Only != nil:
			g.status[t], g.why[t] = Skipped, fmt.Sprintf("not graded: only %s asked for", taskNumbers(r.Only))
			continue
		}
		g.graded[t] = true
	}
	byID := map[string]*StepPlan{}
	for _, s := range p.Steps {
		byID[s.ID] = s
	}
	for _, t := range p.Tasks {
		if !g.graded[t] {
			continue
		}
		for _, s := range p.Steps {
			if s.Task == t {
				g.need(s, t, byID)
			}
		}
	}
	for _, s := range p.Steps {
		if s.Cleanup {
			g.runs[s] = true
		}
		if g.runs[s] && s.Group != nil {
			g.runs[s.Group] = true
		}
	}
	return g
}

// need marks step s to run for task t, and the steps it reads, in turn.
func (g *grading) need(s *StepPlan, t *syntax.Task, byID map[string]*StepPlan) {
	if s.Task != nil && s.Task != t && !g.graded[s.Task] {
		if slices.Contains(g.deps[t], s) {
			return
		}
		g.support[s] = true
		g.deps[t] = append(g.deps[t], s)
	} else if g.runs[s] {
		return
	}
	g.runs[s] = true
	for _, ref := range s.Reads() {
		if id, ok := strings.CutPrefix(ref, "steps."); ok && byID[id] != nil {
			g.need(byID[id], t, byID)
		}
	}
}

// fileExists reports whether the learner's file rel (a write path) is in
// the output directory; anything in its place counts, a link included,
// and grading then says what is wrong with it.
func (r *Runner) fileExists(rel string) bool {
	if r.Runtime.Out == nil {
		return false
	}
	path, err := r.Runtime.Out.Resolve(rel)
	if err != nil {
		return true
	}
	return r.Runtime.Out.Exists(path)
}

func taskNumbers(ts []*syntax.Task) string {
	var out []string
	for _, t := range ts {
		out = append(out, fmt.Sprint(t.Number))
	}
	if len(out) == 1 {
		return "task " + out[0]
	}
	return "tasks " + strings.Join(out, ", ")
}

// ungraded says why step s does not run in this check: it serves only
// tasks that are not graded; "" when it runs.
func (r *Runner) ungraded(s *StepPlan) string {
	g := r.grading
	if g == nil || g.runs[s] {
		return ""
	}
	if s.Task != nil {
		return fmt.Sprintf("task %d %s", s.Task.Number, g.why[s.Task])
	}
	return "no graded task needs it"
}

// taskRecords tells what became of each task from its steps' records (in
// plan order): failed with the first problem of its own steps or of the
// steps of ungraded tasks it read; skipped when a step of it did not get
// to run; passed when every step that ran passed.
func (r *Runner) taskRecords(recs []*StepRecord) []*TaskRecord {
	var out []*TaskRecord
	for _, t := range r.Plan.Tasks {
		files, _ := r.Plan.TaskFiles(t, r.env)
		tr := &TaskRecord{Number: t.Number, ID: t.ID, Title: t.Title, Status: Passed, Files: files}
		out = append(out, tr)
		if g := r.grading; g != nil && !g.graded[t] {
			tr.Status, tr.Reason = g.status[t], g.why[t]
			continue
		}
		var deps []*StepPlan
		if r.grading != nil {
			deps = r.grading.deps[t]
		}
		for _, rec := range recs {
			s := rec.Step
			if s == nil || (s.Task != t && !slices.Contains(deps, s)) || s.Parallel != nil {
				continue
			}
			switch {
			case rec.Status == Failed && tr.Status != Failed:
				tr.Status, tr.Reason = Failed, rec.FirstReason()
				if s.Task != t {
					tr.Reason = fmt.Sprintf("step %s of task %d, which it reads: %s", s.ID, s.Task.Number, tr.Reason)
				}
			case rec.Status == Interrupted && tr.Status == Passed:
				tr.Status, tr.Reason = Interrupted, "interrupted"
			case rec.Status == Skipped && !rec.skipFinal && tr.Status == Passed:
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
			return nil, fmt.Errorf("--task %s: %v", a, err)
		}
		out = appendNew(out, t)
	}
	if upto != "" {
		last, err := p.Task(upto)
		if err != nil {
			return nil, fmt.Errorf("--upto %s: %v", upto, err)
		}
		for _, t := range p.Tasks[:last.Number] {
			out = appendNew(out, t)
		}
	}
	slices.SortFunc(out, func(a, b *syntax.Task) int { return a.Number - b.Number })
	return out, nil
}
