package runner

import (
	"container/heap"
	"context"
	"slices"
	"time"

	"github.com/labrun/labrun/actions"
)

// checkReads bounds how many steps that wait on something outside the
// process a check runs at once: enough to overlap the round trips of
// independent reads, few enough that a two-CPU machine does not spend its
// time switching between a dozen exec sessions. Steps that only compute or
// write run beside them.
const checkReads = 4

// schedule runs steps, each once every step in deps[s] has ended, and
// returns their records. Of the steps that are ready, the one of highest
// rank starts first: the one that leads the longest chain of work still
// ahead (ranks), so the slowest chain of reads starts at once instead of
// queueing behind reads that end a branch. The order of the plan breaks
// ties; a heap keeps that order as steps become ready. A step whose action
// runs in process starts as soon as it is ready, taking no turn.
func (r *Runner) schedule(ctx context.Context, steps []*StepPlan, deps map[*StepPlan][]*StepPlan) map[*StepPlan]*StepRecord {
	readers := map[*StepPlan][]*StepPlan{}
	pending := map[*StepPlan]int{}
	for _, s := range steps {
		pending[s] = len(deps[s])
		for _, d := range deps[s] {
			readers[d] = append(readers[d], s)
		}
	}
	type end struct {
		s    *StepPlan
		rec  *StepRecord
		turn bool
	}
	ended := make(chan end)
	run := func(s *StepPlan, turn bool) {
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
	waiting := &byRank{rank: ranks(steps, readers)} // ready, waiting for a turn
	ready := func(s *StepPlan) {
		if cost(s) == actions.InProcess {
			run(s, false)
			return
		}
		heap.Push(waiting, s)
	}
	for _, s := range steps {
		if pending[s] == 0 {
			ready(s)
		}
	}
	recs := map[*StepPlan]*StepRecord{}
	busy := 0 // turns taken
	for len(recs) < len(steps) {
		for busy < checkReads && waiting.Len() > 0 {
			busy++
			run(heap.Pop(waiting).(*StepPlan), true)
		}
		e := <-ended
		if e.turn {
			busy--
		}
		recs[e.s] = e.rec
		for _, t := range readers[e.s] {
			if pending[t]--; pending[t] == 0 {
				ready(t)
			}
		}
	}
	return recs
}

// byRank is a heap of steps, the highest rank on top, then the earliest in
// the plan.
type byRank struct {
	steps []*StepPlan
	rank  map[*StepPlan]time.Duration
}

func (h *byRank) Len() int { return len(h.steps) }
func (h *byRank) Less(i, j int) bool {
	a, b := h.steps[i], h.steps[j]
	if h.rank[a] != h.rank[b] {
		return h.rank[a] > h.rank[b]
	}
	return a.Index < b.Index
}
func (h *byRank) Swap(i, j int) { h.steps[i], h.steps[j] = h.steps[j], h.steps[i] }
func (h *byRank) Push(x any)    { h.steps = append(h.steps, x.(*StepPlan)) }
func (h *byRank) Pop() any {
	last := h.steps[len(h.steps)-1]
	h.steps = h.steps[:len(h.steps)-1]
	return last
}

// ranks gives each step the typical duration of the longest chain of
// steps that starts with it: its own cost and the costliest chain of the
// steps that read it. steps are in plan order and a step reads only
// earlier ones, so one pass from the last step back sees every reader
// ranked before the step it reads.
func ranks(steps []*StepPlan, readers map[*StepPlan][]*StepPlan) map[*StepPlan]time.Duration {
	rank := make(map[*StepPlan]time.Duration, len(steps))
	for _, s := range slices.Backward(steps) {
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
