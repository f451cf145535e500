package labtest

import (
	"context"
	"errors"
	"os"
	"slices"
	"sync"

	"github.com/labrun/labrun/actions"
	"github.com/labrun/labrun/internal/outdir"
	"github.com/labrun/labrun/runner"
)

// Test is labrun test on one lab. Run drives the runner through its
// passes: a solve (unless NoSolve), a check of the files as written, which
// must pass and hands over each file it grades, then the changes to those
// files. The caller gives the runners and prints; nothing of the grading
// goes back to it but the changes found.
type Test struct {
	Plan *runner.Plan
	// NoSolve grades the files already in the output directory instead
	// of solving the lab first.
	NoSolve bool
	// NewRunner makes the runner of one pass over the plan in mode, with
	// the caller's observer and settings.
	NewRunner func(actions.Mode) *runner.Runner
	// Announce, when set, is told each pass as it starts, in words
	// ("solving the lab").
	Announce func(pass string)
}

// Result is what labrun test found.
type Result struct {
	// Changes are every change with its verdict, in the order the steps
	// that graded the files are written.
	Changes []Change
	// Files is how many files check graded.
	Files int
}

// Count is how many changes got verdict v.
func (r *Result) Count(v Verdict) int {
	n := 0
	for _, c := range r.Changes {
		if c.Verdict == v {
			n++
		}
	}
	return n
}

// Failed reports whether the grader lets a learner down: a change
// survived (a loose value declared with its reason does not count), or
// was rejected without naming the value.
func (r *Result) Failed() bool {
	return r.Count(Survived)+r.Count(Unnamed) > 0
}

// ErrInterrupted is Run's error when a pass was interrupted (Ctrl-C); the
// runner's observer has said so.
var ErrInterrupted = errors.New("interrupted")

// RunError is Run's error when a pass could not start: runner.Run refused
// the playbook's variables or its output directory.
type RunError struct{ Err error }

func (e *RunError) Error() string { return e.Err.Error() }
func (e *RunError) Unwrap() error { return e.Err }

// errFailed is a pass that ended failed: a step failed, or the run's
// time limit passed.
var errFailed = errors.New("failed")

// Run solves the lab (unless NoSolve), checks its files and grades every
// change to them. Its error is *RunError or ErrInterrupted as their docs
// say, or any other error that stopped the test, saying why.
func (t *Test) Run(ctx context.Context) (*Result, error) {
	if !t.NoSolve {
		t.announce("solving the lab")
		dir, err := t.pass(ctx, actions.Solve, nil)
		dir.Close()
		if errors.Is(err, errFailed) {
			return nil, errors.New("the lab's solve failed, so there are no files to grade")
		}
		if err != nil {
			return nil, err
		}
	}
	t.announce("checking the files as written")
	files, dir, err := t.check(ctx)
	defer dir.Close()
	if err != nil {
		return nil, err
	}
	// The changed files go to a scratch directory of labrun's own; the
	// graded directory is only read.
	tmp, err := os.MkdirTemp("", "labrun-test-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	scratch, err := outdir.Create(tmp)
	if err != nil {
		return nil, err
	}
	defer scratch.Close()
	changes, err := changeAll(files, dir, scratch)
	if err != nil {
		return nil, err
	}
	return &Result{Changes: changes, Files: len(files)}, nil
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
	dir, err := t.pass(ctx, actions.Check, func(f *runner.GradedFile) {
		mu.Lock()
		defer mu.Unlock()
		files = append(files, f)
	})
	order := map[*runner.StepPlan]int{}
	for i, s := range t.Plan.Steps {
		order[s] = i
	}
	slices.SortStableFunc(files, func(a, b *runner.GradedFile) int { return order[a.Step] - order[b.Step] })
	switch {
	case errors.Is(err, errFailed) && t.NoSolve:
		err = errors.New("check fails on the files as they are; give it files that pass (a solve's) to change")
	case errors.Is(err, errFailed):
		err = errors.New("check fails on the files the solve wrote: the grader refuses a right answer")
	case err == nil && len(files) == 0:
		err = errors.New("check graded no file: the playbook has no write step that ran")
	}
	return files, dir, err
}

// pass runs the plan once in mode, handing each file a check grades to
// onFile. The output directory it used stays open for the caller to
// close (nil when the run could not start).
func (t *Test) pass(ctx context.Context, mode actions.Mode, onFile func(*runner.GradedFile)) (*outdir.Dir, error) {
	r := t.NewRunner(mode)
	r.OnGradedFile = onFile
	out, err := r.Run(ctx)
	if err != nil {
		return nil, &RunError{Err: err}
	}
	switch out.Status {
	case runner.Interrupted:
		return r.Runtime.Out, ErrInterrupted
	case runner.Failed:
		return r.Runtime.Out, errFailed
	}
	return r.Runtime.Out, nil
}
