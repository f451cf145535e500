package access

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/labrun/labrun/actions"
	"github.com/labrun/labrun/internal/boundary/cluster"
	"github.com/labrun/labrun/internal/boundary/cluster/clustertest"
)

const preflightSteps = `
  - id: pods
    get: {kind: Pod}
  - id: nodes
    get: {kind: Node}
  - id: shell
    exec: {namespace: "${{ vars.ns }}", pod: web, container: c, argv: [true]}
  - id: apply
    apply: {objects: [{apiVersion: v1, kind: ConfigMap, metadata: {name: c}}]}
`

// The preflight asks the cluster for every permission the steps need,
// in the connection's namespace, and names each one it refuses with the
// steps that need it.
func TestPreflight(t *testing.T) {
	plan := load(t, preflightSteps, nil)
	var asked []string
	allow := func(refuse ...string) func(cluster.Access) (bool, error) {
		return func(a cluster.Access) (bool, error) {
			asked = append(asked, a.String())
			for _, r := range refuse {
				if a.String() == r {
					return false, nil
				}
			}
			return true, nil
		}
	}
	for _, c := range []struct {
		name   string
		mode   actions.Mode
		refuse []string
		asked  int
		want   string

		noLock bool
	}{
		// check: the 5 permissions of its steps, and no Lease; run: 8
		// of its steps, 3 of its Lease (in kube-system: the steps read
		// over the cluster)
		{"all allowed", actions.Check, nil, 5, "", false},
		{"check refused", actions.Check, []string{"list nodes (cluster-wide)", "create pods/exec (namespace lab)", "patch configmaps (namespace mine)"}, 5,
			"the cluster refuses 2 of the permissions the steps need:\n  list nodes (cluster-wide), for nodes\n  create pods/exec (namespace lab), for shell", false},
		{"run refused", actions.Solve, []string{"patch configmaps (namespace mine)"}, 11,
			"the cluster refuses 1 of the permissions the steps need:\n  patch configmaps (namespace mine), for apply", false},
		{"lease refused", actions.Solve, []string{"update leases.coordination.k8s.io (namespace kube-system)"}, 11,
			"the cluster refuses 1 of the permissions the steps need:\n  update leases.coordination.k8s.io (namespace kube-system), for the run's lease", false},
		{"no lock", actions.Solve, []string{"update leases.coordination.k8s.io (namespace kube-system)"}, 8, "", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			asked = nil
			fake := &clustertest.Cluster{Namespace: "mine", AllowFunc: allow(c.refuse...)}
			err := PreflightWith(context.Background(), plan, Options{Mode: c.mode, NoLock: c.noLock}, func() (cluster.Cluster, error) { return fake, nil })
			got := ""
			if err != nil {
				got = err.Error()
				var r *Refused
				if !errors.As(err, &r) {
					t.Errorf("%T is no *Refused", err)
				}
			}
			if got != c.want {
				t.Errorf("got  %q\nwant %q", got, c.want)
			}
			if len(asked) != c.asked {
				t.Errorf("asked %d permissions, want %d: %v", len(asked), c.asked, asked)
			}
			if !strings.Contains(strings.Join(asked, "\n"), "list pods (namespace mine)") {
				t.Errorf("the connection's namespace was not asked for: %v", asked)
			}
		})
	}
}

// Nothing is asked of a plan that calls no cluster; a cluster that
// cannot be connected to or does not answer for now is left to the
// steps; a refused question and unknown permissions are errors the run
// may go on after.
func TestPreflightCannotTell(t *testing.T) {
	connected := false
	none := func() (cluster.Cluster, error) { connected = true; return nil, errors.New("no usable kubeconfig") }
	if err := Preflight(context.Background(), load(t, "  - id: s\n    run: {argv: [true]}\n", nil), actions.Solve, none); err != nil || connected {
		t.Errorf("a plan without cluster steps: %v, connected %v", err, connected)
	}
	plan := load(t, preflightSteps, nil)
	if err := Preflight(context.Background(), plan, actions.Solve, none); err != nil || !connected {
		t.Errorf("no connection: %v, connected %v", err, connected)
	}
	down := &clustertest.Cluster{AllowFunc: func(cluster.Access) (bool, error) {
		return false, &cluster.TransientError{Err: errors.New("dial tcp: connection refused"), Reason: "connection refused"}
	}}
	if err := Preflight(context.Background(), plan, actions.Solve, func() (cluster.Cluster, error) { return down, nil }); err != nil {
		t.Errorf("a server that does not answer for now: %v", err)
	}
	refusing := &clustertest.Cluster{AllowFunc: func(cluster.Access) (bool, error) { return false, errors.New("selfsubjectaccessreviews is forbidden") }}
	err := Preflight(context.Background(), plan, actions.Solve, func() (cluster.Cluster, error) { return refusing, nil })
	var r *Refused
	if err == nil || errors.As(err, &r) || err.Error() != "selfsubjectaccessreviews is forbidden" {
		t.Errorf("a server that refuses the question: %v", err)
	}
	unknown := load(t, "  - id: s\n    get: {kind: Widget}\n", nil)
	err = Preflight(context.Background(), unknown, actions.Solve, func() (cluster.Cluster, error) { return &clustertest.Cluster{}, nil })
	if err == nil || !strings.Contains(err.Error(), "the permissions the steps need are unknown") {
		t.Errorf("an unknown kind: %v", err)
	}
}
