package eval

import (
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/labrun/labrun/internal/lang/diag"
)

func TestExprShape(t *testing.T) {
	tests := []struct {
		src   string
		shape string // "" when there is none
		names []string
	}{
		{src: "vars.n > 3", shape: "vars.n > 3"},
		{src: "len(steps.s1.stdout) >= 0", shape: "len(steps.$0.stdout) >= 0", names: []string{"s1"}},
		{src: "steps.a.x + steps.b.y + steps.a.z", shape: "steps.$0.x + steps.$1.y + steps.$0.z", names: []string{"a", "b"}},
		{src: `steps.a.x == "steps.b" && 'steps.c\' steps.d' != ` + "`steps.e`", shape: `steps.$0.x == "steps.b" && 'steps.c\' steps.d' != ` + "`steps.e`", names: []string{"a"}},
		{src: "result.steps.a + mysteps.b + $steps", shape: "result.steps.a + mysteps.b + $steps"},
		{src: "(steps.web_2.items)[0]", shape: "(steps.$0.items)[0]", names: []string{"web_2"}},
		// what a shape cannot stand for
		{src: "steps[vars.ns].stdout"},
		{src: "len(steps)"},
		{src: "steps .a.x"},
		{src: "steps?.a"},
		{src: "steps.a$b"},
		{src: "steps.in"},
		{src: "steps.true"},
		{src: "steps.1a"},
		{src: "steps.é"},
		{src: "steps.aé"},
		{src: "#steps.a"},
		{src: `steps.a.x == "open`},
		{src: "steps.a.x == `open"},
	}
	for _, tt := range tests {
		shape, names, ok := exprShape(tt.src)
		if ok != (tt.shape != "") || shape != tt.shape || !slices.Equal(names, tt.names) {
			t.Errorf("exprShape(%q) = %q %q %v, want %q %q", tt.src, shape, names, ok, tt.shape, tt.names)
		}
	}
}

type otherResult struct {
	Body string `expr:"body"`
}

// An expression that differs from one checked before only in the steps it
// names takes that check; it still runs on its own steps' values, and it
// is refused wherever the expression written out would be.
func TestCompileShapes(t *testing.T) {
	c := shapeCompiler()
	compile := func(src string, ctx Context) (*Expr, error) {
		t.Helper()
		return c.Compile(src, diag.Pos{File: "p.yaml", Line: 20, Col: 9}, ctx)
	}
	at := func(step int) Context { return Context{Step: step} }

	a, err := compile("steps.first.stdout + steps.second.stdout", at(3))
	if err != nil {
		t.Fatal(err)
	}
	b, err := compile("steps.second.stdout + steps.first.stdout", at(3))
	if err != nil {
		t.Fatal(err)
	}
	if b.prog.tree != nil || b.prog.src != b.Src {
		t.Error("the second expression of the shape was parsed and checked again")
	}
	if !slices.Equal(b.Refs, []string{"steps.second", "steps.first"}) || b.Type != a.Type {
		t.Errorf("refs %v type %v, want steps.second, steps.first and %v", b.Refs, b.Type, a.Type)
	}
	env := c.NewEnv()
	for id, out := range map[string]string{"first": "1", "second": "2"} {
		if _, err := env.SetStep(id, &fakeResult{Stdout: out}); err != nil {
			t.Fatal(err)
		}
	}
	for x, want := range map[*Expr]string{a: "12", b: "21"} {
		if got, err := x.Eval(env); err != nil || got != want {
			t.Errorf("%s = %v (%v), want %s", x.Src, got, err, want)
		}
	}

	refused := []struct {
		kept, src string
		ctx       Context
		want      string
	}{
		{"len(steps.first.stdout)", "len(steps.other.stdout)", at(4), `steps.other has no field "stdout"`},
		{"steps.first.exitCode == 0", "steps.third.exitCode == 0", at(1), `step "third" has not run yet`},
		{"steps.first.exitCode > 1", "steps.second.exitCode > 1", at(1), `steps.second is this step itself`},
		{"steps.first.exitCode < 1", "steps.nope.exitCode < 1", at(1), `unknown step "nope"`},
		{"steps.first.exitCode > 2", "steps.first.exitCode > 2", at(-1), `cannot read steps`},
		{"steps.first.exitCode < 2", "steps.second.exitCode < 2", Context{Step: 4, Unavailable: func(id string) string {
			if id == "second" {
				return "second runs beside this step"
			}
			return ""
		}}, `second runs beside this step`},
	}
	for _, tt := range refused {
		if _, err := compile(tt.kept, at(4)); err != nil {
			t.Fatalf("%s: %v", tt.kept, err)
		}
		if _, err := compile(tt.src, tt.ctx); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s after %s: %v, want %q", tt.src, tt.kept, err, tt.want)
		}
	}
}

// A definition's text reads steps of its own, which the shape of an
// expression using it does not show: such an expression is checked at each
// place.
func TestCompileShapesWithDefinitions(t *testing.T) {
	c := testCompiler()
	late := Definition{Name: "late", Pos: diag.Pos{File: "p.yaml", Line: 2, Col: 3}, Src: "steps.third.stdout", At: At("steps.third.stdout", diag.Pos{File: "p.yaml", Line: 2, Col: 9})}
	c.DeclareDefines([]Definition{late})
	if err := c.Define(late); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Compile("steps.third.stdout + late", diag.Pos{}, Context{Step: 3}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Compile("steps.first.stdout + late", diag.Pos{}, Context{Step: 1}); err == nil || !strings.Contains(err.Error(), `step "third" has not run yet`) {
		t.Errorf("a definition reading a later step, through a kept shape: %v", err)
	}
}

// Whatever was checked before, an expression compiles as it does in a
// compiler that never saw its shape: the same error or none, type and refs.
func FuzzShapeAgreesWithFullCheck(f *testing.F) {
	f.Add("steps.first.stdout + steps.second.stdout", 3, true)
	f.Add("len(steps.other.body) > 0 && steps.first.exitCode == 0", 4, false)
	f.Add("steps.third.exitCode == 0", 1, true)
	f.Add("len(steps.other.stdout) > 0", 5, true)
	f.Add("steps.fifth.items[0] == 'steps.first'", 5, false)
	f.Fuzz(func(t *testing.T, src string, step int, swap bool) {
		shape, names, ok := exprShape(src)
		if !ok || len(names) == 0 {
			return
		}
		others := map[string]string{"first": "second", "second": "first", "third": "fifth", "fifth": "third", "other": "first"}
		if swap {
			others = map[string]string{"first": "third", "second": "other", "third": "first", "fifth": "second", "other": "fifth"}
		}
		before := shape
		for k := len(names) - 1; k >= 0; k-- {
			n := names[k]
			if o, ok := others[n]; ok {
				n = o
			}
			before = strings.ReplaceAll(before, "steps.$"+strconv.Itoa(k), "steps."+n)
		}
		ctx := Context{Step: step%7 - 1}
		fresh, primed := shapeCompiler(), shapeCompiler()
		want, wantErr := fresh.Compile(src, diag.Pos{}, ctx)
		primed.Compile(before, diag.Pos{}, Context{Step: AllSteps})
		got, gotErr := primed.Compile(src, diag.Pos{}, ctx)
		if (wantErr == nil) != (gotErr == nil) {
			t.Fatalf("%s at step %d after %s: %v, in a fresh compiler %v", src, ctx.Step, before, gotErr, wantErr)
		}
		if wantErr == nil && (got.Type != want.Type || !slices.Equal(got.Refs, want.Refs) || !slices.Equal(got.ResultFields, want.ResultFields)) {
			t.Fatalf("%s after %s: type %v refs %v, in a fresh compiler %v %v", src, before, got.Type, got.Refs, want.Type, want.Refs)
		}
	})
}

// shapeCompiler declares steps of two result types, in the order first,
// second, third, other, fifth.
func shapeCompiler() *Compiler {
	c := testCompiler()
	c.DeclareStep("other", reflect.TypeOf(otherResult{}), diag.Pos{File: "p.yaml", Line: 15, Col: 9})
	c.DeclareStep("fifth", reflect.TypeOf(fakeResult{}), diag.Pos{File: "p.yaml", Line: 18, Col: 9})
	return c
}
