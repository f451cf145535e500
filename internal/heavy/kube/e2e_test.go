//go:build e2e

// End-to-end tests against a real cluster: the testbed (make testbed-up),
// reached through the kubeconfig in LABRUN_KUBECONFIG (default
// /var/lib/labrun-testbed/kubeconfig). Each test works in its own
// namespace and deletes it afterwards. Test pods use the testbed's local
// images (there is no registry) with imagePullPolicy IfNotPresent.
//
//	go test -tags e2e ./kube/...
//	go test -tags e2e -run '^$' -bench Exec ./kube/
package kube

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/labrun/labrun/internal/leaf/k8sobj"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/remotecommand"

	"github.com/labrun/labrun/internal/boundary/cluster"
)

// Local images of the testbed (testbed/lib/common.sh).
const (
	pythonImage = "labrun.local/python:3.11.2"
	curlImage   = "labrun.local/curl:7.88.1"
)

const defaultTestKubeconfig = "/var/lib/labrun-testbed/kubeconfig"

var (
	e2eOnce   sync.Once
	e2eShared *Client
	e2eErr    error
)

// e2eClient connects to the testbed. A missing kubeconfig or a cluster that
// does not answer fails the test: skipping would hide that nothing ran.
func e2eClient(t testing.TB) *Client {
	t.Helper()
	e2eOnce.Do(func() {
		path := os.Getenv("LABRUN_KUBECONFIG")
		if path == "" {
			path = defaultTestKubeconfig
		}
		if _, err := os.Stat(path); err != nil {
			e2eErr = fmt.Errorf("kubeconfig %s: %v; the e2e tests need the testbed cluster: run `make testbed-up` (or set LABRUN_KUBECONFIG)", path, err)
			return
		}
		c, err := Connect(ConnectOptions{Kubeconfig: path})
		if err != nil {
			e2eErr = fmt.Errorf("%v; run `make testbed-up`", err)
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if _, err := c.ServerVersion(ctx); err != nil {
			e2eErr = fmt.Errorf("cluster at %s does not answer: %v; run `make testbed-up`", c.Host, err)
			return
		}
		e2eShared = c
	})
	if e2eErr != nil {
		t.Fatal(e2eErr)
	}
	return e2eShared
}

func randSuffix() string {
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

var nonDNS = regexp.MustCompile(`[^a-z0-9-]+`)

// testNamespace creates a namespace for this test and deletes it at the end.
func testNamespace(t testing.TB, c *Client) string {
	t.Helper()
	name := strings.Trim(nonDNS.ReplaceAllString(strings.ToLower(strings.TrimPrefix(t.Name(), "TestE2E")), "-"), "-")
	if len(name) > 40 {
		name = name[:40]
	}
	ns := "e2e-" + name + "-" + randSuffix()
	applyText(t, c, "", fmt.Sprintf("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: %s\n", ns))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := c.Delete(ctx, cluster.ObjectQuery{APIVersion: "v1", Kind: "Namespace", Name: ns}, cluster.DeleteRequest{IgnoreNotFound: true}); err != nil {
			t.Errorf("cleanup: %v", err)
		}
	})
	return ns
}

func applyText(t testing.TB, c *Client, ns, text string) []cluster.AppliedObject {
	t.Helper()
	ms, err := DecodeText(t.Name(), []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := c.applyManifests(ctx, ms, cluster.ApplyRequest{Namespace: ns})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func ctxT(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// boxPod is a pod that sleeps, for exec and logs; script runs first.
func boxPod(name, script string) string {
	if script == "" {
		script = "true"
	}
	return fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: %s
  labels: {app: box}
spec:
  terminationGracePeriodSeconds: 0
  containers:
  - name: main
    image: %s
    imagePullPolicy: IfNotPresent
    command: ["sh", "-c", %q]
  - name: side
    image: %s
    imagePullPolicy: IfNotPresent
    command: ["sleep", "3600"]
`, name, pythonImage, script+"; exec sleep 3600", curlImage)
}

// rolledOut holds when the one object waited for exists and has completed
// its rollout.
func rolledOut(objs []map[string]any) (bool, error) {
	if len(objs) != 1 {
		return false, nil
	}
	return k8sobj.RolloutComplete(objs[0])
}

// readyPod applies a box pod and waits until it is Ready.
func readyPod(t testing.TB, c *Client, ns, name, script string) {
	t.Helper()
	applyText(t, c, ns, boxPod(name, script))
	if _, err := c.Wait(ctxT(t, 90*time.Second), cluster.ObjectQuery{APIVersion: "v1", Kind: "Pod", Namespace: ns, Name: name}, podsReady, nil); err != nil {
		t.Fatal(err)
	}
}

const webApp = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels: {app: web}
spec:
  replicas: 1
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      terminationGracePeriodSeconds: 0
      containers:
      - name: web
        image: ` + pythonImage + `
        imagePullPolicy: IfNotPresent
        command: ["python3", "-m", "http.server", "8080"]
        readinessProbe:
          tcpSocket: {port: 8080}
          periodSeconds: 1
---
apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  selector: {app: web}
  ports: [{port: 80, targetPort: 8080}]
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: cfg
data:
  k: v1
`

func TestE2EApplyGetScaleWaitDelete(t *testing.T) {
	c := e2eClient(t)
	ns := testNamespace(t, c)

	res := applyText(t, c, ns, webApp)
	if len(res) != 3 {
		t.Fatalf("%d results", len(res))
	}
	for _, r := range res {
		if r.Action != ActionCreated || r.Namespace != ns {
			t.Errorf("%s %s: action %s namespace %s, want created in %s", r.Kind, r.Name, r.Action, r.Namespace, ns)
		}
	}
	// Same manifests again: nothing changes, whatever the controllers
	// wrote into status meanwhile.
	for _, r := range applyText(t, c, ns, webApp) {
		if r.Action != ActionUnchanged {
			t.Errorf("re-apply %s %s: %s, want unchanged", r.Kind, r.Name, r.Action)
		}
	}
	res = applyText(t, c, ns, strings.Replace(webApp, "k: v1", "k: v2", 1))
	if res[2].Kind != "ConfigMap" || res[2].Action != ActionConfigured || res[0].Action != ActionUnchanged {
		t.Errorf("changed ConfigMap: %s %s, deployment %s", res[2].Kind, res[2].Action, res[0].Action)
	}

	svc, err := c.Get(ctxT(t, 10*time.Second), cluster.ObjectQuery{APIVersion: "v1", Kind: "Service", Namespace: ns, Name: "web"})
	if err != nil {
		t.Fatal(err)
	}
	if ip, _, _ := unstructured.NestedString(svc, "spec", "clusterIP"); ip == "" {
		t.Errorf("service has no spec.clusterIP: %v", svc)
	}

	if _, err := c.Wait(ctxT(t, 90*time.Second), cluster.ObjectQuery{Kind: "deploy", Namespace: ns, Name: "web"}, rolledOut, nil); err != nil {
		t.Fatal(err)
	}
	sr, err := c.Scale(ctxT(t, 10*time.Second), cluster.ObjectQuery{Kind: "deployment", Namespace: ns, Name: "web"}, 2)
	if err != nil {
		t.Fatal(err)
	}
	if sr.OldReplicas != 1 || sr.NewReplicas != 2 || sr.Kind != "Deployment" {
		t.Errorf("scale result %+v", sr)
	}
	if _, err := c.Wait(ctxT(t, 90*time.Second), cluster.ObjectQuery{APIVersion: "apps/v1", Kind: "Deployment", Namespace: ns, Name: "web"}, rolledOut, nil); err != nil {
		t.Fatal(err)
	}
	pods, err := c.List(ctxT(t, 10*time.Second), cluster.ObjectQuery{Kind: "pods", Namespace: ns, Selector: "app=web", FieldSelector: "status.phase=Running"})
	if err != nil {
		t.Fatal(err)
	}
	if len(pods) != 2 {
		t.Errorf("%d running web pods, want 2", len(pods))
	}
	eps, err := c.Wait(ctxT(t, 60*time.Second), cluster.ObjectQuery{APIVersion: "discovery.k8s.io/v1", Kind: "EndpointSlice", Namespace: ns, Selector: "kubernetes.io/service-name=web"},
		func(objs []map[string]any) (bool, error) { return len(k8sobj.ReadyAddresses(objs)) >= 2, nil }, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("web endpoints: %v", k8sobj.ReadyAddresses(eps))

	// Pod resolution on the real cluster: the workload's selector, Running
	// and Ready, on the node given.
	p, err := c.ResolvePod(ctxT(t, 10*time.Second), cluster.PodTarget{Namespace: ns, Pod: "deploy/web"})
	if err != nil {
		t.Fatal(err)
	}
	if !p.Ready || p.Phase != "Running" || p.DefaultContainer != "web" {
		t.Errorf("resolved %+v", p)
	}
	if _, err := c.ResolvePod(ctxT(t, 10*time.Second), cluster.PodTarget{Namespace: ns, Pod: "deploy/web", Node: p.Node}); err != nil {
		t.Errorf("resolve on node %s: %v", p.Node, err)
	}

	dr, err := c.Delete(ctxT(t, 60*time.Second), cluster.ObjectQuery{Kind: "deploy", Namespace: ns, Name: "web"}, cluster.DeleteRequest{Wait: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(dr) != 1 || !dr[0].Deleted || dr[0].Kind != "Deployment" || dr[0].Namespace != ns {
		t.Errorf("delete result %+v", dr)
	}
	_, err = c.Get(ctxT(t, 10*time.Second), cluster.ObjectQuery{Kind: "deploy", Namespace: ns, Name: "web"})
	if !IsNotFound(err) || !strings.Contains(err.Error(), `NotFound (404): deployments.apps "web" not found`) {
		t.Errorf("get after delete: %v", err)
	}
	// Deleted in the background, as kubectl deletes: the garbage collector
	// removes the pods afterwards.
	if _, err := c.Wait(ctxT(t, 60*time.Second), cluster.ObjectQuery{Kind: "Pod", Namespace: ns, Selector: "app=web"},
		func(objs []map[string]any) (bool, error) { return len(objs) == 0, nil }, nil); err != nil {
		t.Errorf("web pods after the Deployment was deleted: %v", err)
	}
	if dr, err := c.Delete(ctxT(t, 10*time.Second), cluster.ObjectQuery{Kind: "deploy", Namespace: ns, Name: "web"}, cluster.DeleteRequest{IgnoreNotFound: true}); err != nil || len(dr) != 1 || dr[0].Deleted {
		t.Errorf("delete missing with IgnoreNotFound: %+v %v", dr, err)
	}
	if _, err := c.Delete(ctxT(t, 10*time.Second), cluster.ObjectQuery{Kind: "deploy", Namespace: ns, Name: "web"}, cluster.DeleteRequest{}); !IsNotFound(err) {
		t.Errorf("delete missing: %v, want NotFound", err)
	}
	drs, err := c.Delete(ctxT(t, 10*time.Second), cluster.ObjectQuery{Kind: "ConfigMap", Namespace: ns, FieldSelector: "metadata.name=cfg"}, cluster.DeleteRequest{Wait: true})
	if err != nil || len(drs) != 1 || !drs[0].Deleted {
		t.Errorf("delete selected: %+v %v", drs, err)
	}
}

// A namespace and a pod in it in one apply, as labs write them: the pod's
// admission needs the namespace's default service account, which a
// controller creates a moment after the namespace.
func TestE2EApplyNamespaceAndPodTogether(t *testing.T) {
	c := e2eClient(t)
	ns := "e2e-together-" + randSuffix()
	t.Cleanup(func() {
		_, _ = c.Delete(context.Background(), cluster.ObjectQuery{APIVersion: "v1", Kind: "Namespace", Name: ns}, cluster.DeleteRequest{IgnoreNotFound: true})
	})
	res := applyText(t, c, "", "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: "+ns+"\n---\n"+
		strings.Replace(boxPod("box", ""), "metadata:\n", "metadata:\n  namespace: "+ns+"\n", 1))
	if len(res) != 2 || res[1].Kind != "Pod" || res[1].Namespace != ns || res[1].Action != ActionCreated {
		t.Fatalf("results %+v", res)
	}
}

// A wait started before its object exists follows it through the watch:
// it sees the object created in a state that does not satisfy it, does not
// end, and ends on the change that does. The wait's own progress calls
// order the test's changes (the watch starts at the list's resource
// version, so no change after the first call is missed). How quickly it
// reacts is measured by `make bench` (wait reaction).
func TestE2EWaitStartsBeforeObjectExists(t *testing.T) {
	c := e2eClient(t)
	ns := testNamespace(t, c)
	states := make(chan string, 16)
	type result struct {
		objs []map[string]any
		err  error
	}
	done := make(chan result, 1)
	go func() {
		objs, err := c.Wait(ctxT(t, 60*time.Second), cluster.ObjectQuery{Kind: "ConfigMap", Namespace: ns, Name: "late"}, func(objs []map[string]any) (bool, error) {
			return len(objs) == 1 && k8sobj.String(objs[0], "data", "ready") == "yes", nil
		}, func(objs []map[string]any) {
			state := "absent"
			if len(objs) == 1 {
				state = k8sobj.String(objs[0], "data", "ready")
			}
			states <- state
		})
		done <- result{objs, err}
	}()
	next := func(want string) {
		t.Helper()
		for s := range states {
			if s == want {
				return
			}
		}
	}
	next("absent")
	applyText(t, c, ns, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: late}\ndata: {ready: 'no'}\n")
	next("no")
	select {
	case r := <-done:
		t.Fatalf("wait ended on a state that does not satisfy it: %v %v", r.objs, r.err)
	default:
	}
	applyText(t, c, ns, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: late}\ndata: {ready: 'yes'}\n")
	r := <-done
	if r.err != nil {
		t.Fatal(r.err)
	}
	if len(r.objs) != 1 || k8sobj.String(r.objs[0], "data", "ready") != "yes" {
		t.Errorf("wait returned %v, want the ConfigMap with ready=yes", r.objs)
	}
}

// A wait that runs out of time names what it waited for, how long, and
// the last state it saw, with the reason the pod is not ready. The pod
// runs but its readiness probe never passes: a state that may still
// change, so the wait goes on until its time limit.
func TestE2EWaitTimeoutShowsLastState(t *testing.T) {
	c := e2eClient(t)
	ns := testNamespace(t, c)
	applyText(t, c, ns, `apiVersion: v1
kind: Pod
metadata: {name: stuck, labels: {app: stuck}}
spec:
  terminationGracePeriodSeconds: 0
  containers:
  - name: main
    image: `+curlImage+`
    imagePullPolicy: IfNotPresent
    command: [sleep, "3600"]
    readinessProbe: {exec: {command: ["false"]}, periodSeconds: 1}
`)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Second)
	defer cancel()
	_, err := c.Wait(ctx, cluster.ObjectQuery{APIVersion: "v1", Kind: "Pod", Namespace: ns, Selector: "app=stuck"}, podsReady, nil)
	var we *WaitError
	if !errors.As(err, &we) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v, want a *WaitError for the time limit", err)
	}
	t.Logf("timeout message: %v", err)
	if !regexp.MustCompile(`timed out after [0-9.]+m?s waiting for pods with labels app=stuck in namespace "` + ns + `"`).MatchString(err.Error()) {
		t.Errorf("message does not name the time waited and what for")
	}
	for _, w := range []string{"1 object(s): Pod " + ns + "/stuck", "ready=false"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("message does not contain %q", w)
		}
	}
	if !regexp.MustCompile(`[A-Za-z]+=False\([A-Za-z]+\)`).MatchString(err.Error()) {
		t.Errorf("message does not give a false condition with its reason")
	}
}

// TestE2EDiscoveryForms: the real API server answers the aggregated
// discovery request in that form, and the legacy documents name the same
// resources, which resolve to the same kinds.
func TestE2EDiscoveryForms(t *testing.T) {
	c := e2eClient(t)
	ctx := ctxT(t, 30*time.Second)
	rc := c.builtin.core()
	for _, q := range []struct {
		accept string
		want   bool
	}{{acceptAggregated, true}, {"application/json", false}} {
		if _, aggregated, err := getDiscovery(ctx, rc, "/apis", q.accept); err != nil || aggregated != q.want {
			t.Fatalf("Accept %s: aggregated=%v %v, want %v", q.accept, aggregated, err, q.want)
		}
	}
	key := func(r apiResource) string {
		return fmt.Sprintf("%s %s %s %v %v", r.gvr, r.kind, r.singular, r.shortNames, r.namespaced)
	}
	set := func(rs []apiResource) map[string]bool {
		out := map[string]bool{}
		for _, r := range rs {
			out[key(r)] = true
		}
		return out
	}
	diff := func(a, b map[string]bool) []string {
		var out []string
		for k := range a {
			if !b[k] {
				out = append(out, k)
			}
		}
		sort.Strings(out)
		return out
	}
	// Aggregated discovery is updated a moment after a CRD comes or goes
	// (another test package may be installing one), so the two forms are
	// compared until they agree, up to a deadline.
	var agg, legacy []apiResource
	var onlyAgg, onlyLegacy []string
	deadline := time.Now().Add(20 * time.Second)
	for {
		var err error
		if agg, err = discoverAccepting(rc, acceptAggregated)(ctx); err != nil {
			t.Fatal(err)
		}
		if legacy, err = discoverAccepting(rc, "application/json")(ctx); err != nil {
			t.Fatal(err)
		}
		onlyAgg, onlyLegacy = diff(set(agg), set(legacy)), diff(set(legacy), set(agg))
		if len(onlyAgg)+len(onlyLegacy) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("aggregated and legacy discovery still differ after 20s:\nonly in aggregated: %v\nonly in legacy: %v", onlyAgg, onlyLegacy)
		}
		time.Sleep(200 * time.Millisecond) // poll interval
	}
	a := set(agg)
	if len(a) < 50 || !a[key(apiResource{gvr: schema.GroupVersionResource{Version: "v1", Resource: "pods"}, kind: "Pod", singular: "pod", shortNames: []string{"po"}, namespaced: true})] {
		t.Errorf("discovery found %d resources, pods not among them as expected", len(a))
	}
	ia, il := newResourceIndex(agg), newResourceIndex(legacy)
	for name := range ia.byName {
		ka, _ := ia.kindFor(schema.GroupResource{Resource: name})
		kl, _ := il.kindFor(schema.GroupResource{Resource: name})
		if ka != kl {
			t.Errorf("%s: aggregated resolves %v, legacy %v", name, ka, kl)
		}
	}
}

func TestE2ECRDApplyThenUse(t *testing.T) {
	c := e2eClient(t)
	ns := testNamespace(t, c)
	group := "e2e" + randSuffix() + ".labrun.io"
	crdName := "widgets." + group
	t.Cleanup(func() {
		_, _ = c.Delete(context.Background(), cluster.ObjectQuery{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition", Name: crdName}, cluster.DeleteRequest{IgnoreNotFound: true})
	})
	// A wait on the kind, started before its CRD exists, ends once the
	// object is there.
	waited := make(chan error, 1)
	go func() {
		_, err := c.Wait(ctxT(t, 30*time.Second), cluster.ObjectQuery{APIVersion: group + "/v1", Kind: "Widget", Namespace: ns, Name: "w1"},
			func(objs []map[string]any) (bool, error) { return len(objs) == 1, nil }, nil)
		waited <- err
	}()
	time.Sleep(300 * time.Millisecond)
	// The CRD and an object of its kind in the same apply: the object must
	// be applied only once the CRD is Established, and its kind resolved
	// at once.
	res := applyText(t, c, ns, fmt.Sprintf(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: %[1]s
spec:
  group: %[2]s
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget, shortNames: [wdg]}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        x-kubernetes-preserve-unknown-fields: true
---
apiVersion: %[2]s/v1
kind: Widget
metadata: {name: w1}
spec: {size: 3}
`, crdName, group))
	if len(res) != 2 || res[0].Action != ActionCreated || res[1].Action != ActionCreated {
		t.Fatalf("results %+v", res)
	}
	if !k8sobj.ConditionTrue(res[0].Object, "Established") {
		t.Errorf("CRD result is not Established: %v", res[0].Object["status"])
	}
	if err := <-waited; err != nil {
		t.Errorf("wait started before the CRD existed: %v", err)
	}
	w, err := c.Get(ctxT(t, 10*time.Second), cluster.ObjectQuery{APIVersion: group + "/v1", Kind: "Widget", Namespace: ns, Name: "w1"})
	if err != nil {
		t.Fatal(err)
	}
	if k8sobj.Int(w, "spec", "size") != 3 {
		t.Errorf("widget %v", w)
	}
	// By plural and short name through discovery too.
	for _, kind := range []string{"widgets", "wdg", "widgets." + group} {
		objs, err := c.List(ctxT(t, 10*time.Second), cluster.ObjectQuery{Kind: kind, Namespace: ns})
		if err != nil || len(objs) != 1 {
			t.Errorf("list %s: %d %v", kind, len(objs), err)
		}
	}
}

func TestE2ERBACDeniedMessage(t *testing.T) {
	c := e2eClient(t)
	ns := testNamespace(t, c)
	applyText(t, c, ns, `apiVersion: v1
kind: ServiceAccount
metadata: {name: viewer}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: pod-reader}
rules:
- apiGroups: [""]
  resources: [pods]
  verbs: [get, list, watch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: viewer-reads-pods}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: pod-reader}
subjects:
- {kind: ServiceAccount, name: viewer, namespace: `+ns+`}
`)
	readyPod(t, c, ns, "box", "")
	exp := int64(600)
	tr, err := typed(t, c).CoreV1().ServiceAccounts(ns).CreateToken(ctxT(t, 10*time.Second), "viewer",
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &exp}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	token := tr.Status.Token

	// A kubeconfig with only that token, as a lab user would have.
	cfg := c.Config()
	ca := cfg.CAData
	if len(ca) == 0 && cfg.CAFile != "" {
		if ca, err = os.ReadFile(cfg.CAFile); err != nil {
			t.Fatal(err)
		}
	}
	kubeconfig := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: c
  cluster:
    server: %s
    certificate-authority-data: %s
users:
- name: viewer
  user:
    token: %s
contexts:
- name: viewer
  context: {cluster: c, user: viewer, namespace: %s}
current-context: viewer
`, cfg.Host, b64(ca), token, ns)
	path := filepath.Join(t.TempDir(), "viewer.kubeconfig")
	if err := os.WriteFile(path, []byte(kubeconfig), 0o600); err != nil {
		t.Fatal(err)
	}
	vc, err := Connect(ConnectOptions{Kubeconfig: path})
	if err != nil {
		t.Fatal(err)
	}
	if pods, err := vc.List(ctxT(t, 10*time.Second), cluster.ObjectQuery{Kind: "Pod"}); err != nil || len(pods) != 1 {
		t.Fatalf("allowed list: %d pods, %v", len(pods), err)
	}
	user := "system:serviceaccount:" + ns + ":viewer"
	checks := []struct {
		name string
		call func() error
		want string
	}{
		{"list secrets", func() error {
			_, err := vc.List(ctxT(t, 10*time.Second), cluster.ObjectQuery{Kind: "Secret"})
			return err
		}, fmt.Sprintf(`list secrets in namespace %q: Forbidden (403): secrets is forbidden: User %q cannot list resource "secrets" in API group "" in the namespace %q`, ns, user, ns)},
		{"apply a configmap", func() error {
			ms, _ := DecodeText("inline", []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n"))
			_, err := vc.applyManifests(ctxT(t, 10*time.Second), ms, cluster.ApplyRequest{})
			return err
		}, fmt.Sprintf(`Forbidden (403): configmaps "x" is forbidden: User %q cannot get resource "configmaps" in API group "" in the namespace %q`, user, ns)},
		{"exec", func() error {
			_, err := vc.execPod(ctxT(t, 20*time.Second), execOptions{Pod: "box", Container: "main", Command: []string{"true"}})
			return err
		}, fmt.Sprintf(`Forbidden (403): pods "box" is forbidden: User %q cannot get resource "pods/exec" in API group "" in the namespace %q`, user, ns)},
		{"delete a pod", func() error {
			_, err := vc.Delete(ctxT(t, 10*time.Second), cluster.ObjectQuery{Kind: "Pod", Name: "box"}, cluster.DeleteRequest{})
			return err
		}, fmt.Sprintf(`delete Pod "box" in namespace %q: Forbidden (403): pods "box" is forbidden: User %q cannot delete resource "pods"`, ns, user)},
	}
	for _, ck := range checks {
		err := ck.call()
		t.Logf("%s: %v", ck.name, err)
		if err == nil || !strings.Contains(err.Error(), ck.want) {
			t.Errorf("%s:\n got  %v\n want ...%s...", ck.name, err, ck.want)
		}
		if err != nil && (strings.Contains(err.Error(), token) || strings.Contains(err.Error(), token[:20])) {
			t.Errorf("%s: error leaks the token", ck.name)
		}
		if err != nil && !apierrors.IsForbidden(err) {
			t.Errorf("%s: apierrors.IsForbidden is false for %T", ck.name, err)
		}
	}
}

func TestE2EConflictAndInvalid(t *testing.T) {
	c := e2eClient(t)
	ns := testNamespace(t, c)
	// Another manager owns data.k; labrun changing it is a conflict that
	// names that manager, and Force takes the field over.
	other := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "owned", "namespace": ns},
		"data":     map[string]any{"k": "theirs"},
	}}
	if _, err := c.Dynamic().Resource(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}).Namespace(ns).
		Apply(ctxT(t, 10*time.Second), "owned", other, metav1.ApplyOptions{FieldManager: "someone-else"}); err != nil {
		t.Fatal(err)
	}
	ms, _ := DecodeText("conflict.yaml", []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: owned}\ndata: {k: ours}\n"))
	_, err := c.applyManifests(ctxT(t, 10*time.Second), ms, cluster.ApplyRequest{Namespace: ns})
	t.Logf("conflict: %v", err)
	var ae *APIError
	if !errors.As(err, &ae) || ae.Code != 409 || ae.Reason != "Conflict" {
		t.Fatalf("got %v, want a 409 Conflict APIError", err)
	}
	for _, w := range []string{"conflict.yaml document 1 (line 1): apply ConfigMap \"owned\" in namespace", "Conflict (409): Apply failed with 1 conflict: conflict with \"someone-else\"", ".data.k"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("conflict message does not contain %q", w)
		}
	}
	res, err := c.applyManifests(ctxT(t, 10*time.Second), ms, cluster.ApplyRequest{Namespace: ns, Force: true})
	if err != nil || res[0].Action != ActionConfigured {
		t.Errorf("forced apply: %+v %v", res, err)
	}

	// 422: the server's field-level message comes through.
	ms, _ = DecodeText("invalid.yaml", []byte(`apiVersion: apps/v1
kind: Deployment
metadata: {name: bad}
spec:
  replicas: -1
  selector: {matchLabels: {app: bad}}
  template:
    metadata: {labels: {app: bad}}
    spec: {containers: [{name: c, image: `+pythonImage+`}]}
`))
	_, err = c.applyManifests(ctxT(t, 10*time.Second), ms, cluster.ApplyRequest{Namespace: ns})
	t.Logf("invalid: %v", err)
	if !errors.As(err, &ae) || ae.Code != 422 || !apierrors.IsInvalid(err) ||
		!strings.Contains(err.Error(), `Invalid (422): Deployment.apps "bad" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0`) {
		t.Errorf("got %v, want the 422 message", err)
	}
}

// A partial object applied under another field manager changes only its
// own fields: the labrun-owned rest of the object stays, and both managers
// are recorded. This is how a playbook restarts a rollout.
func TestE2EApplyPartialUnderOtherManager(t *testing.T) {
	c := e2eClient(t)
	ns := testNamespace(t, c)
	full, _ := DecodeText("full.yaml", []byte(`apiVersion: v1
kind: ConfigMap
metadata: {name: shared}
data: {a: "1", b: "2"}
`))
	if _, err := c.applyManifests(ctxT(t, 10*time.Second), full, cluster.ApplyRequest{Namespace: ns}); err != nil {
		t.Fatal(err)
	}
	partial, _ := DecodeText("partial.yaml", []byte(`apiVersion: v1
kind: ConfigMap
metadata: {name: shared, annotations: {example.labrun/restarted: "yes"}}
data: {c: "3"}
`))
	res, err := c.applyManifests(ctxT(t, 10*time.Second), partial, cluster.ApplyRequest{Namespace: ns, FieldManager: "labrun-restart"})
	if err != nil {
		t.Fatal(err)
	}
	if res[0].Action != ActionConfigured {
		t.Errorf("action = %s, want configured", res[0].Action)
	}
	obj := res[0].Object
	data, _ := obj["data"].(map[string]any)
	if data["a"] != "1" || data["b"] != "2" || data["c"] != "3" {
		t.Errorf("data = %v, want a, b kept and c added", data)
	}
	var managers []string
	for _, mf := range obj["metadata"].(map[string]any)["managedFields"].([]any) {
		m := mf.(map[string]any)
		if m["operation"] == "Apply" {
			managers = append(managers, m["manager"].(string))
		}
	}
	slices.Sort(managers)
	if !slices.Equal(managers, []string{"labrun", "labrun-restart"}) {
		t.Errorf("apply managers = %v, want labrun and labrun-restart", managers)
	}
	// The same partial apply under labrun itself would take a and b away:
	// labrun's own apply declares the whole set of fields it owns.
	res, err = c.applyManifests(ctxT(t, 10*time.Second), partial, cluster.ApplyRequest{Namespace: ns})
	if err != nil {
		t.Fatal(err)
	}
	data, _ = res[0].Object["data"].(map[string]any)
	if _, kept := data["a"]; kept {
		t.Errorf("data = %v: labrun's partial apply should have removed a", data)
	}
}

func TestE2EExec(t *testing.T) {
	c := e2eClient(t)
	ns := testNamespace(t, c)
	readyPod(t, c, ns, "box", "")
	run := func(o execOptions) execRun {
		t.Helper()
		o.Namespace, o.Pod = ns, "box"
		r, err := c.execPod(ctxT(t, 30*time.Second), o)
		if err != nil {
			t.Fatalf("exec %q: %v", o.Command, err)
		}
		return r
	}

	// Through cluster.Cluster, as the exec action runs it: the pod
	// resolved by name, its default container, stdin given as text.
	text := "abc"
	er, err := c.Exec(ctxT(t, 30*time.Second), cluster.PodTarget{Namespace: ns, Pod: "box"}, cluster.ExecRequest{Argv: []string{"cat"}, Stdin: &text})
	if err != nil || er.Stdout != "abc" || er.ExitCode != 0 || er.Namespace != ns || er.Pod != "box" || er.Container != "main" || !slices.Equal(er.Argv, []string{"cat"}) {
		t.Errorf("Exec: %+v %v", er, err)
	}

	r := run(execOptions{Command: []string{"echo", "hello"}})
	if r.Stdout != "hello\n" || r.Stderr != "" || r.ExitCode != 0 || r.Container != "main" || r.Transport != "websocket" || r.Attempts != 1 {
		t.Errorf("echo: %+v", r)
	}
	r = run(execOptions{Command: []string{"sh", "-c", "echo out; echo err >&2; exit 7"}})
	if r.Stdout != "out\n" || r.Stderr != "err\n" || r.ExitCode != 7 {
		t.Errorf("exit 7: %+v", r)
	}
	r = run(execOptions{Command: []string{"false"}})
	if r.ExitCode != 1 {
		t.Errorf("false: %+v", r)
	}
	r = run(execOptions{Command: []string{"sh", "-c", "exit 255"}})
	if r.ExitCode != 255 {
		t.Errorf("exit 255: %+v", r)
	}
	r = run(execOptions{Container: "side", Command: []string{"curl", "--version"}})
	if r.ExitCode != 0 || !strings.HasPrefix(r.Stdout, "curl 7.88.1") {
		t.Errorf("side container: %+v", r)
	}

	// stdin: binary-safe, closed at the end (cat would otherwise hang).
	in := []byte("line one\nzero byte:\x00 high:\xff end")
	r = run(execOptions{Command: []string{"cat"}, Stdin: in})
	if r.Stdout != string(in) || r.ExitCode != 0 {
		t.Errorf("cat stdin: %q", r.Stdout)
	}
	big := make([]byte, 3<<20)
	for i := range big {
		big[i] = byte(i)
	}
	r = run(execOptions{Command: []string{"sh", "-c", "wc -c"}, Stdin: big})
	if strings.TrimSpace(r.Stdout) != fmt.Sprint(len(big)) {
		t.Errorf("wc -c of 3 MiB: %q", r.Stdout)
	}
	r = run(execOptions{Command: []string{"cat"}, Stdin: []byte{}})
	if r.Stdout != "" || r.ExitCode != 0 {
		t.Errorf("empty stdin: %+v", r)
	}
	// Large output.
	r = run(execOptions{Command: []string{"head", "-c", "5000000", "/dev/zero"}})
	if len(r.Stdout) != 5000000 {
		t.Errorf("large output: %d bytes", len(r.Stdout))
	}

	// A program that does not exist: the container runtime refuses to
	// start it, and that answer is the error, as kubectl shows it (no exit
	// code: nothing ran).
	r2, err := c.execPod(ctxT(t, 30*time.Second), execOptions{Namespace: ns, Pod: "box", Command: []string{"no-such-program"}})
	if err == nil || !strings.Contains(err.Error(), `exec: "no-such-program": executable file not found in $PATH`) ||
		!strings.Contains(err.Error(), `in container "main" of pod "box"`) || r2.Stdout != "" {
		t.Errorf("missing program: exit %d stdout %q, error %v; want the runtime's executable-not-found error naming the container", r2.ExitCode, r2.Stdout, err)
	}

	// Errors: no such pod, no such container.
	_, err = c.execPod(ctxT(t, 30*time.Second), execOptions{Namespace: ns, Pod: "nope", Command: []string{"true"}})
	if !IsNotFound(err) || !strings.Contains(err.Error(), `NotFound (404): pods "nope" not found`) {
		t.Errorf("missing pod: %v", err)
	}
	_, err = c.execPod(ctxT(t, 30*time.Second), execOptions{Namespace: ns, Pod: "box", Container: "nope", Command: []string{"true"}})
	t.Logf("missing container: %v", err)
	if err == nil || !strings.Contains(err.Error(), "nope") {
		t.Errorf("missing container: %v", err)
	}
}

func TestE2EExecSessionMatchesSeparateExec(t *testing.T) {
	c := e2eClient(t)
	ns := testNamespace(t, c)
	readyPod(t, c, ns, "box", "")
	commands := [][]string{
		{"echo", "hello"},
		{"sh", "-c", "echo out; echo err >&2; printf tail; exit 3"},
		{"printf", "[%s]\n", "it's", "$(id)", "`id`", "a  b", "*", "new\nline", "", `\`, "$HOME"},
		{"echo", "-n", "x"},
		{"cat"},
		{"false"},
		{"ls", "/"},
		{"head", "-c", "1000000", "/dev/zero"},
		{"sh", "-c", "kill -TERM $$"},
		{"no-such-program"},
		{"/bin/nope"},
	}
	for _, argv := range commands {
		sep, errSep := c.execPod(ctxT(t, 30*time.Second), execOptions{Namespace: ns, Pod: "box", Command: argv})
		ses, errSes := c.execPod(ctxT(t, 30*time.Second), execOptions{Namespace: ns, Pod: "box", Command: argv, Reuse: true})
		if errText(errSep) != errText(errSes) || sep.Stdout != ses.Stdout || sep.Stderr != ses.Stderr || sep.ExitCode != ses.ExitCode {
			t.Errorf("%q differs:\n exec    %q %q %d %v\n session %q %q %d %v", argv,
				trunc([]byte(sep.Stdout)), sep.Stderr, sep.ExitCode, errSep, trunc([]byte(ses.Stdout)), ses.Stderr, ses.ExitCode, errSes)
		}
		t.Logf("%q: exec %s via %s, session %s via %s", argv, sep.Duration.Round(time.Millisecond), sep.Transport, ses.Duration.Round(time.Millisecond), ses.Transport)
	}
	// The environment differs only by what the shell exports itself.
	sep, _ := c.execPod(ctxT(t, 30*time.Second), execOptions{Namespace: ns, Pod: "box", Command: []string{"env"}})
	ses, _ := c.execPod(ctxT(t, 30*time.Second), execOptions{Namespace: ns, Pod: "box", Command: []string{"env"}, Reuse: true})
	if ses.Transport != "session" {
		t.Errorf("env ran via %s, want session", ses.Transport)
	}
	// Same variables and values (the order is the shell's, documented).
	if d := lineDiff(sep.Stdout, ses.Stdout); d != "none" {
		t.Errorf("environment differs: %s", d)
	}

	// Close ends the sessions; the next command opens a new one.
	c.Close()
	r, err := c.execPod(ctxT(t, 30*time.Second), execOptions{Namespace: ns, Pod: "box", Command: []string{"echo", "again"}, Reuse: true})
	if err != nil || r.Stdout != "again\n" || r.Transport != "session" {
		t.Errorf("after Close: %+v %v", r, err)
	}
	// A session whose pod is deleted while it is idle dies with it: the
	// next command must find it dead and give the pod's absence as its
	// error, never an answer from the old shell.
	if _, err := c.Delete(ctxT(t, 60*time.Second), cluster.ObjectQuery{Kind: "Pod", Namespace: ns, Name: "box"}, cluster.DeleteRequest{Wait: true}); err != nil {
		t.Fatal(err)
	}
	r, err = c.execPod(ctxT(t, 30*time.Second), execOptions{Namespace: ns, Pod: "box", Command: []string{"echo", "stale"}, Reuse: true})
	if !IsNotFound(err) || r.Stdout != "" {
		t.Errorf("exec in a session of a deleted pod: stdout %q, error %v; want NotFound and no output", r.Stdout, err)
	}
}

// errText is an error's text without the runtime's exec IDs, which differ
// between two runs of the same failing command.
func errText(err error) string {
	return regexp.MustCompile(`[0-9a-f]{64}`).ReplaceAllString(fmt.Sprint(err), "ID")
}

// The real target of sessions: the Cilium agent, found the way a lab names
// it (ds/cilium on a node), read-only commands only. Each runs twice, as a
// separate exec and in a session, and must print the same: so the commands
// are ones whose output stays the same between two runs (the agent's
// version and its configuration; `status --brief` reports the agent's
// live health, which another test deleting endpoints can change between
// the two).
func TestE2ECiliumAgentExec(t *testing.T) {
	c := e2eClient(t)
	ds, err := c.Get(ctxT(t, 10*time.Second), cluster.ObjectQuery{Kind: "ds", Namespace: "kube-system", Name: "cilium"})
	if err != nil {
		t.Fatalf("the testbed runs Cilium as ds/cilium in kube-system: %v", err)
	}
	if ok, err := k8sobj.RolloutComplete(ds); !ok || err != nil {
		t.Fatalf("ds/cilium is not rolled out (%v): %s", err, k8sobj.SummarizeObject(ds))
	}
	any, err := c.ResolvePod(ctxT(t, 10*time.Second), cluster.PodTarget{Namespace: "kube-system", Pod: "ds/cilium"})
	if err != nil {
		t.Fatal(err)
	}
	p, err := c.ResolvePod(ctxT(t, 10*time.Second), cluster.PodTarget{Namespace: "kube-system", Pod: "ds/cilium", Node: any.Node})
	if err != nil || p.Name != any.Name || !p.Ready {
		t.Fatalf("ds/cilium on node %s: %+v %v", any.Node, p, err)
	}
	for _, argv := range [][]string{
		{"cilium-dbg", "config"},
		{"cilium-dbg", "version"},
		{"ip", "-o", "link", "show", "lo"},
		{"sh", "-c", "echo $0 $#", "a b", "c"},
	} {
		o := execOptions{Namespace: "kube-system", Pod: p.Name, Container: "cilium-agent", Command: argv}
		sep, err := c.execPod(ctxT(t, 60*time.Second), o)
		if err != nil {
			t.Fatalf("%q: %v", argv, err)
		}
		o.Reuse = true
		ses, err := c.execPod(ctxT(t, 60*time.Second), o)
		if err != nil {
			t.Fatalf("%q in a session: %v", argv, err)
		}
		if ses.Transport != "session" || sep.Stdout != ses.Stdout || sep.Stderr != ses.Stderr || sep.ExitCode != ses.ExitCode {
			t.Errorf("%q differs:\n exec    %q %q %d\n session %q %q %d (%s)", argv, sep.Stdout, sep.Stderr, sep.ExitCode, ses.Stdout, ses.Stderr, ses.ExitCode, ses.Transport)
		}
		t.Logf("%q -> exit %d %q: exec %s, session %s", argv, sep.ExitCode, trunc([]byte(sep.Stdout)), sep.Duration.Round(time.Millisecond), ses.Duration.Round(time.Millisecond))
	}
	c.Close()
}

func lineDiff(a, b string) string {
	in := func(s string) map[string]bool {
		m := map[string]bool{}
		for _, l := range strings.Split(s, "\n") {
			m[l] = true
		}
		return m
	}
	ma, mb := in(a), in(b)
	var d []string
	for l := range ma {
		if !mb[l] {
			d = append(d, "-"+l)
		}
	}
	for l := range mb {
		if !ma[l] {
			d = append(d, "+"+l)
		}
	}
	if len(d) == 0 {
		return "none"
	}
	return strings.Join(d, " ")
}

func TestE2ELogs(t *testing.T) {
	c := e2eClient(t)
	ns := testNamespace(t, c)
	readyPod(t, c, ns, "box", "for i in 1 2 3 4; do echo line$i; done")
	ctx := ctxT(t, 30*time.Second)
	// Wait for the lines to be in the log (the container is Ready before
	// the runtime has necessarily flushed them).
	var all string
	for start := time.Now(); time.Since(start) < 10*time.Second; time.Sleep(100 * time.Millisecond) {
		var err error
		if all, err = c.podLogs(ctx, ns, "box", logOptions{}); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(all, "line4") {
			break
		}
	}
	if all != "line1\nline2\nline3\nline4\n" {
		t.Errorf("all logs %q", all)
	}
	two := int64(2)
	if got, err := c.podLogs(ctx, ns, "box", logOptions{Container: "main", TailLines: &two}); err != nil || got != "line3\nline4\n" {
		t.Errorf("tail 2: %q %v", got, err)
	}
	if got, err := c.podLogs(ctx, ns, "box", logOptions{Since: time.Hour, Timestamps: true}); err != nil || strings.Count(got, "\n") != 4 || !strings.Contains(got, "Z line1") {
		t.Errorf("since 1h with timestamps: %q %v", got, err)
	}
	if got, err := c.podLogs(ctx, ns, "box", logOptions{SinceTime: time.Now().Add(time.Hour)}); err != nil || got != "" {
		t.Errorf("since the future: %q %v", got, err)
	}
	if got, err := c.podLogs(ctx, ns, "box", logOptions{Container: "side"}); err != nil || got != "" {
		t.Errorf("side container: %q %v", got, err)
	}
	// Through cluster.Cluster, as the logs action reads: the pod resolved,
	// the default container named in the result.
	lr, err := c.Logs(ctx, cluster.PodTarget{Namespace: ns, Pod: "box"}, cluster.LogRequest{TailLines: 2})
	if err != nil || lr.Text != "line3\nline4\n" || lr.Namespace != ns || lr.Pod != "box" || lr.Container != "main" {
		t.Errorf("Logs: %+v %v", lr, err)
	}
	_, err = c.podLogs(ctx, ns, "box", logOptions{Previous: true})
	t.Logf("previous: %v", err)
	if err == nil || !strings.Contains(err.Error(), "BadRequest (400)") || !strings.Contains(err.Error(), "previous terminated container") {
		t.Errorf("previous without a restart: %v", err)
	}
}

func percentile(ds []time.Duration, p int) time.Duration {
	s := append([]time.Duration(nil), ds...)
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
	if len(s) == 0 {
		return 0
	}
	i := (len(s)*p + 99) / 100
	return s[max(0, min(len(s)-1, i-1))]
}

// Benchmarks: the round trip of `true` in a pod. Reference figures on the
// development machine: kubectl exec ~100 ms, bare client-go WebSocket exec
// ~45 ms, the runtime's exec itself ~25-30 ms.

func benchExec(b *testing.B, reuse bool) {
	c := e2eClient(b)
	ns := testNamespace(b, c)
	readyPod(b, c, ns, "box", "")
	opts := execOptions{Namespace: ns, Pod: "box", Container: "main", Command: []string{"true"}, Reuse: reuse}
	if _, err := c.execPod(context.Background(), opts); err != nil { // warm up (session, TLS)
		b.Fatal(err)
	}
	var ds []time.Duration
	b.ResetTimer()
	for b.Loop() {
		start := time.Now()
		r, err := c.execPod(context.Background(), opts)
		if err != nil || r.ExitCode != 0 {
			b.Fatalf("%+v %v", r, err)
		}
		ds = append(ds, time.Since(start))
	}
	b.StopTimer()
	b.ReportMetric(float64(percentile(ds, 50).Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(percentile(ds, 90).Microseconds())/1000, "p90-ms")
	c.Close()
}

func BenchmarkExecTrue(b *testing.B)        { benchExec(b, false) }
func BenchmarkExecTrueSession(b *testing.B) { benchExec(b, true) }

// typed is client-go's clientset on the client's configuration, for what a
// test does outside labrun's own API.
func typed(tb testing.TB, c *Client) kubernetes.Interface {
	tb.Helper()
	cs, err := kubernetes.NewForConfig(c.Config())
	if err != nil {
		tb.Fatal(err)
	}
	return cs
}

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

// BenchmarkExecTrueClientGoWebSocket is the reference: client-go's own
// WebSocket executor with the same rest config, no retries, no fallback.
func BenchmarkExecTrueClientGoWebSocket(b *testing.B) {
	c := e2eClient(b)
	ns := testNamespace(b, c)
	readyPod(b, c, ns, "box", "")
	u := typed(b, c).CoreV1().RESTClient().Post().Namespace(ns).Resource("pods").Name("box").SubResource("exec").
		VersionedParams(&corev1.PodExecOptions{Container: "main", Command: []string{"true"}, Stdout: true, Stderr: true}, scheme.ParameterCodec).URL()
	var ds []time.Duration
	for b.Loop() {
		start := time.Now()
		exe, err := remotecommand.NewWebSocketExecutor(c.Config(), "GET", u.String())
		if err != nil {
			b.Fatal(err)
		}
		var out, errOut strings.Builder
		if err := exe.StreamWithContext(context.Background(), remotecommand.StreamOptions{Stdout: &out, Stderr: &errOut}); err != nil {
			b.Fatal(err)
		}
		ds = append(ds, time.Since(start))
	}
	b.ReportMetric(float64(percentile(ds, 50).Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(percentile(ds, 90).Microseconds())/1000, "p90-ms")
}

// Label changes labels in place: a running pod keeps its UID, its other
// labels and its IP; a selector labels every object it selects; a node is
// labelled and unlabelled; a later apply of the old label needs force,
// since the label is the label manager's now, as after kubectl label.
func TestE2ELabelInPlace(t *testing.T) {
	c := e2eClient(t)
	ns := testNamespace(t, c)
	applyText(t, c, ns, fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata: {name: visitor, labels: {app: visitor, keep: "yes"}}
spec:
  terminationGracePeriodSeconds: 1
  containers: [{name: box, image: %s, imagePullPolicy: IfNotPresent, command: [sleep, "600"]}]
---
apiVersion: v1
kind: ConfigMap
metadata: {name: one, labels: {group: g}}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: two, labels: {group: g}}
`, curlImage))
	ctx := ctxT(t, 2*time.Minute)
	pod := cluster.ObjectQuery{Kind: "Pod", Namespace: ns, Name: "visitor"}
	objs, err := c.Wait(ctx, pod, func(objs []map[string]any) (bool, error) {
		return len(objs) == 1 && k8sobj.String(objs[0], "status", "podIP") != "", nil
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	uid, ip := k8sobj.String(objs[0], "metadata", "uid"), k8sobj.String(objs[0], "status", "podIP")

	res, err := c.Label(ctx, pod, cluster.LabelRequest{Set: map[string]string{"app": "frontend", "team": "payments"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 1 || !res[0].Changed || res[0].UID != uid || res[0].Before["app"] != "visitor" ||
		!reflect.DeepEqual(res[0].Labels, map[string]string{"app": "frontend", "team": "payments", "keep": "yes"}) {
		t.Errorf("label result = %+v, want visitor (uid %s) relabelled, keep kept", res, uid)
	}
	now, err := c.Get(ctx, pod)
	if err != nil {
		t.Fatal(err)
	}
	if k8sobj.String(now, "metadata", "uid") != uid || k8sobj.String(now, "status", "podIP") != ip ||
		k8sobj.String(now, "metadata", "labels", "app") != "frontend" {
		t.Errorf("after relabelling: uid %s ip %s labels %v; want uid %s ip %s app=frontend",
			k8sobj.String(now, "metadata", "uid"), k8sobj.String(now, "status", "podIP"), now["metadata"].(map[string]any)["labels"], uid, ip)
	}
	// The same labels again change nothing.
	if res, err := c.Label(ctx, pod, cluster.LabelRequest{Set: map[string]string{"app": "frontend"}}); err != nil || res[0].Changed {
		t.Errorf("relabelling with the same value: %+v %v", res, err)
	}
	// Applying the old label back conflicts with the label manager, unless forced.
	back, _ := DecodeText("back.yaml", []byte(fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata: {name: visitor, labels: {app: visitor, keep: "yes"}}
spec:
  terminationGracePeriodSeconds: 1
  containers: [{name: box, image: %s, imagePullPolicy: IfNotPresent, command: [sleep, "600"]}]
`, curlImage)))
	if _, err := c.applyManifests(ctx, back, cluster.ApplyRequest{Namespace: ns}); err == nil || !strings.Contains(err.Error(), LabelFieldManager) {
		t.Errorf("apply of app=visitor after the label: %v, want a conflict naming %s", err, LabelFieldManager)
	}
	if res, err := c.applyManifests(ctx, back, cluster.ApplyRequest{Namespace: ns, Force: true}); err != nil || k8sobj.String(res[0].Object, "metadata", "labels", "app") != "visitor" {
		t.Errorf("forced apply of app=visitor: %v", err)
	}

	// A selector labels each object it selects.
	res, err = c.Label(ctx, cluster.ObjectQuery{Kind: "ConfigMap", Namespace: ns, Selector: "group=g"}, cluster.LabelRequest{Set: map[string]string{"seen": "1"}, Remove: []string{"group"}})
	if err != nil || len(res) != 2 || res[0].Name != "one" || res[1].Name != "two" || res[0].Labels["seen"] != "1" || res[1].Labels["group"] != "" {
		t.Errorf("label by selector: %+v %v", res, err)
	}

	// A node (cluster-scoped) gets a label of the test's own and loses it.
	nodes, err := c.List(ctx, cluster.ObjectQuery{Kind: "Node"})
	if err != nil || len(nodes) == 0 {
		t.Fatalf("nodes: %v %v", nodes, err)
	}
	name := k8sobj.String(nodes[0], "metadata", "name")
	key := "e2e.labrun.io/label-" + randSuffix()
	node := cluster.ObjectQuery{Kind: "Node", Name: name}
	t.Cleanup(func() { c.Label(context.Background(), node, cluster.LabelRequest{Remove: []string{key}}) })
	if res, err := c.Label(ctx, node, cluster.LabelRequest{Set: map[string]string{key: "front"}}); err != nil || res[0].Labels[key] != "front" || res[0].Namespace != "" {
		t.Errorf("label node %s: %+v %v", name, res, err)
	}
	if got, err := c.Get(ctx, node); err != nil || k8sobj.String(got, "metadata", "labels", key) != "front" {
		t.Errorf("node %s after labelling: %v %v", name, err, got["metadata"])
	}
	for range 2 { // removing twice is fine
		if res, err := c.Label(ctx, node, cluster.LabelRequest{Remove: []string{key}}); err != nil || res[0].Labels[key] != "" {
			t.Errorf("unlabel node %s: %+v %v", name, res, err)
		}
	}
	if _, err := c.Label(ctx, cluster.ObjectQuery{Kind: "Pod", Namespace: ns, Name: "absent"}, cluster.LabelRequest{Set: map[string]string{"a": "b"}}); !IsNotFound(err) {
		t.Errorf("label of a missing pod: %v, want not found", err)
	}
}

// lineCollector hands each complete line written to it to a channel.
type lineCollector struct {
	mu    sync.Mutex
	buf   strings.Builder
	lines chan string
}

func (l *lineCollector) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf.Write(p)
	for {
		s := l.buf.String()
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			return len(p), nil
		}
		l.lines <- s[:i]
		l.buf.Reset()
		l.buf.WriteString(s[i+1:])
	}
}

// Stream hands a command's output over as it comes, not when it ends:
// the first line arrives while the command still runs, and closing the
// stream (the context) ends the call at once, Stopped, while the command
// would have run 60 s more. A command that ends by itself gives its exit
// code.
func TestE2EStream(t *testing.T) {
	c := e2eClient(t)
	ns := testNamespace(t, c)
	readyPod(t, c, ns, "box", "")
	out := &lineCollector{lines: make(chan string, 16)}
	ctx, cancel := context.WithCancel(ctxT(t, 90*time.Second))
	type ended struct {
		res *cluster.StreamResult
		err error
	}
	done := make(chan ended, 1)
	start := time.Now()
	go func() {
		res, err := c.Stream(ctx, cluster.PodTarget{Namespace: ns, Pod: "box"}, cluster.StreamRequest{
			Argv: []string{"sh", "-c", "echo first; echo ready >&2; sleep 60; echo never"}, Stdout: out, Stderr: io.Discard})
		done <- ended{res, err}
	}()
	select {
	case l := <-out.lines:
		if l != "first" {
			t.Errorf("first line %q", l)
		}
	case e := <-done:
		t.Fatalf("the stream ended before its first line: %+v %v", e.res, e.err)
	case <-time.After(30 * time.Second):
		t.Fatal("no line within 30s: the output is not handed over as it comes")
	}
	cancel()
	select {
	case e := <-done:
		if e.err != nil || e.res == nil || !e.res.Stopped || e.res.Pod != "box" || e.res.Container != "main" {
			t.Errorf("stopped stream: %+v %v", e.res, e.err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("closing the stream did not end the call")
	}
	if d := time.Since(start); d > 40*time.Second {
		t.Errorf("the stream ran %s", d)
	}
	res, err := c.Stream(ctxT(t, 30*time.Second), cluster.PodTarget{Namespace: ns, Pod: "box"}, cluster.StreamRequest{Argv: []string{"sh", "-c", "echo x; exit 3"}, Stdout: io.Discard})
	if err != nil || res.ExitCode != 3 || res.Stopped {
		t.Errorf("a command that ends: %+v %v", res, err)
	}
}
