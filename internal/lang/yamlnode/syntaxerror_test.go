package yamlnode

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/labrun/labrun/internal/lang/diag"
	"gopkg.in/yaml.v3"
)

var update = flag.Bool("update", false, "rewrite testdata/syntax-errors.golden")

// syntaxCases are the syntax errors of yaml.v3 an author of a playbook,
// a vars file or a targets file meets, one or more for each problem
// yaml.v3's scanner and parser report (scannerc.go, parserc.go), each
// named by that problem. plain says the message is reworded: it must not
// hold yaml.v3's words. Each is rendered as labrun validate prints it
// into testdata/syntax-errors.golden.
var syntaxCases = []struct {
	problem string
	src     string
	plain   bool
}{
	{"found character that cannot start any token", "name: a\nsteps:\n\t- id: a\n", true},
	{"found character that cannot start any token", "a: @x\n", true},
	{"found character that cannot start any token", "argv: [echo, `ls`]\n", true},
	{"found a tab character that violates indentation", "name: a\nsteps:\n  - id: a\n\trun: x\n", true},
	{"found a tab character that violates indentation", "a:\n  - x\n \t- y\n", true},
	{"found a tab character where an indentation space is expected", "a: |\n  x\n\ty\n", true},
	{"did not find expected '-' indicator", "name: a\nsteps:\n  - id: a\n   run: {argv: [true]}\n", true},
	{"did not find expected '-' indicator", "steps:\n  - id: a\n    assert:\n      - that: x\n        hint: y\n       z: 1\n", true},
	{"did not find expected '-' indicator", "a:\n  - b\n  c: d\n", true},
	{"did not find expected '-' indicator", "- a\nb: c\n", true},
	{"did not find expected key", "name: a\nsteps:\n  - id: a\n    run:\n      argv: [x]\n     env: 1\n", true},
	{"did not find expected key", "name: a\nsteps:\n- id: a\n  run: x\n - id: b\n", true},
	{"did not find expected key", "a: 1\n- b\n", true},
	{"did not find expected key", "hint: 'it's done'\n", true},
	{"did not find expected key", "hint: \"say \"hi\" now\"\n", true},
	{"did not find expected key", "argv: [a, b]]\n", true},
	{"did not find expected key", "a: >\n  x\n y\n", true},
	{"mapping values are not allowed in this context", "name: a\nsteps:\n  - id: a\n     run: {argv: [true]}\n", true},
	{"mapping values are not allowed in this context", "name: a\n  steps: 1\n", true},
	{"mapping values are not allowed in this context", "hint: look at this: the output\n", true},
	{"mapping values are not allowed in this context", "a first line without a key\nb: c\n", true},
	{"could not find expected ':'", "a: b\nc\nd: e\n", true},
	{"could not find expected ':'", "argv:\n  - x\n  y\n", true},
	{"could not find expected ':'", "a: 1\n" + strings.Repeat("k", 1030) + ": 1\n", true},
	{"block sequence entries are not allowed in this context", "argv: - x\n", true},
	{"did not find expected node content", "a: ]\n", true},
	{"did not find expected ',' or ']'", "argv: [1, 2\nb: 3\n", true},
	{"did not find expected ',' or ']'", "argv: [x,\n  y\n", true},
	{"did not find expected ',' or '}'", "run: {argv: [x]\n", true},
	{"did not find expected ',' or '}'", "a: {x: 1 y: 2}\n", true},
	{"found unexpected end of stream", "a: x\n\nb: \"unterminated\nc: d\n", true},
	{"found unexpected end of stream", "a: 'it\n", true},
	{"found unknown escape character", "pattern: \"\\d+\"\n", true},
	{"did not find expected hexdecimal number", "a: \"\\xZZ\"\n", true},
	{"found invalid Unicode character escape code", "a: \"\\uD800\"\n", true},
	{"did not find expected alphabetic or numeric character", "a: &\n", true},
	{"did not find expected alphabetic or numeric character", "a: *\n", true},
	{"unknown anchor 'nope' referenced", "a: *nope\n", true},
	{"did not find expected comment or line break", "a: |x\n  y\n", true},
	{"found an indentation indicator equal to 0", "a: |0\n  y\n", true},
	{"control characters are not allowed", "a: b\x01\n", true},
	{"found unexpected document indicator", "a: \"x\n---\ny\"\n", true},
	{"found undefined tag handle", "a: !x!y z\n", true},
	{"did not find the expected '>'", "a: !<x\n", true},
	{"found duplicate %YAML directive", "%YAML 1.1\n%YAML 1.1\n---\na: 1\n", false},
}

func TestSyntaxErrors(t *testing.T) {
	var out bytes.Buffer
	for _, tc := range syntaxCases {
		var n yaml.Node
		err := yaml.Unmarshal([]byte(tc.src), &n)
		if err == nil || !strings.Contains(err.Error(), tc.problem) {
			t.Errorf("%q: yaml.v3 says %v, want %q", tc.src, err, tc.problem)
			continue
		}
		e := SyntaxError("p.yaml", []byte(tc.src), err)
		if tc.plain && strings.Contains(e.Msg, tc.problem) {
			t.Errorf("%q: the message keeps yaml.v3's words: %s", tc.src, e)
		}
		if e.Pos.Line < 1 || e.Pos.Col < 1 {
			t.Errorf("%q: no position: %s", tc.src, e)
		}
		fmt.Fprintf(&out, "# %s\n", tc.problem)
		src := tc.src
		if len(src) > 200 {
			src = src[:40] + "..." + src[len(src)-20:]
		}
		fmt.Fprintf(&out, "%q\n", src)
		diag.Render(&out, []*diag.Error{e}, func(string) ([]byte, error) { return []byte(tc.src), nil })
		out.WriteString("\n")
	}
	golden := filepath.Join("testdata", "syntax-errors.golden")
	if *update {
		if err := os.WriteFile(golden, out.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got := out.String(); got != string(want) {
		t.Errorf("messages differ from %s (go test -update to rewrite it); got:\n%s", golden, got)
	}
}

// The position found is the one where yaml.v3's problem starts, however
// far the line yaml.v3 names is from it.
func TestSyntaxErrorPositions(t *testing.T) {
	for _, tc := range []struct {
		src  string
		want string
	}{
		{"name: a\nsteps:\n  - id: a\n   run: {argv: [true]}\n", "p.yaml:4:4"}, // yaml.v3: line 2
		{"a: x\n\nb: \"unterminated\nc: d\n", "p.yaml:3:4"},                    // the opening quote
		{"a:\n  - b\n  c: d\n", "p.yaml:3:3"},                                  // yaml.v3: line 1
		{"argv: [1, 2\nb: 3\n", "p.yaml:1:7"},                                  // the bracket not closed
		{"a: {x: 1 y: 2}\n", "p.yaml:1:11"},                                    // the ':' where ',' was expected
		{"pattern: \"\\d+\"\n", "p.yaml:1:11"},                                 // the backslash
		{"a: b\x01\n", "p.yaml:1:5"},
	} {
		var n yaml.Node
		err := yaml.Unmarshal([]byte(tc.src), &n)
		if err == nil {
			t.Fatalf("%q parses", tc.src)
		}
		if got := SyntaxError("p.yaml", []byte(tc.src), err).Pos.String(); got != tc.want {
			t.Errorf("%q: at %s, want %s", tc.src, got, tc.want)
		}
	}
}

// Whatever the text, a syntax error is placed on a line of it, with a
// message, and placing it does not panic.
func FuzzSyntaxError(f *testing.F) {
	for _, tc := range syntaxCases {
		f.Add(tc.src)
	}
	f.Add("a: \"é\r\n  b\r\n\tc: \"")
	f.Fuzz(func(t *testing.T, src string) {
		var n yaml.Node
		err := yaml.Unmarshal([]byte(src), &n)
		if err == nil {
			return
		}
		e := SyntaxError("f.yaml", []byte(src), err)
		if e.Msg == "" || e.Pos.Line < 1 || e.Pos.Col < 1 || e.Pos.Line > strings.Count(src, "\n")+1 {
			t.Fatalf("%q: %v", src, e)
		}
	})
}
