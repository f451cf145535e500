package eval

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/labrun/labrun/internal/lang/diag"
)

// TestUnguardedReads: in labrun check, steps.first has no result (its
// step is only: solve); which of its reads are guarded.
func TestUnguardedReads(t *testing.T) {
	missing := func(id string) bool { return id == "first" }
	tests := []struct {
		src   string
		known Guard
		want  string // the unguarded reads, as col:step
	}{
		// the failure that made this check: int("") in check
		{src: `int(trim(steps.first.stdout))`, want: "10:first"},
		{src: `steps.first.stdout == "x" && steps.first.exitCode == 0`, want: "1:first 30:first"},
		{src: `len(steps.first.items)`, want: "5:first"},
		{src: `map(steps.first.items, # + "x")`, want: "5:first"},
		{src: `steps.first`, want: "1:first"},
		{src: `steps["first"].stdout`, want: "1:first"},
		{src: `steps.second.stdout`},
		// mode tests
		{src: `mode == "solve" ? int(steps.first.stdout) : 0`},
		{src: `"solve" == mode ? int(steps.first.stdout) : 0`},
		{src: `mode != "check" ? int(steps.first.stdout) : 0`},
		{src: `mode == "check" ? 0 : int(steps.first.stdout)`},
		{src: `mode == "check" ? int(steps.first.stdout) : 0`, want: "23:first"},
		{src: `mode != "solve" ? 0 : int(steps.first.stdout)`},
		{src: `not (mode == "check") ? steps.first.stdout : ""`},
		{src: `!(mode == "check") ? steps.first.stdout : ""`},
		{src: `if mode == "solve" { steps.first.stdout } else { "" }`},
		{src: `mode == "solve" && steps.first.exitCode == 0`},
		{src: `mode == "check" || steps.first.exitCode == 0`},
		{src: `mode == "solve" || steps.first.exitCode == 0`, want: "20:first"},
		{src: `mode == "check" and steps.first.exitCode == 0`, want: "21:first"},
		{src: `(mode == "solve" && vars.n > 0) ? steps.first.stdout : ""`},
		{src: `(mode == "solve" || vars.n > 0) ? steps.first.stdout : ""`, want: "35:first"},
		{src: `(mode == "check" || vars.n > 0) ? "" : steps.first.stdout`},
		{src: `steps.first.exitCode == 0 && mode == "solve"`, want: "1:first"},
		{src: `mode == "solve" ? (steps.first.stdout == "" ? "none" : steps.first.stdout) : ""`},
		{src: `mode == "solve" ? "" : steps.first.stdout`, want: "24:first"},
		// closures see what holds around them
		{src: `mode == "solve" ? map(steps.first.items, # + steps.first.stdout) : []`},
		// tests that the result is there
		{src: `steps.first != nil ? steps.first.stdout : ""`},
		{src: `nil != steps.first && steps.first.exitCode == 0`},
		{src: `steps.first == nil ? "" : steps.first.stdout`},
		{src: `steps.first == nil || steps.first.exitCode == 0`},
		{src: `steps.first == nil && steps.first.exitCode == 0`, want: "23:first"},
		{src: `steps.first != nil || steps.first.exitCode == 0`, want: "23:first"},
		{src: `steps.second != nil ? steps.first.stdout : ""`, want: "23:first"},
		// reads that cannot fail on a missing result
		{src: `steps.first?.stdout ?? "none"`},
		{src: `int(steps.first?.stdout ?? "0")`},
		{src: `steps.first?.items`},
		{src: `steps.first ?? 1`},
		{src: `steps.first == nil`},
		{src: `steps.first.stdout ?? "none"`, want: "1:first"},
		{src: `steps.first.items?.[0]`, want: "1:first"},
		// what the step's when says
		{src: `int(steps.first.stdout)`, known: Guard{Mode: ModeSolve}},
		{src: `int(steps.first.stdout)`, known: Guard{Present: []string{"first"}}},
		{src: `int(steps.first.stdout)`, known: Guard{Mode: ModeCheck}, want: "5:first"},
		{src: `int(steps.first.stdout)`, known: Guard{Never: true}},
		// through a definition: at the name
		{src: `len(firstOut) > 0`, want: "5:first(firstOut)"},
		{src: `mode == "solve" && len(firstOut) > 0`},
	}
	for _, tt := range tests {
		c := testCompiler()
		if err := c.Define(Definition{Name: "firstOut", Pos: diag.Pos{File: "p.yaml", Line: 2, Col: 3}, Src: "trim(steps.first.stdout)", At: At("trim(steps.first.stdout)", diag.Pos{File: "p.yaml", Line: 2, Col: 13})}); err != nil {
			t.Fatal(err)
		}
		x, err := c.Compile(tt.src, diag.Pos{File: "p.yaml", Line: 10, Col: 1}, Context{Step: 2})
		if err != nil {
			t.Errorf("Compile(%q): %v", tt.src, err)
			continue
		}
		var got []string
		for _, r := range x.UnguardedReads(ModeCheck, tt.known, missing) {
			s := fmt.Sprintf("%d:%s", r.Pos.Col, r.Step)
			if r.Define != "" {
				s += "(" + r.Define + ")"
			}
			if r.Pos.Line != 10 || r.Pos.File != "p.yaml" {
				t.Errorf("%q: read at %s, want line 10 of p.yaml", tt.src, r.Pos)
			}
			got = append(got, s)
		}
		if g := strings.Join(got, " "); g != tt.want {
			t.Errorf("UnguardedReads(%q) = %q, want %q", tt.src, g, tt.want)
		}
		// in solve, the same step has its result: nothing to guard
		if r := x.UnguardedReads(ModeSolve, tt.known, func(string) bool { return false }); len(r) > 0 {
			t.Errorf("UnguardedReads(%q) in solve = %v, want none", tt.src, r)
		}
	}
}

func TestImplies(t *testing.T) {
	tests := []struct {
		src  string
		want Guard
	}{
		{src: `mode == "solve"`, want: Guard{Mode: ModeSolve}},
		{src: `mode != "solve"`, want: Guard{Mode: ModeCheck}},
		{src: `mode == "solve" && vars.n > 0`, want: Guard{Mode: ModeSolve}},
		{src: `vars.n > 0 && !(mode == "check")`, want: Guard{Mode: ModeSolve}},
		{src: `mode == "solve" || vars.n > 0`},
		{src: `mode == "solve" || mode == "solve" && vars.n > 0`, want: Guard{Mode: ModeSolve}},
		{src: `not (mode == "check" || vars.n > 0)`, want: Guard{Mode: ModeSolve}},
		{src: `mode == "solve" && mode == "check"`, want: Guard{Mode: ModeSolve, Never: true}},
		{src: `steps.first != nil`, want: Guard{Present: []string{"first"}}},
		{src: `steps.first != nil && steps.second != nil`, want: Guard{Present: []string{"first", "second"}}},
		{src: `steps.first != nil || steps.second != nil`, want: Guard{}},
		{src: `steps.first == nil`, want: Guard{}},
		{src: `vars.n > 0`, want: Guard{}},
	}
	for _, tt := range tests {
		x, err := testCompiler().Compile(tt.src, diag.Pos{File: "p.yaml", Line: 1, Col: 1}, Context{Step: 2, Want: reflect.Bool})
		if err != nil {
			t.Errorf("Compile(%q): %v", tt.src, err)
			continue
		}
		if got := x.Implies(); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Implies(%q) = %+v, want %+v", tt.src, got, tt.want)
		}
	}
}
