// Package platform prints the result of labrun check as a lab platform's
// check script must print it: the bytes the platform shows the learner
// (or logs), one line per Check button. The verdict is the runner's
// (runner.Verdict); this package only formats it. The exit code stays labrun's
// own (0 passed, 1 a wrong answer, 2 a broken lab, 3 the cluster did not
// answer, 4 out of time): none of the platforms here gives a non-zero
// code a meaning of its own, and the codes tell the platform's logs what
// happened. docs/platforms.md has each platform's contract and sources.
package platform

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/labrun/labrun/internal/lang/visible"
	"github.com/labrun/labrun/runner"
)

// Format is how one platform's check script reports a verdict.
type Format struct {
	Name string
	// PassLine: print "PASS: " and what was checked when the check
	// passed; otherwise a passing check prints nothing.
	PassLine bool
	// Prefix starts the line of a check that did not pass.
	Prefix string
}

// formats are the platforms, by name. What each shows is in its comment;
// docs/platforms.md cites the pages it comes from.
var formats = []Format{
	// Instruqt runs a challenge's check-HOST script on Check: exit 0
	// passes the challenge; otherwise the learner sees the text after
	// "FAIL: " on stdout.
	{Name: "instruqt", PassLine: true, Prefix: "FAIL: "},
	// Killercoda runs a step's verify script on Check: exit 0 lets the
	// learner go on. The line is the reason, for the platform's debug
	// view or a $VERIFICATION_FAILURE_REASON file (see the docs).
	{Name: "killercoda"},
	// iximiuz Labs runs a task's run script until it exits 0, its output
	// unseen; the stdout and stderr of its hintcheck script, run after
	// it, are the task's hint. A passing check prints none.
	{Name: "iximiuz"},
	// Educates runs workshop/examiner/tests/NAME from an
	// examiner:execute-test action: exit 0 passes. The learner sees only
	// passed or failed; the output goes, line by line, to the examiner's
	// log (~/.local/share/workshop/examiner-scripts.log).
	{Name: "educates", PassLine: true, Prefix: "FAIL: "},
}

// Names lists the formats, for flags and messages.
func Names() []string {
	names := make([]string, len(formats))
	for i, f := range formats {
		names[i] = f.Name
	}
	return names
}

// Lookup finds a format by name.
func Lookup(name string) (Format, error) {
	for _, f := range formats {
		if f.Name == name {
			return f, nil
		}
	}
	return Format{}, fmt.Errorf("unknown format %q; expected one of %s", name, strings.Join(Names(), ", "))
}

// Message is what one check tells the learner: the check's verdict
// (runner.Verdict) with its class, which this package only formats, and
// what it names.
type Message struct {
	Verdict runner.Verdict
	// Class is the check's class: for a verdict not graded, why the
	// check could not judge (none when it was interrupted).
	Class runner.Class
	// Subject is what was checked: "task 2 (address.json: ...)", or the
	// lab's name, on one line (visible.Line).
	Subject string
	// Reason is, for a wrong answer, the first problem with the author's
	// hint.
	Reason string
}

// Write prints m as f shows it, through visible.Text: the learner's
// screen or the platform's log shows a control character of a title, a
// message or a learner's value as its escape.
func (f Format) Write(w io.Writer, m Message) error {
	if m.Verdict == runner.VerdictPassed {
		if !f.PassLine {
			return nil
		}
		_, err := io.WriteString(w, visible.Text("PASS: "+m.Subject+"\n"))
		return err
	}
	_, err := io.WriteString(w, visible.Text(f.Prefix+Sentence(m)+"\n"))
	return err
}

// Sentence is what the learner reads of a check that did not pass. A
// check that could not judge says so and that the answer was not judged,
// whatever the platform: a cluster that is down must not read as a wrong
// answer.
func Sentence(m Message) string {
	switch {
	case m.Verdict == runner.VerdictPassed:
		return m.Subject + ": done"
	case m.Verdict == runner.VerdictWrong:
		return m.Subject + ": " + m.Reason
	case m.Class == "":
		return m.Subject + " was not checked: the check was stopped; check again"
	}
	why := map[runner.Class]string{
		runner.ClassTransport: "the lab's cluster did not answer",
		runner.ClassTimeout:   "the check ran out of time",
		runner.ClassConfig:    "the lab's check is broken",
		runner.ClassForbidden: "the lab's check was refused access to the cluster",
	}[m.Class]
	if why == "" {
		why = "the check failed"
	}
	then := "check again in a moment"
	if forAuthor(m) {
		then = "please tell the lab's author"
	}
	return fmt.Sprintf("%s could not be checked: %s; your answer was not judged: %s", m.Subject, why, then)
}

// forAuthor reports whether m is a check the lab's author must mend: a
// broken lab (config) or a refused permission (forbidden). A cluster that
// did not answer or time that ran out is for checking again.
func forAuthor(m Message) bool {
	return m.Verdict == runner.VerdictNotGraded && (m.Class == runner.ClassConfig || m.Class == runner.ClassForbidden)
}

// MessageOf is what the check that ended in o tells the learner. The
// tasks it judges are those asked for (every task when none was), and it
// names one: when the check could not grade (its class, the one its exit
// code says), the first task that failed that way, as the answer was not
// judged; otherwise the first task that did not pass. A lab without tasks
// is judged as a whole, under its name.
func MessageOf(o *runner.Outcome) Message {
	v := o.Verdict()
	switch {
	case v == runner.VerdictPassed:
		return Message{Verdict: v, Subject: passSubject(o)}
	case o.Status == runner.Interrupted:
		return Message{Verdict: v, Subject: visible.Line(o.Name)}
	}
	graded := slices.DeleteFunc(slices.Clone(o.Tasks), func(t *runner.TaskRecord) bool {
		return len(o.Only) > 0 && !slices.Contains(o.Only, t.Number)
	})
	for _, t := range graded {
		if t.Status == runner.Passed || (v != runner.VerdictWrong && t.Class != o.Class) {
			continue
		}
		return Message{Verdict: v, Subject: TaskSubject(t), Reason: t.Reason, Class: o.Class}
	}
	m := Message{Verdict: v, Subject: visible.Line(o.Name), Reason: "not done", Class: o.Class}
	for _, s := range o.Steps {
		if s.Status == runner.Failed && (v == runner.VerdictWrong || s.Class == o.Class) {
			m.Reason = s.FirstReason()
			break
		}
	}
	return m
}

// passSubject names what a passing check judged: the one task asked for,
// or the lab.
func passSubject(o *runner.Outcome) string {
	if len(o.Only) == 1 {
		for _, t := range o.Tasks {
			if t.Number == o.Only[0] {
				return TaskSubject(t)
			}
		}
	}
	return visible.Line(o.Name)
}

// TaskSubject names a task as the verdict does, its title on one line.
func TaskSubject(t *runner.TaskRecord) string {
	return fmt.Sprintf("task %d (%s)", t.Number, visible.Line(t.Title))
}
