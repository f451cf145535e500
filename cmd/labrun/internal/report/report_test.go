package report

import (
	"encoding/json"
	"encoding/xml"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/labrun/labrun/cmd/labrun/internal/board"
	"github.com/labrun/labrun/internal/lang/eval"
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

// The report writes results as StepRecord.ResultJSON encoded them, beside
// encoding/json's indented records: the document must decode to what
// encoding/json makes of the whole outcome, and stay valid JSON whatever
// mix of steps with and without results it holds.
func TestJSONMatchesEncodingJSON(t *testing.T) {
	type entry struct {
		Src   string   `json:"src"`
		Flags []string `json:"flags"`
	}
	var nilEntry *entry
	for name, steps := range map[string][]*runner.StepRecord{
		"none":       {},
		"no results": outcome().Steps,
		"results": append(outcome().Steps,
			&runner.StepRecord{ID: "ct", Action: "bpfmap", Status: runner.Passed, Result: &entry{Src: "10.0.0.1:40404", Flags: []string{"SeenNonSyn"}}},
			&runner.StepRecord{ID: "loop", Action: "run", Status: runner.Passed, Result: []entry{{Src: "a"}, {Src: "b <&>"}}},
			&runner.StepRecord{ID: "typed-nil", Action: "get", Status: runner.Passed, Result: nilEntry},
			&runner.StepRecord{ID: "doc", Action: "agent", Status: runner.Passed, Result: map[string]any{"status": 200, "json": map[string]any{"ok": true}}},
		),
	} {
		t.Run(name, func(t *testing.T) {
			o := outcome()
			o.Steps = steps
			o.Tasks = []*runner.TaskRecord{{Number: 1, Title: "iptables", Status: runner.Passed}}
			got, err := JSON(o)
			if err != nil {
				t.Fatal(err)
			}
			want, err := json.Marshal(o)
			if err != nil {
				t.Fatal(err)
			}
			var g, w any
			if err := json.Unmarshal(got, &g); err != nil {
				t.Fatalf("not JSON: %v\n%s", err, got)
			}
			if err := json.Unmarshal(want, &w); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(g, w) {
				t.Errorf("report\n%s\nencoding/json\n%s", got, want)
			}
		})
	}
}

// A failed step's class is its JUnit failure's type and its "class" in
// JSON, as are a failed task's and the run's; nothing that did not fail
// has one.
func TestClassInReports(t *testing.T) {
	o := &runner.Outcome{
		Name: "lab", Status: runner.Failed, Class: runner.ClassTransport, Started: time.Unix(0, 0),
		Tasks: []*runner.TaskRecord{
			{Number: 1, ID: "a", Title: "A", Status: runner.Failed, Class: runner.ClassAssertion, Reason: "assertion failed: x"},
			{Number: 2, ID: "b", Title: "B", Status: runner.Passed},
		},
		Steps: []*runner.StepRecord{
			{ID: "wrong", Action: "run", Task: 1, Status: runner.Failed, Class: runner.ClassAssertion,
				Assertions: []runner.AssertRecord{{That: "x", Passed: false}}},
			{ID: "down", Action: "get", Task: 2, Status: runner.Failed, Class: runner.ClassTransport, Error: "connection refused"},
			{ID: "fine", Action: "run", Task: 2, Status: runner.Passed},
		},
	}
	b, err := JUnit(o)
	if err != nil {
		t.Fatal(err)
	}
	var doc junitSuites
	if err := xml.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if f := doc.Suites[0].Cases[0].Failure; f == nil || f.Type != "assertion" {
		t.Errorf("failure %+v, want type assertion", f)
	}
	if e := doc.Suites[1].Cases[0].Error; e == nil || e.Type != "transport" {
		t.Errorf("error %+v, want type transport", e)
	}
	if strings.Count(string(b), "type=") != 2 {
		t.Errorf("want two type attributes:\n%s", b)
	}
	b, err = JSON(o)
	if err != nil {
		t.Fatal(err)
	}
	var j struct {
		Class string
		Tasks []struct{ Class *string }
		Steps []struct{ Class *string }
	}
	if err := json.Unmarshal(b, &j); err != nil {
		t.Fatal(err)
	}
	str := func(p *string) string {
		if p == nil {
			return "(none)"
		}
		return *p
	}
	if j.Class != "transport" || str(j.Tasks[0].Class) != "assertion" || j.Tasks[1].Class != nil ||
		str(j.Steps[0].Class) != "assertion" || str(j.Steps[1].Class) != "transport" || j.Steps[2].Class != nil {
		t.Errorf("classes: run %s, tasks %s %s, steps %s %s %s", j.Class, str(j.Tasks[0].Class), str(j.Tasks[1].Class),
			str(j.Steps[0].Class), str(j.Steps[1].Class), str(j.Steps[2].Class))
	}
}

// A report holds names, messages and values from a playbook and a
// learner's files: JUnit writes their control characters and bidi
// controls as escapes (XML 1.0 forbids most C0 characters, which
// encoding/xml would replace by U+FFFD, and allows C1 and bidi controls
// that CI pages then show raw); the JSON report escapes them as JSON
// does, and reads back the same.
func TestControlCharactersEscaped(t *testing.T) {
	const hostile = "\x1b[2J\a\u009b\u202e\x7f"
	o := &runner.Outcome{Name: "lab" + hostile, Status: runner.Failed, Started: time.Unix(0, 0),
		Tasks: []*runner.TaskRecord{{Number: 1, ID: "one", Title: "title\n" + hostile, Status: runner.Failed}},
		Steps: []*runner.StepRecord{{ID: "bad", Name: "name" + hostile, Action: "run", Task: 1, Status: runner.Failed,
			Error: "first" + hostile + "\nsecond"},
			{ID: "later", Action: "run", Task: 1, Status: runner.Skipped, Reason: "why" + hostile}}}
	b, err := JUnit(o)
	if err != nil {
		t.Fatal(err)
	}
	const shown = `\u001b[2J\u0007\u009b\u202e\u007f`
	for _, want := range []string{`name="lab` + shown + `: task 1: title\n` + shown + `"`, `name="bad: name` + shown + `"`,
		`classname="lab` + shown + `"`, `message="first` + shown + `">first` + shown + `&#xA;second<`, `message="skipped: why` + shown + `"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("JUnit lacks %s:\n%s", want, b)
		}
	}
	const raw = "\x1b\a\u009b\u202e\x7f"
	if strings.ContainsAny(string(b), raw+"\ufffd") {
		t.Errorf("JUnit holds a control character or U+FFFD:\n%q", b)
	}
	var doc junitSuites
	if err := xml.Unmarshal(b, &doc); err != nil {
		t.Fatalf("not XML: %v", err)
	}

	path := t.TempDir() + "/r.json"
	if err := Write("json", path, o, nil, nil, board.About{}); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if strings.ContainsAny(string(data), raw) || !strings.Contains(string(data), `"name": "lab`+shown+`"`) {
		t.Errorf("JSON report:\n%s", data)
	}
	var back struct{ Name string }
	if err := json.Unmarshal(data, &back); err != nil || back.Name != o.Name {
		t.Errorf("JSON report reads back name %q (%v), want %q", back.Name, err, o.Name)
	}
}
