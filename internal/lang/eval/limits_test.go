package eval

import (
	"strings"
	"testing"

	"github.com/expr-lang/expr/conf"
	"github.com/labrun/labrun/internal/lang/diag"
)

// The limit labrun documents is the budget expr-lang runs with.
func TestMemoryBudgetIsExprs(t *testing.T) {
	if MemoryBudget != conf.DefaultMemoryBudget {
		t.Errorf("MemoryBudget = %d, expr-lang's conf.DefaultMemoryBudget = %d", MemoryBudget, conf.DefaultMemoryBudget)
	}
}

// What an expression would build from its constants alone beyond the
// limits is refused when it is compiled, naming the limit; what stays
// under them compiles.
func TestConstSizes(t *testing.T) {
	c := testCompiler()
	for _, tc := range []struct{ src, err string }{
		{`1..2000000000`, "1..2000000000 is a list of 2000000000 numbers; an expression builds fewer than 1000000 list items in all (labrun's limit, docs/language.md#limits)"},
		{`len(-5..999999)`, "-5..999999 is a list of 1000005 numbers"},
		{`-9000000000000000000..9000000000000000000`, "is a list of 18000000000000000001 numbers"},
		{`repeat("x", 9000000000000000000)`, "repeat would build 9000000000000000000 bytes; an expression builds fewer than 1000000 list items, map entries and bytes of repeat in all (labrun's limit, docs/language.md#limits)"},
		{`repeat("abc", 9000000000000000000)`, "repeat would build 9000000000000000000 copies of 3 bytes, more than 9223372036854775807 bytes"},
		{`repeat("ab", 500000)`, "repeat would build 1000000 bytes"},
		{`repeat(vars.ns, 1000000)`, "repeat would build 1000000 copies of its text"},
		{`1..999999`, ""},
		{`5..1`, ""},
		{`repeat("ab", 499999)`, ""},
		{`repeat(vars.ns, 999999)`, ""},
		{`repeat("", 5000000)`, ""}, // nothing to build; expr-lang refuses the count when it runs
		{`1..vars.n`, ""},           // known at run only
	} {
		_, err := c.Compile(tc.src, diag.Pos{File: "p.yaml", Line: 1, Col: 1}, Context{Step: 1})
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("%s: %v", tc.src, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%s: error %v, want one saying %q", tc.src, err, tc.err)
		}
	}
}

// What an expression would build from the run's values beyond the limits
// is refused when it runs, before the memory is taken, naming the limit.
// (Sizes stay small: without the guards, these build tens of MB.)
func TestRunSizes(t *testing.T) {
	c := testCompiler()
	env := c.NewEnv()
	big := strings.Repeat("a", 1<<20)
	env.SetStep("first", &fakeResult{Stdout: big, Items: []string{"ab", "x"}})
	for _, tc := range []struct {
		src  string
		want any
		err  string
	}{
		{`len(repeat(steps.first.stdout, 2))`, nil, "repeat would build 2097152 bytes; an expression builds fewer than 1000000 list items, map entries and bytes of repeat in all (labrun's limit, docs/language.md#limits)"},
		{`len(repeat(steps.first.items[0], 600000))`, nil, "repeat would build 1200000 bytes"},
		{`len(repeat(steps.first.items[0], 400000))`, 800000, ""},
		{`len(replace(steps.first.stdout, "a", steps.first.items[0] + steps.first.items[0] + "aaaaaaaaaaaaaaaaaaaaaa"))`, nil, "replace would build a text of 27262976 bytes from one of 1048576; a replace that lengthens its text builds at most 16777216 bytes, 16 MiB (labrun's limit, docs/language.md#limits)"},
		{`len(replace(steps.first.stdout, "a", "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbb", 10))`, 1<<20 + 290, ""},
		{`len(replace(steps.first.stdout, "a", ""))`, 0, ""},
		{`len(replace(steps.first.stdout, "", "xxxxxxxxxxxxxxxxxx"))`, nil, "replace would build a text of 19922962 bytes"},
		{`replace("a-b-c", "-", "+")`, "a+b+c", ""},
	} {
		e, err := c.Compile(tc.src, diag.Pos{File: "p.yaml", Line: 1, Col: 1}, Context{Step: 1})
		if err != nil {
			t.Fatalf("%s: %v", tc.src, err)
		}
		got, err := e.Eval(env)
		switch {
		case tc.err == "" && (err != nil || got != tc.want):
			t.Errorf("%s = %#v, %v; want %#v", tc.src, got, err, tc.want)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%s: error %v, want one saying %q", tc.src, err, tc.err)
		}
	}
}
