package fleet

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"

	"github.com/labrun/labrun/internal/leaf/k8sobj"
)

// Merge gathers what the shards of a Job of shards pods stored into one
// result per target of a class of n, in index order. Each shard's first
// stored results stand (its lowest attempt: a later attempt's are never
// taken, so no learner is graded twice into the report); a result is
// taken only for a target of its own shard, once. A target no stored
// result names is Missing, never passed, saying what its shard's last
// pod showed (pods: the Job's pods, as listed; they may be gone). names
// are the targets' names by index, when known.
func Merge(n, shards int, stored []Stored, pods []map[string]any, names []string) []Result {
	first := map[int]Stored{}
	for _, s := range stored {
		if s.Shards != shards || s.Targets != n || s.Shard < 0 || s.Shard >= shards {
			continue // a record of a Job of another shape
		}
		if f, ok := first[s.Shard]; !ok || s.Attempt < f.Attempt || s.Attempt == f.Attempt && s.Created < f.Created {
			first[s.Shard] = s
		}
	}
	out := make([]Result, n)
	have := make([]bool, n)
	for k, s := range first {
		from, to := Shard{Index: k, Of: shards}.Range(n)
		for _, r := range s.Results {
			if r.Index < from || r.Index >= to || have[r.Index] {
				continue
			}
			r.Attempts = s.Attempt + 1
			out[r.Index], have[r.Index] = r, true
		}
	}
	byShard := podsByShard(pods)
	for i := range out {
		if have[i] {
			continue
		}
		name := fmt.Sprintf("index %d", i)
		if i < len(names) {
			name = names[i]
		}
		k := ShardOf(i, n, shards)
		_, stored := first[k]
		out[i] = missing(i, name, k, stored, byShard[k])
	}
	return out
}

// missing is the result of target i, which no stored result names, from
// what its shard k's pods show; stored says the shard stored results
// without it.
func missing(i int, name string, k int, stored bool, pods []map[string]any) Result {
	r := Result{Index: i, Target: name, Verdict: Missing, Attempts: attempts(pods)}
	// the last created first
	slices.SortStableFunc(pods, func(a, b map[string]any) int {
		return -cmp.Compare(k8sobj.String(a, "metadata", "creationTimestamp"), k8sobj.String(b, "metadata", "creationTimestamp"))
	})
	switch {
	case stored:
		r.FirstFailure = fmt.Sprintf("shard %d stored results without this target's", k)
	case len(pods) == 0:
		r.FirstFailure = fmt.Sprintf("shard %d stored no results, and has no pod: it has not run, or its pods were removed before it stored any", k)
	default:
		r.FirstFailure = fmt.Sprintf("shard %d stored no results; %s", k, podState(pods[0]))
	}
	return r
}

// podsByShard groups a Job's pods by their completion index.
func podsByShard(pods []map[string]any) map[int][]map[string]any {
	out := map[int][]map[string]any{}
	for _, p := range pods {
		if i, err := strconv.Atoi(k8sobj.StringMap(p, "metadata", "annotations")[annotationIndex]); err == nil {
			out[i] = append(out[i], p)
		}
	}
	return out
}

// attempts is how many pods a shard took: those listed, or more when the
// Job controller counted failures of pods deleted since.
func attempts(pods []map[string]any) int {
	n := len(pods)
	for _, p := range pods {
		if f, err := strconv.Atoi(k8sobj.StringMap(p, "metadata", "annotations")[annotationFailed]); err == nil && f+1 > n {
			n = f + 1
		}
	}
	return n
}

// podState says what a pod of a shard that stored no results shows.
func podState(p map[string]any) string {
	name := k8sobj.String(p, "metadata", "name")
	if code, ok := exitCode(p); ok {
		return fmt.Sprintf("its last pod %s: container %s exited %d", name, Container, code)
	}
	return fmt.Sprintf("its last pod %s: %s", name, cmp.Or(k8sobj.String(p, "status", "phase"), "not started"))
}

// exitCode is the labrun container's exit code, when it ended.
func exitCode(p map[string]any) (int, bool) {
	status, _ := p["status"].(map[string]any)
	list, _ := status["containerStatuses"].([]any)
	for _, c := range list {
		cs, _ := c.(map[string]any)
		if k8sobj.String(cs, "name") == Container && k8sobj.Has(cs, "state", "terminated") {
			return int(k8sobj.Int(cs, "state", "terminated", "exitCode")), true
		}
	}
	return 0, false
}
