package eval

import (
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/labrun/labrun/internal/lang/diag"
	"gopkg.in/yaml.v3"
)

type fakeResult struct {
	Stdout   string   `expr:"stdout"`
	ExitCode int      `expr:"exitCode"`
	Items    []string `expr:"items"`
}

func testCompiler() *Compiler {
	c := NewCompiler(Builtins())
	c.DeclareVar("ns", reflect.TypeOf(""))
	c.DeclareVar("n", reflect.TypeOf(0))
	c.DeclareEnv([]string{"HOME"})
	c.DeclareStep("first", reflect.TypeOf(fakeResult{}), diag.Pos{File: "p.yaml", Line: 3, Col: 9})
	c.DeclareStep("second", reflect.TypeOf(fakeResult{}), diag.Pos{File: "p.yaml", Line: 9, Col: 9})
	c.DeclareStep("third", reflect.TypeOf(fakeResult{}), diag.Pos{File: "p.yaml", Line: 12, Col: 9})
	return c
}

func TestCompileErrors(t *testing.T) {
	pos := diag.Pos{File: "p.yaml", Line: 10, Col: 5}
	tests := []struct {
		src  string
		ctx  Context
		want string // "" means it compiles
	}{
		{src: "steps.first.stdout == 'x'", ctx: Context{Step: 1, Want: reflect.Bool}},
		{src: "steps.first.exitCode + vars.n", ctx: Context{Step: 1}},
		{src: "len(steps.first.items) == vars.n", ctx: Context{Step: 1, Want: reflect.Bool}},
		{src: "env.HOME != ''", ctx: Context{Step: 1, Want: reflect.Bool}},
		{src: "result.exitCode == 0", ctx: Context{Step: 1, Result: reflect.TypeOf(fakeResult{}), Want: reflect.Bool}},
		{src: "steps.first.stdot", ctx: Context{Step: 1}, want: `p.yaml:10:17: in expression ` + "`steps.first.stdot`" + `: steps.first has no field "stdot" (did you mean "stdout"?); fields: exitCode, items, stdout`},
		{src: "steps.third.stdout", ctx: Context{Step: 1}, want: `step "third" has not run yet at this point (it is declared at p.yaml:12:9)`},
		{src: "steps.second.stdout", ctx: Context{Step: 1}, want: `steps.second is this step itself; use result for its own result`},
		{src: "steps.fourth", ctx: Context{Step: 1}, want: `unknown step "fourth"`},
		{src: "vars.nn", ctx: Context{Step: 1}, want: `unknown variable "nn" (did you mean`},
		{src: "env.USER", ctx: Context{Step: 1}, want: `environment variable "USER" is not declared`},
		{src: "result.stdout", ctx: Context{Step: 1}, want: `result is not available here`},
		{src: "steps.first.stdout == 1", ctx: Context{Step: 1}, want: `mismatched types string and int`},
		{src: "vars.n", ctx: Context{Step: 1, Want: reflect.Bool}, want: `expected bool, but got int`},
		{src: "lines(vars.n)", ctx: Context{Step: 1}, want: `cannot use int as argument (type string) to call lines`},
		{src: "1 +", ctx: Context{Step: 1}, want: `p.yaml:10:7: in expression ` + "`1 +`" + `: the expression ends after ` + "`+`" + `, where a value was expected`},
	}
	for _, tt := range tests {
		_, err := testCompiler().Compile(tt.src, pos, tt.ctx)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("Compile(%q): unexpected error %v", tt.src, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("Compile(%q) error = %v, want it to contain %q", tt.src, err, tt.want)
		}
	}
}

func TestStaticTypes(t *testing.T) {
	c := testCompiler()
	for src, want := range map[string]reflect.Type{
		"steps.first.exitCode":        reflect.TypeOf(0),
		"steps.first.stdout":          reflect.TypeOf(""),
		"lines(steps.first.stdout)":   reflect.TypeOf([]string{}),
		"splitHostPort('1.2.3.4:80')": reflect.TypeOf(HostPort{}),
		"vars.ns + '/x'":              reflect.TypeOf(""),
	} {
		e, err := c.Compile(src, diag.Pos{}, Context{Step: 1})
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		if e.Type != want {
			t.Errorf("type of %s = %v, want %v", src, e.Type, want)
		}
	}
}

func buildValue(t *testing.T, c *Compiler, src string) *Value {
	t.Helper()
	var n yaml.Node
	if err := yaml.Unmarshal([]byte(src), &n); err != nil {
		t.Fatal(err)
	}
	v, errs := Build(c, "p.yaml", n.Content[0], Context{Step: 1})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	return v
}

// testEnv is a run-time environment for testCompiler's variables:
// vars.ns is "cca-dp" and vars.n is 4.
func testEnv(t *testing.T, c *Compiler) *Env {
	t.Helper()
	env := c.NewEnv()
	if err := env.SetVar("ns", "cca-dp"); err != nil {
		t.Fatal(err)
	}
	if err := env.SetVar("n", 4); err != nil {
		t.Fatal(err)
	}
	return env
}

func TestEvalAndDecode(t *testing.T) {
	c := testCompiler()
	env := testEnv(t, c)
	if _, err := env.SetStep("first", &fakeResult{Stdout: "10.43.0.7\n", ExitCode: 0, Items: []string{"a", "b"}}); err != nil {
		t.Fatal(err)
	}
	type spec struct {
		Name    string   `yaml:"name"`
		Count   int      `yaml:"count"`
		Argv    []string `yaml:"argv"`
		Enabled bool     `yaml:"enabled"`
		Data    any      `yaml:"data"`
	}
	v := buildValue(t, c, `
name: "${{ vars.ns }}/web"
count: ${{ vars.n }}
argv: [curl, -m, 5, "${{ trim(steps.first.stdout) }}:80"]
enabled: true
data:
  z: ${{ len(steps.first.items) }}
  a: [1, "${{ vars.ns }}"]
`)
	if errs := Check(v, reflect.TypeOf(spec{})); len(errs) > 0 {
		t.Fatal(errs)
	}
	var s spec
	if err := v.Decode(env, reflect.ValueOf(&s).Elem()); err != nil {
		t.Fatal(err)
	}
	if s.Name != "cca-dp/web" || s.Count != 4 || !s.Enabled {
		t.Errorf("decoded %+v", s)
	}
	if want := []string{"curl", "-m", "5", "10.43.0.7:80"}; !reflect.DeepEqual(s.Argv, want) {
		t.Errorf("argv %q, want %q", s.Argv, want)
	}
	m, ok := s.Data.(*Map)
	if !ok || strings.Join(m.Keys, ",") != "z,a" {
		t.Fatalf("data %#v: want an ordered map z,a", s.Data)
	}
	b, _ := m.MarshalJSON()
	if string(b) != `{"z":2,"a":[1,"cca-dp"]}` {
		t.Errorf("data JSON %s", b)
	}
}

func TestCheckRejectsWrongShapes(t *testing.T) {
	c := testCompiler()
	type spec struct {
		Count int      `yaml:"count" required:"true"`
		Argv  []string `yaml:"argv"`
	}
	for src, want := range map[string]string{
		`{count: many}`:                          `expected a whole number, found the string "many"`,
		`{count: 1, argv: x}`:                    `expected a list, found the string "x"`,
		`{count: "${{ steps.first.stdout }}"}`:   "value is a string, expected a whole number",
		`{count: "n=${{ vars.n }}"}`:             "text with ${{ }} is a string, expected a whole number",
		`{argv: []}`:                             `missing required key "count"`,
		`{count: 1, argvs: []}`:                  `unknown key "argvs" (did you mean "argv"?)`,
		`{count: "${{ steps.first.exitCode }}"}`: "",
	} {
		v := buildValue(t, c, src)
		errs := Check(v, reflect.TypeOf(spec{}))
		switch {
		case want == "" && len(errs) > 0:
			t.Errorf("%s: unexpected %v", src, errs)
		case want != "" && (len(errs) == 0 || !strings.Contains(errs.Error(), want)):
			t.Errorf("%s: errors %v, want %q", src, errs, want)
		}
	}
}

func TestExplainShowsOperands(t *testing.T) {
	c := testCompiler()
	e, err := c.Compile("vars.n > 0 and len(steps.first.items) == vars.n", diag.Pos{}, Context{Step: 1, Want: reflect.Bool})
	if err != nil {
		t.Fatal(err)
	}
	env := c.NewEnv()
	env.SetVar("n", 4)
	env.SetStep("first", &fakeResult{Items: []string{"a"}})
	ok, err := e.EvalBool(env)
	if err != nil || ok {
		t.Fatalf("EvalBool = %v, %v", ok, err)
	}
	got := e.Explain(env)
	want := []Operand{{Expr: "len(steps.first.items)", Value: "1"}, {Expr: "vars.n", Value: "4"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Explain = %+v, want %+v", got, want)
	}
}

func TestFunctions(t *testing.T) {
	c := testCompiler()
	env := c.NewEnv()
	env.SetStep("first", &fakeResult{Stdout: "-A KUBE-SVC-1\n-A CILIUM_X\n:CILIUM_Y - [0:0]\n"})
	for src, want := range map[string]any{
		`countLines(steps.first.stdout, "CILIUM")`:                 2,
		`countLines(steps.first.stdout, "KUBE-SVC")`:               1,
		`len(lines(steps.first.stdout))`:                           3,
		`grep(steps.first.stdout, "CILIUM_Y")`:                     []string{":CILIUM_Y - [0:0]"},
		`capture("web-7d9f 10.42.0.7", "(\\S+) (\\S+)")[2]`:        "10.42.0.7",
		`splitHostPort("[fd00::1]:8080").port`:                     8080,
		`joinHostPort("10.43.0.1", 80)`:                            "10.43.0.1:80",
		`difference(["a", "b", "c"], ["b"])`:                       []any{"a", "c"},
		`sameSet(["a", "b"], ["b", "a", "a"])`:                     true,
		`intersection(["a", "b", "c"], ["c", "a"])`:                []any{"a", "c"},
		`fromYAML("a: [1, 2]").a[1]`:                               2,
		`fields("  TCP OUT  1.2.3.4:5 ")[1]`:                       "OUT",
		`len(grepRe(steps.first.stdout, "^-A (KUBE|CILIUM)"))`:     2,
		`len(captureAll("a=1 b=2", "(\\w)=(\\d)"))`:                2,
		`len(lines(""))`:                                           0,
		`countLines("a\nb\n", "")`:                                 2,
		`splitHostPort("10.42.0.9:40404").host`:                    "10.42.0.9",
		`toJSON(sort(uniq(["b", "a", "b"])))`:                      "[\n  \"a\",\n  \"b\"\n]",
		`len(filter(lines(steps.first.stdout), # contains "CIL"))`: 2,
	} {
		e, err := c.Compile(src, diag.Pos{}, Context{Step: 1})
		if err != nil {
			t.Errorf("%s: %v", src, err)
			continue
		}
		got, err := e.Eval(env)
		if err != nil {
			t.Errorf("%s: %v", src, err)
			continue
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s = %#v, want %#v", src, got, want)
		}
	}
}

type row struct {
	Local Addr2 `expr:"local"`
}

type Addr2 struct {
	IP   string `expr:"ip"`
	Port int    `expr:"port"`
}

func (a Addr2) String() string { return a.IP }

// Regression: expr's optimizer turns filter(...)[0] into find(...) with a
// struct nature built without a cache; compiling .local.ip on it panicked.
func TestMemberOfOptimizedFilterOnFunctionResult(t *testing.T) {
	f := Unary("rows", "", func(s string) ([]row, error) {
		return []row{{Local: Addr2{IP: "10.0.0.1", Port: 80}}, {Local: Addr2{IP: "10.0.0.2", Port: 40404}}}, nil
	})
	c := NewCompiler(append(Builtins(), f))
	e, err := c.Compile(`filter(rows("x"), .local.port == 40404)[0].local.String()`, diag.Pos{}, Context{Step: 0})
	if err != nil {
		t.Fatal(err)
	}
	got, err := e.Eval(c.NewEnv())
	if err != nil || got != "10.0.0.2" {
		t.Fatalf("got %v, %v", got, err)
	}
}

func TestSetFunctionsTakeAnyListType(t *testing.T) {
	c := testCompiler()
	for src, want := range map[string]any{
		`sameSet(split("a,b", ","), ["b", "a"])`:      true,
		`difference(["a", "b"], split("a", ","))`:     []any{"b"},
		`intersection(split("a,b,c", ","), ["c"])`:    []any{"c"},
		`sameSet(split("a", ","), split("a,b", ","))`: false,
	} {
		e, err := c.Compile(src, diag.Pos{}, Context{Step: 0})
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		got, err := e.Eval(c.NewEnv())
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%s = %#v, %v; want %#v", src, got, err, want)
		}
	}
}

// computed is the result type a compute step learns from its spec.
type computed struct {
	Port int `expr:"port" json:"port"`
}

// TestRedeclaredStepKeepsLayoutUntilRead: a step declared again with a new
// type (a compute step) keeps the layout for expressions that do not read
// it, which then run on a copy of the environment; an expression that
// reads it, or reads steps as a whole, gets a layout with the new type.
func TestRedeclaredStepKeepsLayoutUntilRead(t *testing.T) {
	c := testCompiler()
	first, err := c.Compile("steps.first.stdout", diag.Pos{}, Context{Step: 3})
	if err != nil {
		t.Fatal(err)
	}
	before := c.layout
	c.DeclareStep("second", reflect.TypeOf(computed{}), diag.Pos{})
	notReading, err := c.Compile("steps.first.exitCode + 1", diag.Pos{}, Context{Step: 3})
	if err != nil {
		t.Fatal(err)
	}
	if c.layout != before {
		t.Fatal("an expression that does not read the redeclared step built a new layout")
	}
	if _, err := c.Compile("steps.second.stdout", diag.Pos{}, Context{Step: 3}); err == nil || !strings.Contains(err.Error(), `no field "stdout"`) {
		t.Fatalf("the old type of steps.second still checks: %v", err)
	}
	reading, err := c.Compile("steps.second.port * 2", diag.Pos{}, Context{Step: 3})
	if err != nil {
		t.Fatal(err)
	}
	if c.layout == before {
		t.Fatal("reading the redeclared step kept the stale layout")
	}
	if reading.prog.cfg != c.configs[scope{}] {
		t.Fatal("the bytecode of an expression reading the redeclared step would be made with the stale layout's configuration")
	}
	c.DeclareStep("first", reflect.TypeOf(fakeResult{}), diag.Pos{})
	stale := c.layout
	whole, err := c.Compile("toJSON(steps) contains `\"port\": 40404`", diag.Pos{}, Context{Step: 3, Want: reflect.Bool})
	if err != nil {
		t.Fatal(err)
	}
	if c.layout == stale {
		t.Fatal("reading steps as a whole kept the stale layout")
	}

	env := c.NewEnv()
	if _, err := env.SetStep("first", &fakeResult{Stdout: "a", ExitCode: 4}); err != nil {
		t.Fatal(err)
	}
	if _, err := env.SetStep("second", &computed{Port: 40404}); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		x    *Expr
		want any
	}{{first, "a"}, {notReading, 5}, {reading, 80808}, {whole, true}} {
		got, err := tt.x.Eval(env)
		if err != nil || got != tt.want {
			t.Errorf("%s = %v (%v), want %v", tt.x.Src, got, err, tt.want)
		}
	}
}

// An expression is type-checked once per configuration and kept with each
// place it is written; where it reads steps, each place still decides
// whether it may read them (shape_test.go); a failed one fails every time,
// and one with a warning warns at every place.
func TestCompileKeepsContextFreeExpressions(t *testing.T) {
	c := testCompiler()
	ctx := Context{Step: 1, Result: reflect.TypeOf(fakeResult{}), Want: reflect.Bool}
	a, err := c.Compile("result.exitCode == 0", diag.Pos{File: "p.yaml", Line: 4, Col: 9}, ctx)
	if err != nil {
		t.Fatal(err)
	}
	b, err := c.Compile("result.exitCode == 0", diag.Pos{File: "p.yaml", Line: 8, Col: 9}, ctx)
	if err != nil {
		t.Fatal(err)
	}
	if a == b || a.Pos.Line != 4 || b.Pos.Line != 8 || a.prog != b.prog {
		t.Errorf("the second compile should share the program at its own place: %v %v, same program %v", a.Pos, b.Pos, a.prog == b.prog)
	}
	if _, err := c.Compile("result.exitCode == 0", diag.Pos{}, Context{Step: 1, Want: reflect.Bool}); err == nil || !strings.Contains(err.Error(), "result is not available here") {
		t.Errorf("without a result: %v", err)
	}
	for range 2 {
		if _, err := c.Compile("1 + 'a'", diag.Pos{}, Context{Step: 1}); err == nil {
			t.Error("1 + 'a' compiled")
		}
	}
	if _, err := c.Compile("steps.second.stdout", diag.Pos{}, Context{Step: 1}); err == nil {
		t.Error("steps.second compiled at step 1")
	}
	if _, err := c.Compile("steps.second.stdout", diag.Pos{}, Context{Step: 2}); err != nil {
		t.Errorf("steps.second at step 2: %v", err)
	}
	if _, err := c.Compile("steps.second.stdout", diag.Pos{}, Context{Step: 1}); err == nil {
		t.Error("steps.second compiled at step 1 after it compiled at step 2")
	}

	shared := func(src string, ctx Context) bool {
		t.Helper()
		a, err := c.Compile(src, diag.Pos{File: "p.yaml", Line: 5, Col: 9}, ctx)
		if err != nil {
			t.Fatal(err)
		}
		b, err := c.Compile(src, diag.Pos{File: "p.yaml", Line: 9, Col: 9}, ctx)
		if err != nil {
			t.Fatal(err)
		}
		if a.Pos.Line != 5 || b.Pos.Line != 9 || !slices.Equal(a.Refs, b.Refs) {
			t.Errorf("%s: places %v %v, refs %v %v", src, a.Pos, b.Pos, a.Refs, b.Refs)
		}
		return a.prog == b.prog
	}
	if !shared("vars.ns + env.HOME", Context{Step: 1}) {
		t.Error("an expression of vars and env is checked again at each place")
	}
	if !shared("vars.n + steps.first.exitCode", Context{Step: 1}) {
		t.Error("an expression reading a step is checked again at each place")
	}
	if _, err := c.Compile("vars.n + steps.first.exitCode", diag.Pos{}, Context{Step: 0}); err == nil {
		t.Error("steps.first compiled at step 0 after it was kept for step 1")
	}
	// a variable declared again with another type: what was kept goes
	if !shared("vars.ns + 'x'", Context{Step: 1}) {
		t.Error("vars.ns + 'x' is checked again at each place")
	}
	c.DeclareVar("ns", reflect.TypeOf(0))
	if _, err := c.Compile("vars.ns + 'x'", diag.Pos{}, Context{Step: 1}); err == nil {
		t.Error("vars.ns + 'x' still compiles after ns became a number")
	}
	before := len(c.Warnings())
	if shared(`filter(["a"], any(["b"], # == "b"))`, Context{Step: 1}) {
		t.Error("an expression with a warning was kept")
	}
	if got := len(c.Warnings()) - before; got != 2 {
		t.Errorf("%d warnings for an expression written at two places, want 2", got)
	}
}

// Validating type-checks every expression; its bytecode is made when it
// first runs, once, and shared by the copies a context-free expression
// gets at each place it is written.
func TestBytecodeOnFirstRun(t *testing.T) {
	c := testCompiler()
	ctx := Context{Step: 1, Want: reflect.Bool}
	a, err := c.Compile("vars.n > 3", diag.Pos{File: "p.yaml", Line: 4, Col: 9}, ctx)
	if err != nil {
		t.Fatal(err)
	}
	b, err := c.Compile("vars.n > 3", diag.Pos{File: "p.yaml", Line: 8, Col: 9}, ctx)
	if err != nil {
		t.Fatal(err)
	}
	if a.prog.prog != nil {
		t.Fatal("compiling made bytecode before the expression ran")
	}
	env := c.NewEnv()
	if err := env.SetVar("n", 4); err != nil {
		t.Fatal(err)
	}
	if ok, err := a.EvalBool(env); err != nil || !ok {
		t.Fatalf("vars.n > 3 with n = 4: %v, %v", ok, err)
	}
	made := a.prog.prog
	if made == nil || b.prog.prog != made {
		t.Fatalf("after the first run: program %p, the other place's %p", made, b.prog.prog)
	}
	if err := env.SetVar("n", 2); err != nil {
		t.Fatal(err)
	}
	if ok, err := b.EvalBool(env); err != nil || ok {
		t.Errorf("vars.n > 3 with n = 2 at the other place: %v, %v", ok, err)
	}
	if a.prog.prog != made {
		t.Error("the bytecode was made again")
	}
}

// fromYAML refuses what labrun would not take as written, at its line and
// column in the text, as the loader does in a playbook: a tag it drops, a
// tag the value does not fit, a number it cannot hold. Keys are text.
func TestFromYAML(t *testing.T) {
	c := testCompiler()
	env := c.NewEnv()
	for _, tc := range []struct {
		src  string
		want any
		err  string
	}{
		{"a: [1, 2]", map[string]any{"a": []any{1, 2}}, ""},
		{"a: !!str 12\nb: 1e3", map[string]any{"a": "12", "b": 1000.0}, ""},
		{"1e400: x", map[string]any{"1e400": "x"}, ""},
		{"", nil, ""},
		{"a: !!binary aGVsbG8=", nil, "fromYAML: line 1, column 4: YAML tag !!binary is not supported"},
		{"a:\n  b: !Ref x", nil, "fromYAML: line 2, column 6: YAML tag !Ref is not supported"},
		{"- !!python/object {x: 1}", nil, "fromYAML: line 1, column 3: YAML tag !!python/object is not supported"},
		{"a: !!int abc", nil, `fromYAML: line 1, column 4: YAML tag !!int does not fit "abc"`},
		{"a: [1, 1e400]", nil, "fromYAML: line 1, column 8: 1e400 is out of range"},
		{"a: .inf", nil, "fromYAML: line 1, column 4: YAML reads .inf as infinity"},
		{"a: [", nil, "fromYAML: yaml: line 1: did not find expected node content"},
	} {
		e, err := c.Compile("fromYAML("+strconv.Quote(tc.src)+")", diag.Pos{}, Context{Step: 1})
		if err != nil {
			t.Fatal(err)
		}
		got, err := e.Eval(env)
		switch {
		case tc.err == "" && (err != nil || !reflect.DeepEqual(got, tc.want)):
			t.Errorf("fromYAML(%q) = %#v, %v; want %#v", tc.src, got, err, tc.want)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("fromYAML(%q): error %v, want one saying %q", tc.src, err, tc.err)
		}
	}
}
