package access

import (
	"strings"
	"testing"

	"github.com/labrun/labrun/runner"
)

// The Namespaces a solve makes: from manifest files, manifest text and
// inline objects, with names known before the run; not one whose name
// reads a step's result, not a cluster's own, not one only check
// applies (check applies nothing), each once.
func TestNamespaces(t *testing.T) {
	plan := load(t, `
  - id: files
    apply: {files: [fixtures/app.yaml]}
  - id: inline
    apply:
      objects:
        - {apiVersion: v1, kind: Namespace, metadata: {name: "${{ vars.ns }}-two"}}
        - {apiVersion: v1, kind: Namespace, metadata: {name: kube-system, labels: {x: y}}}
        - {apiVersion: v1, kind: ConfigMap, metadata: {name: not-a-namespace, namespace: "${{ vars.ns }}"}}
  - id: text
    apply:
      manifest: |
        apiVersion: v1
        kind: Namespace
        metadata: {name: from-text}
        ---
        apiVersion: v1
        kind: Namespace
        metadata: {name: lab}
  - id: name
    run: {argv: [echo, later]}
  - id: unknown
    apply:
      objects:
        - {apiVersion: v1, kind: Namespace, metadata: {name: "${{ trim(steps.name.stdout) }}"}}
`, map[string]string{"fixtures/app.yaml": `apiVersion: v1
kind: Namespace
metadata:
  name: lab
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: lab}
spec: {ports: [{port: 80}]}
`})
	got, err := Namespaces(plan, Options{Namespace: "home"})
	if err != nil {
		t.Fatal(err)
	}
	if want := "lab lab-two from-text"; strings.Join(got, " ") != want {
		t.Errorf("Namespaces = %q, want %q", got, want)
	}
}

// A lab that makes no Namespace (the classroom lab works in one that
// must exist) has none to delete.
func TestNamespacesNone(t *testing.T) {
	plan := load(t, `
  - id: app
    apply:
      objects:
        - {apiVersion: v1, kind: ConfigMap, metadata: {name: c, namespace: "${{ vars.ns }}"}, data: {a: b}}
`, nil)
	got, err := Namespaces(plan, Options{Namespace: "home"})
	if err != nil || len(got) != 0 {
		t.Errorf("Namespaces = %q, %v; want none", got, err)
	}
}

// The labs' own namespaces, with their testbed vars: what labrun test
// --repeat deletes when a lab has no cleanup playbook.
func TestLabsNamespaces(t *testing.T) {
	for lab, want := range map[string]string{"cca-datapath": "cca-dp", "cca-services": "cca-svc", "cca-identity": "shop", "classroom": ""} {
		plan, err := runner.Load("../../playbooks/"+lab+".yaml", runner.Options{VarsFiles: []string{"../../playbooks/" + lab + ".testbed.yaml"}})
		if err != nil {
			t.Fatal(err)
		}
		got, err := Namespaces(plan, Options{Namespace: "default"})
		if err != nil || strings.Join(got, " ") != want {
			t.Errorf("%s: namespaces %q, %v; want %q", lab, got, err, want)
		}
	}
}
