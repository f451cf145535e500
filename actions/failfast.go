package actions

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/labrun/labrun/internal/boundary/cluster"
	"github.com/labrun/labrun/internal/leaf/k8sobj"
)

// A wait on pods, or on the rollout of Deployments, DaemonSets and
// StatefulSets, ends at once when a pod it depends on cannot become ready
// by itself (k8sobj.PodFailed: CrashLoopBackOff, image pull errors, a
// container that cannot be created, phase Failed), instead of running
// into its timeout with the reason buried in a summary. The error quotes
// the real cause: the container's last words, the kubelet's message, or
// else the pod's latest Warning event.

// failFast follows the pods of the workloads a wait sees. The wait's
// condition calls sawWorkloads with every state; the first workload starts
// a watch on the pods of its namespace (all namespaces for a wait over
// all), and a failing pod of a revision being rolled out cancels the wait
// with the failure as its cause.
type failFast struct {
	ctx    context.Context // the wait's; canceled with the failure
	cancel context.CancelCauseFunc
	c      cluster.Cluster
	q      cluster.ObjectQuery

	mu        sync.Mutex
	workloads []map[string]any
	started   bool
	done      chan struct{} // closed when the pod watch has returned
}

func newFailFast(ctx context.Context, c cluster.Cluster, q cluster.ObjectQuery) *failFast {
	ctx, cancel := context.WithCancelCause(ctx)
	return &failFast{ctx: ctx, cancel: cancel, c: c, q: q, done: make(chan struct{})}
}

// stop ends the pod watch and waits for it.
func (f *failFast) stop() {
	f.cancel(nil)
	f.mu.Lock()
	started := f.started
	f.mu.Unlock()
	if started {
		<-f.done
	}
}

// failure is the pod failure that ended the wait with err: one among the
// waited objects (in err), or one the pod watch found (the cause of the
// wait's cancellation).
func (f *failFast) failure(err error) (*k8sobj.PodFailure, bool) {
	if err == nil {
		return nil, false
	}
	var pf *k8sobj.PodFailure
	if errors.As(err, &pf) {
		return pf, true
	}
	ok := errors.As(context.Cause(f.ctx), &pf)
	return pf, ok
}

// check is called with each state of the wait: a failing pod among the
// objects ends the wait (returned as the error); workloads are handed to
// the pod watch.
func (f *failFast) check(objs []map[string]any) error {
	if pf, ok := k8sobj.FirstPodFailure(objs); ok {
		return pf
	}
	var workloads []map[string]any
	for _, o := range objs {
		switch k8sobj.String(o, "kind") {
		case "Deployment", "DaemonSet", "StatefulSet":
			workloads = append(workloads, o)
		}
	}
	if len(workloads) == 0 {
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.workloads = workloads
	if !f.started {
		f.started = true
		go f.watchPods()
	}
	return nil
}

func (f *failFast) watchPods() {
	defer close(f.done)
	q := cluster.ObjectQuery{APIVersion: "v1", Kind: "Pod", Namespace: f.q.Namespace, AllNamespaces: f.q.AllNamespaces}
	_, err := f.c.Wait(f.ctx, q, func(pods []map[string]any) (bool, error) {
		for _, p := range pods {
			if pf, ok := k8sobj.PodFailed(p); ok && f.rolledOut(p) {
				return false, pf
			}
		}
		return false, nil
	}, nil)
	if pf := (*k8sobj.PodFailure)(nil); errors.As(err, &pf) {
		f.cancel(pf)
	}
}

// rolledOut tells whether pod is one a current rollout of the wait's
// workloads depends on.
func (f *failFast) rolledOut(pod map[string]any) bool {
	f.mu.Lock()
	workloads := f.workloads
	f.mu.Unlock()
	for _, w := range workloads {
		if !k8sobj.Selects(w, pod) {
			continue
		}
		var rs map[string]any
		if k8sobj.String(w, "kind") == "Deployment" {
			rs = f.replicaSet(pod)
		}
		if k8sobj.RolloutRevision(w, pod, rs) {
			return true
		}
	}
	return false
}

// replicaSet reads the ReplicaSet that owns pod (nil when it has none or it
// cannot be read: the pod is then not judged).
func (f *failFast) replicaSet(pod map[string]any) map[string]any {
	name := k8sobj.OwnerName(pod, "ReplicaSet")
	if name == "" {
		return nil
	}
	objs, err := f.c.List(f.ctx, cluster.ObjectQuery{APIVersion: "apps/v1", Kind: "ReplicaSet",
		Namespace: k8sobj.String(pod, "metadata", "namespace"), Name: name})
	if err != nil || len(objs) == 0 {
		return nil
	}
	return objs[0]
}

// failFastAccess is what following a wait on objects of kind asks in
// namespace ns: the pods of a rollout of Deployments, DaemonSets and
// StatefulSets are watched (Wait), the ReplicaSet of a Deployment's pod
// read (List); the cause of a failing pod, one of those or a waited Pod,
// is its container's log (Logs) or its latest Warning event (List).
func failFastAccess(kind, ns string) []cluster.Access {
	var out []cluster.Access
	switch kind {
	case "Deployment":
		out = append(out, cluster.ListAccess(cluster.ReplicaSets, ns)...)
		out = append(out, cluster.WaitAccess(cluster.Pods, ns)...)
	case "DaemonSet", "StatefulSet":
		out = append(out, cluster.WaitAccess(cluster.Pods, ns)...)
	case "Pod":
	default:
		return nil
	}
	out = append(out, cluster.LogsAccess(cluster.PodTarget{Pod: "failing-pod"}, ns)...)
	return append(out, cluster.ListAccess(cluster.Events, ns)...)
}

// crashLogLines is how much of a crashed container's log a failure
// quotes: a program's last words, not its whole story.
const crashLogLines = 3

// explain words a failure for the step's error: a container that exited
// without a termination message is quoted by its log's tail; when the pod
// said nothing beyond its reason, the pod's latest Warning event is the
// cause.
func explain(ctx context.Context, c cluster.Cluster, q cluster.ObjectQuery, pf *k8sobj.PodFailure) error {
	if pf.Exited {
		// a crash without a termination message: its last log lines are
		// usually why
		logs, err := c.Logs(ctx, cluster.PodTarget{Namespace: pf.Namespace, Pod: pf.Pod, Container: pf.Container},
			cluster.LogRequest{TailLines: crashLogLines, Previous: pf.Previous})
		if err == nil {
			quoted := *pf
			quoted.QuoteLog(logs.Text)
			pf = &quoted
		}
	}
	if pf.Cause == "" {
		events, err := c.List(ctx, cluster.ObjectQuery{APIVersion: "v1", Kind: "Event", Namespace: pf.Namespace,
			FieldSelector: "involvedObject.name=" + pf.Pod + ",type=Warning"})
		if err == nil {
			if w := k8sobj.LatestWarning(events, pf); w != "" {
				cause := *pf
				cause.Cause = "latest warning: " + w
				pf = &cause
			}
		}
	}
	return fmt.Errorf("stopped waiting for %s: %w", q.Describe(q.Kind, q.Namespace), pf)
}
