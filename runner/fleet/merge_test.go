package fleet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/labrun/labrun/internal/boundary/cluster"
	"github.com/labrun/labrun/internal/boundary/cluster/clustertest"
	"github.com/labrun/labrun/runner"
)

// shardOf is what shard k of shards stored at attempt a for a class of n:
// a passed result per target, or the verdicts in by, by index.
func shardOf(n, shards, k, a int, by map[int]runner.Verdict) Stored {
	s := Stored{Job: "j", JobUID: "uid", Shard: k, Shards: shards, Targets: n, Attempt: a}
	for _, i := range (Shard{Index: k, Of: shards}).Indexes(n) {
		v := runner.VerdictPassed
		if w, ok := by[i]; ok {
			v = w
		}
		s.Results = append(s.Results, Result{Index: i, Target: fmt.Sprintf("l%d", i), Verdict: v})
	}
	return s
}

// Merge takes each shard's first stored results, each target of its own
// shard once, and calls a target nothing names missing, never passed.
func TestMerge(t *testing.T) {
	const n, shards = 10, 3 // shards: 0-2, 3-5, 6-9
	names := []string{"l0", "l1", "l2", "l3", "l4", "l5", "l6", "l7", "l8", "l9"}
	wrongAt4 := map[int]runner.Verdict{4: runner.VerdictWrong}

	t.Run("every shard stored", func(t *testing.T) {
		got := Merge(n, shards, []Stored{shardOf(n, shards, 2, 0, nil), shardOf(n, shards, 0, 0, nil), shardOf(n, shards, 1, 1, wrongAt4)}, nil, names)
		for i, r := range got {
			want, attempts := runner.VerdictPassed, 1
			if i == 4 {
				want = runner.VerdictWrong
			}
			if i >= 3 && i <= 5 {
				attempts = 2 // shard 1 stored on its second attempt
			}
			if r.Index != i || r.Target != names[i] || r.Verdict != want || r.Attempts != attempts {
				t.Errorf("index %d: %+v, want %s in %d attempts", i, r, want, attempts)
			}
		}
	})

	t.Run("a retried shard stored twice: the first stands", func(t *testing.T) {
		later := shardOf(n, shards, 1, 1, wrongAt4)
		got := Merge(n, shards, []Stored{shardOf(n, shards, 0, 0, nil), later, shardOf(n, shards, 1, 0, nil), shardOf(n, shards, 2, 0, nil)}, nil, names)
		if c := Count(got); c != (Counts{Passed: 10}) || got[4].Attempts != 1 || len(got) != n {
			t.Errorf("counts %+v, target 4 %+v: want the first attempt's 10 passed, each once", c, got[4])
		}
	})

	t.Run("duplicates and strays are left out", func(t *testing.T) {
		s1 := shardOf(n, shards, 1, 0, nil)
		// a result twice, and one of another shard's target
		s1.Results = append(s1.Results, Result{Index: 4, Target: "l4", Verdict: runner.VerdictWrong}, Result{Index: 7, Target: "l7", Verdict: runner.VerdictPassed})
		other := shardOf(n, 4, 0, 0, nil) // a record of a Job of another shape
		got := Merge(n, shards, []Stored{s1, other}, nil, names)
		if got[4].Verdict != runner.VerdictPassed {
			t.Errorf("target 4: %+v, want its first result", got[4])
		}
		for _, i := range []int{0, 1, 2, 6, 7, 8, 9} {
			if got[i].Verdict != Missing {
				t.Errorf("target %d: %+v, want missing: its shard stored nothing", i, got[i])
			}
		}
	})

	t.Run("missing, with what the pods show", func(t *testing.T) {
		s0 := shardOf(n, shards, 0, 0, nil)
		s0.Results = s0.Results[:2] // target 2 left out
		pods := readPods(t)         // index 0 succeeded after a retry, 1 succeeded, 2 failed with exit 2
		got := Merge(n, shards, []Stored{s0}, pods, names)
		want := map[int]string{
			2: "shard 0 stored results without this target's",
			3: "shard 1 stored no results; its last pod labrun-fleet-e2e-fleet-1-rkwlq: container labrun exited 0",
			6: "shard 2 stored no results; its last pod labrun-fleet-e2e-fleet-2-4855n: container labrun exited 2",
		}
		for i, msg := range want {
			if got[i].Verdict != Missing || got[i].FirstFailure != msg || got[i].Target != names[i] {
				t.Errorf("target %d: %+v\nwant missing: %s", i, got[i], msg)
			}
		}
		if got[2].Attempts != 2 {
			t.Errorf("target 2: %d attempts, want 2, the Job's failure count of shard 0", got[2].Attempts)
		}
		if c := WorstClass(got); c != runner.ClassTransport {
			t.Errorf("worst class %q: a missing result counts as the cluster's", c)
		}
		none := Merge(n, shards, nil, nil, nil)
		if none[9].Target != "index 9" || !strings.Contains(none[9].FirstFailure, "has no pod") {
			t.Errorf("a shard with nothing: %+v", none[9])
		}
	})
}

// readPods reads testdata/pods.json: kubectl get pods -o json of a Job of
// three indexes on the test cluster, whose index 0 was deleted mid-check
// and retried, index 1 succeeded and index 2 failed with exit 2.
func readPods(t *testing.T) []map[string]any {
	data, err := os.ReadFile("testdata/pods.json")
	if err != nil {
		t.Fatal(err)
	}
	var pods []map[string]any
	if err := json.Unmarshal(data, &pods); err != nil {
		t.Fatal(err)
	}
	return pods
}

// creator is an in-memory cluster that creates objects once, as the API
// server does, each a second after the one before.
type creator struct {
	clustertest.Cluster
	made int
}

func (c *creator) Create(ctx context.Context, obj map[string]any) error {
	meta := obj["metadata"].(map[string]any)
	ns, name := meta["namespace"].(string), meta["name"].(string)
	if got, _ := c.List(ctx, cluster.ObjectQuery{Kind: obj["kind"].(string), Namespace: ns, Name: name}); len(got) > 0 {
		return &cluster.ExistsError{Kind: "ConfigMap", Namespace: ns, Name: name}
	}
	c.made++
	meta["creationTimestamp"] = time.Date(2026, 12, 5, 14, 0, c.made, 0, time.UTC).Format(time.RFC3339)
	c.Put(obj)
	return nil
}

func (c *creator) stored(t *testing.T, name string) Stored {
	t.Helper()
	got, err := c.List(context.Background(), cluster.ObjectQuery{Kind: "ConfigMap", Namespace: "grading", Name: name})
	if err != nil || len(got) != 1 {
		t.Fatalf("ConfigMap %s: %d, %v", name, len(got), err)
	}
	s, err := ReadStored(got[0])
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// A shard's results are stored once: the ConfigMap reads back as stored,
// and a retried shard's second store is ErrStoredBefore, leaving the
// first.
func TestStore(t *testing.T) {
	c := &creator{}
	s := shardOf(10, 3, 1, 0, map[int]runner.Verdict{4: runner.VerdictWrong})
	s.JobUID, s.Pod = "dccda63e-ff27-4f1d-8e5d-a48080bf7d9e", "j-1-abcde"
	s.Results[0].FirstFailure = strings.Repeat("x", 5000) // cut to fit
	if err := Store(context.Background(), c, "grading", s); err != nil {
		t.Fatal(err)
	}
	back := c.stored(t, "j-dccda63e-1")
	if back.Shard != 1 || back.Shards != 3 || back.Targets != 10 || back.Pod != "j-1-abcde" || len(back.Results) != 3 ||
		back.Results[1].Verdict != runner.VerdictWrong || len(back.Results[0].FirstFailure) > maxMessage+3 {
		t.Errorf("read back %+v", back)
	}
	again := shardOf(10, 3, 1, 1, nil)
	again.JobUID = s.JobUID
	if err := Store(context.Background(), c, "grading", again); !errors.Is(err, ErrStoredBefore) {
		t.Errorf("the second store: %v, want ErrStoredBefore", err)
	}
	if back := c.stored(t, "j-dccda63e-1"); back.Attempt != 0 || back.Results[1].Verdict != runner.VerdictWrong {
		t.Errorf("after the second store: %+v, want the first's", back)
	}
	if err := Store(context.Background(), &clustertest.Cluster{}, "grading", s); err == nil {
		t.Error("a connection that cannot create stored")
	}
}

// collect reads the results the shards stored, not the pods: with the
// pods deleted, and the Job too (as its TTL does), every result is still
// there; a ConfigMap of an earlier Job of the same name (another UID) is
// not taken.
func TestCollectJob(t *testing.T) {
	ctx := context.Background()
	c := &creator{}
	const uid, n, shards = "0a1b2c3d-0000-4000-8000-000000000000", 10, 3
	names := []string{"l0", "l1", "l2", "l3", "l4", "l5", "l6", "l7", "l8", "l9"}
	c.Put(map[string]any{"apiVersion": "batch/v1", "kind": "Job",
		"metadata": map[string]any{"name": "j", "namespace": "grading", "uid": uid, "annotations": map[string]any{annotationTargets: "10"}},
		"spec":     map[string]any{"completions": int64(shards)},
		"status":   map[string]any{"succeeded": int64(3), "conditions": []any{map[string]any{"type": "Complete", "status": "True"}}}})
	stale := shardOf(n, shards, 0, 0, map[int]runner.Verdict{0: runner.VerdictWrong})
	stale.JobUID = "ffffffff-old"
	for _, s := range []Stored{stale, shardOf(n, shards, 0, 0, nil), shardOf(n, shards, 1, 1, map[int]runner.Verdict{4: runner.VerdictWrong}), shardOf(n, shards, 2, 0, nil)} {
		if s.JobUID == "uid" {
			s.JobUID = uid
		}
		if err := Store(ctx, c, "grading", s); err != nil {
			t.Fatal(err)
		}
	}
	check := func(what string, wait time.Duration) {
		t.Helper()
		var progress strings.Builder
		got, err := CollectJob(ctx, c, "grading", "j", wait, names, &progress)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if cnt := Count(got); cnt != (Counts{Passed: 9, Wrong: 1}) || got[4].Verdict != runner.VerdictWrong || got[4].Attempts != 2 || got[0].Verdict != runner.VerdictPassed {
			t.Errorf("%s: %+v %v", what, cnt, got)
		}
		t.Logf("%s: %s", what, progress.String())
	}
	check("with the Job", 0)
	check("with the Job ended, waiting", time.Hour)
	// a Job still running whose every shard stored its results: collect
	// waits for no more
	running := map[string]any{"apiVersion": "batch/v1", "kind": "Job",
		"metadata": map[string]any{"name": "j", "namespace": "grading", "uid": uid, "annotations": map[string]any{annotationTargets: "10"}},
		"spec":     map[string]any{"completions": int64(shards)}, "status": map[string]any{"active": int64(1)}}
	c.Put(running)
	check("with the Job running, waiting", time.Hour)
	// one more shard than stored: the wait runs out
	more := maps.Clone(running)
	more["spec"] = map[string]any{"completions": int64(shards + 1)}
	c.Put(more)
	var we *WaitError
	if _, err := CollectJob(ctx, c, "grading", "j", 50*time.Millisecond, nil, io.Discard); !errors.As(err, &we) {
		t.Errorf("a shard not stored, the Job running: %v, want a *WaitError", err)
	}
	c.Put(running)
	if _, err := c.Delete(ctx, cluster.ObjectQuery{Kind: "Job", Namespace: "grading", Name: "j"}, cluster.DeleteRequest{}); err != nil {
		t.Fatal(err)
	}
	// the stale record is older: the Job's last run's results are taken,
	// without waiting for a Job to come
	check("with the Job gone", 0)
	check("with the Job gone, waiting", time.Hour)
	if _, err := CollectJob(ctx, c, "grading", "j", 0, names[:3], io.Discard); err == nil || !strings.Contains(err.Error(), "the targets file lists 3 targets; job grading/j grades 10") {
		t.Errorf("another targets file: %v", err)
	}
	if _, err := CollectJob(ctx, &creator{}, "grading", "j", 0, names, io.Discard); err == nil || !strings.Contains(err.Error(), "no job j in namespace grading, and no results it stored") {
		t.Errorf("nothing there: %v", err)
	}
}

// A ConfigMap that is not one a pod stored is refused, saying why.
func TestReadStoredRefuses(t *testing.T) {
	for _, tc := range []struct {
		data map[string]any
		want string
	}{
		{map[string]any{"0": "{}"}, "no shard record"},
		{map[string]any{"shard": "{}", "3": `{"index":4,"target":"a","verdict":"passed","exit":0,"passed":0,"tasks":0,"seconds":0}`}, "key 3: the result of index 4"},
		{map[string]any{"shard": "{}", "3": "x"}, "key 3: not a result line"},
	} {
		_, err := ReadStored(map[string]any{"metadata": map[string]any{"name": "cm"}, "data": tc.data})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want %s", tc.data, err, tc.want)
		}
	}
}

// What the test cluster held after a sharded Job of one pod graded 200
// learners of the small lab, every tenth wrong (kubectl get -o json of
// the Job, its pod and its results ConfigMap, in testdata/sharded):
// collect reads every result back, each in its one attempt.
func TestCollectCaptured(t *testing.T) {
	c := &creator{}
	for _, f := range []string{"job.json", "pods.json", "configmaps.json"} {
		data, err := os.ReadFile("testdata/sharded/" + f)
		if err != nil {
			t.Fatal(err)
		}
		var objs []map[string]any
		if f == "job.json" {
			var one map[string]any
			err = json.Unmarshal(data, &one)
			objs = []map[string]any{one}
		} else {
			err = json.Unmarshal(data, &objs)
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range objs {
			c.Put(o)
		}
	}
	got, err := CollectJob(context.Background(), c, "sjinv", "inv", time.Minute, nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if cnt := Count(got); len(got) != 200 || cnt != (Counts{Passed: 180, Wrong: 20}) {
		t.Fatalf("%d results, %+v", len(got), cnt)
	}
	for i, r := range got {
		want := runner.VerdictPassed
		if i%10 == 9 {
			want = runner.VerdictWrong
		}
		if r.Index != i || r.Target != fmt.Sprintf("sjinv-%03d", i) || r.Verdict != want || r.Attempts != 1 {
			t.Errorf("index %d: %+v, want %s in one attempt", i, r, want)
		}
	}
}
