// Package report writes a run's outcome: JSON for graders, JUnit XML for
// CI systems, which render a step as a test case, and HTML for people
// (the class board and a learner's page, package board).
package report

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/labrun/labrun/cmd/labrun/internal/board"
	"github.com/labrun/labrun/internal/lang/visible"
	"github.com/labrun/labrun/internal/leaf/outdir"
	"github.com/labrun/labrun/internal/leaf/secret"
	"github.com/labrun/labrun/runner"
)

// Formats lists the report formats.
var Formats = []string{"json", "junit", "html"}

// Write renders o in format, with the run's secrets redacted and every
// control character and bidi control escaped (visible.Text: a report is
// read in a terminal, a CI page or an editor), and stores it atomically
// at path: through the run's output directory out when path lies inside
// it (nil when there is none), so that the report is confined like every
// other file of the run. JSON's own escapes stand for the characters, so
// a reader of the JSON report reads the same strings. about is what an
// HTML page says of the run beyond its outcome (labrun's version).
func Write(format, path string, o *runner.Outcome, out *outdir.Dir, secrets *secret.Redactor, about board.About) error {
	var data []byte
	var err error
	switch format {
	case "json":
		data, err = JSON(o)
	case "junit":
		data, err = JUnit(o)
	case "html":
		// redacted before it is escaped, where a secret's value would no
		// longer be found as written
		page := board.Learner(o, about)
		page.Redact(secrets.String)
		data, err = page.HTML()
	default:
		return fmt.Errorf("unknown report format %q; expected one of %s", format, strings.Join(Formats, ", "))
	}
	if err != nil {
		return err
	}
	data = visible.Bytes(secrets.Bytes(data))
	abs, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	if out != nil {
		if rel, err := filepath.Rel(out.Path, abs); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
			if rel, err = out.Resolve(abs); err != nil {
				return err
			}
			return out.WriteFile(rel, data)
		}
	}
	return outdir.WriteFile(abs, data)
}

// JSON renders the outcome, step results included: the outcome and each
// step's record indented, each step's result on one line as
// StepRecord.ResultJSON encoded it, most often while the run went on. The
// results are copied in rather than handed to encoding/json, which would
// scan and re-indent megabytes of conntrack entries and agent documents
// once more after the last step; the steps come last in the outcome.
func JSON(o *runner.Outcome) ([]byte, error) {
	head, err := json.MarshalIndent(outcomeHead{Outcome: o}, "", "  ")
	if err != nil {
		return nil, err
	}
	parts := [][]byte{head[:len(head)-len("\n}")], []byte(",\n  \"steps\": [")}
	for i, rec := range o.Steps {
		sep := ",\n    "
		if i == 0 {
			sep = "\n    "
		}
		step, err := stepParts(rec)
		if err != nil {
			return nil, fmt.Errorf("step %s: %w", rec.ID, err)
		}
		parts = append(append(parts, []byte(sep)), step...)
	}
	if len(o.Steps) > 0 {
		parts = append(parts, []byte("\n  "))
	}
	// one copy into a buffer of the final size
	return bytes.Join(append(parts, []byte("]\n}\n")), nil), nil
}

// outcomeHead is an outcome without its steps, which JSON writes after it.
type outcomeHead struct {
	*runner.Outcome
	// hides Outcome.Steps: a field of the same name at a shallower depth
	// wins, and this one is always empty
	Steps *struct{} `json:"steps,omitempty"`
}

// stepHead is a step's record without its result.
type stepHead struct {
	*runner.StepRecord
	Result *struct{} `json:"result,omitempty"` // hides StepRecord.Result, as Steps above
}

// stepParts are a step's record, at the indentation of a member of the
// outcome's steps.
func stepParts(rec *runner.StepRecord) ([][]byte, error) {
	head, err := json.MarshalIndent(stepHead{StepRecord: rec}, "    ", "  ")
	if err != nil {
		return nil, err
	}
	res, err := rec.ResultJSON()
	if err != nil || res == nil {
		return [][]byte{head}, err
	}
	return [][]byte{head[:len(head)-len("\n    }")], []byte(",\n      \"result\": "), res, []byte("\n    }")}, nil
}

type junitSuites struct {
	XMLName xml.Name     `xml:"testsuites"`
	Suites  []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string `xml:"name,attr"`
	Tests    int    `xml:"tests,attr"`
	Failures int    `xml:"failures,attr"`
	Errors   int    `xml:"errors,attr"`
	Skipped  int    `xml:"skipped,attr"`
	Time     string `xml:"time,attr"`
	// Properties, before the cases as the JUnit schema orders them: the
	// suite's figures (labrun test --repeat: a task's runs and flake
	// rate).
	Properties *junitProperties `xml:"properties,omitempty"`
	Cases      []junitCase      `xml:"testcase"`
}

type junitProperties struct {
	Property []junitProperty `xml:"property"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitMessage `xml:"failure,omitempty"`
	Error     *junitMessage `xml:"error,omitempty"`
	Skipped   *junitMessage `xml:"skipped,omitempty"`
}

type junitMessage struct {
	Message string `xml:"message,attr"`
	// Type is a failed step's class (runner.Class): CI views show it
	// beside the message, and a platform reads it to tell a wrong answer
	// from a cluster that is down.
	Type string `xml:"type,attr,omitempty"`
	Body string `xml:",chardata"`
}

// JUnit renders a test case per step: in one test suite, or for a lab
// with tasks one suite per task (its steps, in the order they ended),
// named by its number and title, then one of the lab's name for the steps
// of no task (finally steps, a parallel step that groups several tasks).
func JUnit(o *runner.Outcome) ([]byte, error) {
	var suites []junitSuite
	if len(o.Tasks) == 0 {
		suites = append(suites, junitSuiteOf(o, o.Name, o.Seconds, o.Steps))
	}
	byTask := map[int][]*runner.StepRecord{}
	for _, r := range o.Steps {
		byTask[r.Task] = append(byTask[r.Task], r)
	}
	for _, t := range o.Tasks {
		recs := byTask[t.Number]
		suites = append(suites, junitSuiteOf(o, fmt.Sprintf("%s: task %d: %s", o.Name, t.Number, t.Title), stepSeconds(recs), recs))
	}
	if rest := byTask[0]; len(o.Tasks) > 0 && len(rest) > 0 {
		suites = append(suites, junitSuiteOf(o, o.Name, stepSeconds(rest), rest))
	}
	return marshalJUnit(suites)
}

// marshalJUnit writes suites as a JUnit document. Each string goes through
// visible (names on one line, messages and bodies keeping their lines):
// encoding/xml would write a control character XML 1.0 forbids as
// U+FFFD, losing it, and one it allows, or a bidi control, as it is.
func marshalJUnit(suites []junitSuite) ([]byte, error) {
	suites = slices.Clone(suites)
	for i := range suites {
		su := &suites[i]
		su.Name = visible.Line(su.Name)
		su.Cases = slices.Clone(su.Cases)
		for j := range su.Cases {
			c := &su.Cases[j]
			c.Name, c.Classname = visible.Line(c.Name), visible.Line(c.Classname)
			for _, m := range []**junitMessage{&c.Failure, &c.Error, &c.Skipped} {
				if *m != nil {
					*m = &junitMessage{Message: visible.Text((*m).Message), Type: visible.Line((*m).Type), Body: visible.Text((*m).Body)}
				}
			}
		}
	}
	b, err := xml.MarshalIndent(junitSuites{Suites: suites}, "", "  ")
	if err != nil {
		return nil, err
	}
	return append([]byte(xml.Header), append(b, '\n')...), nil
}

// stepSeconds is the time of a suite of steps: the sum of theirs.
func stepSeconds(recs []*runner.StepRecord) float64 {
	var secs float64
	for _, r := range recs {
		secs += r.Seconds
	}
	return secs
}

// junitSuiteOf is the suite name of the step records recs.
func junitSuiteOf(o *runner.Outcome, name string, seconds float64, recs []*runner.StepRecord) junitSuite {
	s := junitSuite{Name: name, Time: fmt.Sprintf("%.3f", seconds)}
	for _, r := range recs {
		c := junitCase{Name: r.ID, Classname: o.Name, Time: fmt.Sprintf("%.3f", r.Seconds)}
		if r.Parallel != "" {
			// CI views group test cases by class: one per branch
			c.Classname = o.Name + "." + r.Parallel + "." + r.Branch
		}
		if r.Name != "" {
			c.Name = r.ID + ": " + r.Name
		}
		switch r.Status {
		case runner.Failed:
			msg, body := failureText(r)
			m := &junitMessage{Message: msg, Type: string(r.Class), Body: body}
			if r.Error != "" && len(r.Assertions) == 0 {
				c.Error = m
				s.Errors++
			} else {
				c.Failure = m
				s.Failures++
			}
		case runner.Interrupted:
			c.Error = &junitMessage{Message: "interrupted"}
			s.Errors++
		case runner.Skipped, runner.Restored:
			c.Skipped = &junitMessage{Message: string(r.Status) + ": " + r.Reason}
			s.Skipped++
		}
		s.Cases = append(s.Cases, c)
	}
	s.Tests = len(s.Cases)
	return s
}

func failureText(r *runner.StepRecord) (string, string) {
	var lines []string
	msg := r.Error
	for _, a := range r.Assertions {
		if a.Passed {
			continue
		}
		if msg == "" {
			msg = a.Failure()
		}
		lines = append(lines, a.Failure())
		if a.Message != "" {
			lines = append(lines, "  "+a.Message)
		}
		for _, o := range a.Operands {
			lines = append(lines, "  "+o.Expr+" = "+o.Value)
		}
		if a.Error != "" {
			lines = append(lines, "  error: "+a.Error)
		}
		if a.Hint != "" {
			lines = append(lines, "  hint: "+a.Hint)
		}
	}
	if r.Error != "" {
		lines = append([]string{r.Error}, lines...)
	}
	if r.Hint != "" {
		lines = append(lines, "hint: "+r.Hint)
	}
	first, _, _ := strings.Cut(msg, "\n")
	return first, strings.Join(lines, "\n")
}
