package yamlnode

import (
	"fmt"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

func parse(t *testing.T, src string) *yaml.Node {
	t.Helper()
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(src), &doc); err != nil {
		t.Fatalf("%s: %v", src, err)
	}
	return &doc
}

// Each tag labrun would drop, and each kept tag a value does not fit, is a
// problem at the tag's place; kept tags that fit, and the tags YAML
// resolves from plain text, are none.
func TestTags(t *testing.T) {
	for _, tc := range []struct {
		src  string
		want string // "line:col: part of the message", "" for none
	}{
		{"a: !!binary aGVsbG8=", "1:4: YAML tag !!binary is not supported: labrun would drop it"},
		{"a: !Ref x", "1:4: YAML tag !Ref is not supported"},
		{"a: !!python/object {x: 1}", "1:4: YAML tag !!python/object is not supported"},
		{"a: !!timestamp 2024-01-01", "1:4: YAML tag !!timestamp is not supported"},
		{"a: !!set {x}", "1:4: YAML tag !!set is not supported"},
		{"a:\n  - !!omap [{x: 1}]", "2:5: YAML tag !!omap is not supported"},
		{"!Ref k: v", "1:1: YAML tag !Ref is not supported"},
		{"a: !!int abc", `1:4: YAML tag !!int does not fit "abc": expected a whole number`},
		{"a: !!int 99999999999999999999", "1:4: 99999999999999999999 is out of range"},
		{"a: !!float abc", `1:4: YAML tag !!float does not fit "abc": expected a number`},
		{"a: !!float 1e400", "1:4: 1e400 is out of range"},
		{"a: !!float inf", "1:4: YAML reads inf as infinity or not-a-number"},
		{"a: !!bool yes", `1:4: YAML tag !!bool does not fit "yes": expected true or false`},
		{"a: !!null x", `1:4: YAML tag !!null does not fit "x": expected null, ~ or nothing`},
		{"a: !!map [1]", "1:4: YAML tag !!map does not fit a list: expected a mapping"},
		{"a: !!seq {x: 1}", "1:4: YAML tag !!seq does not fit a mapping: expected a list"},
		{"a: !!str {x: 1}", "1:4: YAML tag !!str does not fit a mapping: expected a single value"},
		{"<<: {x: 1}", "1:1: YAML merge keys (<<) are not supported"},
		// kept tags that fit, and plain text
		{"a: !!str 12", ""},
		{"a: !!int \"12\"", ""},
		{"a: !!int 0x10", ""},
		{"a: !!float 1", ""},
		{"a: !!bool True", ""},
		{"a: !!null ~", ""},
		{"a: !!map {x: 1}", ""},
		{"a: !!seq [1]", ""},
		{"a: !<tag:yaml.org,2002:str> x", ""},
		{"a: 2024-01-01", ""}, // a plain timestamp stays the text it was
		{`"<<": x`, ""},
		{"a: 1e400", ""}, // a number, not a tag: Number's
	} {
		var got []string
		for _, p := range Tags(parse(t, tc.src)) {
			got = append(got, fmt.Sprintf("%d:%d: %s", p.Node.Line, p.Node.Column, p.Msg))
		}
		switch {
		case tc.want == "" && len(got) > 0:
			t.Errorf("%q: got %q, want no problem", tc.src, got)
		case tc.want != "" && (len(got) != 1 || !strings.HasPrefix(got[0], tc.want)):
			t.Errorf("%q: got %q, want one problem starting %q", tc.src, got, tc.want)
		}
	}
}

// A plain scalar YAML reads as a number labrun cannot hold is a problem;
// one it holds, a quoted one and any other text are not.
func TestNumber(t *testing.T) {
	for src, want := range map[string]string{
		"1e400":                   "1e400 is out of range for a number: labrun holds whole numbers from -9223372036854775808 to 9223372036854775807 and decimals up to about 1.8e308; quote it to keep the text",
		"-1e400":                  "-1e400 is out of range",
		"1_0e400":                 "1_0e400 is out of range",
		"18446744073709551615":    "18446744073709551615 is out of range",
		"0xFFFFFFFFFFFFFFFF":      "0xFFFFFFFFFFFFFFFF is out of range",
		"0xFFFFFFFFFFFFFFFFFFFF":  "0xFFFFFFFFFFFFFFFFFFFF is out of range",
		"-0xFFFFFFFFFFFFFFFFFFFF": "-0xFFFFFFFFFFFFFFFFFFFF is out of range",
		".inf":                    "YAML reads .inf as infinity or not-a-number, which labrun's numbers cannot hold (JSON has neither); quote it to keep the text",
		"-.Inf":                   "YAML reads -.Inf as infinity",
		".NaN":                    "YAML reads .NaN as infinity",
		"1__0":                    "YAML reads 1__0 as a whole number, which labrun cannot read as written",
		"9223372036854775807":     "",
		"-9223372036854775808":    "",
		"99999999999999999999":    "", // a float YAML and labrun both hold
		"1e308":                   "",
		"1e-400":                  "", // rounds to 0, as in Go and JSON
		"0x10":                    "",
		"0o17":                    "",
		"1_000":                   "",
		"1_000.5":                 "",
		"'1e400'":                 "",
		"\"1e400\"":               "",
		"1e400x":                  "",
		"0xZZ":                    "",
		"inf":                     "",
		"abc":                     "",
	} {
		n := parse(t, src).Content[0]
		got := Number(n)
		if want == "" && got != "" || want != "" && !strings.HasPrefix(got, want) {
			t.Errorf("Number(%s) = %q, want %q", src, got, want)
		}
	}
}
