package actions

import (
	"errors"
	"maps"
	"strings"
	"testing"

	"github.com/labrun/labrun/internal/boundary/cluster"
	"github.com/labrun/labrun/internal/boundary/cluster/clustertest"
)

func node(name string, labels map[string]any) map[string]any {
	return map[string]any{"apiVersion": "v1", "kind": "Node", "metadata": map[string]any{"name": name, "namespace": "default", "labels": labels}}
}

// What the label action makes of the cluster's answer: the labels before
// and after per object, and how many changed. That the API server changes
// them in place is proven in kube's e2e tests.
func TestLabel(t *testing.T) {
	c := &clustertest.Cluster{}
	c.Put(node("n1", map[string]any{"kubernetes.io/hostname": "n1"}))
	c.Put(node("n2", map[string]any{"kubernetes.io/hostname": "n2", "tier": "back"}))
	rt := runtimeWith(c)
	tier := func(v string) map[string]string { return map[string]string{"tier": v} }

	for _, tc := range []struct {
		name        string
		spec        LabelSpec
		changed     int
		before, now []map[string]string
	}{
		{"set on one", LabelSpec{ObjectQuery: cluster.ObjectQuery{Kind: "Node", Name: "n1"}, Labels: tier("front")}, 1,
			[]map[string]string{{"kubernetes.io/hostname": "n1"}},
			[]map[string]string{{"kubernetes.io/hostname": "n1", "tier": "front"}}},
		{"the same again changes nothing", LabelSpec{ObjectQuery: cluster.ObjectQuery{Kind: "Node", Name: "n1"}, Labels: tier("front")}, 0,
			[]map[string]string{{"kubernetes.io/hostname": "n1", "tier": "front"}},
			[]map[string]string{{"kubernetes.io/hostname": "n1", "tier": "front"}}},
		{"overwrite", LabelSpec{ObjectQuery: cluster.ObjectQuery{Kind: "Node", Name: "n2"}, Labels: tier("front")}, 1,
			[]map[string]string{{"kubernetes.io/hostname": "n2", "tier": "back"}},
			[]map[string]string{{"kubernetes.io/hostname": "n2", "tier": "front"}}},
		{"remove by selector", LabelSpec{ObjectQuery: cluster.ObjectQuery{Kind: "Node", Selector: "tier=front"}, Remove: []string{"tier", "absent"}}, 2,
			[]map[string]string{{"kubernetes.io/hostname": "n1", "tier": "front"}, {"kubernetes.io/hostname": "n2", "tier": "front"}},
			[]map[string]string{{"kubernetes.io/hostname": "n1"}, {"kubernetes.io/hostname": "n2"}}},
		{"removing again is fine", LabelSpec{ObjectQuery: cluster.ObjectQuery{Kind: "Node", Name: "n1"}, Remove: []string{"tier"}}, 0,
			[]map[string]string{{"kubernetes.io/hostname": "n1"}},
			[]map[string]string{{"kubernetes.io/hostname": "n1"}}},
	} {
		r, err := run[LabelResult](t, rt, "label", &tc.spec)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if r.Changed != tc.changed || len(r.Objects) != len(tc.now) {
			t.Fatalf("%s: %+v, want %d objects, %d changed", tc.name, r, len(tc.now), tc.changed)
		}
		for i, o := range r.Objects {
			if !maps.Equal(o.Before, tc.before[i]) || !maps.Equal(o.Labels, tc.now[i]) || o.Changed != !maps.Equal(tc.before[i], tc.now[i]) {
				t.Errorf("%s: object %d is %+v, want before %v, now %v", tc.name, i, o, tc.before[i], tc.now[i])
			}
		}
	}
	r, err := run[LabelResult](t, rt, "label", &LabelSpec{ObjectQuery: cluster.ObjectQuery{Kind: "Node", Name: "n3"}, Labels: tier("x")})
	if !errors.Is(err, clustertest.ErrNotFound) || r == nil || r.Objects == nil {
		t.Errorf("label of a missing node: %+v %v", r, err)
	}
}

func TestLabelCheck(t *testing.T) {
	label, _ := Lookup("label")
	for spec, want := range map[string]string{
		"{kind: Node, labels: {a: b}}":                        "label needs name or selector",
		"{kind: Node, name: n1}":                              "label needs labels to set or keys to remove",
		"{kind: Node, name: n1, labels: {a: b}, remove: [a]}": `label "a" is both set and removed`,
		"{kind: Node, selector: x=y, lables: {a: b}}":         `unknown key "lables" (did you mean "labels"?)`,
		"{kind: Node, name: n1, labels: {a: b}, remove: [c]}": "",
	} {
		_, errs := label.CheckSpec(literalSpec(t, spec), &StaticContext{})
		if got := errs.Error(); (want == "") != (len(errs) == 0) || !strings.Contains(got, want) {
			t.Errorf("%s: problems %q, want %q", spec, got, want)
		}
	}
}
