package labtest

import (
	"context"
	"fmt"
	"strings"

	"github.com/labrun/labrun/actions"
	"github.com/labrun/labrun/internal/leaf/outdir"
	"github.com/labrun/labrun/runner"
)

// The untouched pass of labrun test --protocol: before the lab is solved,
// on a fresh cluster and with no learner file, check grades every task,
// and each must fail. A task that passes there passes a learner who did
// nothing: a defect of the lab (a check that reads nothing the learner
// changes, or compares nothing). This is what a lab platform's track test
// does with its check scripts before the solve.

// Untouched is what the check of the untouched lab found of one task.
type Untouched struct {
	// Task is the task's record in the untouched check; nil for a
	// playbook without tasks, where the whole check is judged.
	Task *runner.TaskRecord
	// Passed: the check passed it untouched, a defect.
	Passed bool
	// Class and Reason say why it failed, as it must.
	Class  runner.Class
	Reason string
}

// What names it: "task 3 (scale)", or "the check" without tasks.
func (u Untouched) What() string {
	if u.Task == nil {
		return "the check"
	}
	return fmt.Sprintf("task %d (%s)", u.Task.Number, u.Task.ID)
}

// String is the line labrun test prints for it.
func (u Untouched) String() string {
	what := u.What()
	if u.Passed {
		return "untouched: " + what + " PASSES before the lab is solved: it passes a learner who did nothing"
	}
	return fmt.Sprintf("untouched: %s fails, as it must [%s]: %s", what, u.Class, u.Reason)
}

// PassedUntouched are the tasks the untouched lab passed.
func (r *Result) PassedUntouched() []Untouched {
	var out []Untouched
	for _, u := range r.Untouched {
		if u.Passed {
			out = append(out, u)
		}
	}
	return out
}

// untouched checks every task on the lab as it is before the solve (all
// of them asked for, so a missing file fails its task rather than leaving
// it not started). The output directory must hold none of the lab's
// files: a learner who did nothing wrote none, and an earlier run's would
// be graded instead. A task the check could not read (the cluster did not
// answer, or refused labrun) decides nothing: the test stops with that
// class.
func (t *Test) untouched(ctx context.Context) ([]Untouched, error) {
	r := t.NewRunner(actions.Check)
	r.Only = t.Plan.Tasks
	// One line per task, through OnUntouched, instead of the progress
	// of steps that fail by design.
	r.Observer = nil
	out, dir, err := run(ctx, r)
	defer dir.Close()
	if err != nil {
		return nil, err
	}
	if err := refuseWritten(out, dir); err != nil {
		return nil, err
	}
	var us []Untouched
	if len(out.Tasks) == 0 {
		us = append(us, Untouched{Passed: out.Status == runner.Passed, Class: out.Class, Reason: firstFailure(out)})
	}
	for _, tr := range out.Tasks {
		us = append(us, Untouched{Task: tr, Passed: tr.Status == runner.Passed, Class: tr.Class, Reason: tr.Reason})
	}
	for _, u := range us {
		if !u.Passed && (u.Class == runner.ClassTransport || u.Class == runner.ClassForbidden) {
			return nil, &FailedError{Class: u.Class, Msg: fmt.Sprintf("%s could not be checked on the untouched lab, so the protocol cannot tell whether it fails there [%s]: %s",
				u.What(), u.Class, u.Reason)}
		}
	}
	for _, u := range us {
		if t.OnUntouched != nil {
			t.OnUntouched(u)
		}
	}
	return us, nil
}

// refuseWritten refuses an output directory that holds a file of the
// lab's tasks.
func refuseWritten(out *runner.Outcome, dir *outdir.Dir) error {
	if dir == nil {
		return nil
	}
	var there []string
	for _, tr := range out.Tasks {
		for _, f := range tr.Files {
			if rel, err := dir.Resolve(f); err != nil || dir.Exists(rel) {
				there = append(there, f)
			}
		}
	}
	if len(there) == 0 {
		return nil
	}
	return &RunError{Err: fmt.Errorf("--protocol checks the lab untouched, but its output directory %s holds %s already: give it an empty output directory", dir.Path, strings.Join(there, ", "))}
}

// firstFailure is the first reason a run without tasks failed.
func firstFailure(out *runner.Outcome) string {
	for _, rec := range out.Steps {
		if rec.Status == runner.Failed {
			return "step " + rec.ID + ": " + rec.FirstReason()
		}
	}
	return string(out.Status)
}
