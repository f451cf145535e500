package eval

import (
	"strings"
	"testing"

	"github.com/labrun/labrun/internal/lang/diag"
)

// Definitions that use each other in a circle are reported once, as the
// circle they are, at the first of them: not as "defined further down"
// for the one above. One that uses a definition above it that failed
// says so, and so does an expression using a failed definition.
func TestDefineErrors(t *testing.T) {
	type def struct{ name, src string }
	for _, tc := range []struct {
		name string
		defs []def
		uses string // an expression compiled after the definitions
		want []string
	}{
		{
			name: "two in a circle",
			defs: []def{{"a", "b + 1"}, {"b", "a + 1"}},
			want: []string{"p.yaml:1:6: in define a: the definitions use each other in a circle: a (line 1) -> b (line 2) -> a; a definition may use only those above it"},
		},
		{
			name: "three in a circle, and one outside using it",
			defs: []def{{"x", "1"}, {"c", "x + d"}, {"d", "e"}, {"e", "c * 2"}, {"f", "d + 1"}},
			uses: "f > 0",
			want: []string{
				"p.yaml:2:10: in define c: the definitions use each other in a circle: c (line 2) -> d (line 3) -> e (line 4) -> c; a definition may use only those above it",
				"p.yaml:5:6: in define f: d cannot be used: its definition (at p.yaml:3:3) has an error",
				`p.yaml:9:1: in expression ` + "`f > 0`" + `: define "f" cannot be used: its definition (at p.yaml:5:3) has an error`,
			},
		},
		{
			name: "further down, without a circle",
			defs: []def{{"early", "late + 1"}, {"late", "2"}},
			want: []string{"p.yaml:1:10: in define early: late is defined further down (at p.yaml:2:3); a definition may use only those above it"},
		},
		{
			name: "itself",
			defs: []def{{"self", "1 + self"}},
			want: []string{"p.yaml:1:13: in define self: a definition cannot use itself"},
		},
		{
			name: "above, broken",
			defs: []def{{"a", "1 +"}, {"b", "a * 2"}},
			want: []string{
				"p.yaml:1:8: in expression `1 +`: the expression ends after `+`, where a value was expected",
				"p.yaml:2:6: in define b: a cannot be used: its definition (at p.yaml:1:3) has an error",
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := testCompiler()
			var defs []Definition
			for i, d := range tc.defs {
				// written as "  name: src" on line i+1
				defs = append(defs, Definition{Name: d.name, Pos: diag.Pos{File: "p.yaml", Line: i + 1, Col: 3},
					Src: d.src, At: At(d.src, diag.Pos{File: "p.yaml", Line: i + 1, Col: 5 + len(d.name)})})
			}
			c.DeclareDefines(defs)
			var errs diag.List
			for _, d := range defs {
				errs.Append(c.Define(d))
			}
			errs.Append(c.CheckDefines())
			if tc.uses != "" {
				_, err := c.Compile(tc.uses, diag.Pos{File: "p.yaml", Line: 9, Col: 1}, Context{Step: AllSteps})
				errs.Append(err)
			}
			var got []string
			for _, e := range errs.Sort() {
				got = append(got, e.Error())
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("errors:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}
