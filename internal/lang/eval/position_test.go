package eval

import (
	"strings"
	"testing"

	"github.com/labrun/labrun/internal/lang/diag"
	"gopkg.in/yaml.v3"
)

// An offset in a scalar's value is placed where the file writes it, in
// every style of scalar: each case's value holds the word NOPE once,
// and its position must be the one of NOPE in the file (the file writes
// it once, too).
func TestScalarPositions(t *testing.T) {
	for _, tc := range []struct {
		name, src string
	}{
		{"plain", "until: steps.a.x == 1 && NOPE\n"},
		{"plain over lines", "until: steps.a.x == 1 &&\n  steps.a.y == 2 &&\n   NOPE == 3\n"},
		{"plain with an empty line", "until: steps.a.x == 1 &&\n\n  NOPE == 3\n"},
		{"single-quoted", "until: 'it''s ''x'' NOPE'\n"},
		{"single-quoted over lines", "until: 'steps.a.x == ''a'' &&\n\n    NOPE == 1'\n"},
		{"double-quoted with escapes", "until: \"\\u00e9\\t\\x41 \\\"q\\\" NOPE\"\n"},
		{"double-quoted over lines", "until: \"steps.a.x == \\\"a\\\" &&\n     steps.a.y &&   \n  NOPE\"\n"},
		{"double-quoted with an escaped line break", "until: \"steps.a.x == 1 &&\\\n     NOPE\"\n"},
		{"literal", "until: |\n  steps.a.x == 1 &&\n    NOPE == 2\n"},
		{"literal, strip", "until: |-\n  steps.a.x == 1 &&\n  NOPE == 2\n"},
		{"literal, keep", "until: |+\n  steps.a.x == 1 &&\n  NOPE == 2\n\n"},
		{"literal with an indentation indicator", "until: |2\n    steps.a.x == 1 &&\n    NOPE == 2\n"},
		{"folded", "until: >-\n  steps.a.x == 0 &&\n  steps.a.stdout != \"\" &&\n  NOPE == 1\n"},
		{"folded with an empty line", "until: >\n  steps.a.x == 0 &&\n\n  NOPE == 1\n"},
		{"folded, more indented", "until: >\n  steps.a.x == 0 &&\n    more\n  NOPE == 1\n"},
		{"folded in a list", "assert:\n  - that: >-\n      steps.a.x == 0 &&\n      NOPE == 1\n    hint: h\n"},
		{"tabs in a folded line", "until: >-\n  a &&\n  \tb && NOPE\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var doc yaml.Node
			if err := yaml.Unmarshal([]byte(tc.src), &doc); err != nil {
				t.Fatal(err)
			}
			n := valueWith(&doc, "NOPE")
			if n == nil {
				t.Fatalf("no scalar holds NOPE")
			}
			c := NewCompiler(nil)
			c.SetSource("p.yaml", []byte(tc.src))
			at := c.InScalar(diag.Pos{File: "p.yaml", Line: n.Line, Col: n.Column}, n, 0)
			got := at(strings.Index(n.Value, "NOPE"))
			if want := wherePos(tc.src, "NOPE"); got != want {
				t.Errorf("NOPE of %q is placed at %s, want %s", n.Value, got, want)
			}
		})
	}
}

// valueWith finds the scalar whose value holds word.
func valueWith(n *yaml.Node, word string) *yaml.Node {
	if n.Kind == yaml.ScalarNode && strings.Contains(n.Value, word) {
		return n
	}
	for _, c := range n.Content {
		if found := valueWith(c, word); found != nil {
			return found
		}
	}
	return nil
}

// wherePos is where src writes word.
func wherePos(src, word string) diag.Pos {
	for i, line := range strings.Split(src, "\n") {
		if col := strings.Index(line, word); col >= 0 {
			return diag.Pos{File: "p.yaml", Line: i + 1, Col: len([]rune(line[:col])) + 1}
		}
	}
	return diag.Pos{}
}

// An expression written over several lines of a block or flow scalar has
// each of its errors at the line and column of the text it is about, not
// at the scalar's first line plus an offset into the joined text.
func TestCompileErrorsInScalars(t *testing.T) {
	src := `steps:
  - id: b
    until: >-
      steps.first.exitCode == 0 &&
      steps.first.stdout != "" &&
      steps.first.nope == 1
  - id: c
    until: |
      steps.first.exitCode == 0 &&
        (steps.first.stdout +
    assert:
      - steps.first.exitCode == 0 &&
        stеps.first.stdout == ""
      - "steps.first.exitCode == 0 &&
        steps.first.stdout = 1"
      - ${{ steps.first.exitCode == 0 &&
           vars.nope }}
`
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(src), &doc); err != nil {
		t.Fatal(err)
	}
	c := testCompiler()
	c.SetSource("p.yaml", []byte(src))
	var got []string
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		if n.Kind == yaml.ScalarNode && strings.Contains(n.Value, "steps.first.exitCode") {
			expr, off := n.Value, 0
			if i := strings.Index(expr, "${{"); i >= 0 {
				inner := strings.TrimSuffix(strings.TrimSpace(expr[i+3:]), "}}")
				off = strings.Index(expr, inner)
				expr = strings.TrimSpace(inner)
			}
			_, err := c.CompileAt(expr, c.InScalar(diag.Pos{File: "p.yaml", Line: n.Line, Col: n.Column}, n, off), Context{Step: 2})
			if err == nil {
				t.Errorf("%q compiles", n.Value)
				return
			}
			got = append(got, err.Error())
		}
		for _, m := range n.Content {
			walk(m)
		}
	}
	walk(&doc)
	want := []string{
		"p.yaml:6:19: in expression `steps.first.exitCode == 0 && steps.first.stdout != \"\" && ...`: steps.first has no field \"nope\"; fields: exitCode, items, stdout",
		"p.yaml:10:9: in expression `steps.first.exitCode == 0 && (steps.first.stdout +`: this `(` is not closed: the expression ends before its `)`",
		"p.yaml:13:11: in expression `steps.first.exitCode == 0 && stеps.first.stdout == \"\"`: U+0435 CYRILLIC SMALL LETTER IE at character 32 is not part of any name; names are ASCII letters, digits and _",
		"p.yaml:15:28: in expression `steps.first.exitCode == 0 && steps.first.stdout = 1`: `=` is not an operator: compare with `==`",
		"p.yaml:17:17: in expression `steps.first.exitCode == 0 && vars.nope`: unknown variable \"nope\"",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("errors:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// Whatever the scalar, every offset of its value is placed on a line of
// the file, and placing it does not panic.
func FuzzScalarPositions(f *testing.F) {
	for _, s := range []string{
		"a: 'x''y\n\n  z'\n", "a: \"\\u00e9\\\n  b\\\"\"\n", "a: |+\n  x\n\n", "a: >-\n  x\n    y\n  z\n",
		"a: b\n  c\n\n  d\n", "- \"a\tb\"\n", "a: |2\n   x\n", "a: \"\\x4\"\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		var doc yaml.Node
		if yaml.Unmarshal([]byte(src), &doc) != nil {
			return
		}
		// YAML breaks lines at \r too
		lines := strings.Count(strings.ReplaceAll(src, "\r\n", "\n"), "\n") + strings.Count(strings.ReplaceAll(src, "\r\n", "\n"), "\r") + 1
		c := NewCompiler(nil)
		c.SetSource("f.yaml", []byte(src))
		var walk func(n *yaml.Node)
		walk = func(n *yaml.Node) {
			if n.Kind == yaml.ScalarNode && n.Line <= lines { // yaml.v3 places an empty value past the end
				at := c.InScalar(diag.Pos{File: "f.yaml", Line: n.Line, Col: n.Column}, n, 0)
				for off := 0; off <= len(n.Value); off++ {
					if p := at(off); p.Line < 1 || p.Line > lines || p.Col < 1 {
						t.Fatalf("offset %d of %q is placed at %s", off, n.Value, p)
					}
				}
			}
			for _, m := range n.Content {
				walk(m)
			}
		}
		walk(&doc)
	})
}
