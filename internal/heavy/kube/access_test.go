package kube

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/labrun/labrun/internal/boundary/cluster"
)

// The permissions cluster/access.go says each method of Client needs are
// the requests it makes: a fake API server records every request as the
// API server's authorizer sees it (verb, group, resource, subresource,
// namespace) and each method's recorded requests are compared with its
// function in cluster. What a function adds beyond the recorded requests
// is what no request of a fake server shows: create for a server-side
// apply (the API server asks it when the object is not there) and for an
// exec over WebSocket (asked since Kubernetes 1.35).

// fakeAPI answers the requests of the methods with objects of the kinds
// they read, and records them.
type fakeAPI struct {
	t  *testing.T
	mu sync.Mutex
	// got are the recorded permissions, in order.
	got []cluster.Access
	// watchEvent is the type of the one event a watch sends (ADDED when
	// empty); its object is the listed one, Established.
	watchEvent string
	// refusePatch, when set, refuses the first patch of pods with this
	// message (a namespace's service account not there yet).
	refusePatch string
}

// kinds are the kinds of the resources the fake serves.
var fakeKinds = map[string][2]string{
	"pods": {"v1", "Pod"}, "services": {"v1", "Service"}, "configmaps": {"v1", "ConfigMap"},
	"serviceaccounts": {"v1", "ServiceAccount"}, "nodes": {"v1", "Node"}, "events": {"v1", "Event"},
	"deployments": {"apps/v1", "Deployment"}, "daemonsets": {"apps/v1", "DaemonSet"},
	"customresourcedefinitions": {"apiextensions.k8s.io/v1", "CustomResourceDefinition"},
}

func (f *fakeAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/api" || r.URL.Path == "/apis" {
		data, err := os.ReadFile("testdata/discovery" + r.URL.Path + ".json")
		if err != nil {
			f.t.Error(err)
		}
		w.Header().Set("Content-Type", "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList")
		w.Write(data)
		return
	}
	a, name := requestAccess(r)
	f.mu.Lock()
	f.got = append(f.got, a)
	refuse := a.Verb == "patch" && a.Resource == "pods" && f.refusePatch != ""
	msg := f.refusePatch
	if refuse {
		f.refusePatch = ""
	}
	f.mu.Unlock()
	switch {
	case a.Subresource == "exec":
		refusal(w, http.StatusForbidden, "Forbidden", "pods/exec is forbidden")
	case refuse:
		refusal(w, http.StatusForbidden, "Forbidden", msg)
	case a.Subresource == "log":
		w.Write([]byte("hello\n"))
	case a.Subresource == "scale":
		writeJSON(w, map[string]any{"apiVersion": "autoscaling/v1", "kind": "Scale", "metadata": map[string]any{"name": name, "namespace": a.Namespace}, "spec": map[string]any{"replicas": 1}})
	case a.Verb == "watch":
		f.watch(w, r, a)
	case a.Verb == "list":
		kind := fakeKinds[a.Resource]
		items := []any{fakeObject(a, "web")}
		if a.Resource == "serviceaccounts" {
			items = []any{}
		}
		writeJSON(w, map[string]any{"apiVersion": kind[0], "kind": kind[1] + "List", "metadata": map[string]any{"resourceVersion": "1"}, "items": items})
	default:
		writeJSON(w, fakeObject(a, name))
	}
}

// watch sends one event and waits for the client to go.
func (f *fakeAPI) watch(w http.ResponseWriter, r *http.Request, a cluster.Access) {
	obj := fakeObject(a, "web")
	obj["status"] = map[string]any{"conditions": []any{map[string]any{"type": "Established", "status": "True"}}}
	typ := f.watchEvent
	if typ == "" {
		typ = "ADDED"
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"type": typ, "object": obj})
	w.(http.Flusher).Flush()
	<-r.Context().Done()
}

// fakeObject is an object of a's resource: a running, ready pod with one
// container; workloads and services selecting app=web.
func fakeObject(a cluster.Access, name string) map[string]any {
	kind := fakeKinds[a.Resource]
	md := map[string]any{"name": name, "uid": "u1", "resourceVersion": "1", "labels": map[string]any{"app": "web"}}
	if a.Namespace != "" {
		md["namespace"] = a.Namespace
	}
	obj := map[string]any{"apiVersion": kind[0], "kind": kind[1], "metadata": md}
	switch a.Resource {
	case "pods":
		obj["spec"] = map[string]any{"nodeName": "n1", "containers": []any{map[string]any{"name": "main"}}}
		obj["status"] = map[string]any{"phase": "Running", "conditions": []any{map[string]any{"type": "Ready", "status": "True"}}}
	case "deployments", "daemonsets":
		obj["spec"] = map[string]any{"selector": map[string]any{"matchLabels": map[string]any{"app": "web"}}}
	case "services":
		obj["spec"] = map[string]any{"selector": map[string]any{"app": "web"}}
	case "customresourcedefinitions":
		obj["spec"] = map[string]any{"group": "example.com", "scope": "Namespaced",
			"names":    map[string]any{"kind": "Widget", "plural": "widgets"},
			"versions": []any{map[string]any{"name": "v1", "served": true, "storage": true}}}
	}
	return obj
}

// requestAccess is the permission a request needs, as the API server's
// authorizer names it, and the object's name.
func requestAccess(r *http.Request) (cluster.Access, string) {
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	var a cluster.Access
	if parts[0] == "apis" {
		a.Group, parts = parts[1], parts[3:]
	} else {
		parts = parts[2:]
	}
	if len(parts) >= 3 && parts[0] == "namespaces" {
		a.Namespace, parts = parts[1], parts[2:]
	}
	a.Resource = parts[0]
	name := ""
	if len(parts) > 1 {
		name = parts[1]
	}
	if len(parts) > 2 {
		a.Subresource = parts[2]
	}
	switch r.Method {
	case http.MethodGet:
		a.Verb = "get"
		if name == "" {
			a.Verb = "list"
			if w := r.URL.Query().Get("watch"); w == "true" || w == "1" {
				a.Verb = "watch"
			}
		}
	case http.MethodPost:
		a.Verb = "create"
	case http.MethodPatch:
		a.Verb = "patch"
	case http.MethodPut:
		a.Verb = "update"
	case http.MethodDelete:
		a.Verb = "delete"
	}
	return a, name
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

func refusal(w http.ResponseWriter, code int, reason, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(map[string]any{"apiVersion": "v1", "kind": "Status", "status": "Failure", "reason": reason, "message": msg, "code": code})
}

// methodCase is a call of a method and the function of cluster that
// says what it asks.
type methodCase struct {
	name string
	call func(ctx context.Context, c *Client) error
	want []cluster.Access
	// beyond: what the function says that no request shows
	beyond      []cluster.Access
	watchEvent  string
	refusePatch string
}

var (
	nodeResource      = cluster.Resource{Resource: "nodes", Kind: "Node"}
	configMapResource = cluster.Resource{Resource: "configmaps", Kind: "ConfigMap", Namespaced: true}
)

func TestReadsAskWhatClusterSays(t *testing.T) {
	runMethodCases(t, []methodCase{
		{name: "list", call: func(ctx context.Context, c *Client) error {
			_, err := c.List(ctx, cluster.ObjectQuery{Kind: "po", Namespace: "lab", Selector: "app=web"})
			return err
		}, want: cluster.ListAccess(cluster.Pods, "lab")},
		{name: "list cluster-scoped", call: func(ctx context.Context, c *Client) error {
			_, err := c.List(ctx, cluster.ObjectQuery{Kind: "Node", Name: "n1"})
			return err
		}, want: cluster.ListAccess(nodeResource, "")},
		{name: "wait", call: func(ctx context.Context, c *Client) error {
			n := 0
			_, err := c.Wait(ctx, cluster.ObjectQuery{Kind: "deploy", Namespace: "lab", Name: "web"}, func([]map[string]any) (bool, error) { n++; return n > 1, nil }, nil)
			return err
		}, want: cluster.WaitAccess(cluster.Deployments, "lab")},
	})
}

func TestChangesAskWhatClusterSays(t *testing.T) {
	apply := func(text string, ns string) func(ctx context.Context, c *Client) error {
		return func(ctx context.Context, c *Client) error {
			_, err := c.Apply(ctx, []cluster.ManifestSource{{Text: text, Label: "inline"}}, cluster.ApplyRequest{Namespace: ns})
			return err
		}
	}
	pods := cluster.Pods
	runMethodCases(t, []methodCase{
		{name: "apply", call: apply("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: lab}\n", ""),
			want: cluster.ApplyAccess(configMapResource, "lab"), beyond: configMapResource.Access("lab", "create")},
		{name: "apply a CRD", call: apply("apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: widgets.example.com}\n", ""),
			want: cluster.ApplyAccess(cluster.CustomResourceDefinitions, ""), beyond: cluster.CustomResourceDefinitions.Access("", "create")},
		{name: "apply a pod before its service account", call: apply("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n", "lab"),
			refusePatch: `pods "p" is forbidden: error looking up service account lab/default: serviceaccount "default" not found`,
			want:        cluster.ApplyAccess(pods, "lab"), beyond: pods.Access("lab", "create")},
		{name: "scale", call: func(ctx context.Context, c *Client) error {
			_, err := c.Scale(ctx, cluster.ObjectQuery{Kind: "Deployment", Namespace: "lab", Name: "web"}, 2)
			return err
		}, want: cluster.ScaleAccess(cluster.Deployments, "lab")},
		{name: "label by name", call: func(ctx context.Context, c *Client) error {
			_, err := c.Label(ctx, cluster.ObjectQuery{Kind: "Node", Name: "n1"}, cluster.LabelRequest{Set: map[string]string{"a": "b"}})
			return err
		}, want: cluster.LabelAccess(nodeResource, "", true)},
		{name: "label by selector", call: func(ctx context.Context, c *Client) error {
			_, err := c.Label(ctx, cluster.ObjectQuery{Kind: "Pod", Namespace: "lab", Selector: "app=web"}, cluster.LabelRequest{Remove: []string{"a"}})
			return err
		}, want: cluster.LabelAccess(pods, "lab", false)},
		{name: "delete by name", call: func(ctx context.Context, c *Client) error {
			_, err := c.Delete(ctx, cluster.ObjectQuery{Kind: "Pod", Namespace: "lab", Name: "web"}, cluster.DeleteRequest{})
			return err
		}, want: cluster.DeleteAccess(pods, "lab", true, false)},
		{name: "delete by selector and wait", watchEvent: "DELETED", call: func(ctx context.Context, c *Client) error {
			_, err := c.Delete(ctx, cluster.ObjectQuery{Kind: "Pod", Namespace: "lab", Selector: "app=web"}, cluster.DeleteRequest{Wait: true})
			return err
		}, want: cluster.DeleteAccess(pods, "lab", false, true)},
	})
}

func TestPodsAskWhatClusterSays(t *testing.T) {
	logs := func(target cluster.PodTarget) func(ctx context.Context, c *Client) error {
		return func(ctx context.Context, c *Client) error {
			_, err := c.Logs(ctx, target, cluster.LogRequest{})
			return err
		}
	}
	exec := func(target cluster.PodTarget) func(ctx context.Context, c *Client) error {
		return func(ctx context.Context, c *Client) error {
			_, err := c.Exec(ctx, target, cluster.ExecRequest{Argv: []string{"true"}})
			return err
		}
	}
	create := cluster.Pods.SubAccess("exec", "lab", "create")
	runMethodCases(t, []methodCase{
		{name: "logs of a pod", call: logs(cluster.PodTarget{Namespace: "lab", Pod: "web"}),
			want: cluster.LogsAccess(cluster.PodTarget{Pod: "web"}, "lab")},
		{name: "logs of a DaemonSet's pod", call: logs(cluster.PodTarget{Namespace: "kube-system", Pod: "ds/cilium", Container: "agent"}),
			want: cluster.LogsAccess(cluster.PodTarget{Pod: "ds/cilium"}, "kube-system")},
		{name: "logs by selector", call: logs(cluster.PodTarget{Namespace: "lab", Selector: "app=web"}),
			want: cluster.LogsAccess(cluster.PodTarget{Selector: "app=web"}, "lab")},
		{name: "exec in a Service's pod, its default container", call: exec(cluster.PodTarget{Namespace: "lab", Pod: "svc/web"}),
			want: cluster.ExecAccess(cluster.PodTarget{Pod: "svc/web"}, "lab"), beyond: create},
		{name: "exec in a container", call: exec(cluster.PodTarget{Namespace: "lab", Pod: "web", Container: "main"}),
			want: cluster.ExecAccess(cluster.PodTarget{Pod: "web", Container: "main"}, "lab"), beyond: create},
		{name: "exec streamed from a DaemonSet's pod", call: func(ctx context.Context, c *Client) error {
			_, err := c.Stream(ctx, cluster.PodTarget{Namespace: "kube-system", Pod: "ds/cilium", Container: "cilium-agent"}, cluster.StreamRequest{Argv: []string{"cilium-dbg", "monitor"}})
			return err
		}, want: cluster.ExecAccess(cluster.PodTarget{Pod: "ds/cilium", Container: "cilium-agent"}, "kube-system"), beyond: cluster.Pods.SubAccess("exec", "kube-system", "create")},
	})
}

// runMethodCases makes each call against a fake API server and compares
// the requests it recorded, with what no request shows, with the
// function's permissions.
func runMethodCases(t *testing.T, cases []methodCase) {
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := &fakeAPI{t: t, watchEvent: c.watchEvent, refusePatch: c.refusePatch}
			srv := httptest.NewServer(f)
			defer srv.Close()
			client, err := NewFromConfig(&rest.Config{Host: srv.URL}, ConnectOptions{})
			if err != nil {
				t.Fatal(err)
			}
			client.Namespace = "lab"
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			err = c.call(ctx, client)
			if strings.HasPrefix(c.name, "exec") {
				if err == nil || !strings.Contains(err.Error(), "Forbidden") {
					t.Fatalf("the fake refuses every exec; got %v", err)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			f.mu.Lock()
			got := set(f.got)
			f.mu.Unlock()
			if want := set(c.want); !slices.Equal(set(append(got, c.beyond...)), want) {
				t.Errorf("requests %v\nbeyond them %v\ncluster says %v", got, c.beyond, want)
			}
		})
	}
}

// set is the permissions without repeats, sorted.
func set(as []cluster.Access) []cluster.Access {
	out := slices.Clone(as)
	slices.SortFunc(out, func(a, b cluster.Access) int { return strings.Compare(fmt.Sprint(a), fmt.Sprint(b)) })
	return slices.Compact(out)
}

// Denied asks one SelfSubjectAccessReview per permission, with its
// attributes, and returns those the server refuses in the order asked;
// a review the server does not answer is an error.
func TestDenied(t *testing.T) {
	var mu sync.Mutex
	var asked []map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews" {
			t.Errorf("%s %s", r.Method, r.URL.Path)
		}
		var review map[string]any
		json.NewDecoder(r.Body).Decode(&review)
		attrs := review["spec"].(map[string]any)["resourceAttributes"].(map[string]any)
		mu.Lock()
		asked = append(asked, attrs)
		mu.Unlock()
		if attrs["resource"] == "secrets" {
			refusal(w, http.StatusInternalServerError, "InternalError", "etcd is gone")
			return
		}
		review["status"] = map[string]any{"allowed": attrs["verb"] != "create"}
		writeJSON(w, review)
	}))
	defer srv.Close()
	c, err := NewFromConfig(&rest.Config{Host: srv.URL}, ConnectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := append(cluster.ExecAccess(cluster.PodTarget{Pod: "web"}, "lab"), cluster.ApplyAccess(cluster.CustomResourceDefinitions, "")...)
	denied, err := c.Denied(context.Background(), want)
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(denied); got != "[create pods/exec (namespace lab) create customresourcedefinitions.apiextensions.k8s.io (cluster-wide)]" {
		t.Errorf("denied %s", got)
	}
	if len(asked) != len(want) {
		t.Errorf("asked %d reviews, want %d", len(asked), len(want))
	}
	for _, a := range asked {
		if a["subresource"] == "exec" && (a["namespace"] != "lab" || a["group"] != "" || a["resource"] != "pods") {
			t.Errorf("exec's review asks %v", a)
		}
		if a["resource"] == "customresourcedefinitions" && (a["namespace"] != nil || a["group"] != "apiextensions.k8s.io") {
			t.Errorf("a cluster-wide review asks %v", a)
		}
	}
	_, err = c.Denied(context.Background(), append(want, cluster.Access{Verb: "get", Resource: "secrets", Namespace: "lab"}))
	if err == nil || !strings.Contains(err.Error(), "get secrets (namespace lab)") || !strings.Contains(err.Error(), "etcd is gone") {
		t.Errorf("an unanswered review: %v", err)
	}
}
