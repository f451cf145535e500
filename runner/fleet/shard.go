package fleet

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/labrun/labrun/internal/lang/eval"
	"github.com/labrun/labrun/runner"
)

// Shard is the slice of a class's targets one pod of the Job grades:
// shard Index of Of. The targets are cut, in the targets file's order,
// into Of runs of consecutive indexes whose sizes differ by at most one,
// so a shard's targets follow from the class's size alone: the pod that
// grades it and fleet collect, which merges the shards, agree without
// telling each other.
type Shard struct {
	Index, Of int
}

func (s Shard) String() string { return fmt.Sprintf("%d/%d", s.Index, s.Of) }

// ParseShard reads --shard I/N.
func ParseShard(flag string) (Shard, error) {
	i, n, ok := strings.Cut(flag, "/")
	a, err1 := strconv.Atoi(i)
	b, err2 := strconv.Atoi(n)
	if !ok || err1 != nil || err2 != nil || b < 1 || a < 0 || a >= b {
		return Shard{}, fmt.Errorf("--shard %q: expected I/N, shard I (from 0) of N, as 2/4", flag)
	}
	return Shard{Index: a, Of: b}, nil
}

// Range is the indexes [from, to) of the shard's targets in a class of n.
func (s Shard) Range(n int) (from, to int) {
	return s.Index * n / s.Of, (s.Index + 1) * n / s.Of
}

// Indexes are the shard's targets' indexes in a class of n (none when the
// class has fewer targets than shards and this one is left without).
func (s Shard) Indexes(n int) []int {
	from, to := s.Range(n)
	out := make([]int, 0, to-from)
	for i := from; i < to; i++ {
		out = append(out, i)
	}
	return out
}

// ShardOf is the shard of shards that holds target i of a class of n:
// the k with k*n/shards <= i < (k+1)*n/shards.
func ShardOf(i, n, shards int) int {
	return ((i+1)*shards - 1) / n
}

// MaxShardTargets is the most targets one shard holds: its pod stores
// their results, a line of at most MaxResultBytes each, in one ConfigMap,
// which holds at most 1 MiB (250 lines of 4096 bytes leave 24 KiB for the
// keys and the shard's own record).
const MaxShardTargets = 250

// PodStartup is how long a pod of the Job takes from its creation to
// labrun's first request, measured on the test cluster (a 2-CPU machine
// running the cluster and the Job: docs/fleet.md): scheduling, the
// sandbox, the container and labrun's own start. A pod is worth its
// start-up only when it then grades for longer than that.
const PodStartup = 2 * time.Second

// Sizing is how a class's Job is cut into pods.
type Sizing struct {
	// Pods is the number of shards, the Job's completions.
	Pods int
	// AtOnce is how many pods run at once (the Job's parallelism), and
	// PerPod how many targets each checks at once, so that the Job checks
	// at most parallel targets at once, as check --targets --parallel
	// does.
	AtOnce, PerPod int
}

// CheckTime is one target's check as the Job is sized by it (CheckCost).
type CheckTime struct {
	// Typical is the typical costs of the steps check runs, added up.
	Typical time.Duration
	// Open says the check runs a program, so that Typical is only a lower
	// bound.
	Open bool
}

// Size cuts a class of n targets, to be checked at most parallel at
// once, into pods. Each pod checks DefaultParallel targets at once (fewer
// when parallel is lower), so parallel allows parallel/PerPod pods at
// once. pods, when not 0, is the number of pods asked for (--pods).
// Otherwise it is as many as keep each pod busy for longer than its own
// start-up: a pod of k targets grades for about k*Typical/PerPod, so
// each takes at least PodStartup*PerPod/Typical targets; and at most as
// many as run at once, so no shard waits for another's end to start.
// When the check is open (it runs a program, whose time its kind cannot
// say), it is as many as run at once: too few pods for a slow check
// multiply the Job's time (the classroom lab's 35 learners took 21.2 s
// in 2 pods, 14.1 s in 5), while a pod too many costs its start-up,
// beside the others'. A shard holds at most MaxShardTargets, whatever
// else says.
func Size(n, parallel, pods int, check CheckTime) (Sizing, error) {
	s := Sizing{PerPod: min(parallel, DefaultParallel)}
	s.AtOnce = max(1, parallel/s.PerPod)
	least := (n + MaxShardTargets - 1) / MaxShardTargets
	switch {
	case pods > 0 && pods < least:
		return Sizing{}, fmt.Errorf("--pods %d: a pod grades at most %d targets (their results fill one ConfigMap), so %d targets need at least %d pods", pods, MaxShardTargets, n, least)
	case pods > n:
		return Sizing{}, fmt.Errorf("--pods %d: more pods than the %d targets", pods, n)
	case pods > 0:
		s.Pods = pods
	case check.Open:
		s.Pods = max(min(n, s.AtOnce), least, 1)
	default:
		perPod := int(PodStartup * time.Duration(s.PerPod) / max(check.Typical, time.Millisecond))
		s.Pods = min((n+perPod-1)/max(perPod, 1), s.AtOnce)
		s.Pods = max(s.Pods, least, 1)
	}
	s.AtOnce = min(s.AtOnce, s.Pods)
	return s, nil
}

// CheckCost is what one target's check typically takes, for sizing the
// Job: the typical cost (actions.Cost's weight) of each step check runs
// (none that runs only in solve mode, or changes the system), added up.
// It is a guess from the kinds of the steps, not a measure: a step that
// waits or sleeps costs what the lab makes it. A step that runs a
// program (an exec in a container, a process in the node's shell) runs
// as long as the program does, which its kind cannot say: the classroom
// lab's check runs curl in a pod until intruder's request is dropped,
// which waits out curl's 3 s limit, so its check takes 3.3 s where its
// steps' kinds add up to 380 ms. Such a check is Open.
func CheckCost(p *runner.Plan) CheckTime {
	var c CheckTime
	for _, s := range p.Steps {
		if s.Action == nil || !s.RunsIn(eval.ModeCheck) {
			continue
		}
		c.Typical += s.Action.Cost.Weight()
		c.Open = c.Open || s.Action.Cost.RunsProgram()
	}
	return c
}
