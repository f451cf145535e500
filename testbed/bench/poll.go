package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/labrun/labrun/actions"
	_ "github.com/labrun/labrun/actions/all" // the playbook's actions, for its plan
	"github.com/labrun/labrun/internal/heavy/kube"
	"github.com/labrun/labrun/runner"
	"github.com/labrun/labrun/runner/access"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/restmapper"
)

// benchPoll polls `labrun check --task N -q` of cca-datapath once a
// second, as a lab platform polls a learner's current task (iximiuz
// does, every second), tasks 1 to 8 in turn, on a solve's files: p50
// and p95 of the whole process, against the bash check a platform would
// poll instead (testbed/bench/cca-datapath-check.sh, which has no task
// of its own and reads every source). Meanwhile a watch on every kind
// the playbook could change (from runner/access, as `labrun rbac --mode
// run` derives them) counts the changes: a check must make none.
func benchPoll(ctx context.Context, b *bench) ([]Row, error) {
	out := filepath.Join(b.work, "poll-out")
	if _, err := b.solveLabrun(ctx, out); err != nil {
		return nil, err
	}
	bashEnv := []string{"KUBECTL=" + b.kubectl, "KUBECONFIG=" + b.kubeconfig, "NODE_EXEC=" + b.nodeExec}
	bash, err := timeN(b.n, func() (time.Duration, error) {
		p, err := runProc(ctx, []string{"testbed/bench/cca-datapath-check.sh", out}, procOpts{env: bashEnv})
		return p.wall, err
	})
	if err != nil {
		return nil, fmt.Errorf("the bash check of labrun's solve did not pass: %v", err)
	}
	c, err := kube.Connect(kube.ConnectOptions{Kubeconfig: b.kubeconfig})
	if err != nil {
		return nil, err
	}
	defer c.Close()
	audit, err := startAudit(ctx, c)
	if err != nil {
		return nil, err
	}
	polls := b.polls
	if polls == 0 {
		polls = 20 * b.n
		if b.n >= 5 {
			polls = 600 // ten minutes
		}
	}
	times, err := b.pollChecks(ctx, out, polls)
	changes := audit.stop()
	if err != nil {
		return nil, err
	}
	return pollRows(times, bash, audit.kinds, changes), nil
}

// pollChecks runs labrun check --task N -q once a second, polls times,
// N going round the lab's 8 tasks; each must pass.
func (b *bench) pollChecks(ctx context.Context, out string, polls int) ([]time.Duration, error) {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	var times []time.Duration
	for i := range polls {
		task := fmt.Sprint(i%8 + 1)
		p, err := runProc(ctx, b.checkArgv(out, "-q", "--task", task), procOpts{})
		if err != nil {
			return nil, fmt.Errorf("poll %d, check --task %s of a solve did not pass: %v\n%s", i, task, err, tail(p.stdout))
		}
		times = append(times, p.wall)
		if i%60 == 59 || i == polls-1 {
			fmt.Fprintf(os.Stderr, "   poll %d of %d: p95 so far %.0f ms\n", i+1, polls, percentile(times, 95))
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-tick.C:
		}
	}
	return times, nil
}

func pollRows(times, bash []time.Duration, kinds []string, changes []string) []Row {
	n := len(times)
	p95 := newSeries("labrun", "ms", []float64{percentile(times, 95)})
	p50 := newSeries("labrun", "ms", []float64{percentile(times, 50)})
	bash95 := newSeries("bash check, every source (testbed/bench/cca-datapath-check.sh), p95", "ms", []float64{percentile(bash, 95)})
	bash50 := newSeries("bash check, p50", "ms", []float64{percentile(bash, 50)})
	met := len(changes) == 0
	seen := "none"
	if !met {
		seen = strings.Join(changes[:min(len(changes), 10)], "; ")
	}
	return []Row{
		compare(fmt.Sprintf("`labrun check --task N -q` of cca-datapath polled once a second, %d polls, p95 (goal 300 ms)", n), p95, bash95, 0).withLimit(300).
			withNote("Once a second, as a lab platform polls a learner's current task, tasks 1 to 8 in turn, on one solve's files; whole processes; %d polls (600, ten minutes, in a run of 5; 20 per run otherwise, -polls to set). "+
				"The bash check has no task of its own: a platform polling it reads every source each time (its %d runs, before the polling).", n, len(bash)),
		compare("the same, p50", p50, bash50, 0),
		Row{Name: "changes to the objects the playbook could change, seen by watches during the polling", Labrun: newSeries("labrun", "changes", []float64{float64(len(changes))}), Goal: "0", Met: &met}.
			withNote("A watch (client-go) on each kind `labrun rbac --mode run` derives a change of (runner/access: %s), opened before the first poll at the version listed, counts every event until the last poll ends. Seen: %s.",
				strings.Join(kinds, ", "), seen),
	}
}

// percentile is the p-th percentile of ds in milliseconds (nearest
// rank).
func percentile(ds []time.Duration, p float64) float64 {
	s := make([]float64, len(ds))
	for i, d := range ds {
		s[i] = ms(d)
	}
	slices.Sort(s)
	return nearestRank(s, p)
}

// audit watches the kinds the playbook could change and keeps every
// event seen.
type audit struct {
	kinds   []string
	watches []watch.Interface
	stopped atomic.Bool
	wg      sync.WaitGroup
	mu      sync.Mutex
	seen    []string
	errs    []string
}

// startAudit opens the watches, each from the version its list returns,
// so that only changes from now on are seen.
func startAudit(ctx context.Context, c *kube.Client) (*audit, error) {
	targets, err := changeableKinds()
	if err != nil {
		return nil, err
	}
	dc, err := discovery.NewDiscoveryClientForConfig(c.Config())
	if err != nil {
		return nil, err
	}
	groups, err := restmapper.GetAPIGroupResources(dc)
	if err != nil {
		return nil, err
	}
	mapper := restmapper.NewDiscoveryRESTMapper(groups)
	a := &audit{}
	for _, t := range targets {
		gvr, err := mapper.ResourceFor(schema.GroupVersionResource{Group: t.Group, Resource: t.Resource})
		if err != nil {
			a.stop()
			return nil, fmt.Errorf("%s: %v", t, err)
		}
		ri := c.Dynamic().Resource(gvr).Namespace(t.Namespace)
		list, err := ri.List(ctx, metav1.ListOptions{})
		if err != nil {
			a.stop()
			return nil, fmt.Errorf("list %s: %v", t, err)
		}
		w, err := ri.Watch(ctx, metav1.ListOptions{ResourceVersion: list.GetResourceVersion()})
		if err != nil {
			a.stop()
			return nil, fmt.Errorf("watch %s: %v", t, err)
		}
		a.kinds, a.watches = append(a.kinds, t.String()), append(a.watches, w)
		a.wg.Add(1)
		go a.collect(t.String(), w)
	}
	return a, nil
}

// collect keeps the events of one watch until it is stopped.
func (a *audit) collect(kind string, w watch.Interface) {
	defer a.wg.Done()
	for ev := range w.ResultChan() {
		a.mu.Lock()
		switch o, ok := ev.Object.(*unstructured.Unstructured); {
		case ev.Type == watch.Bookmark:
		case !ok && a.stopped.Load():
			// Stop's own end of the stream, which client-go may send
		case !ok:
			a.errs = append(a.errs, fmt.Sprintf("%s: the watch ended: %v", kind, apierrors.FromObject(ev.Object)))
		default:
			a.seen = append(a.seen, fmt.Sprintf("%s %s %s/%s by %s", ev.Type, kind, o.GetNamespace(), o.GetName(), lastManager(o)))
		}
		a.mu.Unlock()
	}
	if !a.stopped.Load() {
		a.mu.Lock()
		a.errs = append(a.errs, kind+": the watch ended before the polling, which it may have missed changes of")
		a.mu.Unlock()
	}
}

// stop ends the watches (Stop closes them without an event) and returns
// every change seen (a watch that ended in an error counts as one, since
// it may have missed some).
func (a *audit) stop() []string {
	a.stopped.Store(true)
	for _, w := range a.watches {
		w.Stop()
	}
	a.wg.Wait()
	return append(a.seen, a.errs...)
}

// lastManager is the field manager of an object's latest change.
func lastManager(o *unstructured.Unstructured) string {
	var name string
	var at time.Time
	for _, m := range o.GetManagedFields() {
		if m.Time != nil && !m.Time.Time.Before(at) {
			name, at = m.Manager, m.Time.Time
		}
	}
	return name
}

// watchTarget is a kind to watch, where.
type watchTarget struct{ Group, Resource, Namespace string }

func (t watchTarget) String() string {
	where := "cluster-wide"
	if t.Namespace != "" {
		where = "namespace " + t.Namespace
	}
	r := t.Resource
	if t.Group != "" {
		r += "." + t.Group
	}
	return r + " (" + where + ")"
}

// changeableKinds are the kinds labrun run of cca-datapath changes (a
// verb other than get, list or watch, on the resource or a subresource),
// as runner/access derives them from the playbook on the test cluster.
func changeableKinds() ([]watchTarget, error) {
	plan, err := runner.Load("playbooks/cca-datapath.yaml", runner.Options{VarsFiles: []string{"playbooks/cca-datapath.testbed.yaml"}})
	if err != nil {
		return nil, err
	}
	needs, err := access.Derive(plan, access.Options{Mode: actions.Solve, Namespace: "default"})
	if err != nil {
		return nil, err
	}
	var out []watchTarget
	for _, n := range needs {
		if slices.Contains([]string{"get", "list", "watch"}, n.Verb) {
			continue
		}
		t := watchTarget{Group: n.Group, Resource: n.Resource, Namespace: n.Namespace}
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("runner/access derives no change from playbooks/cca-datapath.yaml")
	}
	return out, nil
}
