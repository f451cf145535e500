package access

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/labrun/labrun/actions"
	_ "github.com/labrun/labrun/actions/all"
	"github.com/labrun/labrun/runner"
)

// load compiles a playbook of steps (vars ns: lab), with files beside it.
func load(t *testing.T, steps string, files map[string]string) *runner.Plan {
	t.Helper()
	dir := t.TempDir()
	for name, text := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(dir, "p.yaml")
	src := "name: t\nvars: {ns: lab, nss: [a, b], kind: Service}\nsteps:\n" + steps
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	plan, err := runner.Load(path, runner.Options{})
	if err != nil {
		t.Fatalf("%v\n%s", err, src)
	}
	return plan
}

// derive is what the steps need in mode, one permission a line, the
// default namespace "home"; the run's Lease is TestLeaseNeeds's.
func derive(t *testing.T, steps string, mode actions.Mode, files map[string]string) string {
	t.Helper()
	needs, err := Derive(load(t, steps, files), Options{Mode: mode, Namespace: "home", NoLock: true})
	if err != nil {
		t.Fatal(err)
	}
	return String(needs)
}

type deriveCase struct {
	name  string
	steps string
	mode  actions.Mode
	want  string
	files map[string]string
}

func runCases(t *testing.T, cases []deriveCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := derive(t, c.steps, c.mode, c.files)
			if want := strings.TrimLeft(c.want, "\n"); got != want {
				t.Errorf("got\n%s\nwant\n%s", got, want)
			}
		})
	}
}

// The reads: get and wait list once without until and in labrun check;
// with until in labrun run they watch, and follow the pods of what they
// wait for unless it may fail (actions/failfast.go).
func TestDeriveReads(t *testing.T) {
	runCases(t, []deriveCase{
		{name: "get by name", steps: `
  - id: s
    get: {kind: Service, namespace: "${{ vars.ns }}", name: web}
`, want: `
list services (namespace lab): s
`},
		{name: "short names, groups, default namespace", steps: `
  - id: a
    get: {kind: cep}
  - id: b
    get: {kind: deployments.apps, allNamespaces: true}
  - id: c
    get: {apiVersion: discovery.k8s.io/v1, kind: EndpointSlice, namespace: x}
  - id: d
    get: {kind: no}
`, want: `
list nodes (cluster-wide): d
list deployments.apps (cluster-wide): b
list ciliumendpoints.cilium.io (namespace home): a
list endpointslices.discovery.k8s.io (namespace x): c
`},
		{name: "a wait on pods watches them in run", steps: `
  - id: s
    wait: {kind: Pod, namespace: lab, selector: app=web}
    until: result.ready == 2
`, want: `
list events (namespace lab): s
get pods (namespace lab): s
list pods (namespace lab): s
watch pods (namespace lab): s
get pods/log (namespace lab): s
`},
		{name: "a wait on pods reads once in check", mode: actions.Check, steps: `
  - id: s
    wait: {kind: Pod, namespace: lab, selector: app=web}
    until: result.ready == 2
`, want: `
list pods (namespace lab): s
`},
		{name: "a wait on a Deployment follows its pods and replica sets", steps: `
  - id: s
    wait: {kind: deploy, namespace: lab, name: web}
    until: result.ready == 1
`, want: `
list events (namespace lab): s
get pods (namespace lab): s
list pods (namespace lab): s
watch pods (namespace lab): s
get pods/log (namespace lab): s
list deployments.apps (namespace lab): s
watch deployments.apps (namespace lab): s
list replicasets.apps (namespace lab): s
`},
		{name: "a DaemonSet's wait that allows failing pods", steps: `
  - id: s
    get: {kind: ds, namespace: kube-system, name: cilium, allowFailing: true}
    until: result.ready == 1
`, want: `
list daemonsets.apps (namespace kube-system): s
watch daemonsets.apps (namespace kube-system): s
`},
		{name: "a wait on a kind without pods", steps: `
  - id: s
    wait: {apiVersion: cilium.io/v2, kind: CiliumIdentity}
    until: result.count > 0
`, want: `
list ciliumidentities.cilium.io (cluster-wide): s
watch ciliumidentities.cilium.io (cluster-wide): s
`},
	})
}

// Pods a command runs in or a log is read from: by name, workload or
// selector, with or without a container.
func TestDerivePods(t *testing.T) {
	runCases(t, []deriveCase{
		{name: "exec by name with a container", steps: `
  - id: s
    exec: {namespace: lab, pod: web-0, container: web, argv: [true]}
`, want: `
get pods (namespace lab): s
get pods/exec (namespace lab): s
create pods/exec (namespace lab): s
`},
		{name: "exec by workload, default container", steps: `
  - id: s
    exec: {namespace: lab, pod: deploy/web, argv: [true]}
`, want: `
get pods (namespace lab): s
list pods (namespace lab): s
get pods/exec (namespace lab): s
create pods/exec (namespace lab): s
get deployments.apps (namespace lab): s
`},
		{name: "exec by selector", steps: `
  - id: s
    exec: {selector: app=web, container: web, argv: [true]}
`, want: `
list pods (namespace home): s
get pods/exec (namespace home): s
create pods/exec (namespace home): s
`},
		{name: "a pod named by a step's result is a pod's name, a workload keeps its kind", steps: `
  - id: a
    compute: {name: web-0}
  - id: s
    exec: {namespace: lab, pod: "${{ steps.a.name }}", container: web, argv: [true]}
  - id: t
    exec: {namespace: lab, pod: "sts/${{ steps.a.name }}", container: web, argv: [true]}
`, want: `
get pods (namespace lab): s
list pods (namespace lab): t
get pods/exec (namespace lab): s, t
create pods/exec (namespace lab): s, t
get statefulsets.apps (namespace lab): t
`},
		{name: "mutating exec runs only in run", mode: actions.Check, steps: `
  - id: s
    exec: {namespace: lab, pod: web, container: c, argv: [touch, x], mutates: true}
`, want: ``},
		{name: "cilium's agent by default", steps: `
  - id: s
    cilium: {args: [status]}
  - id: t
    cilium: {args: [status], namespace: cilium, pod: cilium-abc, container: agent}
`, want: `
get pods (namespace cilium): t
get pods/exec (namespace cilium): t
create pods/exec (namespace cilium): t
list pods (namespace kube-system): s
get pods/exec (namespace kube-system): s
create pods/exec (namespace kube-system): s
get daemonsets.apps (namespace kube-system): s
`},
		{name: "a capture's monitor in the agent, and the steps it runs around", steps: `
  - id: s
    capture: {monitor: {node: n1}}
    during:
      - id: t
        exec: {namespace: lab, pod: client, container: c, argv: [curl, web]}
`, want: `
list pods (namespace kube-system): s
get pods/exec (namespace kube-system): s
create pods/exec (namespace kube-system): s
get daemonsets.apps (namespace kube-system): s
get pods (namespace lab): t
get pods/exec (namespace lab): t
create pods/exec (namespace lab): t
`},
		{name: "a capture of Hubble's flows in the agent; tcpdump asks the cluster nothing", steps: `
  - id: s
    capture: {hubble: {node: n1, filter: {verdict: [DROPPED]}}}
    during:
      - id: t
        exec: {namespace: lab, pod: client, container: c, argv: [curl, web]}
  - id: u
    capture: {tcpdump: {via: [node-exec], interface: eth0}}
    during:
      - id: v
        run: {argv: ["true"]}
`, want: `
list pods (namespace kube-system): s
get pods/exec (namespace kube-system): s
create pods/exec (namespace kube-system): s
get daemonsets.apps (namespace kube-system): s
get pods (namespace lab): t
get pods/exec (namespace lab): t
create pods/exec (namespace lab): t
`},
		{name: "logs", steps: `
  - id: s
    logs: {namespace: lab, pod: job/migrate}
  - id: t
    logs: {namespace: lab, pod: svc/web}
`, want: `
list pods (namespace lab): s, t
get pods/log (namespace lab): s, t
get services (namespace lab): t
get jobs.batch (namespace lab): s
`},
	})
}

// manifests are what the apply cases apply: a directory of a Namespace,
// a ConfigMap and a List of a Pod, beside a file that is no manifest;
// and a CRD.
var manifests = map[string]string{
	"m/10-ns.yaml":  "apiVersion: v1\nkind: Namespace\nmetadata: {name: lab}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: lab}\n",
	"m/20-pod.json": `{"apiVersion": "v1", "kind": "List", "items": [{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}}]}`,
	"m/notes.txt":   "not read",
	"crd.yaml": `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {kind: Widget, plural: widgets, singular: widget, shortNames: [wd]}
  versions: [{name: v1, served: true, storage: true}]
`,
}

// Apply: the kinds and namespaces of files, directories, Lists, inline
// objects and text; a CRD's kind for the steps after it.
func TestDeriveApply(t *testing.T) {
	runCases(t, []deriveCase{
		{name: "apply files, a directory and a List", files: manifests, steps: `
  - id: s
    apply: {files: [m], namespace: other}
`, want: `
get namespaces (cluster-wide): s
create namespaces (cluster-wide): s
patch namespaces (cluster-wide): s
get configmaps (namespace lab): s
create configmaps (namespace lab): s
patch configmaps (namespace lab): s
get pods (namespace other): s
create pods (namespace other): s
patch pods (namespace other): s
list serviceaccounts (namespace other): s
watch serviceaccounts (namespace other): s
`},
		{name: "apply objects and manifest text, some values from steps", steps: `
  - id: a
    compute: {port: 80}
  - id: s
    apply:
      objects:
        - apiVersion: v1
          kind: Service
          metadata: {name: web, namespace: "${{ vars.ns }}"}
          spec: {ports: [{port: "${{ steps.a.port }}"}]}
      manifest: |
        apiVersion: apps/v1
        kind: Deployment
        metadata: {name: web}
`, want: `
get deployments.apps (namespace home): s
create deployments.apps (namespace home): s
patch deployments.apps (namespace home): s
get services (namespace lab): s
create services (namespace lab): s
patch services (namespace lab): s
`},
		{name: "a CRD's kind is known to the steps after it", files: manifests, steps: `
  - id: crd
    apply: {files: [crd.yaml]}
  - id: s
    get: {kind: wd, namespace: lab}
`, want: `
get customresourcedefinitions.apiextensions.k8s.io (cluster-wide): crd
list customresourcedefinitions.apiextensions.k8s.io (cluster-wide): crd
watch customresourcedefinitions.apiextensions.k8s.io (cluster-wide): crd
create customresourcedefinitions.apiextensions.k8s.io (cluster-wide): crd
patch customresourcedefinitions.apiextensions.k8s.io (cluster-wide): crd
list widgets.example.com (namespace lab): s
`},
		{name: "check reads the kind of a CRD the solve applied", mode: actions.Check, files: manifests, steps: `
  - id: crd
    apply: {files: [crd.yaml]}
  - id: s
    get: {kind: widgets.example.com, namespace: lab}
`, want: `
list widgets.example.com (namespace lab): s
`},
	})
}

// The other changes: delete, scale, label; none in labrun check.
func TestDeriveChanges(t *testing.T) {
	runCases(t, []deriveCase{
		{name: "delete, scale, label", steps: `
  - id: a
    delete: {kind: Pod, namespace: lab, name: p}
  - id: b
    delete: {kind: Pod, namespace: lab, selector: app=web, wait: true}
  - id: c
    scale: {kind: Deployment, namespace: lab, name: web, replicas: 3}
  - id: d
    label: {kind: Node, name: n1, labels: {tier: front}}
  - id: e
    label: {kind: Pod, namespace: lab, selector: app=web, remove: [tier]}
`, want: `
get nodes (cluster-wide): d
patch nodes (cluster-wide): d
get pods (namespace lab): b
list pods (namespace lab): b, e
watch pods (namespace lab): b
patch pods (namespace lab): e
delete pods (namespace lab): a, b
get deployments.apps/scale (namespace lab): c
patch deployments.apps/scale (namespace lab): c
`},
		{name: "changes are not checked", mode: actions.Check, files: manifests, steps: `
  - id: a
    apply: {files: [m]}
  - id: b
    delete: {kind: Pod, name: p}
  - id: c
    scale: {kind: Deployment, name: web, replicas: 3}
  - id: d
    label: {kind: Node, name: n1, labels: {tier: front}}
`, want: ``},
	})
}

// What runs in a mode, loops and the actions that call no cluster.
func TestDeriveSteps(t *testing.T) {
	steps := `
  - id: solve
    only: solve
    get: {kind: Pod, namespace: solve}
  - id: check
    only: check
    get: {kind: Pod, namespace: check}
  - id: loop
    get: {kind: "${{ vars.kind }}", namespace: "${{ item }}"}
    loop: ${{ vars.nss }}
  - id: empty
    get: {kind: Pod, namespace: "${{ item }}"}
    loop: []
  - id: local
    run: {argv: [true]}
  - id: c
    compute: {x: 1}
  - id: z
    sleep: {duration: 1ms}
  - id: par
    parallel:
      one:
        - id: in_branch
          get: {kind: Secret, namespace: lab}
      two:
        - id: web
          http: {url: "http://localhost"}
finally:
  - id: cleanup
    delete: {kind: ConfigMap, namespace: lab, name: c, ignoreNotFound: true}
`
	runCases(t, []deriveCase{
		{name: "run", steps: steps, want: `
list services (namespace a): loop
list services (namespace b): loop
delete configmaps (namespace lab): cleanup
list secrets (namespace lab): in_branch
list pods (namespace solve): solve
`},
		{name: "check", mode: actions.Check, steps: steps, want: `
list services (namespace a): loop
list services (namespace b): loop
list pods (namespace check): check
list secrets (namespace lab): in_branch
`},
	})
}

// A kind or namespace known only when the step runs, and a kind the
// table does not know, are errors where they are written.
func TestDeriveErrors(t *testing.T) {
	for _, c := range []struct {
		name, steps string
		files       map[string]string
		want        string
	}{
		{"kind from a step", `
  - id: a
    compute: {kind: Pod}
  - id: s
    get: {kind: "${{ steps.a.kind }}"}
`, nil, "p.yaml:8:17: kind decides which permissions the step needs, but its value is only known when the step runs (it reads a step's result); write it, or take it from vars"},
		{"namespace from a loop over a step", `
  - id: a
    compute: {nss: [a]}
  - id: s
    exec: {namespace: "${{ item }}", pod: p, argv: [true]}
    loop: ${{ steps.a.nss }}
`, nil, "p.yaml:8:23: namespace decides which permissions"},
		{"unknown kind", `
  - id: s
    get: {kind: Widget, namespace: lab}
`, nil, `p.yaml:6:17: kind "Widget" is not in labrun's table of kinds`},
		{"unknown version", `
  - id: s
    get: {apiVersion: apps/v2, kind: Deployment}
`, nil, `p.yaml:6:38: kind "Deployment" of apps/v2 is not in labrun's table of kinds`},
		{"unknown kind in a manifest", `
  - id: s
    apply: {files: [w.yaml]}
`, map[string]string{"w.yaml": "# a widget\napiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\n"},
			`w.yaml:3:7: kind "Widget" of example.com/v1 is not in labrun's table of kinds`},
		{"missing manifest", `
  - id: s
    apply: {files: [nothing.yaml]}
`, nil, `p.yaml:6:21: read manifests: stat `},
		{"an object's namespace from a step", `
  - id: a
    compute: {ns: x}
  - id: s
    apply: {objects: [{apiVersion: v1, kind: ConfigMap, metadata: {name: c, namespace: "${{ steps.a.ns }}"}}]}
`, nil, `p.yaml:8:88: objects[0].metadata.namespace decides which permissions`},
	} {
		t.Run(c.name, func(t *testing.T) {
			plan := load(t, c.steps, c.files)
			_, err := Derive(plan, Options{Namespace: "home"})
			if err == nil {
				t.Fatal("no error")
			}
			// positions are in the test's directory
			got := strings.ReplaceAll(err.Error(), filepath.Dir(plan.Playbook.File)+"/", "")
			if !strings.HasPrefix(got, c.want) {
				t.Errorf("got  %s\nwant %s...", got, c.want)
			}
		})
	}
}
