package helmrelease

import (
	"encoding/json"
	"testing"

	chartv2 "helm.sh/helm/v4/pkg/chart/v2"
)

// TestDiff lists each value that differs by its path, with what it was
// and is; a map only one side has differs in each of its values; a list
// is one value; a key with a dot is quoted as helm's --set writes it.
func TestDiff(t *testing.T) {
	for _, tc := range []struct {
		name, before, after, want string
	}{
		{"same", `{"a":{"b":1}}`, `{"a":{"b":1}}`, `[]`},
		{"changed leaf", `{"loadBalancer":{"mode":"snat"}}`, `{"loadBalancer":{"mode":"dsr"}}`,
			`[{"path":"loadBalancer.mode","before":"snat","after":"dsr"}]`},
		{"new map", `{}`, `{"loadBalancer":{"mode":"dsr","dsrDispatch":"opt"}}`,
			`[{"path":"loadBalancer.dsrDispatch","before":null,"after":"opt"},{"path":"loadBalancer.mode","before":null,"after":"dsr"}]`},
		{"removed", `{"routingMode":"native"}`, `{}`, `[{"path":"routingMode","before":"native","after":null}]`},
		{"list is one value", `{"a":[1,2]}`, `{"a":[1,3]}`, `[{"path":"a","before":[1,2],"after":[1,3]}]`},
		{"map to scalar", `{"a":{"b":1}}`, `{"a":2}`, `[{"path":"a","before":{"b":1},"after":2}]`},
		{"dotted key", `{"a.b":1}`, `{"a.b":2}`, `[{"path":"a\\.b","before":1,"after":2}]`},
		{"null is a value", `{"a":null}`, `{}`, `[{"path":"a","before":null,"after":null}]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var before, after map[string]any
			if err := json.Unmarshal([]byte(tc.before), &before); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal([]byte(tc.after), &after); err != nil {
				t.Fatal(err)
			}
			got, err := json.Marshal(Diff(before, after))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("Diff(%s, %s)\ngot  %s\nwant %s", tc.before, tc.after, got, tc.want)
			}
		})
	}
}

// Each upgrade gets a copy of the loaded chart that Helm may write into
// (reuseValues replaces its Values; a disabled dependency is removed)
// without the next upgrade with the same chart seeing it.
func TestFreshChart(t *testing.T) {
	sub := &chartv2.Chart{Metadata: &chartv2.Metadata{Name: "sub"}, Values: map[string]any{"x": map[string]any{"y": 1}}}
	top := &chartv2.Chart{Metadata: &chartv2.Metadata{Name: "top", Dependencies: []*chartv2.Dependency{{Name: "sub", Enabled: true}}}, Values: map[string]any{"tier": "front"}}
	top.SetDependencies(sub)
	c := fresh(top)
	c.Values = map[string]any{"tier": "mid"}
	c.Dependencies()[0].Values["x"].(map[string]any)["y"] = 2
	c.Metadata.Dependencies[0].Enabled = false
	c.SetDependencies()
	if top.Values["tier"] != "front" || len(top.Dependencies()) != 1 || top.Metadata.Dependencies[0].Enabled != true {
		t.Errorf("writing into the copy changed the loaded chart: values %v, %d dependencies, enabled %v", top.Values, len(top.Dependencies()), top.Metadata.Dependencies[0].Enabled)
	}
	if sub.Values["x"].(map[string]any)["y"] != 1 {
		t.Errorf("writing into the copy's dependency changed the loaded one's values: %v", sub.Values)
	}
	if again := fresh(top); again.Dependencies()[0].Parent() != again {
		t.Errorf("a copied dependency's parent is not the copy")
	}
}
