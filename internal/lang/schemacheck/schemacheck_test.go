package schemacheck

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

const svcSchema = `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object",
  "required": ["service_id", "frontend", "backends"],
  "additionalProperties": false,
  "properties": {
    "service_id": {"type": "integer", "minimum": 1},
    "frontend": {"type": "string", "pattern": "^[0-9.]+:80$"},
    "backends": {"type": "array", "minItems": 2, "maxItems": 2, "uniqueItems": true, "items": {"type": "string"}},
    "mode": {"enum": ["True", "False"]},
    "ratio": {"type": "number", "exclusiveMaximum": 5}
  }
}`

// problems validates the JSON text doc and returns the problems as text.
func problems(t *testing.T, s *Schema, doc string) []string {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(doc), &v); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range s.Validate(v) {
		out = append(out, p.String())
	}
	return out
}

func TestValidate(t *testing.T) {
	s, err := Parse("svc.json", []byte(svcSchema))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		doc  string
		want []string
	}{
		{doc: `{"service_id": 7, "frontend": "10.43.0.5:80", "backends": ["a", "b"]}`},
		{doc: `{"service_id": "7", "frontend": "10.43.0.5:80", "backends": ["a", "b"]}`, want: []string{`/service_id: is a string "7", expected integer`}},
		{doc: `{"service_id": 7.5, "frontend": "x", "backends": ["a"]}`, want: []string{
			`/backends: has 1 items, expected at least 2`,
			`/frontend: "x" does not match pattern ^[0-9.]+:80$`,
			`/service_id: is a number 7.5, expected integer`}},
		{doc: `{"frontend": "1.2.3.4:80", "backends": ["a", "a"], "extra": 1}`, want: []string{
			`missing key "service_id"`,
			`/backends: items 0 and 1 are equal, expected unique items`,
			`/extra: is not an allowed key`}},
		{doc: `{"service_id": 0, "frontend": "1.2.3.4:80", "backends": ["a", "b"], "mode": "Strict", "ratio": 5}`, want: []string{
			`/mode: is "Strict", expected one of "True", "False"`,
			`/ratio: is 5, expected less than 5`,
			`/service_id: is 0, expected at least 1`}},
		{doc: `[]`, want: []string{`is an array [], expected object`}},
	}
	for _, tt := range tests {
		got := problems(t, s, tt.doc)
		if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
			t.Errorf("%s:\ngot  %q\nwant %q", tt.doc, got, tt.want)
		}
	}
}

// A schema that cannot be used is refused at file:line:col inside it,
// and a keyword JSON Schema would silently ignore is refused too.
func TestParseErrorsPointIntoTheSchema(t *testing.T) {
	for _, c := range []struct{ doc, want string }{
		{"{\n  \"type\": \"thing\"\n}", `s.json:2:3: not a valid JSON Schema: `},
		{"{\"properties\": {\n  \"a\": 3}}", `s.json:2:3: not a valid JSON Schema: is an integer 3, expected`},
		{"{\"properties\": {\n  \"a\": {\"pattern\": \"(\"}}}", `s.json:2:9: not a valid JSON Schema: "(" is not a valid regex`},
		{"not json", `s.json:1:2: schema is not valid JSON`},
		{"{\"minItems\": -1}", `s.json:1:2: not a valid JSON Schema: is -1, expected at least 0`},
		{"{\"$ref\": \"#/$defs/nope\"}", `s.json:1:1: $ref #/$defs/nope points to nothing in the schema`},
		{"{\"type\": \"object\",\n \"properties\": {\"n\": {\"type\": \"integer\", \"maxlength\": 3}}}", `s.json:2:42: unknown JSON Schema keyword "maxlength" (did you mean "maxLength"?)`},
		{"{\"requried\": [\"a\"]}", `s.json:1:2: unknown JSON Schema keyword "requried" (did you mean "required"?)`},
	} {
		_, err := Parse("s.json", []byte(c.doc))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Parse(%s) = %v, want %q", c.doc, err, c.want)
		}
	}
	// Extensions and values that look like keywords are not keywords.
	for _, doc := range []string{
		`{"x-labrun-note": 1, "type": "object"}`,
		`{"properties": {"requried": {"type": "string"}}, "default": {"maxlength": 1}, "enum": [{"a": 1}]}`,
	} {
		if _, err := Parse("s.json", []byte(doc)); err != nil {
			t.Errorf("Parse(%s): %v", doc, err)
		}
	}
}

// What the hand-written subset refused, lab authors can now write:
// oneOf with a const per form, if/then, dependentRequired and format.
func TestFullVocabulary(t *testing.T) {
	s, err := Parse("s.json", []byte(`{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object",
  "properties": {
    "mode": {"const": "dsr"},
    "addr": {"format": "ipv4"},
    "entry": {"oneOf": [
      {"type": "object", "properties": {"kind": {"const": "svc"}, "id": {"type": "integer"}}, "required": ["kind", "id"]},
      {"type": "object", "properties": {"kind": {"const": "pod"}, "name": {"type": "string"}}, "required": ["kind", "name"]}
    ]}
  },
  "if": {"properties": {"mode": {"const": "dsr"}}, "required": ["mode"]},
  "then": {"required": ["addr"]},
  "dependentRequired": {"backend": ["port"]}
}`))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		doc  string
		want []string
	}{
		{doc: `{"mode": "dsr", "addr": "10.0.0.1", "entry": {"kind": "svc", "id": 3}, "backend": "b", "port": 80}`},
		{doc: `{"mode": "snat"}`, want: []string{`/mode: is "snat", expected "dsr"`}},
		{doc: `{"mode": "dsr"}`, want: []string{`missing key "addr"`}},
		{doc: `{"addr": "10.0.0.300"}`, want: []string{`/addr: "10.0.0.300" is not a valid ipv4: `}},
		{doc: `{"backend": "b"}`, want: []string{`has key "backend", so expected key "port" too`}},
		{doc: `{"entry": {"kind": "pod", "id": 3}}`, want: []string{`/entry: matches none of the forms of oneOf (form 1: /entry/kind: is "pod", expected "svc"; form 2: missing key "name")`}},
	}
	for _, tt := range tests {
		got := problems(t, s, tt.doc)
		if len(got) != len(tt.want) {
			t.Errorf("%s:\ngot  %q\nwant %q", tt.doc, got, tt.want)
			continue
		}
		for i := range got {
			if !strings.HasPrefix(got[i], tt.want[i]) {
				t.Errorf("%s:\ngot  %q\nwant %q", tt.doc, got, tt.want)
			}
		}
	}
}

// A schema without $schema is read as 2020-12; one that names draft-07 is
// read as draft-07 (items as a list of schemas, dependencies).
func TestDraft07(t *testing.T) {
	s, err := Parse("s.json", []byte(`{
  "$schema": "http://json-schema.org/draft-07/schema#",
  "type": "array",
  "items": [{"type": "string"}, {"type": "integer"}],
  "additionalItems": false
}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := problems(t, s, `["a", 1]`); len(got) != 0 {
		t.Errorf("valid tuple: %q", got)
	}
	if got := strings.Join(problems(t, s, `["a", "b", 3]`), "\n"); !strings.Contains(got, `/1: is a string "b", expected integer`) || !strings.Contains(got, `has 1 items more than the schema allows`) {
		t.Errorf("bad tuple: %q", got)
	}
}

// Load names an unreadable file by its path error, so write's check can
// place it at the step's schema key, and a file's $ref to a sibling works.
func TestLoad(t *testing.T) {
	dir := t.TempDir()
	if _, err := Load(filepath.Join(dir, "none.json")); !os.IsNotExist(err) {
		t.Errorf("missing file: %v", err)
	}
	os.WriteFile(filepath.Join(dir, "port.json"), []byte(`{"type": "integer", "maximum": 65535}`), 0o644)
	os.WriteFile(filepath.Join(dir, "s.json"), []byte(`{"properties": {"port": {"$ref": "port.json"}}}`), 0o644)
	s, err := Load(filepath.Join(dir, "s.json"))
	if err != nil {
		t.Fatal(err)
	}
	if got := problems(t, s, `{"port": 70000}`); strings.Join(got, "") != `/port: is 70000, expected at most 65535` {
		t.Errorf("got %q", got)
	}
	os.WriteFile(filepath.Join(dir, "s.json"), []byte(`{"properties": {"port": {"$ref": "gone.json"}}}`), 0o644)
	if _, err := Load(filepath.Join(dir, "s.json")); err == nil || !strings.Contains(err.Error(), "s.json:1:1: $ref to "+filepath.Join(dir, "gone.json")+": no such file or directory") {
		t.Errorf("missing $ref target: %v", err)
	}
	if _, err := Parse("s.json", []byte(`{"$ref": "https://example.com/s.json"}`)); err == nil || !strings.Contains(err.Error(), "s.json:1:1: $ref to https://example.com/s.json: only schema files on this machine are read") {
		t.Errorf("a remote $ref is not fetched: %v", err)
	}
}

func TestCombinators(t *testing.T) {
	s, err := Parse("s.json", []byte(`{"anyOf": [{"type": "integer"}, {"type": "string", "pattern": "^[0-9]+$"}], "not": {"const": 13}}`))
	if err != nil {
		t.Fatal(err)
	}
	for doc, ok := range map[string]bool{`7`: true, `"7"`: true, `"x"`: false, `13`: false, `true`: false} {
		var v any
		json.Unmarshal([]byte(doc), &v)
		if got := len(s.Validate(v)) == 0; got != ok {
			t.Errorf("%s valid = %v, want %v", doc, got, ok)
		}
	}
}

// References into $defs, also recursive ones (a tree of nodes), key names
// and key counts: what labrun's playbook schema uses.
func TestRefsAndObjectKeys(t *testing.T) {
	s, err := Parse("s.json", []byte(`{
  "$ref": "#/$defs/node",
  "$defs": {
    "node": {
      "type": "object", "required": ["name"], "additionalProperties": false,
      "properties": {
        "name": {"type": "string"},
        "children": {"type": "object", "minProperties": 1, "maxProperties": 2,
          "propertyNames": {"pattern": "^[a-z]+$"},
          "additionalProperties": {"$ref": "#/$defs/node"}}
      }
    }
  }
}`))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		doc  string
		want []string
	}{
		{doc: `{"name": "root", "children": {"a": {"name": "a", "children": {"b": {"name": "b"}}}}}`},
		{doc: `{"name": "root", "children": {"a": {"name": "a", "children": {"b": {"nam": "b"}}}}}`, want: []string{
			`/children/a/children/b: missing key "name"`,
			`/children/a/children/b/nam: is not an allowed key`}},
		{doc: `{"name": "root", "children": {}}`, want: []string{`/children: has 0 keys, expected at least 1`}},
		{doc: `{"name": "root", "children": {"a": {"name": "a"}, "b": {"name": "b"}, "c": {"name": "c"}}}`, want: []string{`/children: has 3 keys, expected at most 2`}},
		{doc: `{"name": "root", "children": {"A1": {"name": "x"}}}`, want: []string{`/children: key "A1": "A1" does not match pattern ^[a-z]+$`}},
	}
	for _, tt := range tests {
		got := problems(t, s, tt.doc)
		if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
			t.Errorf("%s:\ngot  %q\nwant %q", tt.doc, got, tt.want)
		}
	}
}

// A learner's file is untrusted: any JSON value gets problems or none,
// never a panic, and every problem names where it is.
func FuzzValidate(f *testing.F) {
	s, err := Parse("svc.json", []byte(svcSchema))
	if err != nil {
		f.Fatal(err)
	}
	for _, seed := range []string{`{"service_id": 7, "frontend": "10.43.0.5:80", "backends": ["a", "b"]}`, `[]`, `{"backends": [1, 1], "mode": null}`, `"x"`} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, doc string) {
		var v any
		if json.Unmarshal([]byte(doc), &v) != nil {
			return
		}
		for _, p := range s.Validate(v) {
			if p.Msg == "" || (p.Path != "" && !strings.HasPrefix(p.Path, "/")) {
				t.Fatalf("problem %#v", p)
			}
		}
	})
}

func TestLocate(t *testing.T) {
	doc := []byte("{\n  \"a\": [1,\n    {\"b\": 2}],\n  \"c\": 3\n}")
	for ptr, want := range map[string][2]int{"": {1, 1}, "/a": {2, 3}, "/a/1": {3, 5}, "/a/1/b": {3, 6}, "/c": {4, 3}, "/a/1/missing": {3, 5}} {
		if l, c := Locate(doc, ptr); l != want[0] || c != want[1] {
			t.Errorf("Locate(%q) = %d:%d, want %d:%d", ptr, l, c, want[0], want[1])
		}
	}
}

// A schema, or a file its $ref names, that is not a regular file is
// refused without waiting on it: opening a FIFO for reading blocks until
// a writer comes, and validate hung there.
func TestLoadRefusesFIFO(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo.json"), 0o600); err != nil {
		t.Skipf("cannot make a FIFO: %v", err)
	}
	os.WriteFile(filepath.Join(dir, "ref.json"), []byte(`{"properties": {"port": {"$ref": "fifo.json"}}}`), 0o644)
	for _, tc := range []struct{ file, want string }{
		{"fifo.json", filepath.Join(dir, "fifo.json") + " is a named pipe (FIFO), not a regular file"},
		{"ref.json", "ref.json:1:1: $ref to file://" + filepath.Join(dir, "fifo.json") + ": " + filepath.Join(dir, "fifo.json") + " is a named pipe (FIFO), not a regular file"},
		{".", dir + " is a directory, not a regular file"},
	} {
		done := make(chan error, 1)
		go func() { _, err := Load(filepath.Join(dir, tc.file)); done <- err }()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Load(%s): error %v, want one saying %q", tc.file, err, tc.want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("Load(%s) still blocked after 5s", tc.file)
		}
	}
}
