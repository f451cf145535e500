package jsonschema

import (
	"encoding/json"
	"strings"
	"testing"
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
	s, err := Parse([]byte(svcSchema))
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

func TestParseRejectsUnsupportedKeywords(t *testing.T) {
	for doc, want := range map[string]string{
		`{"type": "object", "patternProperties": {}}`: `#/patternProperties: keyword "patternProperties" is not supported`,
		`{"type": "thing"}`:                           `#/type: unknown type "thing"`,
		`{"properties": {"a": 3}}`:                    `#/properties/a: a schema must be an object or a boolean`,
		`{"pattern": "("}`:                            `#/pattern: error parsing regexp`,
		`not json`:                                    `not valid JSON`,
		`{"minItems": -1}`:                            `#/minItems: must be a whole number from 0 up`,
		`{"$ref": "other.json#/a"}`:                   `#/$ref: only references to the schema's own $defs`,
		`{"$ref": "#/$defs/nope"}`:                    `#/$ref: no definition "nope" in $defs`,
	} {
		_, err := Parse([]byte(doc))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%s) = %v, want %q", doc, err, want)
		}
	}
}

func TestCombinators(t *testing.T) {
	s, err := Parse([]byte(`{"anyOf": [{"type": "integer"}, {"type": "string", "pattern": "^[0-9]+$"}], "not": {"const": 13}}`))
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
	s, err := Parse([]byte(`{
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
