package kube

import (
	"context"
	"os"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// capturedResources is the test cluster's aggregated discovery (Kubernetes
// 1.36.3 with Cilium 1.20.1's CRDs), captured in testdata/discovery.
func capturedResources(t *testing.T) []apiResource {
	t.Helper()
	var all []apiResource
	for _, f := range []string{"testdata/discovery/api.json", "testdata/discovery/apis.json"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		res, err := parseAggregated(b)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		all = append(all, res...)
	}
	return all
}

func TestResolveOnCapturedDiscovery(t *testing.T) {
	m := newRESTMapper(func(context.Context) ([]apiResource, error) { return capturedResources(t), nil })
	gvr := func(g, v, r string) schema.GroupVersionResource {
		return schema.GroupVersionResource{Group: g, Version: v, Resource: r}
	}
	tests := []struct {
		apiVersion, kind string
		want             schema.GroupVersionResource
		wantKind         string
		namespaced       bool
	}{
		{"", "pods", gvr("", "v1", "pods"), "Pod", true},
		{"", "pod", gvr("", "v1", "pods"), "Pod", true},
		{"", "po", gvr("", "v1", "pods"), "Pod", true},
		{"", "Pod", gvr("", "v1", "pods"), "Pod", true},
		{"v1", "Pod", gvr("", "v1", "pods"), "Pod", true},
		{"", "deploy", gvr("apps", "v1", "deployments"), "Deployment", true},
		{"", "Deployment", gvr("apps", "v1", "deployments"), "Deployment", true},
		{"", "deployments.apps", gvr("apps", "v1", "deployments"), "Deployment", true},
		{"apps/v1", "Deployment", gvr("apps", "v1", "deployments"), "Deployment", true},
		{"", "ds", gvr("apps", "v1", "daemonsets"), "DaemonSet", true},
		{"", "svc", gvr("", "v1", "services"), "Service", true},
		{"", "no", gvr("", "v1", "nodes"), "Node", false},
		{"", "ns", gvr("", "v1", "namespaces"), "Namespace", false},
		// core's events come before events.k8s.io's, as with kubectl
		{"", "events", gvr("", "v1", "events"), "Event", true},
		{"", "events.events.k8s.io", gvr("events.k8s.io", "v1", "events"), "Event", true},
		{"", "endpointslices", gvr("discovery.k8s.io", "v1", "endpointslices"), "EndpointSlice", true},
		{"", "crd", gvr("apiextensions.k8s.io", "v1", "customresourcedefinitions"), "CustomResourceDefinition", false},
		// Cilium's CRDs
		{"", "cep", gvr("cilium.io", "v2", "ciliumendpoints"), "CiliumEndpoint", true},
		{"", "CiliumEndpoint", gvr("cilium.io", "v2", "ciliumendpoints"), "CiliumEndpoint", true},
		{"cilium.io/v2", "CiliumNode", gvr("cilium.io", "v2", "ciliumnodes"), "CiliumNode", false},
	}
	for _, tt := range tests {
		rm, err := m.resolve(context.Background(), tt.apiVersion, tt.kind)
		if err != nil {
			t.Errorf("%s %s: %v", tt.apiVersion, tt.kind, err)
			continue
		}
		if rm.Resource != tt.want || rm.GroupVersionKind.Kind != tt.wantKind || (rm.Scope.Name() == meta.RESTScopeNameNamespace) != tt.namespaced {
			t.Errorf("%s %s: got %v %v %s", tt.apiVersion, tt.kind, rm.Resource, rm.GroupVersionKind, rm.Scope.Name())
		}
	}

	for _, bad := range []struct{ apiVersion, kind, want string }{
		{"", "nope", `the server doesn't have a resource type "nope"`},
		{"", "deployments.nope.io", `the server doesn't have a resource type "deployments" in group "nope.io"`},
		{"nope.labrun.io/v1", "Nope", `no matches for kind "Nope" in version "nope.labrun.io/v1"`},
		{"apps/v9", "Deployment", `no matches for kind "Deployment" in version "apps/v9"`},
	} {
		_, err := m.resolve(context.Background(), bad.apiVersion, bad.kind)
		if err == nil || !meta.IsNoMatchError(err) || err.Error() != bad.want {
			t.Errorf("%s %s: got %v, want a no-match error %q", bad.apiVersion, bad.kind, err, bad.want)
		}
	}
}

func TestResolveDiscoversAgainOnMiss(t *testing.T) {
	all := capturedResources(t)
	var withoutCilium []apiResource
	for _, r := range all {
		if r.gvr.Group != "cilium.io" {
			withoutCilium = append(withoutCilium, r)
		}
	}
	calls := 0
	m := newRESTMapper(func(context.Context) ([]apiResource, error) {
		calls++
		if calls == 1 {
			return withoutCilium, nil // before the CRDs were installed
		}
		return all, nil
	})
	ctx := context.Background()
	if _, err := m.resolve(ctx, "", "deploy"); err != nil || calls != 1 {
		t.Fatalf("deploy: %v after %d discoveries", err, calls)
	}
	rm, err := m.resolve(ctx, "", "cep")
	if err != nil || rm.Resource.Resource != "ciliumendpoints" || calls != 2 {
		t.Fatalf("cep: %v %v after %d discoveries, want 2", rm, err, calls)
	}
	for _, k := range []string{"cep", "po", "Deployment"} {
		if _, err := m.resolve(ctx, "", k); err != nil {
			t.Fatal(err)
		}
	}
	if calls != 2 {
		t.Errorf("known kinds discovered again: %d discoveries", calls)
	}
}

func TestResolveRememberedCRD(t *testing.T) {
	m := newRESTMapper(func(context.Context) ([]apiResource, error) { return capturedResources(t), nil })
	m.rememberCRD("labrun.io", "Widget", "widgets", []string{"v1beta1", "v1"}, true)
	for _, q := range []struct{ apiVersion, kind, version string }{
		{"labrun.io/v1", "Widget", "v1"},
		{"", "widgets", "v1beta1"},
		{"", "widget", "v1beta1"},
		{"", "widgets.labrun.io", "v1beta1"},
	} {
		rm, err := m.resolve(context.Background(), q.apiVersion, q.kind)
		if err != nil || rm.Resource != (schema.GroupVersionResource{Group: "labrun.io", Version: q.version, Resource: "widgets"}) {
			t.Errorf("%s %s: %v %v", q.apiVersion, q.kind, rm, err)
		}
	}
	if _, err := m.resolve(context.Background(), "labrun.io/v2", "Widget"); !meta.IsNoMatchError(err) {
		t.Errorf("unserved version: %v", err)
	}
}

func TestParseAggregatedSkipsStaleVersions(t *testing.T) {
	res, err := parseAggregated([]byte(`{"kind":"APIGroupDiscoveryList","items":[{"metadata":{"name":"metrics.k8s.io"},"versions":[
		{"version":"v1beta1","freshness":"Stale","resources":[{"resource":"pods","responseKind":{"kind":"PodMetrics"},"scope":"Namespaced"}]},
		{"version":"v1alpha1","freshness":"Current","resources":[
			{"resource":"nodes","responseKind":{"kind":"NodeMetrics"},"scope":"Cluster","singularResource":"node"},
			{"resource":"nokind","scope":"Cluster"}]}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	want := apiResource{gvr: schema.GroupVersionResource{Group: "metrics.k8s.io", Version: "v1alpha1", Resource: "nodes"}, kind: "NodeMetrics", singular: "node"}
	if len(res) != 1 || res[0].gvr != want.gvr || res[0].kind != want.kind || res[0].singular != want.singular || res[0].namespaced {
		t.Errorf("got %+v, want only %+v", res, want)
	}
	if _, err := parseAggregated([]byte(`{"items": 3}`)); err == nil {
		t.Error("a malformed document parsed")
	}
}
