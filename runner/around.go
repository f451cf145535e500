package runner

import (
	"context"
	"fmt"
)

// runAround runs a step whose action runs around its during steps (a
// capture): the action starts, runs the during steps through the
// function it is handed, each with its own record, in order, the first
// failure skipping the rest, and ends. The records come back in plan
// order: the step's own first, then its during steps'.
func (r *Runner) runAround(ctx context.Context, s *StepPlan) []*StepRecord {
	done := map[*StepPlan]*StepRecord{}
	during := func(ctx context.Context) error {
		var failed *StepRecord
		for _, m := range s.During {
			var rec *StepRecord
			switch {
			case ctx.Err() != nil:
				_, why := stopped(ctx)
				rec = r.skipAll([]*StepPlan{m}, why)[0]
			case failed != nil:
				rec = r.skipAll([]*StepPlan{m}, "an earlier step failed")[0]
			default:
				rec = r.runStep(ctx, m)
			}
			done[m] = rec
			if rec.Status == Failed && failed == nil && !r.KeepGoing {
				failed = rec
			}
		}
		if failed != nil {
			return withClass(failed.Class, &duringFailed{step: failed.ID})
		}
		for _, m := range s.During {
			if done[m].Status == Interrupted {
				return context.Canceled
			}
		}
		return ctx.Err()
	}
	rec := r.runStepAround(ctx, s, during)
	// the during steps may have changed what a read sees (check shares
	// reads among steps: checkreads.go)
	r.reads.forget()
	recs := []*StepRecord{rec}
	for _, m := range s.During {
		if done[m] == nil {
			// the action never ran them: the step was skipped, or failed
			// before it was ready
			why := fmt.Sprintf("step %s did not run its during steps", s.ID)
			if rec.Status == Skipped {
				why = fmt.Sprintf("step %s is skipped", s.ID)
			}
			done[m] = r.skipAll([]*StepPlan{m}, why)[0]
		}
		recs = append(recs, done[m])
	}
	return recs
}

// duringFailed is the error of a step whose during step failed: the
// during step's record says why, and the step fails with its class.
type duringFailed struct{ step string }

func (e *duringFailed) Error() string {
	return fmt.Sprintf("step %s under during failed", e.step)
}
