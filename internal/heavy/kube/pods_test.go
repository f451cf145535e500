package kube

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/labrun/labrun/internal/boundary/cluster"
)

var t0 = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

type podSpec struct {
	name, node string
	labels     map[string]string
	phase      corev1.PodPhase
	ready      bool
	readyAt    time.Time
	created    time.Time
	deleting   bool
}

func mkPod(ns string, s podSpec) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: s.name, Namespace: ns, Labels: s.labels, CreationTimestamp: metav1.NewTime(s.created)},
		Spec:       corev1.PodSpec{NodeName: s.node, Containers: []corev1.Container{{Name: "main"}, {Name: "sidecar"}}},
		Status:     corev1.PodStatus{Phase: s.phase},
	}
	if s.phase == corev1.PodRunning || s.ready {
		st := corev1.ConditionFalse
		if s.ready {
			st = corev1.ConditionTrue
		}
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: st, LastTransitionTime: metav1.NewTime(s.readyAt)}}
	}
	if s.deleting {
		now := metav1.NewTime(t0)
		p.DeletionTimestamp = &now
	}
	return p
}

func TestResolvePod(t *testing.T) {
	ns := "lab"
	web := map[string]string{"app": "web"}
	agent := map[string]string{"k8s-app": "cilium"}
	nodeAgent := map[string]string{"app": "node-agent"}
	objs := []runtime.Object{
		// web: one pending, one running not ready, two running ready (the
		// one ready for longer wins), one terminating but ready.
		mkPod(ns, podSpec{name: "web-pending", node: "n1", labels: web, phase: corev1.PodPending, created: t0}),
		mkPod(ns, podSpec{name: "web-notready", node: "n1", labels: web, phase: corev1.PodRunning, created: t0}),
		mkPod(ns, podSpec{name: "web-b", node: "n2", labels: web, phase: corev1.PodRunning, ready: true, readyAt: t0.Add(time.Minute), created: t0}),
		mkPod(ns, podSpec{name: "web-a", node: "n1", labels: web, phase: corev1.PodRunning, ready: true, readyAt: t0.Add(2 * time.Minute), created: t0}),
		mkPod(ns, podSpec{name: "web-dying", node: "n1", labels: web, phase: corev1.PodRunning, ready: true, readyAt: t0, created: t0, deleting: true}),
		// cilium agents on two nodes.
		mkPod(ns, podSpec{name: "cilium-x1", node: "worker-1", labels: agent, phase: corev1.PodRunning, ready: true, created: t0}),
		mkPod(ns, podSpec{name: "cilium-x2", node: "worker-2", labels: agent, phase: corev1.PodRunning, ready: true, created: t0}),
		// node agents in the middle of a rollout: node-a's old agent is
		// terminating and its new one is ready since just now; node-b's,
		// ready for longer, sorts first by name (a-agent) and by readiness;
		// one is not scheduled yet.
		mkPod(ns, podSpec{name: "z-old", node: "node-a", labels: nodeAgent, phase: corev1.PodRunning, ready: true, readyAt: t0, created: t0, deleting: true}),
		mkPod(ns, podSpec{name: "z-new", node: "node-a", labels: nodeAgent, phase: corev1.PodRunning, ready: true, readyAt: t0.Add(time.Hour), created: t0.Add(time.Hour)}),
		mkPod(ns, podSpec{name: "a-agent", node: "node-b", labels: nodeAgent, phase: corev1.PodRunning, ready: true, readyAt: t0, created: t0}),
		mkPod(ns, podSpec{name: "a-pending", labels: nodeAgent, phase: corev1.PodPending, created: t0}),
		// job pods: one failed, one succeeded; ties broken by name.
		mkPod(ns, podSpec{name: "job-2", labels: map[string]string{"job": "j"}, phase: corev1.PodSucceeded, created: t0}),
		mkPod(ns, podSpec{name: "job-1", labels: map[string]string{"job": "j"}, phase: corev1.PodFailed, created: t0}),
		// a pod with a default-container annotation
		func() *corev1.Pod {
			p := mkPod(ns, podSpec{name: "annotated", node: "n1", phase: corev1.PodRunning, ready: true, created: t0})
			p.Annotations = map[string]string{DefaultContainerAnnotation: "sidecar"}
			return p
		}(),
		&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns}, Spec: appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{MatchLabels: web}}},
		&appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "web-123", Namespace: ns}, Spec: appsv1.ReplicaSetSpec{Selector: &metav1.LabelSelector{MatchLabels: web}}},
		&appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns}, Spec: appsv1.StatefulSetSpec{Selector: &metav1.LabelSelector{MatchLabels: web}}},
		&appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: "cilium", Namespace: ns}, Spec: appsv1.DaemonSetSpec{Selector: &metav1.LabelSelector{
			MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "k8s-app", Operator: metav1.LabelSelectorOpIn, Values: []string{"cilium"}}},
		}}},
		&appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: "node-agent", Namespace: ns}, Spec: appsv1.DaemonSetSpec{Selector: &metav1.LabelSelector{MatchLabels: nodeAgent}}},
		&batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "j", Namespace: ns}, Spec: batchv1.JobSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"job": "j"}}}},
		&corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns}, Spec: corev1.ServiceSpec{Selector: web}},
		&corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "headless", Namespace: ns}},
		&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "empty", Namespace: ns}, Spec: appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "none"}}}},
	}
	cs := fakeReader{fake.NewClientset(objs...)}

	tests := []struct {
		name     string
		q        cluster.PodTarget
		wantPod  string
		wantCont string
		wantErr  string
	}{
		{name: "plain name", q: cluster.PodTarget{Pod: "web-pending"}, wantPod: "web-pending", wantCont: "main"},
		{name: "pod/ prefix", q: cluster.PodTarget{Pod: "pod/web-b"}, wantPod: "web-b"},
		{name: "default container annotation", q: cluster.PodTarget{Pod: "annotated"}, wantPod: "annotated", wantCont: "sidecar"},
		{name: "deploy prefers running, ready, ready longest", q: cluster.PodTarget{Pod: "deploy/web"}, wantPod: "web-b"},
		{name: "long form deployments.apps", q: cluster.PodTarget{Pod: "deployments.apps/web"}, wantPod: "web-b"},
		{name: "rs", q: cluster.PodTarget{Pod: "rs/web-123"}, wantPod: "web-b"},
		{name: "sts", q: cluster.PodTarget{Pod: "sts/web"}, wantPod: "web-b"},
		{name: "svc uses the service selector", q: cluster.PodTarget{Pod: "svc/web"}, wantPod: "web-b"},
		{name: "node picks the pod on that node", q: cluster.PodTarget{Pod: "deploy/web", Node: "n1"}, wantPod: "web-a"},
		{name: "ds with match expressions on a node", q: cluster.PodTarget{Pod: "ds/cilium", Node: "worker-2"}, wantPod: "cilium-x2"},
		{name: "ds without node: the first node's pod", q: cluster.PodTarget{Pod: "daemonset/cilium"}, wantPod: "cilium-x1"},
		{name: "ds without node: the first node by name before readiness, its new pod before its old", q: cluster.PodTarget{Pod: "ds/node-agent"}, wantPod: "z-new"},
		{name: "ds on a node", q: cluster.PodTarget{Pod: "ds/node-agent", Node: "node-b"}, wantPod: "a-agent"},
		{name: "the same pods by selector: the longest ready", q: cluster.PodTarget{Selector: "app=node-agent"}, wantPod: "a-agent"},
		{name: "label selector", q: cluster.PodTarget{Selector: "app=web"}, wantPod: "web-b"},
		{name: "job: finished pods, ties by name", q: cluster.PodTarget{Pod: "job/j"}, wantPod: "job-1"},
		{name: "no pod on node", q: cluster.PodTarget{Pod: "ds/cilium", Node: "worker-9"}, wantErr: `no pod on node "worker-9" (2 pods match elsewhere)`},
		{name: "named pod on another node", q: cluster.PodTarget{Pod: "web-a", Node: "n2"}, wantErr: `runs on node "n1", not "n2"`},
		{name: "workload without pods", q: cluster.PodTarget{Pod: "deploy/empty"}, wantErr: "no pods match"},
		{name: "missing workload", q: cluster.PodTarget{Pod: "deploy/nope"}, wantErr: `NotFound (404): deployments.apps "nope" not found`},
		{name: "missing pod", q: cluster.PodTarget{Pod: "nope"}, wantErr: `resolve pod Pod "nope" in namespace "lab": NotFound (404)`},
		{name: "service without selector", q: cluster.PodTarget{Pod: "svc/headless"}, wantErr: "has no selector"},
		{name: "unknown kind", q: cluster.PodTarget{Pod: "cm/x"}, wantErr: `unknown kind "cm"`},
		{name: "bad selector", q: cluster.PodTarget{Selector: "a in (("}, wantErr: "bad label selector"},
		{name: "nothing given", q: cluster.PodTarget{}, wantErr: "no pod name"},
		{name: "both given", q: cluster.PodTarget{Pod: "x", Selector: "a=b"}, wantErr: "not both"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.q.Namespace = ns
			p, err := resolvePod(context.Background(), cs, tt.q)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("got %v, want error containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if p.Name != tt.wantPod {
				t.Errorf("got pod %s, want %s", p.Name, tt.wantPod)
			}
			if tt.wantCont != "" && DefaultContainer(p) != tt.wantCont {
				t.Errorf("default container %s, want %s", DefaultContainer(p), tt.wantCont)
			}
		})
	}
}

// fakeReader is an objectReader over client-go's fake clientset, which
// answers like the API server, NotFound errors included.
type fakeReader struct{ cs kubernetes.Interface }

func (f fakeReader) get(ctx context.Context, resource, ns, name string, into runtime.Object) error {
	var obj runtime.Object
	var err error
	get := metav1.GetOptions{}
	switch resource {
	case "pods":
		obj, err = f.cs.CoreV1().Pods(ns).Get(ctx, name, get)
	case "services":
		obj, err = f.cs.CoreV1().Services(ns).Get(ctx, name, get)
	case "deployments":
		obj, err = f.cs.AppsV1().Deployments(ns).Get(ctx, name, get)
	case "daemonsets":
		obj, err = f.cs.AppsV1().DaemonSets(ns).Get(ctx, name, get)
	case "statefulsets":
		obj, err = f.cs.AppsV1().StatefulSets(ns).Get(ctx, name, get)
	case "replicasets":
		obj, err = f.cs.AppsV1().ReplicaSets(ns).Get(ctx, name, get)
	case "jobs":
		obj, err = f.cs.BatchV1().Jobs(ns).Get(ctx, name, get)
	default:
		return fmt.Errorf("fakeReader: no %s", resource)
	}
	if err != nil {
		return err
	}
	reflect.ValueOf(into).Elem().Set(reflect.ValueOf(obj).Elem())
	return nil
}

func (f fakeReader) listPods(ctx context.Context, ns, selector string) (*corev1.PodList, error) {
	return f.cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: selector})
}
