package fleet

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/labrun/labrun/internal/boundary/cluster"
	"github.com/labrun/labrun/internal/lang/visible"
	"github.com/labrun/labrun/internal/leaf/k8sobj"
	"github.com/labrun/labrun/runner"
)

// The labels and annotations of an Indexed Job's pods that collect reads
// (set by the Job controller).
const (
	LabelJobName       = "batch.kubernetes.io/job-name"
	labelControllerUID = "batch.kubernetes.io/controller-uid"
	annotationIndex    = "batch.kubernetes.io/job-completion-index"
	annotationFailed   = "batch.kubernetes.io/job-index-failure-count"
)

// Container is the name of the container of the Job's pods.
const Container = "labrun"

// JobState is where a Job stands, from its status.
type JobState struct {
	Completions int
	// Finished is "Complete" or "Failed" once the Job ended, else "".
	Finished string
	// Succeeded and Failed count the indexes that ended each way;
	// FailedIndexes is the Job's own list of the failed, as "1,3-5".
	Succeeded, Failed int
	FailedIndexes     string
}

// State reads a Job object's progress.
func State(job map[string]any) JobState {
	s := JobState{
		Completions:   int(k8sobj.Int(job, "spec", "completions")),
		Succeeded:     int(k8sobj.Int(job, "status", "succeeded")),
		Failed:        int(k8sobj.Int(job, "status", "failed")),
		FailedIndexes: k8sobj.String(job, "status", "failedIndexes"),
	}
	for _, c := range []string{"Complete", "Failed"} {
		if k8sobj.ConditionTrue(job, c) {
			s.Finished = c
		}
	}
	return s
}

// Counts are how many targets ended each way.
type Counts struct {
	Passed, Wrong, NotGraded, Missing int
}

// Count counts results by verdict.
func Count(results []Result) Counts {
	var c Counts
	for _, r := range results {
		switch r.Verdict {
		case runner.VerdictPassed:
			c.Passed++
		case runner.VerdictWrong:
			c.Wrong++
		case runner.VerdictNotGraded:
			c.NotGraded++
		default:
			c.Missing++
		}
	}
	return c
}

// WorstClass is the most decisive class of the targets that were not
// graded (runner.Classes' order), "" when every target was graded.
func WorstClass(results []Result) runner.Class {
	worst := -1
	for _, r := range results {
		if r.Graded() {
			continue
		}
		i := slices.Index(runner.Classes, r.Class)
		if i < 0 {
			// interrupted, or missing: counted as the cluster's fault
			i = slices.Index(runner.Classes, runner.ClassTransport)
		}
		if worst < 0 || i < worst {
			worst = i
		}
	}
	if worst < 0 {
		return ""
	}
	return runner.Classes[worst]
}

// annotationTargets is the Job's annotation that holds the class's size:
// the Job's completions are its shards.
const annotationTargets = "labrun/targets"

// WaitError is CollectJob's error when the Job did not end within the
// wait; Last is its progress as last seen.
type WaitError struct {
	Namespace, Name string
	Wait            time.Duration
	Last            string
}

func (e *WaitError) Error() string {
	return fmt.Sprintf("job %s/%s did not end within %s; last seen: %s", e.Namespace, e.Name, e.Wait, e.Last)
}

// CollectJob reads the Job name in namespace through c (waiting up to
// wait for it to end, its progress written to progress as it changes),
// the results its shards stored and its pods, and merges them (Merge).
// The results outlast the pods and the Job itself (a TTL deletes both):
// with the Job gone and results of it stored, collect takes those of its
// last stored UID, and the class's size from their records, and does not
// wait; with neither, it waits for the Job to come. names are the targets' names
// by index, from the targets file the Job was rendered from, when given.
func CollectJob(ctx context.Context, c cluster.Cluster, namespace, name string, wait time.Duration, names []string, progress io.Writer) ([]Result, error) {
	q := cluster.ObjectQuery{APIVersion: "batch/v1", Kind: "Job", Namespace: namespace, Name: name}
	storedQ := cluster.ObjectQuery{APIVersion: "v1", Kind: "ConfigMap", Namespace: namespace,
		Selector: labelInstance + "=" + name + "," + labelComponent + "=" + componentValue}
	jobs, err := c.List(ctx, q)
	var maps []map[string]any
	if err == nil && len(jobs) == 0 {
		// no Job: one to come (wait for it), or one whose results
		// outlived it (take them)
		maps, err = c.List(ctx, storedQ)
	}
	if err == nil && wait > 0 && len(maps) == 0 {
		jobs, err = waitJob(ctx, c, q, storedQ, wait, progress)
		if err != nil {
			return nil, err
		}
	}
	var pods []map[string]any
	if err == nil && len(jobs) > 0 {
		maps, err = c.List(ctx, storedQ)
	}
	if err == nil {
		pods, err = c.List(ctx, cluster.ObjectQuery{APIVersion: "v1", Kind: "Pod", Namespace: namespace, Selector: LabelJobName + "=" + name})
	}
	if err != nil {
		return nil, err
	}
	var stored []Stored
	for _, cm := range maps {
		s, err := ReadStored(cm)
		if err != nil {
			fmt.Fprintf(progress, "%s: left out\n", visible.Line(err.Error()))
			continue
		}
		stored = append(stored, s)
	}
	n, shards, uid := len(names), 0, ""
	switch {
	case len(jobs) > 0:
		job := jobs[0]
		s := State(job)
		shards, uid = s.Completions, k8sobj.String(job, "metadata", "uid")
		if v, err := strconv.Atoi(k8sobj.StringMap(job, "metadata", "annotations")[annotationTargets]); err == nil {
			n = v
		}
		fmt.Fprint(progress, visible.Text(fmt.Sprintf("job %s/%s: %s; failed shards: %s\n", namespace, name, cmp.Or(s.Finished, "running"), cmp.Or(s.FailedIndexes, "none"))))
	case len(stored) > 0:
		// the Job is gone: its last run's results
		last := slices.MaxFunc(stored, func(a, b Stored) int { return cmp.Compare(a.Created, b.Created) })
		n, shards, uid = last.Targets, last.Shards, last.JobUID
		fmt.Fprint(progress, visible.Text(fmt.Sprintf("job %s/%s: gone (deleted, or its TTL passed); the results its shards stored\n", namespace, name)))
	default:
		return nil, fmt.Errorf("no job %s in namespace %s, and no results it stored", name, namespace)
	}
	if n == 0 {
		return nil, fmt.Errorf("job %s/%s does not say how many targets it grades (its annotation %s): render it with this labrun", namespace, name, annotationTargets)
	}
	if len(names) > 0 && len(names) != n {
		return nil, fmt.Errorf("the targets file lists %d targets; job %s/%s grades %d: give the targets file it was rendered from", len(names), namespace, name, n)
	}
	stored = slices.DeleteFunc(stored, func(s Stored) bool { return s.JobUID != uid })
	return Merge(n, shards, stored, pods, names), nil
}

// waitJob waits up to wait for the Job q names to come, then until it
// ends or every shard of it stored its results (storedQ selects them),
// whichever is first: once each shard's results are stored nothing is
// left to wait for, and the Job's own end follows its last pod's by a
// second or two (the kubelet reports the pod, the Job controller counts
// it). Its progress goes to progress as it changes. The Job's objects
// are returned as last seen.
func waitJob(ctx context.Context, c cluster.Cluster, q, storedQ cluster.ObjectQuery, wait time.Duration, progress io.Writer) ([]map[string]any, error) {
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	last := "no job of that name yet"
	timedOut := func(err error) error {
		if err != nil && wctx.Err() != nil && ctx.Err() == nil {
			return &WaitError{Namespace: q.Namespace, Name: q.Name, Wait: wait, Last: last}
		}
		return err
	}
	jobs, err := c.Wait(wctx, q, func(objs []map[string]any) (bool, error) { return len(objs) > 0, nil }, nil)
	if err != nil {
		return nil, timedOut(err)
	}
	uid, shards := k8sobj.String(jobs[0], "metadata", "uid"), State(jobs[0]).Completions
	both, stop := context.WithCancel(wctx)
	defer stop()
	stored := make(chan error, 1)
	go func() {
		_, err := c.Wait(both, storedQ, func(objs []map[string]any) (bool, error) {
			return storedShards(objs, uid) >= shards, nil
		}, nil)
		stored <- err
		if err == nil {
			stop() // nothing is left to wait for
		}
	}()
	var mu sync.Mutex
	jobs, err = c.Wait(both, q, func(objs []map[string]any) (bool, error) {
		return len(objs) > 0 && State(objs[0]).Finished != "", nil
	}, func(objs []map[string]any) {
		if len(objs) == 0 {
			return
		}
		s := State(objs[0])
		mu.Lock()
		defer mu.Unlock()
		if line := fmt.Sprintf("job %s/%s: %d of %d shards succeeded, %d failed", q.Namespace, q.Name, s.Succeeded, s.Completions, len(indexList(s.FailedIndexes))); line != last {
			fmt.Fprintln(progress, line)
			last = line
		}
	})
	if err != nil && both.Err() != nil && wctx.Err() == nil {
		// every shard stored its results first: the Job as it is now
		if serr := <-stored; serr == nil {
			fmt.Fprintf(progress, "job %s/%s: every shard stored its results\n", q.Namespace, q.Name)
			return c.List(ctx, q)
		}
	}
	return jobs, timedOut(err)
}

// storedShards counts the shards of the Job whose UID is uid that stored
// their results among the results ConfigMaps objs (their shard records
// alone are read).
func storedShards(objs []map[string]any, uid string) int {
	seen := map[int]bool{}
	for _, cm := range objs {
		var s Stored
		if json.Unmarshal([]byte(k8sobj.StringMap(cm, "data")[shardKey]), &s) == nil && s.JobUID == uid {
			seen[s.Shard] = true
		}
	}
	return len(seen)
}

// indexList is the indexes of a Job's list of them, "1,3-5".
func indexList(s string) []int {
	var out []int
	for part := range strings.SplitSeq(s, ",") {
		from, to, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(from)
		if err != nil {
			continue
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(to); err != nil {
				continue
			}
		}
		for i := a; i <= b; i++ {
			out = append(out, i)
		}
	}
	return out
}
