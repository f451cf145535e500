package kubeschema

import (
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/labrun/labrun/internal/lang/diag"
	"gopkg.in/yaml.v3"
)

// parse reads one YAML document into a Node, positioned in file "m".
func parse(t *testing.T, src string) *Node {
	t.Helper()
	docs, err := Documents([]byte(src), func(line, col int) diag.Pos { return diag.Pos{File: "m", Line: line, Col: col} })
	if err != nil || len(docs) != 1 {
		t.Fatalf("%d documents, %v", len(docs), err)
	}
	return docs[0].Node
}

// show writes problems as "line:col: path: message", one a line.
func show(ps []Problem) string {
	var lines []string
	for _, p := range ps {
		lines = append(lines, fmt.Sprintf("%d:%d: %s", p.Pos.Line, p.Pos.Col, p))
	}
	return strings.Join(lines, "\n")
}

const deployment = `apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
        - name: web
          image: nginx
`

// Each bad manifest is refused where the value is written, with its
// path and what was expected; each good one passes.
func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		opts      Options
		want      string
	}{
		{"valid", deployment, Options{}, ""},
		{"int where a string goes", deployment + "          command: [sleep, 3600]\n", Options{},
			`12:28: spec.template.spec.containers[0].command[1]: expected string, got int 3600; quote it: "3600"`},
		{"YAML 1.1 boolean", deployment + "          env: [{name: DEBUG, value: yes}]\n", Options{},
			`12:38: spec.template.spec.containers[0].env[0].value: expected string, got bool true (YAML 1.1, which manifests are read with, takes yes for true); quote it: "yes"`},
		{"string where an int goes", strings.Replace(deployment, "spec:\n  selector", "spec:\n  replicas: \"3\"\n  selector", 1), Options{},
			`5:13: spec.replicas: expected int, got string "3"`},
		{"unknown key", deployment + "          imagePullPolice: Always\n", Options{},
			`12:11: spec.template.spec.containers[0].imagePullPolice: unknown key "imagePullPolice" (did you mean "imagePullPolicy"?); expected one of: args, command, env, envFrom, image, imagePullPolicy, lifecycle, livenessProbe, name, ports, readinessProbe, resizePolicy, resources, restartPolicy, restartPolicyRules, securityContext, startupProbe, stdin, stdinOnce, terminationMessagePath, terminationMessagePolicy, tty, volumeDevices, volumeMounts, workingDir`},
		{"missing required key", strings.Replace(deployment, "        - name: web\n          image", "        - image", 1), Options{},
			`10:11: spec.template.spec.containers[0]: missing required key "name"`},
		{"a partial object may leave required keys out", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  template:\n    metadata:\n      annotations: {restarted: \"1\"}\n", Options{Partial: true}, ""},
		{"but not its types", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  template:\n    metadata:\n      annotations: {restarted: 1}\n", Options{Partial: true},
			`7:32: spec.template.metadata.annotations.restarted: expected string, got int 1; quote it: "1"`},
		{"int-or-string and quantities", "apiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec:\n  ports: [{port: 80, targetPort: 8080}, {port: 81, targetPort: http}]\n---\n", Options{}, ""},
		{"quantity as a number", strings.Replace(deployment, "image: nginx", "image: nginx\n          resources: {limits: {cpu: 1, memory: 64Mi}, requests: {cpu: 0.5}}", 1), Options{}, ""},
		{"null is not set", strings.Replace(deployment, "metadata: {name: web}", "metadata: {name: web, creationTimestamp: null}", 1), Options{}, ""},
		{"key that needs quoting", strings.Replace(deployment, "metadata: {name: web}", "metadata: {name: web, labels: {app.kubernetes.io/name: 3}}", 1), Options{},
			`3:56: metadata.labels["app.kubernetes.io/name"]: expected string, got int 3; quote it: "3"`},
		{"kind of another apiVersion", "apiVersion: v1\nkind: Deployment\nmetadata: {name: web}\n", Options{},
			`1:13: v1 has no kind Deployment: it is served as apps/v1`},
		{"kind misspelt", "apiVersion: apps/v1\nkind: Deploymnet\nmetadata: {name: web}\n", Options{},
			`2:7: apps/v1 has no kind "Deploymnet" (did you mean "Deployment"?)`},
		{"unknown group: the cluster's CRD, not checked", "apiVersion: example.com/v1\nkind: Thing\nmetadata: {name: a}\nspec: {anything: 1}\n", Options{}, ""},
		{"missing apiVersion and name", "kind: ConfigMap\nmetadata: {labels: {a: b}}\n", Options{},
			"1:1: missing required key \"apiVersion\"\n2:11: metadata: missing required key \"name\""},
		{"not an object", "- a\n- b\n", Options{}, "1:1: expected an object (a mapping with apiVersion, kind and metadata), got a list"},
		{"a List, item by item", "apiVersion: v1\nkind: List\nitems:\n  - {apiVersion: v1, kind: ConfigMap, metadata: {name: a}, data: {n: 1}}\n", Options{},
			`4:70: items[0].data.n: expected string, got int 1; quote it: "1"`},
		{"Cilium's CRD", "apiVersion: cilium.io/v2\nkind: CiliumNetworkPolicy\nmetadata: {name: p}\nspec:\n  endpointSelector: {matchLabels: {app: web}}\n  ingress:\n    - fromEndpoints: [{matchLabels: {app: client}}]\n      toPorts: [{ports: [{port: 80, protocol: TCP}]}]\n", Options{},
			`8:33: spec.ingress[0].toPorts[0].ports[0].port: expected string, got int 80; quote it: "80"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ps, checked := NewRegistry().Check(parse(t, tc.src), tc.opts)
			if got := show(ps); got != tc.want {
				t.Errorf("got\n%s\nwant\n%s", got, tc.want)
			}
			if !checked && tc.want != "" {
				t.Errorf("problems found but checked is false")
			}
		})
	}
}

// A value known only by its type (an expression's, at validate) is
// refused when its type cannot fit, and only then: what a value of that
// type might hold is not known.
func TestCheckComputed(t *testing.T) {
	computed := func(typ string) *Node {
		return &Node{Kind: Computed, Type: typ, Src: "vars.x", Pos: diag.Pos{Line: 9, Col: 9}}
	}
	obj := func(path []string, v *Node) *Node {
		root := parse(t, deployment)
		n := root
		for i, k := range path {
			if i == len(path)-1 {
				n.Keys, n.Vals, n.KeyPos = append(n.Keys, k), append(n.Vals, v), append(n.KeyPos, diag.Pos{})
				break
			}
			if n.Kind == List {
				n = n.Items[0]
				continue
			}
			n = n.Lookup(k)
		}
		return root
	}
	container := []string{"spec", "template", "spec", "containers", "0", "command"}
	for _, tc := range []struct {
		name string
		at   []string
		v    *Node
		want string
	}{
		{"int for a list", container, computed("integer"), "9:9: spec.template.spec.containers[0].command: expected list, got int (${{ vars.x }})"},
		{"list for a list", container, computed("array"), ""},
		{"string for an int", []string{"spec", "replicas"}, computed("string"), "9:9: spec.replicas: expected int, got string (${{ vars.x }})"},
		{"float for an int: it may be whole", []string{"spec", "replicas"}, computed("number"), ""},
		{"int for a string", []string{"metadata", "namespace"}, computed("integer"), "9:9: metadata.namespace: expected string, got int (${{ vars.x }}); make it text with ${{ string(vars.x) }}"},
		{"type not known", []string{"metadata", "namespace"}, computed(""), ""},
		{"object for an object: its keys are not known", []string{"spec", "strategy"}, computed("object"), ""},
		{"object for a string", []string{"metadata", "namespace"}, computed("object"), "9:9: metadata.namespace: expected string, got object (${{ vars.x }})"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ps, _ := NewRegistry().Check(obj(tc.at, tc.v), Options{})
			if got := show(ps); got != tc.want {
				t.Errorf("got\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
	// an object whose kind is only known at run time is not checked
	o := parse(t, deployment)
	o.Vals[1] = computed("string")
	if ps, checked := NewRegistry().Check(o, Options{}); checked || len(ps) > 0 {
		t.Errorf("kind from an expression: checked %v, %s", checked, show(ps))
	}
}

// A playbook's CRD teaches the registry its kind: its schema's types,
// int-or-string, free-form and preserved fields, the metadata of every
// object; a version the CRD does not serve is not one.
func TestCRD(t *testing.T) {
	data, err := os.ReadFile("testdata/widget-crd.yaml")
	if err != nil {
		t.Fatal(err)
	}
	crd, ok := parse(t, string(data)).Plain()
	if !ok {
		t.Fatal("the CRD is not plain data")
	}
	r := NewRegistry()
	widget := "apiVersion: lab.labrun.io/v1\nkind: Widget\nmetadata: {name: w, labels: {a: b}}\n"
	if ps, checked := r.Check(parse(t, widget+"spec: {size: x}\n"), Options{}); checked || len(ps) > 0 {
		t.Fatalf("before the CRD: checked %v, %s", checked, show(ps))
	}
	if err := r.AddCRD(crd.(map[string]any)); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ spec, want string }{
		{"spec: {size: 3, port: 80, labels: {x: z}, raw: {any: [1, {b: c}]}}\n", ""},
		{"spec: {size: 3, port: http}\n", ""},
		{"spec: {size: 0}\n", ""}, // minimum is the server's check of values
		{"spec: {size: x, port: [1], labels: {x: 1}, colour: red}\n",
			"4:14: spec.size: expected int, got string \"x\"\n" +
				"4:23: spec.port: expected int or string, got list\n" +
				"4:40: spec.labels.x: expected string, got int 1; quote it: \"1\"\n" +
				"4:44: spec.colour: unknown key \"colour\"; expected one of: labels, port, raw, size"},
		{"spec: {port: 1}\n", "4:7: spec: missing required key \"size\""},
		{"spec: {size: 1}\nstatus: {}\n", "5:1: status: unknown key \"status\"; expected one of: apiVersion, kind, metadata, spec"},
	} {
		ps, checked := r.Check(parse(t, widget+tc.spec), Options{})
		if got := show(ps); got != tc.want || !checked {
			t.Errorf("%s: checked %v, got\n%s\nwant\n%s", tc.spec, checked, got, tc.want)
		}
	}
	if ps, _ := r.Check(parse(t, strings.Replace(widget, "{name: w,", "{name: w, namespace: 3,", 1)+"spec: {size: 1}\n"), Options{}); show(ps) != "3:32: metadata.namespace: expected string, got int 3; quote it: \"3\"" {
		t.Errorf("a custom object's metadata is ObjectMeta: %s", show(ps))
	}
	if ps, checked := r.Check(parse(t, strings.Replace(widget, "/v1", "/v0", 1)), Options{}); checked || len(ps) > 0 {
		t.Errorf("a version not served: checked %v, %s", checked, show(ps))
	}
}

// Convert keeps what decides whether the server takes a field and drops
// the rest.
func TestConvert(t *testing.T) {
	in := map[string]any{
		"description": "d", "type": "object", "required": []any{"a"},
		"properties": map[string]any{
			"a":   map[string]any{"allOf": []any{map[string]any{"$ref": "#/components/schemas/io.k8s.X"}}, "default": map[string]any{}},
			"ios": map[string]any{"format": "int-or-string", "oneOf": []any{map[string]any{"type": "integer"}, map[string]any{"type": "string"}}},
			"e":   map[string]any{"type": "string", "enum": []any{"A", "B"}, "pattern": "^A"},
			"l":   map[string]any{"type": "array", "items": map[string]any{"type": "string"}, "x-kubernetes-list-type": "atomic"},
			"m":   map[string]any{"type": "object", "additionalProperties": map[string]any{"type": "string"}},
			"p":   map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true, "properties": map[string]any{"k": map[string]any{"type": "string"}}},
			"v":   map[string]any{"type": "object", "oneOf": []any{map[string]any{"required": []any{"x"}}}},
		},
	}
	want := map[string]any{
		"type": "object", "required": []any{"a"}, "additionalProperties": false,
		"properties": map[string]any{
			"a":   map[string]any{"$ref": "io.k8s.X"},
			"ios": map[string]any{"type": []any{"integer", "string"}},
			"e":   map[string]any{"type": "string"},
			"l":   map[string]any{"type": "array", "items": map[string]any{"type": "string"}},
			"m":   map[string]any{"type": "object", "additionalProperties": map[string]any{"type": "string"}},
			"p":   map[string]any{"type": "object", "properties": map[string]any{"k": map[string]any{"type": "string"}}},
			"v":   map[string]any{"type": "object"},
		},
	}
	if got := Convert(in); !reflect.DeepEqual(got, want) {
		g, _ := json.MarshalIndent(got, "", " ")
		t.Errorf("got %s", g)
	}
}

// The API server names a refused value in structured-merge-diff's
// notation; FieldPath finds it in the object sent.
func TestFieldPath(t *testing.T) {
	obj := parse(t, `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, labels: {app.kubernetes.io/name: web}}
spec:
  template:
    spec:
      containers:
        - name: side
        - name: web
          command: [a, 8080]
          ports: [{containerPort: 80, protocol: TCP}, {containerPort: 80, protocol: UDP}]
          args: [a, b]
`)
	for _, tc := range []struct {
		fp, want string
		line     int
	}{
		{`.spec.template.spec.containers[name="web"].command`, "spec.template.spec.containers[1].command", 10},
		{`.spec.template.spec.containers[name="web"].ports[containerPort=80,protocol="UDP"]`, "spec.template.spec.containers[1].ports[1]", 11},
		{`.spec.template.spec.containers[name="web"].args[="b"]`, "spec.template.spec.containers[1].args[1]", 12},
		{`.spec.template.spec.containers[name="web"].command[1]`, "spec.template.spec.containers[1].command[1]", 10},
		{`.metadata.labels.app.kubernetes.io/name`, `metadata.labels["app.kubernetes.io/name"]`, 3},
		{`.spec.template.spec.containers[name="gone"].command`, "spec.template.spec.containers", 8},
		{``, "", 1},
	} {
		path, n := obj.FieldPath(tc.fp)
		if path.String() != tc.want || n.Pos.Line != tc.line {
			t.Errorf("FieldPath(%s) = %s at line %d, want %s at line %d", tc.fp, path, n.Pos.Line, tc.want, tc.line)
		}
	}
}

// A rendered value (decoded into a spec's []any) is checked as the JSON
// it is sent as.
func TestFromGo(t *testing.T) {
	obj := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "c", "namespace": nil},
		"data": map[string]any{"a": "x", "b": 3, "c": uint16(4), "d": 1.5, "e": true, "f": []string{"y"}}}
	ps, checked := NewRegistry().Check(FromGo(obj), Options{})
	want := "0:0: data.b: expected string, got int 3\n0:0: data.c: expected string, got int 4\n0:0: data.d: expected string, got number 1.5\n0:0: data.e: expected string, got bool true\n0:0: data.f: expected string, got list"
	if got := show(ps); got != want || !checked {
		t.Errorf("checked %v, got\n%s\nwant\n%s", checked, got, want)
	}
}

// The embedded schemas are of the versions the test cluster runs.
func TestVersionsAreTheTestbeds(t *testing.T) {
	data, err := os.ReadFile("../../../testbed/lib/common.sh")
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"K8S_VERSION": KubernetesVersion, "CILIUM_VERSION": CiliumVersion} {
		m := regexp.MustCompile(`(?m)^` + name + `=(\S+)$`).FindSubmatch(data)
		if m == nil || string(m[1]) != want {
			t.Errorf("testbed/lib/common.sh: %s=%s, the embedded schemas are of %s: run go generate ./internal/lang/kubeschema after changing the version", name, m, want)
		}
	}
}

// Every kind the test cluster serves (its captured discovery) has a
// schema, but the requests and reviews one creates and never applies.
func TestServedKindsHaveSchemas(t *testing.T) {
	e, err := builtin()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range []string{"api.json", "apis.json"} {
		data, err := os.ReadFile("../../heavy/kube/testdata/discovery/" + f)
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Items []struct {
				Metadata struct{ Name string }
				Versions []struct {
					Version   string
					Resources []struct {
						ResponseKind struct{ Kind string }
						Verbs        []string
					}
				}
			}
		}
		if err := json.Unmarshal(data, &doc); err != nil {
			t.Fatal(err)
		}
		for _, g := range doc.Items {
			for _, v := range g.Versions {
				for _, r := range v.Resources {
					if !slices.Contains(r.Verbs, "patch") {
						continue // not applied (a review, a binding)
					}
					n++
					av := APIVersion(g.Metadata.Name, v.Version)
					if _, ok := e.kinds[av][r.ResponseKind.Kind]; !ok {
						t.Errorf("the test cluster serves %s %s, which has no embedded schema", av, r.ResponseKind.Kind)
					}
				}
			}
		}
	}
	if n < 50 {
		t.Fatalf("only %d kinds read from the discovery documents", n)
	}
}

// Manifests are typed as YAML 1.1 reads them (sigs.k8s.io/yaml, which
// labrun's apply decodes with); internal/heavy/kube's TestManifestTypesAsSent
// holds the two together.
func TestFromYAMLTypes(t *testing.T) {
	var doc yaml.Node
	src := "{a: yes, b: 'yes', c: 0644, d: 1e3, e: ~, f: 1_000, g: \"3\", h: 2001-12-14, i: y, j: off, k: 0x1F, l: 1.5}"
	if err := yaml.Unmarshal([]byte(src), &doc); err != nil {
		t.Fatal(err)
	}
	n := FromYAML(&doc, func(int, int) diag.Pos { return diag.Pos{} })
	got, _ := n.Plain()
	want := map[string]any{"a": true, "b": "yes", "c": int64(420), "d": float64(1000), "e": nil, "f": int64(1000), "g": "3",
		"h": "2001-12-14", "i": true, "j": false, "k": int64(31), "l": 1.5}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %#v\nwant %#v", got, want)
	}
}

func TestPathString(t *testing.T) {
	p := Path{"metadata", "labels", "app.kubernetes.io/name"}
	if got := p.String(); got != `metadata.labels["app.kubernetes.io/name"]` {
		t.Errorf("got %s", got)
	}
	if got := (Path{"spec", "containers", 0, "command", 1}).String(); got != "spec.containers[0].command[1]" {
		t.Errorf("got %s", got)
	}
}
