package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/labrun/labrun/actions"
	"github.com/labrun/labrun/internal/boundary/cluster"
	"github.com/labrun/labrun/internal/boundary/cluster/clustertest"
)

// An object known only when the step runs (a whole template) is checked
// against its kind's schema before anything is sent: a value of the wrong
// type fails the step as a broken lab (config), at the value in the
// playbook as far as the playbook writes it, and the cluster sees
// nothing.
func TestApplyChecksRenderedObjects(t *testing.T) {
	src := `name: t
vars:
  port: 8080
  container: {name: web, image: nginx, command: [serve, 8080]}
steps:
  - id: web
    apply:
      objects:
        - apiVersion: v1
          kind: Pod
          metadata: {name: web}
          spec:
            containers: ["${{ vars.container }}"]
`
	c := &clustertest.Cluster{}
	o := runWith(t, src, actions.Solve, c, false)
	s := o.Steps[0]
	if s.Status != Failed || s.Class != ClassConfig || o.Class != ClassConfig {
		t.Fatalf("step %s (%s), run %s: %s; want failed as config", s.Status, s.Class, o.Class, s.Error)
	}
	want := `p.yaml:13:26: objects[0]: Pod web: spec.containers[0].command[1]: expected string, got int 8080`
	if !strings.HasSuffix(s.Error, want) {
		t.Errorf("error %q, want it to end in %q", s.Error, want)
	}
	if n := len(c.Objects()); n != 0 {
		t.Errorf("%d objects sent", n)
	}
}

// refusesShape is a cluster whose API server refuses every applied
// object for its shape, naming a value in its own notation, as the API
// server does for a kind labrun has no schema of.
type refusesShape struct {
	clustertest.Cluster
	field string
	line  int // where the refused object's document starts
}

func (c *refusesShape) Apply(ctx context.Context, sources []cluster.ManifestSource, req cluster.ApplyRequest) ([]cluster.AppliedObject, error) {
	reason := "expected string, got &value.valueUnstructured{Value:8080}"
	return nil, fmt.Errorf("objects[0] document 1 (line 1): %w", &cluster.InvalidObjectError{
		Source: 0, File: sources[0].Path, Line: c.line, Field: c.field, Reason: reason,
		Err: errors.New("apply Widget \"w\": InternalError (500): failed to create typed patch object (lab/w; lab.labrun.io/v1, Kind=Widget): " + c.field + ": " + reason),
	})
}

// The API server's refusal of an object's shape is the lab's fault: the
// step fails as config, not as a cluster that did not answer, at the
// value the server names.
func TestApplyRefusedShapeIsConfig(t *testing.T) {
	src := `name: t
vars:
  port: 8080
steps:
  - id: widget
    apply:
      objects:
        - apiVersion: lab.labrun.io/v1
          kind: Widget
          metadata: {name: w, namespace: lab}
          spec:
            ports:
              - {name: http, port: "${{ vars.port }}"}
`
	o := runWith(t, src, actions.Solve, &refusesShape{field: `.spec.ports[name="http"].port`, line: 1}, false)
	s := o.Steps[0]
	if s.Status != Failed || s.Class != ClassConfig || o.Class != ClassConfig {
		t.Fatalf("step %s (%s), run %s: %s; want failed as config", s.Status, s.Class, o.Class, s.Error)
	}
	want := `p.yaml:13:36: the API server refused Widget w for its shape: spec.ports[0].port: expected string, got 8080: `
	if !strings.Contains(s.Error, want) {
		t.Errorf("error %q, want it to hold %q", s.Error, want)
	}
}

// A manifest file whose path is known only when the step runs is checked
// then, each problem at its line in the file; manifest text rendered at
// run time, at its line in the text.
func TestApplyChecksFilesAndTextAtRun(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "web.yaml"), []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web}\ndata:\n  port: 8080\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("LAB_DIR", dir)
	src := `name: t
env: [LAB_DIR]
vars:
  n: 3
steps:
  - id: file
    apply: {files: ["${{ env.LAB_DIR }}/web.yaml"]}
  - id: text
    apply:
      manifest: |
        apiVersion: v1
        kind: Service
        metadata: {name: web}
        spec:
          ports: [{port: "${{ vars.n }}"}]
`
	c := &clustertest.Cluster{}
	o := runWith(t, src, actions.Solve, c, true)
	for i, want := range []*regexp.Regexp{
		regexp.MustCompile(regexp.QuoteMeta(filepath.Join(dir, "web.yaml")+`:5:9: ConfigMap web: data.port: expected string, got int 8080; quote it: "8080"`) + `$`),
		// the manifest's text is rendered at run: placed at the manifest
		regexp.MustCompile(`p\.yaml:10:\d+: ` + regexp.QuoteMeta(`manifest line 5: Service web: spec.ports[0].port: expected int, got string "3"`) + `$`),
	} {
		s := o.Steps[i]
		if s.Status != Failed || s.Class != ClassConfig || !want.MatchString(s.Error) {
			t.Errorf("step %s %s (%s): %s; want failed as config, ending in %s", s.ID, s.Status, s.Class, s.Error, want)
		}
	}
	if n := len(c.Objects()); n != 0 {
		t.Errorf("%d objects sent", n)
	}
}

// An object of a manifest file that the API server refuses for its shape
// fails the step as config at the value in the file.
func TestApplyRefusedShapeInFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "w.yaml")
	if err := os.WriteFile(path, []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n---\napiVersion: lab.labrun.io/v1\nkind: Widget\nmetadata: {name: w}\nspec:\n  ports:\n    - {name: http, port: 8080}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	src := "name: t\nsteps:\n  - id: widget\n    apply: {files: [" + path + "]}\n"
	o := runWith(t, src, actions.Solve, &refusesShape{field: `.spec.ports[name="http"].port`, line: 5}, false)
	s := o.Steps[0]
	want := path + `:10:26: the API server refused Widget w for its shape: spec.ports[0].port: expected string, got 8080: `
	if s.Status != Failed || s.Class != ClassConfig || !strings.HasPrefix(s.Error, want) {
		t.Errorf("step %s (%s): %s; want failed as config, starting %s", s.Status, s.Class, s.Error, want)
	}
}

// labrun check runs no apply step, so its compile leaves apply's
// manifests unread (Options.NoManifests); validate and run refuse them.
func TestNoManifestsForCheck(t *testing.T) {
	src := "name: t\nsteps:\n  - id: a\n    apply:\n      objects: [{apiVersion: v1, kind: ConfigMap, metadata: {name: c}, data: {n: 1}}]\n  - id: r\n    run: {argv: [\"true\"]}\n"
	dir := t.TempDir()
	path := filepath.Join(dir, "p.yaml")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(path, Options{}); err == nil || !strings.Contains(err.Error(), "data.n: expected string, got int 1") {
		t.Errorf("compiled for run: %v; want the manifest refused", err)
	}
	if _, err := Load(path, Options{NoManifests: true}); err != nil {
		t.Errorf("compiled for check: %v", err)
	}
}
