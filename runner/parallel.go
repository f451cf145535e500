package runner

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// branchStopped is why the steps still running in the other branches of a
// parallel step are stopped: one branch failed, and the run ends after
// the parallel step anyway.
type branchStopped struct {
	step, branch string
}

func (b *branchStopped) Error() string {
	return fmt.Sprintf("stopped: step %s in branch %s failed", b.step, b.branch)
}

// withMembers is s followed, for a parallel step, by its branches' steps
// in plan order (as reports and the journal list them), and for a step
// with during by its during steps.
func withMembers(s *StepPlan) []*StepPlan {
	out := []*StepPlan{s}
	for _, b := range s.Parallel {
		out = append(out, b.Steps...)
	}
	return append(out, s.During...)
}

// runGroup runs a parallel step: each branch's steps in order, all branches
// at the same time (one after another with Sequential; runBranches). The
// records come back in plan order: the parallel step's own first.
func (r *Runner) runGroup(ctx context.Context, g *StepPlan) []*StepRecord {
	members := withMembers(g)[1:]
	rec := newRecord(g)
	r.env.SetStep(g.ID, r.zero(g))
	finish := func(members []*StepRecord) []*StepRecord {
		r.endGroup(rec)
		return append([]*StepRecord{rec}, members...)
	}
	// skipped ends the group as a when that is false does: final, and
	// kept in the journal with its branches' steps.
	skipped := func(why string) []*StepRecord {
		rec.skipped(skipWhen, why)
		members := r.skipAll(members, "parallel step "+g.ID+" is skipped")
		for _, m := range members {
			m.skip = skipInGroup
			r.keep(m)
		}
		return finish(members)
	}
	if why := r.otherMode(g); why != "" {
		return skipped(why)
	}
	if g.When != nil {
		ok, err := g.When.EvalBool(r.env)
		if err != nil {
			err = r.exprError(g, err)
			rec.Error = err.Error()
			rec.failWith(classOf(err))
			return finish(r.skipAll(members, "its parallel step failed"))
		}
		if !ok {
			return skipped("when is false: " + g.When.Src)
		}
	}
	if r.Observer != nil {
		r.Observer.StepStart(g)
	}
	done := r.runBranches(ctx, g)
	var recs []*StepRecord
	for _, s := range members {
		recs = append(recs, done[s])
	}
	rec.Status, rec.Class = groupStatus(ctx, recs)
	return finish(recs)
}

// runBranches runs the branches of parallel step g and returns the
// records of their steps. A failed step skips the rest of its branch and,
// unless KeepGoing, stops the other branches: the run would end after
// this step anyway, and a wait in another branch could otherwise hold the
// failure back for minutes.
func (r *Runner) runBranches(ctx context.Context, g *StepPlan) map[*StepPlan]*StepRecord {
	gctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	var mu sync.Mutex
	done := map[*StepPlan]*StepRecord{}
	runBranch := func(b *BranchPlan) {
		failed := false
		for _, s := range b.Steps {
			var sr *StepRecord
			switch {
			case ctx.Err() != nil:
				_, why := stopped(ctx)
				sr = r.skipAll([]*StepPlan{s}, why)[0]
			case failed:
				sr = r.skipAll([]*StepPlan{s}, "an earlier step failed")[0]
			case gctx.Err() != nil:
				sr = r.skipAll([]*StepPlan{s}, context.Cause(gctx).Error())[0]
			default:
				sr = r.runStep(gctx, s)
			}
			mu.Lock()
			done[s] = sr
			mu.Unlock()
			if sr.Status == Failed {
				failed = true
				if !r.KeepGoing {
					stop(&branchStopped{step: s.ID, branch: b.Name})
				}
			}
		}
	}
	if r.Sequential {
		for _, b := range g.Parallel {
			runBranch(b)
		}
		return done
	}
	var wg sync.WaitGroup
	for _, b := range g.Parallel {
		wg.Go(func() { runBranch(b) })
	}
	wg.Wait()
	return done
}

// groupStatus folds the records of a parallel step's members into the
// parallel step's status: interrupted when one was; else, once the run's
// context has ended, as stopped says; else failed when one failed; else
// passed. A failed parallel step has the class of its first failed
// member, in plan order (timeout when the run's time limit failed it
// before any member failed).
func groupStatus(ctx context.Context, members []*StepRecord) (Status, Class) {
	status := Passed
	var class Class
	for _, m := range members {
		switch {
		case m.Status == Interrupted:
			status = Interrupted
		case ctx.Err() != nil && status != Interrupted:
			status, _ = stopped(ctx)
		case m.Status == Failed && status != Interrupted:
			status = Failed
		}
		if m.Status == Failed && class == "" {
			class = m.Class
		}
	}
	switch {
	case status != Failed:
		return status, ""
	case class == "":
		return status, ClassTimeout
	}
	return status, class
}

// endGroup ends the record of a parallel step that ran (or was skipped
// with its branches), after its members' records.
func (r *Runner) endGroup(rec *StepRecord) {
	rec.Seconds = time.Since(rec.Started).Seconds()
	r.keep(rec)
	r.notifyEnd(rec)
}
