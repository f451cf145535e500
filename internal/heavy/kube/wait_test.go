package kube

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/labrun/labrun/internal/leaf/k8sobj"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	clienttesting "k8s.io/client-go/testing"

	"github.com/labrun/labrun/internal/boundary/cluster"
)

// podsReady holds when there is a pod and every pod is Ready.
func podsReady(objs []map[string]any) (bool, error) {
	return len(objs) > 0 && !slices.ContainsFunc(objs, func(p map[string]any) bool { return !k8sobj.PodReady(p) }), nil
}

var podsGVR = schema.GroupVersionResource{Version: "v1", Resource: "pods"}

// fakeClient is a Client over client-go's fake dynamic client and a fixed
// list of resources: enough to test Wait's list/watch logic without a cluster.
func fakeClient(t *testing.T, objs ...runtime.Object) (*Client, *dynamicfake.FakeDynamicClient) {
	t.Helper()
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{
		podsGVR: "PodList",
		{Group: "apps", Version: "v1", Resource: "deployments"}: "DeploymentList",
	}, objs...)
	resources := []apiResource{
		{gvr: podsGVR, kind: "Pod", singular: "pod", shortNames: []string{"po"}, namespaced: true},
		{gvr: schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, kind: "Deployment", singular: "deployment", shortNames: []string{"deploy"}, namespaced: true},
	}
	c := &Client{Namespace: "default", dynamic: dyn, secrets: &secretSet{}}
	c.mapper = newRESTMapper(func(context.Context) ([]apiResource, error) { return resources, nil })
	return c, dyn
}

func pod(name string, ready bool) *unstructured.Unstructured {
	status := "False"
	if ready {
		status = "True"
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{"name": name, "namespace": "default", "labels": map[string]any{"app": "web"}},
		"status": map[string]any{
			"phase":      "Running",
			"conditions": []any{map[string]any{"type": "Ready", "status": status}},
		},
	}}
}

// A wait on an object that does not exist yet sees its creation and its
// change through the watch: one list, then events, and never a re-list
// (which is what a poll would do). Each change is made once the wait has
// shown the previous state, so the order is fixed by signals, not sleeps.
func TestWaitForObjectThatDoesNotExistYet(t *testing.T) {
	c, dyn := fakeClient(t)
	lists, watching := countLists(dyn), watchSignal(dyn)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	states := make(chan []map[string]any, 10)
	done := make(chan error, 1)
	var got []map[string]any
	go func() {
		var err error
		got, err = c.Wait(ctx, cluster.ObjectQuery{Kind: "pod", Name: "p"}, podsReady, func(objs []map[string]any) { states <- objs })
		done <- err
	}()

	if s := <-states; len(s) != 0 {
		t.Fatalf("first state %v, want no object", s)
	}
	<-watching
	pods := dyn.Resource(podsGVR).Namespace("default")
	if _, err := pods.Create(ctx, pod("p", false), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if s := <-states; len(s) != 1 || k8sobj.PodReady(s[0]) {
		t.Fatalf("state after the create: %v, want one pod not ready", s)
	}
	if _, err := pods.Update(ctx, pod("p", true), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || !k8sobj.PodReady(got[0]) {
		t.Errorf("final state %v", got)
	}
	if n := lists.Load(); n != 1 {
		t.Errorf("listed %d times; a wait must list once and then follow the watch", n)
	}
}

// countLists counts the pod lists the fake client answers.
func countLists(dyn *dynamicfake.FakeDynamicClient) *atomic.Int32 {
	var n atomic.Int32
	dyn.PrependReactor("list", "pods", func(clienttesting.Action) (bool, runtime.Object, error) {
		n.Add(1)
		return false, nil, nil
	})
	return &n
}

// watchSignal makes the fake's pod watches itself, registered with its
// object tracker before the channel it returns is sent to: a change made
// after that is seen by the watch. (The fake has no resource versions, so
// a change made between the list and the watch would be lost, which a
// real API server replays.)
func watchSignal(dyn *dynamicfake.FakeDynamicClient) <-chan struct{} {
	started := make(chan struct{}, 10)
	dyn.PrependWatchReactor("pods", func(a clienttesting.Action) (bool, watch.Interface, error) {
		w, err := dyn.Tracker().Watch(podsGVR, a.GetNamespace())
		started <- struct{}{}
		return true, w, err
	})
	return started
}

func TestWaitTimeoutReportsLastState(t *testing.T) {
	c, _ := fakeClient(t, pod("p", false))
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
	defer cancel()
	_, err := c.Wait(ctx, cluster.ObjectQuery{Kind: "Pod", APIVersion: "v1", Selector: "app=web"}, func([]map[string]any) (bool, error) { return false, nil }, nil)
	var we *WaitError
	if !errors.As(err, &we) {
		t.Fatalf("got %T %v, want *WaitError", err, err)
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("WaitError does not unwrap to DeadlineExceeded")
	}
	for _, w := range []string{"timed out after", `pods with labels app=web in namespace "default"`, "last state: 1 object(s): Pod default/p [phase=Running ready=false Ready=False]"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not contain %q", err, w)
		}
	}
	if len(we.Objects) != 1 {
		t.Errorf("last state has %d objects", len(we.Objects))
	}
}

func TestWaitRelistsAfterGone(t *testing.T) {
	c, dyn := fakeClient(t)
	lists := countLists(dyn)
	watching := watchSignal(dyn) // the third watch: the tracker's own
	// The first watch fails at once with 410 Gone, the second one closes
	// without an event.
	var watches atomic.Int32
	dyn.PrependWatchReactor("pods", func(clienttesting.Action) (bool, watch.Interface, error) {
		switch watches.Add(1) {
		case 1:
			w := watch.NewFake()
			go w.Error(&apierrors.NewResourceExpired("too old resource version").ErrStatus)
			return true, w, nil
		case 2:
			w := watch.NewFake()
			go w.Stop()
			return true, w, nil
		}
		return false, nil, nil
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := c.Wait(ctx, cluster.ObjectQuery{Kind: "pods"}, podsReady, nil)
		done <- err
	}()
	<-watching
	if _, err := dyn.Resource(podsGVR).Namespace("default").Create(ctx, pod("p", true), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if n := lists.Load(); n != 3 {
		t.Errorf("listed %d times, want 3: a re-list after the 410 and after the closed watch", n)
	}
}

func TestWaitStopsOnForbidden(t *testing.T) {
	c, dyn := fakeClient(t)
	dyn.PrependReactor("list", "pods", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "", errors.New(`User "u" cannot list resource "pods"`))
	})
	lists := countLists(dyn)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := c.Wait(ctx, cluster.ObjectQuery{Kind: "Pod"}, podsReady, nil)
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), `Forbidden (403): pods is forbidden: User "u" cannot list resource "pods"`) {
		t.Fatalf("got %v, want the Forbidden error", err)
	}
	if n := lists.Load(); n != 1 {
		t.Errorf("listed %d times; a permanent error must end the wait at the first answer", n)
	}
}

func TestWaitCondErrorEndsWait(t *testing.T) {
	c, _ := fakeClient(t, pod("p", false))
	_, err := c.Wait(context.Background(), cluster.ObjectQuery{Kind: "Pod"}, func([]map[string]any) (bool, error) {
		return false, errors.New("deployment exceeded its progress deadline")
	}, nil)
	if err == nil || !strings.Contains(err.Error(), "progress deadline") {
		t.Fatalf("got %v", err)
	}
}

func TestWaitResolvesShortNames(t *testing.T) {
	c, _ := fakeClient(t)
	for _, kind := range []string{"Pod", "pod", "pods", "po"} {
		tg, err := c.resource(context.Background(), "", kind, "", false)
		if err != nil || tg.mapping.Resource != podsGVR {
			t.Errorf("%s: %v %v", kind, tg.mapping, err)
		}
	}
	if tg, err := c.resource(context.Background(), "", "deploy", "lab", false); err != nil || tg.mapping.Resource.Group != "apps" || tg.namespace != "lab" {
		t.Errorf("deploy: %+v %v", tg, err)
	}
	if _, err := c.resource(context.Background(), "", "Nope", "", false); err == nil || !strings.Contains(err.Error(), "Nope") {
		t.Errorf("unknown kind: %v", err)
	}
}

func TestUnknownKindMessage(t *testing.T) {
	c, _ := fakeClient(t)
	_, err := c.resource(context.Background(), "nope.labrun.io/v1", "Nope", "", false)
	want := `resolve kind nope.labrun.io/v1 Nope: no matches for kind "Nope" in version "nope.labrun.io/v1" (is the CRD installed and established?)`
	if err == nil || err.Error() != want {
		t.Errorf("got  %v\nwant %s", err, want)
	}
	if !noMatch(err) {
		t.Errorf("the wrapped error no longer says 'no match'")
	}
}
