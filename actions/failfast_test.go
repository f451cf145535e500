package actions

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/labrun/labrun/internal/boundary/cluster"
	"github.com/labrun/labrun/internal/boundary/cluster/clustertest"
)

func objJSON(t *testing.T, src string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(src), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func waitOn(ctx context.Context, c cluster.Cluster, spec *GetSpec, cond Condition) error {
	info, _ := Lookup("wait")
	_, err := info.Watch(ctx, runtimeWith(c), spec, cond)
	return err
}

func never(any) (bool, error) { return false, nil }

// A wait on pods stops at the first failing pod with its cause; a pod that
// says nothing but its reason is explained by its latest Warning event.
func TestWaitStopsAtFailingPod(t *testing.T) {
	c := &clustertest.Cluster{}
	c.Put(pod("lab", "web-0", "web", true))
	c.Put(objJSON(t, `{"apiVersion":"v1","kind":"Pod","metadata":{"namespace":"lab","name":"web-1","labels":{"app":"web"}},
		"status":{"phase":"Running","containerStatuses":[{"name":"c","state":{"waiting":{"reason":"CrashLoopBackOff"}},"lastState":{"terminated":{"exitCode":3,"message":"mkdir /srv/www: read-only file system\n"}}}]}}`))
	err := waitOn(context.Background(), c, &GetSpec{ObjectQuery: cluster.ObjectQuery{Kind: "Pod", Namespace: "lab", Selector: "app=web"}}, never)
	want := `stopped waiting for Pod with labels app=web in namespace "lab": pod lab/web-1 container c is in CrashLoopBackOff: exit code 3: mkdir /srv/www: read-only file system`
	if err == nil || err.Error() != want {
		t.Errorf("got  %v\nwant %s", err, want)
	}

	c = &clustertest.Cluster{}
	c.Put(objJSON(t, `{"apiVersion":"v1","kind":"Pod","metadata":{"namespace":"lab","name":"web-1","labels":{"app":"web"}},
		"status":{"phase":"Running","containerStatuses":[{"name":"c","state":{"waiting":{"reason":"CreateContainerError"}}}]}}`))
	c.Put(objJSON(t, `{"apiVersion":"v1","kind":"Event","metadata":{"namespace":"lab","name":"web-1.1"},"type":"Warning","reason":"Failed",
		"involvedObject":{"kind":"Pod","name":"web-1","fieldPath":"spec.containers{c}"},"lastTimestamp":"2026-12-03T10:00:00Z",
		"message":"Error: failed to create containerd task: mount /data: permission denied"}`))
	err = waitOn(context.Background(), c, &GetSpec{ObjectQuery: cluster.ObjectQuery{Kind: "Pod", Namespace: "lab", Name: "web-1"}}, never)
	want = `stopped waiting for Pod named "web-1" in namespace "lab": pod lab/web-1 container c is in CreateContainerError: latest warning: Failed: Error: failed to create containerd task: mount /data: permission denied`
	if err == nil || err.Error() != want {
		t.Errorf("got  %v\nwant %s", err, want)
	}

	// A crash without a termination message is quoted by the previous
	// instance's last log lines.
	c = &clustertest.Cluster{}
	c.Put(objJSON(t, `{"apiVersion":"v1","kind":"Pod","metadata":{"namespace":"lab","name":"web-1","labels":{"app":"web"}},
		"status":{"phase":"Running","containerStatuses":[{"name":"c","state":{"waiting":{"reason":"CrashLoopBackOff"}},"lastState":{"terminated":{"exitCode":1,"reason":"Error"}}}]}}`))
	c.LogsFunc = func(pt cluster.PodTarget, req cluster.LogRequest) (*cluster.LogsResult, error) {
		if pt != (cluster.PodTarget{Namespace: "lab", Pod: "web-1", Container: "c"}) || !req.Previous || req.TailLines != crashLogLines {
			return nil, errors.New("unexpected log request")
		}
		return &cluster.LogsResult{Text: "mkdir: can't create directory '/srv/www': Read-only file system\n"}, nil
	}
	err = waitOn(context.Background(), c, &GetSpec{ObjectQuery: cluster.ObjectQuery{Kind: "Pod", Namespace: "lab", Name: "web-1"}}, never)
	want = `stopped waiting for Pod named "web-1" in namespace "lab": pod lab/web-1 container c is in CrashLoopBackOff: exit code 1 (Error); its log ends: mkdir: can't create directory '/srv/www': Read-only file system`
	if err == nil || err.Error() != want {
		t.Errorf("got  %v\nwant %s", err, want)
	}

	// The condition is asked first: a wait for the failure itself holds.
	if err := waitOn(context.Background(), c, &GetSpec{ObjectQuery: cluster.ObjectQuery{Kind: "Pod", Namespace: "lab", Name: "web-1"}},
		func(r any) (bool, error) { return r.(*GetResult).Count == 1, nil }); err != nil {
		t.Errorf("a condition that holds: %v", err)
	}

	// allowFailing keeps waiting: the wait ends only when its context does.
	ctx, cancel := context.WithCancel(context.Background())
	err = waitOn(ctx, c, &GetSpec{ObjectQuery: cluster.ObjectQuery{Kind: "Pod", Namespace: "lab"}, AllowFailing: true},
		func(any) (bool, error) { cancel(); return false, nil })
	if !errors.Is(err, context.Canceled) {
		t.Errorf("with allowFailing: %v, want canceled", err)
	}
}

// A wait on a Deployment's rollout stops at a failing pod of the revision
// being rolled out, not at one of an older ReplicaSet still being replaced.
func TestWaitOnRolloutStopsAtFailingPod(t *testing.T) {
	c := &clustertest.Cluster{}
	c.Put(objJSON(t, `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"namespace":"lab","name":"web","generation":2,"annotations":{"deployment.kubernetes.io/revision":"2"}},
		"spec":{"replicas":1,"selector":{"matchLabels":{"app":"web"}}},"status":{"observedGeneration":2}}`))
	for _, rev := range []string{"1", "2"} {
		c.Put(objJSON(t, `{"apiVersion":"apps/v1","kind":"ReplicaSet","metadata":{"namespace":"lab","name":"web-`+rev+`","annotations":{"deployment.kubernetes.io/revision":"`+rev+`"},
			"ownerReferences":[{"kind":"Deployment","name":"web","controller":true}]}}`))
		c.Put(objJSON(t, `{"apiVersion":"v1","kind":"Pod","metadata":{"namespace":"lab","name":"web-`+rev+`-x","labels":{"app":"web"},
			"ownerReferences":[{"kind":"ReplicaSet","name":"web-`+rev+`","controller":true}]},
			"status":{"phase":"Running","containerStatuses":[{"name":"c","state":{"waiting":{"reason":"CrashLoopBackOff"}},"lastState":{"terminated":{"exitCode":`+rev+`}}}]}}`))
	}
	err := waitOn(context.Background(), c, &GetSpec{ObjectQuery: cluster.ObjectQuery{Kind: "Deployment", Namespace: "lab", Name: "web"}}, never)
	want := `stopped waiting for Deployment named "web" in namespace "lab": pod lab/web-2-x container c is in CrashLoopBackOff: exit code 2`
	if err == nil || err.Error() != want {
		t.Errorf("got  %v\nwant %s", err, want)
	}
}
