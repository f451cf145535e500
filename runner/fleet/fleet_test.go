package fleet

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/labrun/labrun/runner"
)

func writeFile(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestReadTargets(t *testing.T) {
	p := writeFile(t, "t.yaml", "var: ns\ntargets:\n  - namespace: a\n  - {namespace: b, set: [x=1]}\n  - {context: kind-c, name: carol}\n")
	ts, err := ReadTargets(p)
	if err != nil {
		t.Fatal(err)
	}
	if ts.Var != "ns" || len(ts.List) != 3 || ts.List[2].Name != "carol" || ts.List[1].Name != "b" {
		t.Fatalf("got %+v", ts)
	}
	o := ts.Options(ts.List[1], runner.Options{Set: []string{"y=2"}})
	if strings.Join(o.Set, " ") != "y=2 ns=b x=1" {
		t.Errorf("options of b: %v", o.Set)
	}
	if _, err := ts.Pick(3); err == nil || !strings.Contains(err.Error(), "indexes 0 to 2") {
		t.Errorf("Pick(3): %v", err)
	}
}

func TestReadTargetsRefuses(t *testing.T) {
	for _, tc := range []struct{ name, text, want string }{
		{"no list", "var: ns\n", "t.yaml:1:1: no targets: expected a list under targets:"},
		{"both", "targets:\n  - {namespace: a, context: b}\n", "t.yaml:2:5: a target names exactly one of namespace: or context:"},
		{"typo", "targets:\n  - {namespce: a}\n", `t.yaml:2:6: unknown key "namespce": expected one of name, namespace, context, set (did you mean "namespace"?)`},
		{"bad name", "targets:\n  - namespace: Learner_1\n", `t.yaml:2:16: namespace: expected a name of lower-case letters, digits and '-', got the string "Learner_1"`},
		{"twice", "targets:\n  - namespace: a\n  - namespace: a\n", `t.yaml:3:5: target "a" is listed twice (first at line 2)`},
		{"bad set", "targets:\n  - {namespace: a, set: [x]}\n", `t.yaml:2:26: set: expected name=value, got the string "x"`},
		{"top key", "target: []\n", `t.yaml:1:1: unknown key "target": expected var or targets (did you mean "targets"?)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := writeFile(t, "t.yaml", tc.text)
			_, err := ReadTargets(p)
			if err == nil || !strings.Contains(err.Error(), strings.TrimPrefix(tc.want, "t.yaml")) {
				t.Errorf("got %v\nwant %s", err, tc.want)
			}
		})
	}
}

// A result with long messages is cut to fit MaxResultBytes, and
// reads back as written.
func TestResultLineFits(t *testing.T) {
	r := Result{Target: "a", Verdict: runner.VerdictWrong, Class: runner.ClassAssertion, Exit: 1, FirstFailure: strings.Repeat("é", 400)}
	for range 60 {
		r.Cases = append(r.Cases, Case{Name: strings.Repeat("t", 50), Status: runner.Failed, Message: strings.Repeat("m", 300)})
	}
	line, err := r.Line()
	if err != nil {
		t.Fatal(err)
	}
	if len(line) > MaxResultBytes || !bytes.HasSuffix(line, []byte("\n")) {
		t.Fatalf("line of %d bytes", len(line))
	}
	back, err := ParseLine(line)
	if err != nil || !back.Truncated || back.Target != "a" || len(back.Cases) == 0 {
		t.Fatalf("read back %+v, %v", back, err)
	}
	small := Result{Target: "b", Verdict: runner.VerdictPassed, Cases: []Case{{Name: "task 1", Status: runner.Passed}}}
	line, _ = small.Line()
	if back, _ := ParseLine(line); back.Truncated || len(back.Cases) != 1 {
		t.Errorf("a small result changed: %s", line)
	}
}

// A result line is a line of a pod's log: the C1 and bidi
// controls encoding/json leaves as they are are escaped too, even when
// that makes the line longer than MaxResultBytes allows unescaped, and
// the line reads back as written.
func TestResultLineEscapes(t *testing.T) {
	msg := strings.Repeat("\u202e\u009b\x7f\x1b", 1000)
	r := Result{Target: "a", Verdict: runner.VerdictWrong, Class: runner.ClassAssertion, Exit: 1, FirstFailure: msg}
	line, err := r.Line()
	if err != nil {
		t.Fatal(err)
	}
	if len(line) > MaxResultBytes || bytes.ContainsAny(line, "\u202e\u009b\x7f\x1b") || !bytes.Contains(line, []byte(`\u202e\u009b\u007f\u001b`)) {
		t.Fatalf("line of %d bytes: %s", len(line), line)
	}
	back, err := ParseLine(line)
	if err != nil || !strings.HasPrefix(msg, strings.TrimSuffix(back.FirstFailure, "…")) {
		t.Fatalf("read back %q, %v", back.FirstFailure, err)
	}
}

func TestOutputs(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"a/answer.json", "a/.labrun/journal.jsonl", "b/x.json"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), []byte(f), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ts := &Targets{Var: "ns", List: []Target{{Name: "a", Namespace: "a"}, {Name: "b", Namespace: "b"}, {Name: "c", Namespace: "c"}}}
	for _, bad := range []string{"out", "=dir", "1x=dir", "out="} {
		if err := ts.SetOutputs(bad); err == nil {
			t.Errorf("SetOutputs(%q) took it", bad)
		}
	}
	if err := ts.SetOutputs("out=" + dir); err != nil {
		t.Fatal(err)
	}
	if o := ts.Options(ts.List[2], runner.Options{}); strings.Join(o.Set, " ") != "ns=c out="+filepath.Join(dir, "c") {
		t.Errorf("options of c: %v", o.Set)
	}
	// two shards: a in the first, b and c in the second; each file under
	// its target's index, at its shard's directory
	files, err := ReadOutputs(ts, 2)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range files {
		got = append(got, f.Key+"="+f.Path+":"+string(f.Data))
	}
	want := "shard-0=0/.shard: 0.answer.json=0/a/answer.json:a/answer.json shard-1=1/.shard: 1.x.json=1/b/x.json:b/x.json"
	if strings.Join(got, " ") != want {
		t.Errorf("ReadOutputs:\ngot  %s\nwant %s", strings.Join(got, " "), want)
	}
	if err := os.Mkdir(filepath.Join(dir, "b", "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadOutputs(ts, 2); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("a directory in a learner's files: %v", err)
	}
	// A learner's directory that is a link leads anywhere: refused, not
	// followed.
	if err := os.RemoveAll(filepath.Join(dir, "b")); err != nil {
		t.Fatal(err)
	}
	secret := t.TempDir()
	if err := os.WriteFile(filepath.Join(secret, "shadow"), []byte("root:x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, filepath.Join(dir, "b")); err != nil {
		t.Fatal(err)
	}
	if files, err := ReadOutputs(ts, 2); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("a learner's directory that is a link: %v, %d files", err, len(files))
	}
}

// A case carries its hint apart from its message: a task's from its
// record, a step's (a lab without tasks) from its failed assertion, else
// the step; a passed case has neither.
func TestCaseHints(t *testing.T) {
	tasks := &runner.Outcome{Status: runner.Failed, Class: runner.ClassAssertion, Tasks: []*runner.TaskRecord{
		{Number: 1, Title: "one", Status: runner.Failed, Class: runner.ClassAssertion, Reason: "not 3 (hint: three, not two)", Hint: "three, not two"},
		{Number: 2, Title: "two", Status: runner.Passed},
	}}
	steps := &runner.Outcome{Status: runner.Failed, Class: runner.ClassAssertion, Steps: []*runner.StepRecord{
		{ID: "a", Status: runner.Failed, Class: runner.ClassAssertion, Hint: "the step's", Assertions: []runner.AssertRecord{{That: "x", Hint: "the assertion's"}}},
		{ID: "b", Status: runner.Failed, Class: runner.ClassAssertion, Hint: "the step's", Assertions: []runner.AssertRecord{{That: "x"}}},
		{ID: "c", Status: runner.Passed, Hint: "unused"},
	}}
	for _, tt := range []struct {
		o    *runner.Outcome
		want []string
	}{
		{tasks, []string{"three, not two", ""}},
		{steps, []string{"the assertion's", "the step's", ""}},
	} {
		r := FromOutcome(0, Target{Name: "a"}, tt.o, 1)
		var got []string
		for _, c := range r.Cases {
			got = append(got, c.Hint)
		}
		if strings.Join(got, "|") != strings.Join(tt.want, "|") {
			t.Errorf("hints %q, want %q", got, tt.want)
		}
	}
}
