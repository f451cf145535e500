package labtest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/labrun/labrun/actions"
	"github.com/labrun/labrun/internal/lang/syntax"
	"github.com/labrun/labrun/internal/leaf/outdir"
	"github.com/labrun/labrun/runner"
)

// labrun test --repeat N: a grader must accept a right answer on every
// run, not once. A check that re-reads a load balancer's choice, a map
// that keeps a stale entry, a pod that lands on the other node, a wait
// that returns before the state it waits for: each passes most runs and
// fails a learner now and then. So the lab is solved and checked N times,
// each on a fresh lab when the caller can make one (Reset: the lab's
// cleanup playbook, or its namespaces deleted), then once more on the lab
// as the last run left it, as a learner who solves twice finds it. A
// task that passes some runs and fails others is flaky; for each task
// that did not pass every run, the values its grading read that differed
// between runs are named (values.go): the nondeterminism behind it.

// Reset brings the lab back to a fresh state before a run of Repeat.
type Reset struct {
	// What says what it does, in words ("delete namespace cca-dp").
	What string
	// Run does it. Its error stops the test: a *FailedError with the
	// class of what failed, ErrInterrupted, or another error saying why.
	Run func(ctx context.Context) error
}

// Run is one run of Repeat: a solve and a check of what it wrote.
type Run struct {
	// Number counts from 1.
	Number int `json:"run"`
	// Fresh: Reset ran before it; otherwise it ran on the lab as the run
	// before it left it.
	Fresh bool `json:"fresh"`
	// ResetSeconds, SolveSeconds and CheckSeconds are the time of each
	// part, Seconds of the whole run.
	ResetSeconds float64 `json:"resetSeconds,omitempty"`
	SolveSeconds float64 `json:"solveSeconds"`
	CheckSeconds float64 `json:"checkSeconds"`
	Seconds      float64 `json:"seconds"`
	// Tasks are the verdict on each task in this run, in the lab's order
	// (one, the whole lab, for a playbook without tasks).
	Tasks []RunTask `json:"tasks"`
}

// RunTask is what one run found of one task.
type RunTask struct {
	// Task is the task's number, 0 for a playbook without tasks.
	Task   int  `json:"task,omitempty"`
	Passed bool `json:"passed"`
	// Class and Reason say why it failed: in the solve ("solve: ...") or
	// in the check of what the solve wrote ("check: ...").
	Class  runner.Class `json:"class,omitempty"`
	Reason string       `json:"reason,omitempty"`
	// values are what the task's grading read in this run (values.go).
	values *valueSet
}

// Figures are one task over every run of Repeat.
type Figures struct {
	// Number, ID and Title are the task's; Number is 0 for a playbook
	// without tasks, whose whole run is judged.
	Number int    `json:"number,omitempty"`
	ID     string `json:"id,omitempty"`
	Title  string `json:"title,omitempty"`
	Runs   int    `json:"runs"`
	Passed int    `json:"passed"`
	Failed int    `json:"failed"`
	// FlakeRate is Failed over Runs.
	FlakeRate float64 `json:"flakeRate"`
	// Flaky: it passed some runs and failed others.
	Flaky bool `json:"flaky"`
	// Failures are the runs it failed, each with why.
	Failures []Failure `json:"failures,omitempty"`
	// Differed are, for a task that did not pass every run, the values
	// its grading read that differed between runs.
	Differed []Differed `json:"differed,omitempty"`
}

// Failure is one failed run of a task.
type Failure struct {
	Run    int          `json:"run"`
	Class  runner.Class `json:"class"`
	Reason string       `json:"reason"`
}

// What names the task: "task 2 (parity)", or "the lab" without tasks.
func (f Figures) What() string {
	if f.Number == 0 {
		return "the lab"
	}
	return fmt.Sprintf("task %d (%s)", f.Number, f.ID)
}

// Class is the most decisive class of the task's failures (runner.Classes'
// order), "" when it never failed.
func (f Figures) Class() runner.Class {
	best := -1
	for _, x := range f.Failures {
		if i := slices.Index(runner.Classes, x.Class); i >= 0 && (best < 0 || i < best) {
			best = i
		}
	}
	if best < 0 {
		if len(f.Failures) > 0 {
			return runner.ClassAssertion
		}
		return ""
	}
	return runner.Classes[best]
}

// Flaky are the tasks that passed some runs of Repeat and failed others.
func (r *Result) Flaky() []Figures {
	var out []Figures
	for _, f := range r.Tasks {
		if f.Flaky {
			out = append(out, f)
		}
	}
	return out
}

// FailedEveryRun are the tasks that failed every run of Repeat: not
// flaky, broken.
func (r *Result) FailedEveryRun() []Figures {
	var out []Figures
	for _, f := range r.Tasks {
		if f.Passed == 0 && f.Runs > 0 {
			out = append(out, f)
		}
	}
	return out
}

// Repeated reports whether the result is of Repeat's runs.
func (r *Result) Repeated() bool { return len(r.Runs) > 0 }

// runs is how many runs Repeat makes: Repeat fresh ones and one on the
// lab as the last left it, or Repeat in all when there is no Reset.
func (t *Test) runs() int {
	if t.Reset == nil {
		return t.Repeat
	}
	return t.Repeat + 1
}

// repeat makes the runs of Repeat into res, and returns the graded files
// of the last run and the directory they are in (open, for the caller
// to close) when its check passed, for the changes and renderings; nil
// otherwise. It stops at an interrupt, at a pass that could not start,
// at a Reset that failed, and at a run the cluster did not answer or
// refused labrun in (transport, forbidden): that says nothing of the lab.
func (t *Test) repeat(ctx context.Context, res *Result) ([]*runner.GradedFile, *outdir.Dir, error) {
	total := t.runs()
	var keep []*runner.GradedFile
	var keepDir *outdir.Dir
	for i := 1; i <= total; i++ {
		run := Run{Number: i, Fresh: t.Reset != nil && i <= t.Repeat}
		where := fmt.Sprintf("run %d of %d", i, total)
		if i > 1 && !run.Fresh {
			where += fmt.Sprintf(", on the lab as run %d left it", i-1)
		}
		start := time.Now()
		if run.Fresh {
			t.announce(where + ": " + t.Reset.What)
			if err := t.Reset.Run(ctx); err != nil {
				return nil, nil, err
			}
			run.ResetSeconds = since(start)
		}
		t.announce(where + ": solving the lab")
		solveStart := time.Now()
		solve, dir, err := t.pass(ctx, actions.Solve, nil)
		dir.Close()
		if err != nil {
			return nil, nil, err
		}
		run.SolveSeconds = since(solveStart)
		t.announce(where + ": checking the files as written")
		checkStart := time.Now()
		check, files, dir, err := t.checkAll(ctx)
		if err != nil {
			dir.Close()
			return nil, nil, err
		}
		run.CheckSeconds = since(checkStart)
		run.Seconds = since(start)
		run.Tasks = verdicts(t.Plan, solve, check)
		for j := range run.Tasks {
			if tr := run.Tasks[j]; !tr.Passed && (tr.Class == runner.ClassTransport || tr.Class == runner.ClassForbidden) {
				dir.Close()
				return nil, nil, &FailedError{Class: tr.Class, Msg: fmt.Sprintf("run %d could not be graded, which says nothing of the lab: %s [%s]", i, tr.Reason, tr.Class)}
			}
			run.Tasks[j].values = taskValues(t.Plan, taskAt(t.Plan, j), solve, check)
		}
		if keepDir != nil {
			keepDir.Close()
			keep, keepDir = nil, nil
		}
		if i == total && check.Status == runner.Passed && len(files) > 0 {
			keep, keepDir = files, dir
		} else {
			dir.Close()
		}
		res.Runs = append(res.Runs, run)
		if t.OnRun != nil {
			t.OnRun(run, total)
		}
	}
	res.Tasks = figures(t.Plan, res.Runs)
	return keep, keepDir, nil
}

func since(t time.Time) float64 { return time.Since(t).Seconds() }

// checkAll checks every task of the lab (each asked for, so a task whose
// file the solve did not get to write fails rather than being left not
// started) and returns its outcome and the files it graded, in the order
// their steps are written.
func (t *Test) checkAll(ctx context.Context) (*runner.Outcome, []*runner.GradedFile, *outdir.Dir, error) {
	r := t.NewRunner(actions.Check)
	r.Only = t.Plan.Tasks
	var mu sync.Mutex
	var files []*runner.GradedFile
	r.OnGradedFile = func(f *runner.GradedFile) {
		mu.Lock()
		defer mu.Unlock()
		files = append(files, f)
	}
	out, dir, err := run(ctx, r)
	if err != nil {
		return nil, nil, dir, err
	}
	t.sortFiles(files)
	return out, files, dir, nil
}

// taskAt is the plan's task at index i, nil for a playbook without tasks.
func taskAt(p *runner.Plan, i int) *syntax.Task {
	if len(p.Tasks) == 0 {
		return nil
	}
	return p.Tasks[i]
}

// verdicts are each task's verdict in a run: passed when it passed in
// the solve and in the check of the solve's files.
func verdicts(p *runner.Plan, solve, check *runner.Outcome) []RunTask {
	if len(p.Tasks) == 0 {
		switch {
		case solve.Status != runner.Passed:
			return []RunTask{{Class: orAssertion(solve.Class), Reason: "solve: " + firstFailure(solve)}}
		case check.Status != runner.Passed:
			return []RunTask{{Class: orAssertion(check.Class), Reason: "check: " + firstFailure(check)}}
		}
		return []RunTask{{Passed: true}}
	}
	var out []RunTask
	for i := range p.Tasks {
		v := RunTask{Passed: true}
		for _, pass := range []struct {
			name string
			out  *runner.Outcome
		}{{"solve", solve}, {"check", check}} {
			if i >= len(pass.out.Tasks) {
				continue
			}
			tr := pass.out.Tasks[i]
			if tr.Status == runner.Passed || !v.Passed {
				continue
			}
			class := tr.Class
			if class == "" {
				class = pass.out.Class
			}
			reason := tr.Reason
			if tr.Status != runner.Failed {
				reason = string(tr.Status) + ": " + reason
			}
			v = RunTask{Class: orAssertion(class), Reason: pass.name + ": " + reason}
		}
		v.Task = p.Tasks[i].Number
		out = append(out, v)
	}
	return out
}

// orAssertion is c, or assertion for a failure without a class (a task
// not started, a run that ended early).
func orAssertion(c runner.Class) runner.Class {
	if c == "" {
		return runner.ClassAssertion
	}
	return c
}

// figures are each task's figures over runs.
func figures(p *runner.Plan, runs []Run) []Figures {
	n := max(len(p.Tasks), 1)
	var out []Figures
	for i := range n {
		f := Figures{}
		if t := taskAt(p, i); t != nil {
			f.Number, f.ID, f.Title = t.Number, t.ID, t.Title
		}
		for _, r := range runs {
			f.Runs++
			if v := r.Tasks[i]; v.Passed {
				f.Passed++
			} else {
				f.Failed++
				f.Failures = append(f.Failures, Failure{Run: r.Number, Class: v.Class, Reason: v.Reason})
			}
		}
		if f.Runs > 0 {
			f.FlakeRate = float64(f.Failed) / float64(f.Runs)
		}
		f.Flaky = f.Passed > 0 && f.Failed > 0
		if f.Failed > 0 {
			f.Differed = differed(runs, i)
		}
		out = append(out, f)
	}
	return out
}

// String is the line labrun test prints for a task's figures.
func (f Figures) String() string {
	s := fmt.Sprintf("repeat: %s: passed %d of %s", f.What(), f.Passed, runsWord(f.Runs))
	switch {
	case f.Flaky:
		s += fmt.Sprintf(", failed %d (flake rate %s): FLAKY", f.Failed, percent(f.FlakeRate))
	case f.Failed > 0:
		s += ": failed every run"
	}
	return s
}

func runsWord(n int) string {
	if n == 1 {
		return "1 run"
	}
	return fmt.Sprintf("%d runs", n)
}

// percent writes a rate as a whole percentage, or with one decimal when
// that would round a non-zero rate to 0 or a rate below 1 to 100.
func percent(r float64) string {
	s := fmt.Sprintf("%.0f%%", r*100)
	if (r > 0 && s == "0%") || (r < 1 && s == "100%") {
		s = fmt.Sprintf("%.1f%%", r*100)
	}
	return s
}

// Lines are what labrun test prints of a task that did not pass every
// run, under its figures: each failed run and why, then the values that
// differed, at most limit of them (all when limit is 0).
func (f Figures) Lines(limit int) []string {
	var out []string
	for _, x := range f.Failures {
		out = append(out, fmt.Sprintf("  run %d failed [%s]: %s", x.Run, x.Class, x.Reason))
	}
	if f.Failed == 0 {
		return out
	}
	if len(f.Differed) == 0 {
		return append(out, "  no value its grading read differed between runs")
	}
	out = append(out, "  values its grading read that differed between runs:")
	for i, d := range f.Differed {
		if limit > 0 && i == limit {
			out = append(out, fmt.Sprintf("    and %d more (-v lists every one)", len(f.Differed)-limit))
			break
		}
		out = append(out, "    "+d.String())
	}
	return out
}

// Summary is labrun test's line on the runs of Repeat: how many, how each
// was made fresh, and their time.
func (r *Result) Summary(reset *Reset) string {
	n := len(r.Runs)
	var how string
	switch {
	case reset == nil:
		how = "each on the lab as the run before it left it"
	default:
		how = fmt.Sprintf("%d on a fresh lab (before each: %s), then 1 on the lab as run %d left it", n-1, reset.What, n-1)
	}
	var all, rs, ss, cs float64
	for _, x := range r.Runs {
		all, rs, ss, cs = all+x.Seconds, rs+x.ResetSeconds, ss+x.SolveSeconds, cs+x.CheckSeconds
	}
	avg := func(s float64, of int) string { return fmt.Sprintf("%.1fs", s/float64(max(of, 1))) }
	parts := []string{"solve " + avg(ss, n), "check " + avg(cs, n)}
	if reset != nil {
		// only the fresh runs reset
		parts = append([]string{"reset " + avg(rs, n-1)}, parts...)
	}
	return fmt.Sprintf("labrun test: %s, %s; %s a run (%s)", runsWord(n), how, avg(all, n), strings.Join(parts, ", "))
}

// Line is the line labrun test prints as a run of Repeat ends.
func (r Run) Line(p *runner.Plan, total int) string {
	head := fmt.Sprintf("labrun test: run %d of %d", r.Number, total)
	if len(p.Tasks) == 0 {
		if r.Tasks[0].Passed {
			return fmt.Sprintf("%s: passed in %.1fs", head, r.Seconds)
		}
		return fmt.Sprintf("%s: failed in %.1fs", head, r.Seconds)
	}
	passed := 0
	var failed []string
	for i, v := range r.Tasks {
		if v.Passed {
			passed++
			continue
		}
		f := Figures{}
		if t := taskAt(p, i); t != nil {
			f.Number, f.ID = t.Number, t.ID
		}
		failed = append(failed, f.What())
	}
	s := fmt.Sprintf("%s: %d of %s passed in %.1fs", head, passed, tasksWord(len(r.Tasks)), r.Seconds)
	if len(failed) > 0 {
		s += "; failed: " + strings.Join(failed, ", ")
	}
	return s
}

func tasksWord(n int) string {
	if n == 1 {
		return "1 task"
	}
	return fmt.Sprintf("%d tasks", n)
}
