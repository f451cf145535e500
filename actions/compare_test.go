package actions

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/labrun/labrun/internal/lang/eval"
)

// jsonValue builds a rendered json spec from JSON text, keeping the key
// order of its objects as a playbook's mapping does.
func jsonValue(t *testing.T, text string) any {
	t.Helper()
	v := literalSpec(t, text)
	x, err := v.Eval(nil)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

// check names the first differing path of a nested file and both values
// there, follows loose and hints by path, and compares lists as multisets.
func TestGradeNestedPaths(t *testing.T) {
	want := `{"after": {"identity": 4242, "ip": "10.0.0.7", "labels": ["app=web", "ns=lab"]},
	  "pods": [{"name": "a", "ip": "10.0.0.1"}, {"name": "b", "ip": "10.0.0.2"}],
	  "seconds": 0.5}`
	tests := []struct {
		name, learner string
		loose         any
		hints         map[string]string
		want          []string
	}{
		{"same, lists in another order", `{"after": {"identity": 4242, "ip": "10.0.0.7", "labels": ["ns=lab", "app=web"]},
		  "pods": [{"name": "b", "ip": "10.0.0.2"}, {"name": "a", "ip": "10.0.0.1"}], "seconds": 0.5}`, nil, nil, nil},
		{"a nested number", `{"after": {"identity": 4243, "ip": "10.0.0.7", "labels": ["app=web", "ns=lab"]},
		  "pods": [{"name": "a", "ip": "10.0.0.1"}, {"name": "b", "ip": "10.0.0.2"}], "seconds": 0.5}`, nil,
			map[string]string{"after": "the endpoint after the rollout", "after.identity": "cilium-dbg endpoint list"},
			[]string{"x.json: after.identity is 4243, expected 4242 (hint: cilium-dbg endpoint list)"}},
		{"an item of a list of objects, loose elsewhere", `{"after": {"identity": 1, "ip": "10.0.0.7", "labels": ["app=web", "ns=lab"]},
		  "pods": [{"name": "b", "ip": "10.0.0.2"}, {"name": "a", "ip": "10.0.0.9"}], "seconds": 7}`,
			[]any{"after.identity", "seconds"}, map[string]string{"pods[*].ip": "the pod's IP"},
			[]string{`x.json: pods[1].ip is "10.0.0.9", expected "10.0.0.1" (hint: the pod's IP)`}},
		{"loose pod IPs by reason", `{"after": {"identity": 4242, "ip": "10.0.0.7", "labels": ["app=web", "ns=lab"]},
		  "pods": [{"name": "b", "ip": "10.1.0.2"}, {"name": "a", "ip": "10.1.0.1"}], "seconds": 0.5}`,
			mapOf("pods[*].ip", "pods get new IPs"), nil, nil},
		{"loose values keep their type", `{"after": {"identity": "4242", "ip": "10.0.0.7", "labels": ["app=web", "ns=lab"]},
		  "pods": [{"name": "a", "ip": "10.0.0.1"}, {"name": "b", "ip": "10.0.0.2"}], "seconds": 0.5}`,
			[]any{"after.identity"}, nil, []string{`x.json: after.identity is a string "4242", expected a number`}},
		{"a missing nested key, an extra one, a scalar list item", `{"after": {"ip": "10.0.0.7", "labels": ["app=web", "ns=other"], "node": 1},
		  "pods": [{"name": "a", "ip": "10.0.0.1"}, {"name": "b", "ip": "10.0.0.2"}], "seconds": 0.5}`, nil, nil,
			[]string{`x.json: key "after.identity" is missing`, `x.json: after.labels[1] is "ns=other", expected "ns=lab"`, `x.json: after.node is not expected (it is 1)`}},
		{"an item changed to a later one's value is the one named", `{"after": {"identity": 4242, "ip": "10.0.0.7", "labels": ["ns=lab", "ns=lab"]},
		  "pods": [{"name": "a", "ip": "10.0.0.1"}, {"name": "b", "ip": "10.0.0.2"}], "seconds": 0.5}`, nil, nil,
			[]string{`x.json: after.labels[0] is "ns=lab", expected "app=web"`}},
		{"a list of another length", `{"after": {"identity": 4242, "ip": "10.0.0.7", "labels": ["app=web"]},
		  "pods": [{"name": "a", "ip": "10.0.0.1"}, {"name": "b", "ip": "10.0.0.2"}], "seconds": 0.5}`, nil, nil,
			[]string{`x.json: after.labels has 1 item ["app=web"], expected 2 ["app=web","ns=lab"]`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			if err := os.WriteFile(filepath.Join(root, "x.json"), []byte(tt.learner), 0o600); err != nil {
				t.Fatal(err)
			}
			rt := &Runtime{Mode: Check, Out: createOut(t, root)}
			res, err := writeFile(context.Background(), rt, &WriteSpec{Path: "x.json", JSON: jsonValue(t, want), Loose: tt.loose, Hints: tt.hints})
			if (err != nil) != (len(tt.want) > 0) {
				t.Fatalf("err %v, want %q", err, tt.want)
			}
			if !reflect.DeepEqual(res.Problems, append([]string{}, tt.want...)) {
				t.Errorf("problems\n%q\nwant\n%q", res.Problems, tt.want)
			}
		})
	}
}

func mapOf(kv ...string) *eval.Map {
	m := eval.NewMap()
	for i := 0; i < len(kv); i += 2 {
		m.Set(kv[i], kv[i+1])
	}
	return m
}

// A loose or hints path the rendered file does not have is refused when
// the step runs (no schema or literal could tell before).
func TestGradeRefusesUnknownPaths(t *testing.T) {
	rt := &Runtime{Mode: Check, Out: createOut(t, t.TempDir())}
	spec := &WriteSpec{Path: "x.json", JSON: jsonValue(t, `{"after": {"identity": 1}, "pods": [{"ip": "a"}], "none": null, "empty": []}`),
		Loose: []any{"after.identiy", "pods[*].ipp", "none.x", "empty[*].y"}, Hints: map[string]string{"pods.ip": "x"}}
	_, err := writeFile(context.Background(), rt, spec)
	want := "loose after.identiy: the file as rendered has no such value: after has no key \"identiy\" (did you mean \"identity\"?); its keys: identity\n" +
		"loose pods[*].ipp: the file as rendered has no such value: pods[*] has no key \"ipp\" (did you mean \"ip\"?); its keys: ip\n" +
		"hints pods.ip: the file as rendered has no such value: pods is a list; write pods[*] for its items"
	if err == nil || err.Error() != want {
		t.Errorf("err\n%v\nwant\n%s", err, want)
	}
}
