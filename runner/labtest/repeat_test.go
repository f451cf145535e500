package labtest

import (
	"strings"
	"testing"

	"github.com/labrun/labrun/internal/lang/syntax"
	"github.com/labrun/labrun/runner"
)

// values makes a run's valueSet of key=value pairs, in order.
func values(pairs ...string) *valueSet {
	vs := &valueSet{}
	for _, p := range pairs {
		k, v, _ := strings.Cut(p, "=")
		vs.set(k, v)
	}
	return vs
}

// A value that differed between runs is named with the runs each of its
// values was seen in, those that tell passing runs from failing ones
// first; a value the same in every run is left out; a key a run did not
// read is (none) there.
func TestDiffered(t *testing.T) {
	runs := []Run{
		{Number: 1, Tasks: []RunTask{{Passed: true, values: values(`f.json ip (written)="a"`, `steps.x.seconds (check)=1.5`, `same (check)=1`)}}},
		{Number: 2, Tasks: []RunTask{{Passed: false, values: values(`f.json ip (written)="b"`, `steps.x.seconds (check)=2.5`, `same (check)=1`)}}},
		{Number: 3, Tasks: []RunTask{{Passed: true, values: values(`f.json ip (written)="a"`, `steps.x.seconds (check)=2.5`, `same (check)=1`, `late (check)=7`)}}},
	}
	var got []string
	for _, d := range differed(runs, 0) {
		got = append(got, d.String())
	}
	want := []string{
		`f.json ip (written): "a" in runs 1, 3; "b" in run 2 (failed)`,
		`steps.x.seconds (check): 1.5 in run 1; 2.5 in runs 2 (failed), 3`,
		`late (check): (none) in runs 1, 2 (failed); 7 in run 3`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("differed:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if d := differed(runs, 0); !d[0].Separates || d[1].Separates || d[2].Separates {
		t.Errorf("separates: %v %v %v; want true false false", d[0].Separates, d[1].Separates, d[2].Separates)
	}
}

// A long value is cut to maxValue characters around where the values
// differ, the cuts marked.
func TestCutAround(t *testing.T) {
	head := strings.Repeat("x", 100)
	seen := []Seen{{Value: head + "A" + strings.Repeat("y", 100)}, {Value: head + "B" + strings.Repeat("y", 100)}, {Value: "short"}}
	cutAround(seen)
	if seen[2].Value != "short" {
		t.Errorf("a short value was cut: %q", seen[2].Value)
	}
	for i, want := range []string{"A", "B"} {
		v := seen[i].Value
		if !strings.HasPrefix(v, "…") || !strings.HasSuffix(v, "…") || !strings.Contains(v, want) || len([]rune(v)) != maxValue+2 {
			t.Errorf("value %d cut to %q: want %d characters around %s, both cuts marked", i, v, maxValue, want)
		}
	}
}

// A task's figures: passes, failures, the flake rate; flaky when it
// passed some runs and failed others, broken when it failed every run,
// with the most decisive class of its failures.
func TestFigures(t *testing.T) {
	plan := &runner.Plan{Tasks: []*syntax.Task{{Number: 1, ID: "a"}, {Number: 2, ID: "b"}, {Number: 3, ID: "c"}}}
	runs := []Run{
		{Number: 1, Tasks: []RunTask{{Passed: true}, {Class: runner.ClassAssertion, Reason: "a"}, {Passed: true}}},
		{Number: 2, Tasks: []RunTask{{Class: runner.ClassTimeout, Reason: "t"}, {Class: runner.ClassTimeout, Reason: "t"}, {Passed: true}}},
		{Number: 3, Tasks: []RunTask{{Passed: true}, {Class: runner.ClassAssertion, Reason: "a"}, {Passed: true}}},
	}
	res := &Result{Runs: runs, Tasks: figures(plan, runs)}
	if fl := res.Flaky(); len(fl) != 1 || fl[0].ID != "a" || fl[0].FlakeRate != 1.0/3 {
		t.Errorf("flaky %+v; want task a, at 1/3", fl)
	}
	if b := res.FailedEveryRun(); len(b) != 1 || b[0].ID != "b" || b[0].Class() != runner.ClassTimeout || len(b[0].Failures) != 3 {
		t.Errorf("failed every run %+v; want task b, timeout, 3 failures", b)
	}
	if c := res.Tasks[2]; c.Flaky || c.Failed != 0 || c.Passed != 3 || c.Class() != "" {
		t.Errorf("task c %+v; want 3 passes", c)
	}
	for i, want := range []string{
		"repeat: task 1 (a): passed 2 of 3 runs, failed 1 (flake rate 33%): FLAKY",
		"repeat: task 2 (b): passed 0 of 3 runs: failed every run",
		"repeat: task 3 (c): passed 3 of 3 runs",
	} {
		if s := res.Tasks[i].String(); s != want {
			t.Errorf("figures line %q, want %q", s, want)
		}
	}
	if got := figures(&runner.Plan{}, nil); len(got) != 1 || got[0].What() != "the lab" {
		t.Errorf("a lab without tasks: %+v; want one, the lab", got)
	}
}

// A rate is a whole percentage, but never rounded to 0% or 100% when it
// is neither.
func TestPercent(t *testing.T) {
	for r, want := range map[float64]string{0: "0%", 1: "100%", 0.5: "50%", 1.0 / 3: "33%", 0.001: "0.1%", 0.999: "99.9%"} {
		if got := percent(r); got != want {
			t.Errorf("percent(%g) = %q, want %q", r, got, want)
		}
	}
}
