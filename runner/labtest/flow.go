package labtest

import (
	"context"
	"errors"
	"os"
	"slices"
	"sync"

	"github.com/labrun/labrun/actions"
	"github.com/labrun/labrun/internal/leaf/outdir"
	"github.com/labrun/labrun/runner"
)

// Test is labrun test on one lab. Run drives the runner through its
// passes: with Protocol, a check of the lab untouched, whose every task
// must fail; a solve (unless NoSolve); a check of the files as written,
// which must pass and hands over each file it grades; then the changes to
// those files. The caller gives the runners and prints; nothing of the
// grading goes back to it but what was found.
type Test struct {
	Plan *runner.Plan
	// NoSolve grades the files already in the output directory instead
	// of solving the lab first.
	NoSolve bool
	// Protocol checks every task on the lab untouched (a fresh cluster,
	// no learner file) before the solve: each must fail, or the lab
	// passes a learner who did nothing (untouched.go).
	Protocol bool
	// NewRunner makes the runner of one pass over the plan in mode, with
	// the caller's observer and settings.
	NewRunner func(actions.Mode) *runner.Runner
	// Announce, when set, is told each pass as it starts, in words
	// ("solving the lab").
	Announce func(pass string)
	// OnUntouched, when set, is told what became of each task on the untouched
	// lab as soon as that pass ends (Protocol only).
	OnUntouched func(Untouched)
	// Repeat, above 0, solves and checks the lab Repeat times, each after
	// Reset when there is one, then once more on the lab as the last run
	// left it (Repeat runs in all without Reset), and gives each task's
	// figures over the runs (repeat.go); the changes and renderings are
	// then made to the files of the last run, when its check passed.
	Repeat int
	Reset  *Reset
	// OnRun, when set, is told each run of Repeat as it ends, and how
	// many runs there are.
	OnRun func(r Run, total int)
}

// Result is what labrun test found.
type Result struct {
	// Changes are every change with its finding, in the order the steps
	// that graded the files are written.
	Changes []Change
	// Renderings are each graded file written other ways with the same
	// meaning (renderings.go), and what grading each found: every one
	// must pass.
	Renderings []Rendering
	// Files is how many files check graded.
	Files int
	// Untouched are, with Protocol, the tasks as checked on the lab
	// untouched (one for a playbook without tasks).
	Untouched []Untouched
	// Runs are, with Repeat, each run; Tasks each task's figures over
	// them (one, the whole lab, for a playbook without tasks).
	Runs  []Run
	Tasks []Figures
	// Graded: the changes and renderings were made (without Repeat,
	// always; with it, when the last run's check passed).
	Graded bool
}

// Count is how many changes got finding f.
func (r *Result) Count(f Finding) int {
	n := 0
	for _, c := range r.Changes {
		if c.Finding == f {
			n++
		}
	}
	return n
}

// Refused lists the renderings the check failed: right answers refused.
func (r *Result) Refused() []Rendering {
	var out []Rendering
	for _, x := range r.Renderings {
		if x.Refused() {
			out = append(out, x)
		}
	}
	return out
}

// Failed reports whether the grader lets a learner down in what one run
// shows: a task passed on the untouched lab, a change survived (a loose
// value declared with its reason does not count), or was rejected without
// naming the value, or a graded file written another way with the same
// meaning was refused. (Repeat's findings are Flaky and FailedEveryRun.)
func (r *Result) Failed() bool {
	return len(r.PassedUntouched())+r.Count(Survived)+r.Count(Unnamed)+len(r.Refused()) > 0
}

// ErrInterrupted is Run's error when a pass was interrupted (Ctrl-C); the
// runner's observer has said so.
var ErrInterrupted = errors.New("interrupted")

// RunError is Run's error when a pass could not start: runner.Run refused
// the playbook's variables or its output directory.
type RunError struct{ Err error }

func (e *RunError) Error() string { return e.Err.Error() }
func (e *RunError) Unwrap() error { return e.Err }

// FailedError is Run's error when a pass ended failed (the solve, or the
// check of the files as written) or could not decide (a task the
// untouched lab's check could not read): Class is the pass's class of
// failure, which labrun test exits by as check does.
type FailedError struct {
	Msg   string
	Class runner.Class
}

func (e *FailedError) Error() string { return e.Msg }

// failed is the error of a pass that ended as out did, in words, or nil
// when it passed.
func failed(out *runner.Outcome, msg string) error {
	if out.Status != runner.Failed {
		return nil
	}
	return &FailedError{Msg: msg, Class: out.Class}
}

// Run solves the lab (unless NoSolve), checks its files and grades every
// change to them. Its error is *RunError or ErrInterrupted as their docs
// say, or any other error that stopped the test, saying why.
func (t *Test) Run(ctx context.Context) (*Result, error) {
	res := &Result{}
	if t.Protocol {
		t.announce("checking every task on the lab untouched: each must fail")
		u, err := t.untouched(ctx)
		if err != nil {
			return nil, err
		}
		res.Untouched = u
	}
	if t.Repeat > 0 {
		files, dir, err := t.repeat(ctx, res)
		if err != nil {
			return nil, err
		}
		if dir == nil { // the last run's check failed: nothing to change
			return res, nil
		}
		defer dir.Close()
		return res, t.grade(files, dir, res)
	}
	if !t.NoSolve {
		t.announce("solving the lab")
		out, dir, err := t.pass(ctx, actions.Solve, nil)
		dir.Close()
		if err != nil {
			return nil, err
		}
		if err := failed(out, "the lab's solve failed, so there are no files to grade"); err != nil {
			return nil, err
		}
	}
	t.announce("checking the files as written")
	files, dir, err := t.check(ctx)
	defer dir.Close()
	if err != nil {
		return nil, err
	}
	if err := t.grade(files, dir, res); err != nil {
		return nil, err
	}
	return res, nil
}

// grade makes the changes and the renderings of files, graded in dir,
// into res.
func (t *Test) grade(files []*runner.GradedFile, dir *outdir.Dir, res *Result) error {
	// The changed files go to a scratch directory of labrun's own; the
	// graded directory is only read.
	tmp, err := os.MkdirTemp("", "labrun-test-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	scratch, err := outdir.Create(tmp)
	if err != nil {
		return err
	}
	defer scratch.Close()
	if res.Changes, err = changeAll(files, dir, scratch); err != nil {
		return err
	}
	if res.Renderings, err = renderAll(files, dir, scratch); err != nil {
		return err
	}
	res.Files = len(files)
	res.Graded = true
	return nil
}

func (t *Test) announce(pass string) {
	if t.Announce != nil {
		t.Announce(pass)
	}
}

// check runs the check pass, which must pass, and returns the files it
// graded in the order their steps are written (parallel branches grade at
// the same time) and the directory it graded, open for the caller to
// close.
func (t *Test) check(ctx context.Context) ([]*runner.GradedFile, *outdir.Dir, error) {
	var mu sync.Mutex
	var files []*runner.GradedFile
	out, dir, err := t.pass(ctx, actions.Check, func(f *runner.GradedFile) {
		mu.Lock()
		defer mu.Unlock()
		files = append(files, f)
	})
	if err != nil {
		return nil, dir, err
	}
	t.sortFiles(files)
	switch {
	case t.NoSolve:
		err = failed(out, "check fails on the files as they are; give it files that pass (a solve's) to change")
	default:
		err = failed(out, "check fails on the files the solve wrote: the grader refuses a right answer")
	}
	if err == nil && len(files) == 0 {
		err = &FailedError{Msg: "check graded no file: the playbook has no write step that ran", Class: runner.ClassConfig}
	}
	return files, dir, err
}

// sortFiles puts graded files in the order their steps are written
// (parallel branches grade at the same time).
func (t *Test) sortFiles(files []*runner.GradedFile) {
	order := map[*runner.StepPlan]int{}
	for i, s := range t.Plan.Steps {
		order[s] = i
	}
	slices.SortStableFunc(files, func(a, b *runner.GradedFile) int { return order[a.Step] - order[b.Step] })
}

// pass runs the plan once in mode, handing each file a check grades to
// onFile. The output directory it used stays open for the caller to
// close (nil when the run could not start). Its error is a *RunError or
// ErrInterrupted; a run that failed is the outcome's to say.
func (t *Test) pass(ctx context.Context, mode actions.Mode, onFile func(*runner.GradedFile)) (*runner.Outcome, *outdir.Dir, error) {
	r := t.NewRunner(mode)
	r.OnGradedFile = onFile
	return run(ctx, r)
}

// run runs r, with pass's errors.
func run(ctx context.Context, r *runner.Runner) (*runner.Outcome, *outdir.Dir, error) {
	out, err := r.Run(ctx)
	if err != nil {
		return nil, nil, &RunError{Err: err}
	}
	if out.Status == runner.Interrupted {
		return out, r.Runtime.Out, ErrInterrupted
	}
	return out, r.Runtime.Out, nil
}
