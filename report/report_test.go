package report

import (
	"encoding/xml"
	"strings"
	"testing"
	"time"

	"github.com/labrun/labrun/eval"
	"github.com/labrun/labrun/runner"
)

func outcome() *runner.Outcome {
	return &runner.Outcome{
		Name: "lab", Status: runner.Failed, Started: time.Unix(0, 0), Seconds: 1.5,
		Steps: []*runner.StepRecord{
			{ID: "ok", Action: "run", Status: runner.Passed, Seconds: 0.25},
			{ID: "bad", Name: "Count lines", Action: "run", Status: runner.Failed, Seconds: 0.5, Assertions: []runner.AssertRecord{{
				That: "len(x) == 4", Passed: false, Message: "four lines", Hint: "look again",
				Operands: []eval.Operand{{Expr: "len(x)", Value: "2"}},
			}}},
			{ID: "broken", Action: "run", Status: runner.Failed, Error: "exit 3"},
			{ID: "later", Action: "write", Status: runner.Skipped, Reason: "an earlier step failed"},
			{ID: "side", Action: "get", Status: runner.Skipped, Reason: "an earlier step failed", Parallel: "sections", Branch: "holder"},
		},
	}
}

func TestJUnit(t *testing.T) {
	b, err := JUnit(outcome())
	if err != nil {
		t.Fatal(err)
	}
	var doc junitSuites
	if err := xml.Unmarshal(b, &doc); err != nil {
		t.Fatalf("not XML: %v\n%s", err, b)
	}
	s := doc.Suites[0]
	if s.Tests != 5 || s.Failures != 1 || s.Errors != 1 || s.Skipped != 2 {
		t.Fatalf("counts tests=%d failures=%d errors=%d skipped=%d", s.Tests, s.Failures, s.Errors, s.Skipped)
	}
	f := s.Cases[1].Failure
	if f == nil || f.Message != "assertion failed: len(x) == 4" {
		t.Fatalf("failure %+v", f)
	}
	for _, want := range []string{"four lines", "len(x) = 2", "hint: look again"} {
		if !strings.Contains(f.Body, want) {
			t.Errorf("failure body lacks %q:\n%s", want, f.Body)
		}
	}
	if s.Cases[1].Name != "bad: Count lines" || s.Cases[2].Error.Message != "exit 3" {
		t.Errorf("cases %+v", s.Cases)
	}
	// a branch step of a parallel step is a class of its own
	if s.Cases[0].Classname != "lab" || s.Cases[4].Classname != "lab.sections.holder" {
		t.Errorf("classnames %q, %q", s.Cases[0].Classname, s.Cases[4].Classname)
	}
}

func TestJSON(t *testing.T) {
	b, err := JSON(outcome())
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"status": "failed"`, `"id": "bad"`, `"value": "2"`, `"reason": "an earlier step failed"`, `"parallel": "sections"`, `"branch": "holder"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("JSON lacks %s", want)
		}
	}
}
