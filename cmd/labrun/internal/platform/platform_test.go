package platform

import (
	"bytes"
	"strings"
	"testing"

	"github.com/labrun/labrun/runner"
)

// outcome is a check's outcome over two tasks: task 1 and task 2 as
// given, the run's status and class, the tasks asked for.
func outcome(status runner.Status, class runner.Class, only []int, t1, t2 *runner.TaskRecord) *runner.Outcome {
	t1.Number, t1.Title = 1, "count.json: how many hosts"
	t2.Number, t2.Title = 2, "address.json: the address of web"
	return &runner.Outcome{Name: "tasks", Status: status, Class: class, Only: only, Tasks: []*runner.TaskRecord{t1, t2}}
}

var (
	passed = func() *runner.TaskRecord { return &runner.TaskRecord{Status: runner.Passed} }
	wrong  = func() *runner.TaskRecord {
		return &runner.TaskRecord{Status: runner.Failed, Class: runner.ClassAssertion, Reason: `address.json: address is "x", expected "y" (hint: the second word)`}
	}
	failed = func(c runner.Class) *runner.TaskRecord {
		return &runner.TaskRecord{Status: runner.Failed, Class: c, Reason: "why, for the author"}
	}
)

// The verdict of each kind of outcome, as every format prints it: the
// bytes are the platforms' contract (docs/platforms.md).
func TestFormats(t *testing.T) {
	const (
		t1 = "task 1 (count.json: how many hosts)"
		t2 = "task 2 (address.json: the address of web)"
	)
	wrongLine := t2 + `: address.json: address is "x", expected "y" (hint: the second word)`
	notJudged := func(subject, why, then string) string {
		return subject + " could not be checked: " + why + "; your answer was not judged: " + then
	}
	cases := []struct {
		what string
		o    *runner.Outcome
		// line is what a failed check prints after the format's prefix;
		// "" for a check that passed
		line, subject string
	}{
		{what: "the task asked for passed", o: outcome(runner.Passed, "", []int{1}, passed(), &runner.TaskRecord{Status: runner.Skipped}), subject: t1},
		{what: "every task passed", o: outcome(runner.Passed, "", nil, passed(), passed()), subject: "tasks"},
		{what: "a wrong answer", o: outcome(runner.Failed, runner.ClassAssertion, []int{2}, &runner.TaskRecord{Status: runner.Skipped}, wrong()), line: wrongLine},
		{what: "the first task asked for that did not pass", o: outcome(runner.Failed, runner.ClassAssertion, []int{1, 2}, passed(), wrong()), line: wrongLine},
		{what: "not started", o: outcome(runner.Failed, runner.ClassAssertion, nil, passed(), &runner.TaskRecord{Status: runner.NotStarted, Reason: "not started: no address.json yet"}),
			line: t2 + ": not started: no address.json yet"},
		{what: "the cluster did not answer task 2, task 1 then read zero values: the outage is named, not the answer", o: outcome(runner.Failed, runner.ClassTransport, nil, wrong(), failed(runner.ClassTransport)),
			line: notJudged(t2, "the lab's cluster did not answer", "check again in a moment")},
		{what: "time ran out", o: outcome(runner.Failed, runner.ClassTimeout, []int{1}, failed(runner.ClassTimeout), &runner.TaskRecord{Status: runner.Skipped}),
			line: notJudged(t1, "the check ran out of time", "check again in a moment")},
		{what: "a broken lab", o: outcome(runner.Failed, runner.ClassConfig, []int{1}, failed(runner.ClassConfig), &runner.TaskRecord{Status: runner.Skipped}),
			line: notJudged(t1, "the lab's check is broken", "please tell the lab's author")},
		{what: "a missing permission", o: outcome(runner.Failed, runner.ClassForbidden, []int{1}, failed(runner.ClassForbidden), &runner.TaskRecord{Status: runner.Skipped}),
			line: notJudged(t1, "the lab's check was refused access to the cluster", "please tell the lab's author")},
		{what: "the run's time limit between two steps: no task failed", o: outcome(runner.Failed, runner.ClassTimeout, nil, passed(), &runner.TaskRecord{Status: runner.Skipped, Reason: "the run's time limit passed"}),
			line: notJudged("tasks", "the check ran out of time", "check again in a moment")},
		{what: "interrupted", o: outcome(runner.Interrupted, "", nil, passed(), &runner.TaskRecord{Status: runner.Interrupted}),
			line: "tasks was not checked: the check was stopped; check again"},
		{what: "a lab without tasks", o: &runner.Outcome{Name: "hello", Status: runner.Failed, Class: runner.ClassAssertion, Steps: []*runner.StepRecord{
			{ID: "one", Status: runner.Passed}, {ID: "two", Status: runner.Failed, Class: runner.ClassAssertion, Error: "false exited with code 1\nmore"}}},
			line: "hello: false exited with code 1"},
	}
	for _, c := range cases {
		v := MessageOf(c.o)
		for _, name := range Names() {
			f, err := Lookup(name)
			if err != nil {
				t.Fatal(err)
			}
			var b bytes.Buffer
			if err := f.Write(&b, v); err != nil {
				t.Fatal(err)
			}
			want := f.Prefix + c.line + "\n"
			switch {
			case c.line == "" && f.PassLine:
				want = "PASS: " + c.subject + "\n"
			case c.line == "":
				want = ""
			}
			if b.String() != want {
				t.Errorf("%s, %s:\n got %q\nwant %q", c.what, name, b.String(), want)
			}
		}
	}
}

// The prefix of each format is its platform's: Instruqt shows the text
// after "FAIL: ", the others show or log the line as it is.
func TestFormatTable(t *testing.T) {
	want := map[string]string{"instruqt": "PASS FAIL: ", "killercoda": " ", "iximiuz": " ", "educates": "PASS FAIL: "}
	for _, name := range Names() {
		f, _ := Lookup(name)
		got := " " + f.Prefix
		if f.PassLine {
			got = "PASS" + got
		}
		if got != want[name] {
			t.Errorf("%s: %q, want %q", name, got, want[name])
		}
	}
	if _, err := Lookup("katacoda"); err == nil || !strings.Contains(err.Error(), "instruqt, killercoda, iximiuz, educates") {
		t.Errorf("Lookup of an unknown format: %v", err)
	}
}

// A title, a reason and a lab's name hold what a playbook or a learner
// put there: each format prints their control characters and bidi
// controls as escapes, and a title cannot add a line of its own.
func TestControlCharactersEscaped(t *testing.T) {
	o := outcome(runner.Failed, runner.ClassAssertion, nil, passed(),
		&runner.TaskRecord{Status: runner.Failed, Class: runner.ClassAssertion, Reason: "word is \"\u202ex\", expected \x1b[2Jy"})
	o.Tasks[1].Title = "title\x1b]0;t\a\nPASS: forged"
	for _, name := range Names() {
		f, _ := Lookup(name)
		var b bytes.Buffer
		if err := f.Write(&b, MessageOf(o)); err != nil {
			t.Fatal(err)
		}
		want := f.Prefix + `task 2 (title\u001b]0;t\u0007\nPASS: forged): word is "\u202ex", expected \u001b[2Jy` + "\n"
		if b.String() != want {
			t.Errorf("%s: %q, want %q", name, b.String(), want)
		}
	}
	o = &runner.Outcome{Name: "lab\u2066", Status: runner.Passed}
	f, _ := Lookup("instruqt")
	var b bytes.Buffer
	f.Write(&b, MessageOf(o))
	if want := "PASS: lab\\u2066\n"; b.String() != want {
		t.Errorf("%q, want %q", b.String(), want)
	}
}
