package runner

import (
	"context"
	"strings"
	"sync"
)

// canRunGraph says whether a check may run its steps as a graph: nothing
// restored from a journal, branches not asked to run one after another,
// no parallel step with a when of its own (which would hold its members
// back until it is decided), and no step with during (a capture). Tasks graded apart need nothing of
// the loop: runStep skips a step no graded task needs.
func (r *Runner) canRunGraph(restored map[string]*StepRecord) bool {
	if !r.KeepGoing || r.Sequential || len(restored) > 0 {
		return false
	}
	for _, s := range r.Plan.Steps {
		if s.Parallel != nil && s.When != nil {
			return false
		}
		if s.During != nil {
			// a capture and the steps it listens to are ordered in time,
			// which no read shows: the check runs in the order written
			return false
		}
	}
	return true
}

// runGraph runs the steps of a check (all but the finally steps) each as
// soon as the steps it reads have finished (schedule.go says in which
// order and how many at once). A check changes nothing and does not wait
// for conditions, so the order the playbook gives its steps only matters
// through what they read: the expressions of a step (spec, loop, when,
// until, assertions) name the steps it needs, and a step that reads steps
// by a computed name waits for every step before it. Reads that a solve
// makes one after another (in a branch, or after a parallel step) overlap
// in a check when neither reads the other. Every step runs whatever
// happened to the steps it reads, as the top-level steps of a check always
// did, so that the report grades every file. The records come back in plan
// order, parallel steps with the status of their members.
func (r *Runner) runGraph(ctx context.Context) []*StepRecord {
	steps, deps := graph(r.Plan.Steps)
	if r.Observer != nil {
		defer r.endInPlanOrder()()
	}
	groups := map[*StepPlan]*StepRecord{}
	for _, s := range r.Plan.Steps {
		if s.Parallel != nil && !s.Cleanup {
			groups[s] = newRecord(s)
			r.env.SetStep(s.ID, r.zero(s))
			if r.Observer != nil && r.whyUngraded(s) == "" {
				r.Observer.StepStart(s)
			}
		}
	}
	recs := r.schedule(ctx, steps, deps)
	var out []*StepRecord
	for _, s := range r.Plan.Steps {
		switch {
		case s.Cleanup:
		case s.Parallel != nil:
			out = append(out, r.endGraphGroup(ctx, groups[s], recs))
		default:
			out = append(out, recs[s])
		}
	}
	return out
}

// graph gives the steps of a check that run as a graph (not parallel
// steps, not finally steps) and, for each, the steps it waits for: the
// earlier steps it reads (the members of a parallel step it reads), or
// every earlier step when it reads steps by a computed name.
func graph(plan []*StepPlan) (steps []*StepPlan, deps map[*StepPlan][]*StepPlan) {
	byID := map[string]*StepPlan{}
	for _, s := range plan {
		if s.Cleanup {
			continue
		}
		byID[s.ID] = s
		if s.Parallel == nil {
			steps = append(steps, s)
		}
	}
	inGraph := map[*StepPlan]bool{}
	for _, s := range steps {
		inGraph[s] = true
	}
	deps = map[*StepPlan][]*StepPlan{}
	for _, s := range steps {
		seen := map[*StepPlan]bool{}
		add := func(d *StepPlan) {
			// only earlier steps: validate lets nothing read a later one
			if inGraph[d] && d.Index < s.Index && !seen[d] {
				seen[d] = true
				deps[s] = append(deps[s], d)
			}
		}
		if s.ReadsAllSteps() {
			for _, d := range steps {
				add(d)
			}
			continue
		}
		for _, ref := range s.Reads() {
			id, ok := strings.CutPrefix(ref, "steps.")
			if d := byID[id]; ok && d != nil {
				for _, m := range withMembers(d) {
					add(m)
				}
			}
		}
	}
	return steps, deps
}

// endInPlanOrder has the observer told of step ends in the order of a
// sequential run, so the report reads the same every time: steps of a
// graph end in any order. It returns the function that puts the observer
// back.
func (r *Runner) endInPlanOrder() (restore func()) {
	o := &planOrder{Observer: r.Observer, ended: map[*StepPlan]*StepRecord{}}
	for _, s := range r.Plan.Steps {
		if s.Cleanup || s.Group != nil {
			continue
		}
		o.order = append(o.order, withMembers(s)[1:]...)
		o.order = append(o.order, s)
	}
	r.Observer = o
	return func() { r.Observer = o.Observer }
}

// endGraphGroup ends the record g of a parallel step once the graph has
// run its members (recs): with their status folded, or skipped as the
// loop's skipUngraded when no graded task needs any member.
func (r *Runner) endGraphGroup(ctx context.Context, g *StepRecord, recs map[*StepPlan]*StepRecord) *StepRecord {
	g.Status = Passed
	if why := r.whyUngraded(g.Step); why != "" {
		g.skipped(skipUngraded, why)
		r.notifyEnd(g)
		return g
	}
	var members []*StepRecord
	for _, m := range withMembers(g.Step)[1:] {
		members = append(members, recs[m])
	}
	g.Status, g.Class = groupStatus(ctx, members)
	r.endGroup(g)
	return g
}

// planOrder passes step ends on to an observer in the order a sequential
// run has them: a parallel step's members, then the parallel step. An end
// waits for those before it.
type planOrder struct {
	Observer
	mu    sync.Mutex
	order []*StepPlan
	ended map[*StepPlan]*StepRecord
	next  int
}

func (o *planOrder) StepEnd(rec *StepRecord) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.ended[rec.Step] = rec
	for o.next < len(o.order) {
		r, ok := o.ended[o.order[o.next]]
		if !ok {
			break
		}
		o.Observer.StepEnd(r)
		o.next++
	}
}
