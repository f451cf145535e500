package kube

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/labrun/labrun/internal/boundary/cluster"
)

// Pod is a resolved pod: what exec and logs need, plus what a step may
// want to print.
type Pod struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Node      string `json:"node"`
	Phase     string `json:"phase"`
	Ready     bool   `json:"ready"`
	IP        string `json:"ip"`
	// Containers lists the container names in spec order.
	Containers []string `json:"containers"`
	// DefaultContainer is the one kubectl would use (see DefaultContainer).
	DefaultContainer string `json:"defaultContainer"`
}

// ResolvePod finds the pod q means, as kubectl exec and logs do: q.Pod is a
// pod name ("web-0", "pod/web-0") or a workload reference (ds/NAME,
// deploy/NAME, sts/NAME, rs/NAME, job/NAME, svc/NAME; long forms such as
// daemonset/NAME and deployments.apps/NAME work too); without it
// q.Selector selects pods directly. q.Node picks the pod on that node (the
// Cilium agent of one node). See resolvePod for the choice among several.
func (c *Client) ResolvePod(ctx context.Context, q cluster.PodTarget) (Pod, error) {
	if q.Namespace == "" {
		q.Namespace = c.Namespace
	}
	p, err := resolvePod(ctx, c.builtin, q)
	if err != nil {
		return Pod{}, c.scrub(err)
	}
	return podInfo(p), nil
}

func podInfo(p *corev1.Pod) Pod {
	out := Pod{
		Namespace:        p.Namespace,
		Name:             p.Name,
		Node:             p.Spec.NodeName,
		Phase:            string(p.Status.Phase),
		Ready:            podIsReady(p),
		IP:               p.Status.PodIP,
		DefaultContainer: DefaultContainer(p),
	}
	for _, ct := range p.Spec.Containers {
		out.Containers = append(out.Containers, ct.Name)
	}
	return out
}

// resolvePod resolves q with any objectReader (a fake one in tests).
//
// A plain name is that pod. A workload reference uses the workload's own
// selector, and a label selector is used as is; among the matching pods the
// best candidate wins (see podLess): running and ready first, then the
// longest ready, then the oldest, then by name, so the choice is the same
// on every run. With Node set, only pods on that node are candidates.
//
// A DaemonSet's pods differ by the node they serve (a Cilium agent
// answers for its own node's maps and endpoints), so without Node its pod
// on the first node by name wins, before readiness: the longest-ready
// agent changes node when the DaemonSet rolls out, and a lab would read
// one node's facts before the rollout and another's after it. Among that
// node's pods (an old one terminating, its replacement) podLess decides.
func resolvePod(ctx context.Context, cs objectReader, q cluster.PodTarget) (*corev1.Pod, error) {
	ns := q.Namespace
	if ns == "" {
		ns = "default"
	}
	var sel labels.Selector
	var what string
	byNode := false // a DaemonSet's pod without Node: by node first
	switch {
	case q.Pod != "" && q.Selector != "":
		return nil, fmt.Errorf("resolve pod: give a target or a label selector, not both")
	case q.Pod != "":
		kind, name, isRef := strings.Cut(q.Pod, "/")
		if !isRef {
			kind, name = "pod", q.Pod
		}
		k, ok := workloadKind(kind)
		if !ok {
			return nil, fmt.Errorf("resolve pod %q: unknown kind %q (use pod, deploy, ds, sts, rs, job or svc)", q.Pod, kind)
		}
		if name == "" {
			return nil, fmt.Errorf("resolve pod %q: no name after %q", q.Pod, kind+"/")
		}
		if k == "pod" {
			return namedPod(ctx, cs, ns, name, q.Node)
		}
		s, err := workloadSelector(ctx, cs, ns, k, name)
		if err != nil {
			return nil, wrapErr(err, "resolve pod for", fmt.Sprintf("%s in namespace %q", q.Pod, ns), nil)
		}
		sel, what = s, q.Pod
		byNode = k == "daemonset" && q.Node == ""
	case q.Selector != "":
		s, err := labels.Parse(q.Selector)
		if err != nil {
			return nil, fmt.Errorf("resolve pod: bad label selector %q: %w", q.Selector, err)
		}
		sel, what = s, "selector "+q.Selector
	default:
		return nil, fmt.Errorf("resolve pod: no pod name, workload or label selector given")
	}

	return bestPod(ctx, cs, ns, sel, what, q.Node, byNode)
}

// namedPod gets the pod called name, which must run on node when node is
// set.
func namedPod(ctx context.Context, cs objectReader, ns, name, node string) (*corev1.Pod, error) {
	p := &corev1.Pod{}
	if err := cs.get(ctx, "pods", ns, name, p); err != nil {
		return nil, wrapErr(err, "resolve pod", describe("Pod", ns, name), nil)
	}
	if node != "" && p.Spec.NodeName != node {
		return nil, fmt.Errorf("resolve pod %q in namespace %q: it runs on node %q, not %q", name, ns, p.Spec.NodeName, node)
	}
	return p, nil
}

// bestPod lists the pods sel selects (what names them in errors), keeps
// those on node when node is set, and returns the first in resolvePod's
// order: podLess, after the node's name when byNode.
func bestPod(ctx context.Context, cs objectReader, ns string, sel labels.Selector, what, node string, byNode bool) (*corev1.Pod, error) {
	list, err := cs.listPods(ctx, ns, sel.String())
	if err != nil {
		return nil, wrapErr(err, "resolve pod for", fmt.Sprintf("%s in namespace %q", what, ns), nil)
	}
	var cands []*corev1.Pod
	for i := range list.Items {
		p := &list.Items[i]
		if node != "" && p.Spec.NodeName != node {
			continue
		}
		cands = append(cands, p)
	}
	if len(cands) == 0 {
		if node != "" {
			return nil, fmt.Errorf("resolve pod for %s in namespace %q: no pod on node %q (%d pods match elsewhere)", what, ns, node, len(list.Items))
		}
		return nil, fmt.Errorf("resolve pod for %s in namespace %q: no pods match", what, ns)
	}
	less := podLess
	if byNode {
		less = func(a, b *corev1.Pod) bool {
			na, nb := a.Spec.NodeName, b.Spec.NodeName
			if na != nb && na != "" && nb != "" {
				return na < nb
			}
			return podLess(a, b)
		}
	}
	slices.SortFunc(cands, func(a, b *corev1.Pod) int {
		if less(a, b) {
			return -1
		}
		if less(b, a) {
			return 1
		}
		return 0
	})
	return cands[0], nil
}

// workloadKind normalizes the kind part of a reference to the lowercase
// kind (deployment, daemonset, ...); cluster.WorkloadResource holds the
// names, for the permissions a reference needs too.
func workloadKind(kind string) (string, bool) {
	r, ok := cluster.WorkloadResource(kind)
	return strings.ToLower(r.Kind), ok
}

// workloadSelector returns the pod selector of a workload.
func workloadSelector(ctx context.Context, cs objectReader, ns, kind, name string) (labels.Selector, error) {
	var ls *metav1.LabelSelector
	switch kind {
	case "deployment":
		o := &appsv1.Deployment{}
		if err := cs.get(ctx, "deployments", ns, name, o); err != nil {
			return nil, err
		}
		ls = o.Spec.Selector
	case "daemonset":
		o := &appsv1.DaemonSet{}
		if err := cs.get(ctx, "daemonsets", ns, name, o); err != nil {
			return nil, err
		}
		ls = o.Spec.Selector
	case "statefulset":
		o := &appsv1.StatefulSet{}
		if err := cs.get(ctx, "statefulsets", ns, name, o); err != nil {
			return nil, err
		}
		ls = o.Spec.Selector
	case "replicaset":
		o := &appsv1.ReplicaSet{}
		if err := cs.get(ctx, "replicasets", ns, name, o); err != nil {
			return nil, err
		}
		ls = o.Spec.Selector
	case "job":
		o := &batchv1.Job{}
		if err := cs.get(ctx, "jobs", ns, name, o); err != nil {
			return nil, err
		}
		ls = o.Spec.Selector
	case "service":
		o := &corev1.Service{}
		if err := cs.get(ctx, "services", ns, name, o); err != nil {
			return nil, err
		}
		if len(o.Spec.Selector) == 0 {
			return nil, fmt.Errorf("service %q has no selector", name)
		}
		return labels.SelectorFromSet(o.Spec.Selector), nil
	default:
		return nil, fmt.Errorf("unsupported kind %q", kind)
	}
	if ls == nil {
		return nil, fmt.Errorf("%s %q has no selector", kind, name)
	}
	sel, err := metav1.LabelSelectorAsSelector(ls)
	if err != nil {
		return nil, fmt.Errorf("%s %q: bad selector: %w", kind, name, err)
	}
	if sel.Empty() {
		return nil, fmt.Errorf("%s %q has an empty selector", kind, name)
	}
	return sel, nil
}

// podLess orders candidate pods best first, in the spirit of kubectl's
// ByLogging: not terminating, scheduled, Running before Pending before the
// rest, Ready, ready for longer, older, then by name so the order is total.
func podLess(a, b *corev1.Pod) bool {
	if ta, tb := a.DeletionTimestamp != nil, b.DeletionTimestamp != nil; ta != tb {
		return !ta
	}
	if sa, sb := a.Spec.NodeName != "", b.Spec.NodeName != ""; sa != sb {
		return sa
	}
	if ra, rb := phaseRank(a.Status.Phase), phaseRank(b.Status.Phase); ra != rb {
		return ra < rb
	}
	if ra, rb := podIsReady(a), podIsReady(b); ra != rb {
		return ra
	}
	if podIsReady(a) {
		if ta, tb := readySince(a), readySince(b); !ta.Equal(tb) {
			return ta.Before(tb)
		}
	}
	if ca, cb := a.CreationTimestamp.Time, b.CreationTimestamp.Time; !ca.Equal(cb) {
		return ca.Before(cb)
	}
	return a.Name < b.Name
}

func phaseRank(p corev1.PodPhase) int {
	switch p {
	case corev1.PodRunning:
		return 0
	case corev1.PodPending:
		return 1
	case corev1.PodUnknown, "":
		return 2
	default: // Succeeded, Failed: nothing to exec into
		return 3
	}
}

func podIsReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func readySince(p *corev1.Pod) time.Time {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.LastTransitionTime.Time
		}
	}
	return time.Time{}
}
