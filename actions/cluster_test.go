package actions

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/labrun/labrun/internal/boundary/cluster"
	"github.com/labrun/labrun/internal/boundary/cluster/clustertest"
)

// These tests run the Kubernetes actions against an in-memory cluster:
// they prove what each action makes of what the cluster answers (counts,
// defaults, errors), not what Kubernetes does, which kube's e2e tests
// prove against a real API server.

func runtimeWith(c cluster.Cluster) *Runtime {
	return &Runtime{PlaybookDir: "testdata", Cluster: func() (cluster.Cluster, error) { return c, nil }}
}

func run[R any](t *testing.T, rt *Runtime, action string, spec any) (*R, error) {
	t.Helper()
	info, ok := Lookup(action)
	if !ok {
		t.Fatalf("no action %s", action)
	}
	res, err := info.Run(context.Background(), rt, spec)
	r, _ := res.(*R)
	return r, err
}

func pod(ns, name, app string, ready bool) map[string]any {
	status := "False"
	if ready {
		status = "True"
	}
	return map[string]any{
		"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{"namespace": ns, "name": name, "labels": map[string]any{"app": app}},
		"status":   map[string]any{"phase": "Running", "conditions": []any{map[string]any{"type": "Ready", "status": status}}},
	}
}

func deployment(ns, name string, replicas int) map[string]any {
	return map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"namespace": ns, "name": name},
		"spec":     map[string]any{"replicas": replicas},
	}
}

func TestKubernetesActionsWithoutCluster(t *testing.T) {
	rt := &Runtime{}
	specs := map[string]any{
		"get": &GetSpec{}, "wait": &GetSpec{}, "scale": &ScaleSpec{}, "delete": &DeleteSpec{},
		"logs": &LogsSpec{}, "exec": &ExecSpec{Argv: []string{"true"}}, "cilium": &CiliumSpec{Args: []string{"status"}},
		"apply": &ApplySpec{Manifest: "{apiVersion: v1, kind: ConfigMap, metadata: {name: a}}"}, "label": &LabelSpec{Labels: map[string]string{"a": "b"}},
	}
	for name, spec := range specs {
		info, _ := Lookup(name)
		if _, err := info.Run(context.Background(), rt, spec); !errors.Is(err, ErrNoCluster) {
			t.Errorf("%s without a cluster: %v, want ErrNoCluster", name, err)
		}
	}
	info, _ := Lookup("wait")
	if _, err := info.Watch(context.Background(), rt, &GetSpec{}, func(any) (bool, error) { return true, nil }); !errors.Is(err, ErrNoCluster) {
		t.Errorf("wait without a cluster: %v, want ErrNoCluster", err)
	}
}

func TestGet(t *testing.T) {
	c := &clustertest.Cluster{}
	c.Put(pod("lab", "web-1", "web", true))
	c.Put(pod("lab", "web-2", "web", false))
	c.Put(pod("lab", "db-1", "db", true))
	c.Put(pod("other", "web-3", "web", true))
	c.Put(deployment("lab", "web", 2))
	tests := []struct {
		name       string
		q          cluster.ObjectQuery
		wantNames  []string
		wantReady  int
		wantObject bool
	}{
		{"selector", cluster.ObjectQuery{Kind: "Pod", Namespace: "lab", Selector: "app=web"}, []string{"web-1", "web-2"}, 1, true},
		{"name", cluster.ObjectQuery{Kind: "Pod", Namespace: "lab", Name: "db-1"}, []string{"db-1"}, 1, true},
		{"all namespaces", cluster.ObjectQuery{Kind: "Pod", AllNamespaces: true, Selector: "app=web"}, []string{"web-1", "web-2", "web-3"}, 2, true},
		{"field selector", cluster.ObjectQuery{Kind: "Pod", Namespace: "lab", FieldSelector: "metadata.name=web-2"}, []string{"web-2"}, 0, true},
		{"workload without status is not ready", cluster.ObjectQuery{Kind: "Deployment", Namespace: "lab"}, []string{"web"}, 0, true},
		{"nothing", cluster.ObjectQuery{Kind: "Pod", Namespace: "lab", Name: "missing"}, nil, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := run[GetResult](t, runtimeWith(c), "get", &GetSpec{ObjectQuery: tt.q})
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, o := range r.Items {
				names = append(names, o["metadata"].(map[string]any)["name"].(string))
			}
			if !reflect.DeepEqual(names, tt.wantNames) || r.Count != len(tt.wantNames) || r.Ready != tt.wantReady || (r.Object != nil) != tt.wantObject {
				t.Errorf("got items %v count %d ready %d object %v; want %v ready %d", names, r.Count, r.Ready, r.Object != nil, tt.wantNames, tt.wantReady)
			}
			if r.Items == nil {
				t.Errorf("items is nil, want an empty list")
			}
		})
	}
}

// wait sees the change the condition is waiting for: the cluster changes
// after the first evaluation, and the watch returns the new state.
func TestWaitSeesChange(t *testing.T) {
	c := &clustertest.Cluster{}
	c.Put(pod("lab", "web-1", "web", false))
	info, _ := Lookup("wait")
	evaluations := 0
	res, err := info.Watch(context.Background(), runtimeWith(c), &GetSpec{ObjectQuery: cluster.ObjectQuery{Kind: "Pod", Namespace: "lab", Selector: "app=web"}},
		func(r any) (bool, error) {
			evaluations++
			if evaluations == 1 {
				go c.Put(pod("lab", "web-1", "web", true))
			}
			return r.(*GetResult).Ready == 1, nil
		})
	if err != nil {
		t.Fatal(err)
	}
	if r := res.(*GetResult); r.Ready != 1 || r.Count != 1 || evaluations < 2 {
		t.Errorf("got ready %d count %d after %d evaluations", r.Ready, r.Count, evaluations)
	}
}

// A wait that ends before its condition holds still returns the last state
// it saw, for the step's message.
func TestWaitEndsWithLastState(t *testing.T) {
	c := &clustertest.Cluster{}
	c.Put(pod("lab", "web-1", "web", false))
	info, _ := Lookup("wait")
	ctx, cancel := context.WithCancel(context.Background())
	res, err := info.Watch(ctx, runtimeWith(c), &GetSpec{ObjectQuery: cluster.ObjectQuery{Kind: "Pod", Namespace: "lab"}},
		func(r any) (bool, error) { cancel(); return false, nil })
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want canceled", err)
	}
	if r := res.(*GetResult); r.Count != 1 || r.Ready != 0 {
		t.Errorf("last state: count %d ready %d", r.Count, r.Ready)
	}

	// A condition that fails ends the wait with its error and the state.
	boom := errors.New("past its progress deadline")
	res, err = info.Watch(context.Background(), runtimeWith(c), &GetSpec{ObjectQuery: cluster.ObjectQuery{Kind: "Pod", Namespace: "lab"}},
		func(r any) (bool, error) { return false, boom })
	if !errors.Is(err, boom) || res.(*GetResult).Count != 1 {
		t.Errorf("got %v, %+v", err, res)
	}
}

func TestScale(t *testing.T) {
	c := &clustertest.Cluster{}
	c.Put(deployment("lab", "web", 2))
	r, err := run[cluster.ScaleResult](t, runtimeWith(c), "scale", &ScaleSpec{ObjectQuery: cluster.ObjectQuery{Kind: "Deployment", Namespace: "lab", Name: "web"}, Replicas: 4})
	if err != nil {
		t.Fatal(err)
	}
	want := cluster.ScaleResult{Kind: "Deployment", Namespace: "lab", Name: "web", OldReplicas: 2, NewReplicas: 4}
	if *r != want {
		t.Errorf("got %+v, want %+v", *r, want)
	}
	if _, err := run[cluster.ScaleResult](t, runtimeWith(c), "scale", &ScaleSpec{ObjectQuery: cluster.ObjectQuery{Kind: "Deployment", Namespace: "lab", Name: "db"}, Replicas: 1}); !errors.Is(err, clustertest.ErrNotFound) {
		t.Errorf("scale of a missing workload: %v", err)
	}
}

func TestDelete(t *testing.T) {
	c := &clustertest.Cluster{}
	c.Put(pod("lab", "web-1", "web", true))
	c.Put(pod("lab", "web-2", "web", true))
	c.Put(pod("lab", "db-1", "db", true))
	rt := runtimeWith(c)

	r, err := run[DeleteResult](t, rt, "delete", &DeleteSpec{ObjectQuery: cluster.ObjectQuery{Kind: "Pod", Namespace: "lab", Selector: "app=web"}})
	if err != nil || r.Deleted != 2 || len(r.Objects) != 2 || r.Objects[0].Name != "web-1" {
		t.Errorf("delete by selector: %+v %v", r, err)
	}
	if left := c.Objects(); len(left) != 1 {
		t.Errorf("%d objects left, want db-1 only", len(left))
	}
	r, err = run[DeleteResult](t, rt, "delete", &DeleteSpec{ObjectQuery: cluster.ObjectQuery{Kind: "Pod", Namespace: "lab", Name: "web-1"}, IgnoreNotFound: true})
	if err != nil || r.Deleted != 0 || len(r.Objects) != 1 || r.Objects[0].Deleted {
		t.Errorf("delete of a missing pod with ignoreNotFound: %+v %v", r, err)
	}
	r, err = run[DeleteResult](t, rt, "delete", &DeleteSpec{ObjectQuery: cluster.ObjectQuery{Kind: "Pod", Namespace: "lab", Name: "web-1"}})
	if !errors.Is(err, clustertest.ErrNotFound) || r.Objects == nil || r.Deleted != 0 {
		t.Errorf("delete of a missing pod: %+v %v", r, err)
	}
}

func TestLogs(t *testing.T) {
	var got cluster.LogRequest
	var gotTarget cluster.PodTarget
	c := &clustertest.Cluster{LogsFunc: func(pt cluster.PodTarget, req cluster.LogRequest) (*cluster.LogsResult, error) {
		gotTarget, got = pt, req
		return &cluster.LogsResult{Namespace: pt.Namespace, Pod: "web-1", Container: "web", Text: "line\n"}, nil
	}}
	target := cluster.PodTarget{Namespace: "lab", Pod: "deploy/web"}
	r, err := run[cluster.LogsResult](t, runtimeWith(c), "logs", &LogsSpec{PodTarget: target, Tail: 5, Since: 2 * time.Minute, Previous: true})
	if err != nil {
		t.Fatal(err)
	}
	if want := (cluster.LogRequest{TailLines: 5, Since: 2 * time.Minute, Previous: true}); got != want || gotTarget != target {
		t.Errorf("asked for %+v of %+v, want %+v of %+v", got, gotTarget, want, target)
	}
	if r.Text != "line\n" || r.Pod != "web-1" {
		t.Errorf("result %+v", r)
	}
}

// execCluster answers every command with the given exit code and records
// what it was asked.
func execCluster(code int, stderr string, asked *[]cluster.ExecRequest, targets *[]cluster.PodTarget) *clustertest.Cluster {
	return &clustertest.Cluster{ExecFunc: func(pt cluster.PodTarget, req cluster.ExecRequest) (*cluster.ExecResult, error) {
		*asked = append(*asked, req)
		*targets = append(*targets, pt)
		return &cluster.ExecResult{Namespace: pt.Namespace, Pod: "p-1", Container: pt.Container, Argv: req.Argv, Stdout: "out\n", Stderr: stderr, ExitCode: code}, nil
	}}
}

func TestExec(t *testing.T) {
	stdin := "input"
	tests := []struct {
		name    string
		spec    ExecSpec
		code    int
		wantErr string
	}{
		{"success", ExecSpec{PodTarget: cluster.PodTarget{Namespace: "lab", Pod: "web"}, Argv: []string{"cat"}, Stdin: &stdin, Reuse: true}, 0, ""},
		{"non-zero exit fails the step", ExecSpec{PodTarget: cluster.PodTarget{Namespace: "lab", Pod: "web"}, Argv: []string{"sh", "-c", "exit 3"}}, 3, `sh -c 'exit 3' in lab/p-1 exited with code 3: no such file`},
		{"allowFailure makes it a result", ExecSpec{PodTarget: cluster.PodTarget{Namespace: "lab", Pod: "web"}, Argv: []string{"false"}, AllowFailure: true}, 1, ""},
		{"empty argv", ExecSpec{PodTarget: cluster.PodTarget{Pod: "web"}}, 0, "argv is empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var asked []cluster.ExecRequest
			var targets []cluster.PodTarget
			spec := tt.spec
			r, err := run[cluster.ExecResult](t, runtimeWith(execCluster(tt.code, "no such file\n", &asked, &targets)), "exec", &spec)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("err %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := cluster.ExecRequest{Argv: spec.Argv, Stdin: spec.Stdin, Reuse: spec.Reuse}
			if len(asked) != 1 || !reflect.DeepEqual(asked[0], want) || targets[0] != spec.PodTarget {
				t.Errorf("asked %+v in %+v, want %+v in %+v", asked, targets, want, spec.PodTarget)
			}
			if r.ExitCode != tt.code || r.Stdout != "out\n" {
				t.Errorf("result %+v", r)
			}
		})
	}
}

// cilium is exec of cilium-dbg in the agent, through its shared session
// unless told otherwise.
func TestCiliumDefaults(t *testing.T) {
	tests := []struct {
		name       string
		spec       CiliumSpec
		wantTarget cluster.PodTarget
		wantReuse  bool
	}{
		{"defaults", CiliumSpec{Args: []string{"status"}}, cluster.PodTarget{Namespace: "kube-system", Pod: "ds/cilium", Container: "cilium-agent"}, true},
		{"one node, separate exec", CiliumSpec{Args: []string{"status"}, Node: "worker", Separate: true}, cluster.PodTarget{Namespace: "kube-system", Pod: "ds/cilium", Container: "cilium-agent", Node: "worker"}, false},
		{"another agent", CiliumSpec{Args: []string{"status"}, Namespace: "cilium", Pod: "cilium-x", Container: "agent"}, cluster.PodTarget{Namespace: "cilium", Pod: "cilium-x", Container: "agent"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var asked []cluster.ExecRequest
			var targets []cluster.PodTarget
			spec := tt.spec
			if _, err := run[cluster.ExecResult](t, runtimeWith(execCluster(0, "", &asked, &targets)), "cilium", &spec); err != nil {
				t.Fatal(err)
			}
			if targets[0] != tt.wantTarget || asked[0].Reuse != tt.wantReuse || !reflect.DeepEqual(asked[0].Argv, []string{"cilium-dbg", "status"}) {
				t.Errorf("ran %+v in %+v, want reuse %v in %+v", asked[0], targets[0], tt.wantReuse, tt.wantTarget)
			}
		})
	}
	var asked []cluster.ExecRequest
	var targets []cluster.PodTarget
	_, err := run[cluster.ExecResult](t, runtimeWith(execCluster(1, "agent not ready", &asked, &targets)), "cilium", &CiliumSpec{Args: []string{"status"}})
	if err == nil || !strings.Contains(err.Error(), "cilium-dbg status in kube-system/p-1 exited with code 1: agent not ready") {
		t.Errorf("failed cilium-dbg: %v", err)
	}
	// cilium-dbg's words for an agent that does not answer (its API socket
	// down while it restarts) make the failure transient, for the runner
	// to try again; any other failure is the agent's answer.
	for stderr, transient := range map[string]bool{
		"cilium: daemon unreachable": true,
		`Error: Cannot get status: Get "http://localhost/v1/healthz": dial unix /var/run/cilium/cilium.sock: connect: no such file or directory` + "\nIs the agent running?": true,
		"agent not ready":              false,
		"Error: unknown flag: --bogus": false,
	} {
		_, err := run[cluster.ExecResult](t, runtimeWith(execCluster(1, stderr, &asked, &targets)), "cilium", &CiliumSpec{Args: []string{"status"}})
		var te *cluster.TransientError
		if errors.As(err, &te) != transient {
			t.Errorf("cilium-dbg failing with %q: %v, transient %v, want %v", stderr, err, te != nil, transient)
		}
	}
}

func TestApply(t *testing.T) {
	c := &clustertest.Cluster{}
	rt := runtimeWith(c)
	spec := &ApplySpec{
		Files:     []string{"web.yaml"},
		Objects:   []any{map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "inline"}}},
		Manifest:  "apiVersion: v1\nkind: Namespace\nmetadata: {name: lab, namespace: ''}\n",
		Namespace: "lab",
	}
	r, err := run[ApplyResult](t, rt, "apply", spec)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, o := range r.Objects {
		kinds = append(kinds, o.Kind+"/"+o.Name)
	}
	if want := []string{"ConfigMap/web-config", "Service/web", "ConfigMap/inline", "Namespace/lab"}; !reflect.DeepEqual(kinds, want) || r.Created != 4 || r.Configured != 0 || r.Unchanged != 0 {
		t.Errorf("first apply: %v created %d configured %d unchanged %d; want %v all created", kinds, r.Created, r.Configured, r.Unchanged, want)
	}

	spec.Objects = []any{map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "inline"}, "data": map[string]any{"k": "v"}}}
	r, err = run[ApplyResult](t, rt, "apply", spec)
	if err != nil || r.Created != 0 || r.Configured != 1 || r.Unchanged != 3 {
		t.Errorf("second apply: %+v %v; want 1 configured, 3 unchanged", r, err)
	}

	r, err = run[ApplyResult](t, rt, "apply", &ApplySpec{Manifest: "# nothing\n"})
	if err == nil || r.Objects == nil || len(r.Objects) != 0 {
		t.Errorf("empty manifest: %+v %v; want an error and no objects", r, err)
	}
}

// The static checks of the Kubernetes actions: what a spec's Go type
// cannot say, with the position of the step's spec.
func TestKubernetesChecks(t *testing.T) {
	tests := []struct {
		action, spec, want string
	}{
		{"exec", "{argv: [ls]}", "p.yaml:1:1: exec needs pod (a name or a workload such as ds/cilium) or selector"},
		{"exec", "{argv: [ls], pod: ds/cilium}", ""},
		{"exec", "{argv: [ls], selector: app=web}", ""},
		{"apply", "{namespace: lab}", "p.yaml:1:1: apply needs files, objects or manifest"},
		{"apply", "{files: [web.yaml]}", ""},
		{"scale", "{kind: Deployment, replicas: 2}", "p.yaml:1:1: scale needs the name of the workload"},
		{"scale", "{kind: Deployment, name: web, replicas: 2}", ""},
		{"get", "{kind: Pod}", ""},
	}
	for _, tt := range tests {
		t.Run(tt.action+" "+tt.spec, func(t *testing.T) {
			info, _ := Lookup(tt.action)
			got := info.Check(literalSpec(t, tt.spec), &StaticContext{})
			if (tt.want == "") != (len(got) == 0) || (tt.want != "" && got.Error() != tt.want) {
				t.Errorf("got %v, want %q", got, tt.want)
			}
		})
	}
}

// What the runner learns about the Kubernetes actions from the registry.
func TestKubernetesRegistry(t *testing.T) {
	tests := []struct {
		action            string
		mutates, canWatch bool
		needsUntil        bool
		spec, result      any
	}{
		{"get", false, true, false, &GetSpec{}, &GetResult{}},
		{"wait", false, true, true, &GetSpec{}, &GetResult{}},
		{"apply", true, false, false, &ApplySpec{}, &ApplyResult{}},
		{"scale", true, false, false, &ScaleSpec{}, &cluster.ScaleResult{}},
		{"delete", true, false, false, &DeleteSpec{}, &DeleteResult{}},
		{"logs", false, false, false, &LogsSpec{}, &cluster.LogsResult{}},
		{"exec", false, false, false, &ExecSpec{}, &cluster.ExecResult{}},
		{"cilium", false, false, false, &CiliumSpec{}, &cluster.ExecResult{}},
	}
	for _, tt := range tests {
		info, ok := Lookup(tt.action)
		if !ok || !slices.Contains(Names(), tt.action) || !slices.Contains(All(), info) {
			t.Fatalf("%s is not registered", tt.action)
		}
		if info.Mutates != tt.mutates || info.CanWatch() != tt.canWatch || info.NeedsUntil != tt.needsUntil {
			t.Errorf("%s: mutates %v watch %v needsUntil %v", tt.action, info.Mutates, info.CanWatch(), info.NeedsUntil)
		}
		if reflect.TypeOf(info.NewSpec()) != reflect.TypeOf(tt.spec) || reflect.TypeOf(info.ZeroResult()) != reflect.TypeOf(tt.result) {
			t.Errorf("%s: spec %T result %T", tt.action, info.NewSpec(), info.ZeroResult())
		}
	}
	// exec declares that it changes the system only when the step says so.
	exec, _ := Lookup("exec")
	for spec, want := range map[string]bool{"{argv: [ls], pod: p}": false, "{argv: [rm, x], pod: p, mutates: true}": true} {
		if got := exec.StepMutates(literalSpec(t, spec)); got != want {
			t.Errorf("exec %s mutates: %v, want %v", spec, got, want)
		}
	}
}
