package report

import (
	"encoding/json"
	"reflect"
	"testing"
)

// skim replaces exactly the steps' results by empty values of their kind,
// wherever the text puts spaces, strings with brackets or escaped keys,
// and keeps everything else as it was.
func TestSkim(t *testing.T) {
	tests := []struct{ in, want string }{
		{`{"name": "x", "steps": [{"id": "a", "result": {"s": "}]\"{", "l": [1, {"x": []}]}}, {"id": "b"}, {"result": [1, 2]}], "tasks": []}`,
			`{"name": "x", "steps": [{"id": "a", "result": {}}, {"id": "b"}, {"result": []}], "tasks": []}`},
		{"{\n  \"steps\" : [ { \"res\\u0075lt\" :\n {\"a\": 1} , \"id\":\"c\" } ]\n}", "{\n  \"steps\" : [ { \"res\\u0075lt\" :\n {} , \"id\":\"c\" } ]\n}"},
		// only the steps' results: another member named result stays
		{`{"result": {"a": 1}, "steps": [{"result": "text"}, 3], "tasks": [{"result": {"a": 1}}]}`,
			`{"result": {"a": 1}, "steps": [{"result": "text"}, 3], "tasks": [{"result": {"a": 1}}]}`},
		{`[{"steps": [{"result": {}}]}]`, `[{"steps": [{"result": {}}]}]`},
	}
	for _, tt := range tests {
		got := string(skim([]byte(tt.in)))
		if got != tt.want {
			t.Errorf("skim(%s)\n = %s\nwant %s", tt.in, got, tt.want)
		}
		var a, b any
		if json.Unmarshal([]byte(got), &a) != nil || json.Unmarshal([]byte(tt.want), &b) != nil || !reflect.DeepEqual(a, b) {
			t.Errorf("skim(%s) is not the JSON wanted", tt.in)
		}
	}
}
