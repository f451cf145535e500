package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/labrun/labrun/actions"
	"github.com/labrun/labrun/internal/boundary/cluster"
	"github.com/labrun/labrun/internal/boundary/cluster/clustertest"
	"github.com/labrun/labrun/runner"
)

// Before the first step, run and check stop at once, exit 2, naming
// each permission the cluster refuses with the steps that need it;
// --no-preflight asks nothing; a preflight that cannot tell says so and
// lets the run go on.
func TestPreflightRefuses(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.yaml")
	os.WriteFile(path, []byte(`name: p
steps:
  - id: nodes
    get: {kind: Node}
  - id: shell
    exec: {namespace: lab, pod: web, container: c, argv: [true]}
  - id: apply
    apply: {objects: [{apiVersion: v1, kind: ConfigMap, metadata: {name: c}}]}
`), 0o644)
	plan, err := runner.Load(path, runner.Options{})
	if err != nil {
		t.Fatal(err)
	}
	asked := 0
	refuse := func(a cluster.Access) (bool, error) {
		asked++
		return a.Verb != "list" && a.Verb != "patch", nil
	}
	for _, c := range []struct {
		name   string
		mode   actions.Mode
		skip   bool
		allow  func(cluster.Access) (bool, error)
		code   int
		ok     bool
		asked  int
		stderr string
	}{
		// the steps' permissions, and for run the 3 of its Lease (a
		// check takes none)
		{"check", actions.Check, false, refuse, exitInvalid, false, 4,
			"labrun check: the cluster refuses 1 of the permissions the steps need:\n  list nodes (cluster-wide), for nodes\n" +
				"labrun rbac --mode check " + path + " prints the Roles that grant them.\n"},
		{"run", actions.Solve, false, refuse, exitInvalid, false, 10,
			"labrun run: the cluster refuses 2 of the permissions the steps need:\n  list nodes (cluster-wide), for nodes\n  patch configmaps (namespace default), for apply\n" +
				"labrun rbac --mode run " + path + " prints the Roles that grant them.\n"},
		{"skipped", actions.Check, true, refuse, 0, true, 0, ""},
		{"allowed", actions.Check, false, nil, 0, true, 0, ""},
		{"cannot tell", actions.Check, false, func(cluster.Access) (bool, error) { return false, errors.New("the review is forbidden\nand more") }, 0, true, 0,
			"labrun check: the permissions were not checked before the first step: the review is forbidden\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			asked = 0
			fake := &clustertest.Cluster{AllowFunc: c.allow}
			r := &runner.Runner{Plan: plan, Runtime: &actions.Runtime{Mode: c.mode, Cluster: func() (cluster.Cluster, error) { return fake, nil }}}
			var stderr bytes.Buffer
			code, ok := preflight(context.Background(), r, c.skip, false, &stderr)
			if code != c.code || ok != c.ok || stderr.String() != c.stderr {
				t.Errorf("got %d %v\n%s\nwant %d %v\n%s", code, ok, stderr.String(), c.code, c.ok, c.stderr)
			}
			if asked != c.asked {
				t.Errorf("asked %d permissions, want %d", asked, c.asked)
			}
		})
	}
}
