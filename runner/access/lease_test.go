package access

import (
	"testing"

	"github.com/labrun/labrun/actions"
)

// A run's Lease is in the one namespace its steps stay in, in labrun run
// and check alike, else in kube-system for the whole cluster; a plan that
// calls no cluster holds none, and needs no permission for it. A check
// takes no Lease (it only reads), so its Roles grant none.
func TestLeaseNamespace(t *testing.T) {
	for _, c := range []struct{ name, steps, want string }{
		{"one namespace", `
  - id: web
    apply: {objects: [{apiVersion: v1, kind: ConfigMap, metadata: {name: c, namespace: student-07}}]}
  - id: read
    get: {kind: ConfigMap, namespace: student-07}
`, "student-07"},
		{"the connection's namespace", `
  - id: read
    get: {kind: Pod}
`, "home"},
		{"a node", `
  - id: read
    get: {kind: Pod, namespace: student-07}
  - id: nodes
    get: {kind: Node}
`, "kube-system"},
		{"check reads another namespace than the solve writes", `
  - id: web
    apply: {objects: [{apiVersion: v1, kind: ConfigMap, metadata: {name: c, namespace: student-07}}]}
  - id: read
    only: check
    get: {kind: ConfigMap, namespace: teacher}
`, "kube-system"},
		{"no cluster", `
  - id: hello
    run: {argv: [echo, hi]}
`, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			plan := load(t, c.steps, nil)
			got, err := LeaseNamespace(plan, Options{Namespace: "home"})
			if err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Errorf("LeaseNamespace = %q, want %q", got, c.want)
			}
			for _, mode := range []actions.Mode{actions.Solve, actions.Check} {
				needs, err := Derive(plan, Options{Mode: mode, Namespace: "home"})
				if err != nil {
					t.Fatal(err)
				}
				leases := 0
				for _, n := range needs {
					if n.Resource == "leases" && n.Namespace == c.want && len(n.Steps) == 1 && n.Steps[0] == LeaseStep {
						leases++
					}
				}
				if want := map[bool]int{true: 0, false: 3}[c.want == "" || mode == actions.Check]; leases != want {
					t.Errorf("mode %v: %d lease permissions in %q, want %d:\n%s", mode, leases, c.want, want, String(needs))
				}
			}
		})
	}
}
