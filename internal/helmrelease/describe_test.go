package helmrelease

import (
	"encoding/json"
	"testing"
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
