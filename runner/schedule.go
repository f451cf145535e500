package runner

import (
	"context"
	"slices"
	"time"

	"github.com/labrun/labrun/actions"
)

// checkReads bounds how many steps that wait on something outside the
// process a check runs at once: enough to overlap the round trips of
// independent reads, few enough that a two-CPU machine does not spend its
// time switching between a dozen exec sessions. Steps that only compute or
// write run besides them.
const checkReads = 4

// schedule runs steps, each once every step in deps[s] has ended, and
// returns their records. Of the steps that are ready, the one of highest
// rank starts first: the one that leads the longest chain of work still
// ahead (ranks), so the slowest chain of reads starts at once instead of
// queueing behind reads that end a branch. The order of the plan breaks
// ties. A step whose action runs in process takes no turn.
func (r *Runner) schedule(ctx context.Context, steps []*StepPlan, deps map[*StepPlan][]*StepPlan) map[*StepPlan]*StepRecord {
	readers := map[*StepPlan][]*StepPlan{}
	pending := map[*StepPlan]int{}
	var ready []*StepPlan
	for _, s := range steps {
		pending[s] = len(deps[s])
		for _, d := range deps[s] {
			readers[d] = append(readers[d], s)
		}
		if pending[s] == 0 {
			ready = append(ready, s)
		}
	}
	rank := ranks(steps, readers)
	type end struct {
		s    *StepPlan
		rec  *StepRecord
		turn bool
	}
	ended := make(chan end)
	recs := map[*StepPlan]*StepRecord{}
	busy := 0 // turns taken
	for len(recs) < len(steps) {
		slices.SortStableFunc(ready, func(a, b *StepPlan) int {
			if rank[a] != rank[b] {
				return int(rank[b] - rank[a])
			}
			return a.Index - b.Index
		})
		var later []*StepPlan
		for _, s := range ready {
			turn := cost(s) != actions.InProcess
			if turn && busy == checkReads {
				later = append(later, s)
				continue
			}
			if turn {
				busy++
			}
			go func() {
				var rec *StepRecord
				if ctx.Err() == nil {
					rec = r.runStep(ctx, s)
				}
				if rec == nil {
					_, why := stopped(ctx)
					rec = r.skipAll([]*StepPlan{s}, why)[0]
				}
				ended <- end{s, rec, turn}
			}()
		}
		ready = later
		e := <-ended
		if e.turn {
			busy--
		}
		recs[e.s] = e.rec
		for _, t := range readers[e.s] {
			if pending[t]--; pending[t] == 0 {
				ready = append(ready, t)
			}
		}
	}
	return recs
}

// ranks gives each step the typical duration of the longest chain of
// steps that starts with it: its own cost and the costliest chain of the
// steps that read it. A step reads only earlier ones, so one pass from
// the last step back sees every reader ranked before the step it reads.
func ranks(steps []*StepPlan, readers map[*StepPlan][]*StepPlan) map[*StepPlan]time.Duration {
	byIndex := slices.Clone(steps)
	slices.SortFunc(byIndex, func(a, b *StepPlan) int { return b.Index - a.Index })
	rank := make(map[*StepPlan]time.Duration, len(steps))
	for _, s := range byIndex {
		var ahead time.Duration
		for _, t := range readers[s] {
			ahead = max(ahead, rank[t])
		}
		rank[s] = cost(s).Weight() + ahead
	}
	return rank
}

// cost is how long a step's action typically takes; an assert-only step
// computes in process.
func cost(s *StepPlan) actions.Cost {
	if s.Action == nil {
		return actions.InProcess
	}
	return s.Action.Cost
}
