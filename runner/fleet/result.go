package fleet

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/labrun/labrun/internal/lang/visible"
	"github.com/labrun/labrun/runner"
)

// Missing is fleet collect's word for a target no result reached: no
// check's verdict (runner.Verdict) came back from it, so nothing is said
// of the learner's work, and it counts as the cluster's fault (its pods
// are gone, or it never ran).
const Missing runner.Verdict = "missing"

// Result is one target's grading, one JSON line of at most
// MaxResultBytes: what check --targets writes for each target, and what
// a Job's pod prints in its log and stores for it.
type Result struct {
	Index  int    `json:"index"`
	Target string `json:"target"`
	// Verdict is the check's (runner.Verdict), or Missing.
	Verdict runner.Verdict `json:"verdict"`
	// Class is the run's class of failure when it did not pass.
	Class runner.Class `json:"class,omitempty"`
	// Exit is the exit code labrun check of this one target gives
	// (docs/exit-codes.md): 1 for a wrong answer.
	Exit int `json:"exit"`
	// Passed and Tasks count the graded tasks (the steps, for a lab
	// without tasks) that passed, and all of them.
	Passed  int     `json:"passed"`
	Tasks   int     `json:"tasks"`
	Seconds float64 `json:"seconds"`
	// FirstFailure is the first thing wrong, or why the target was not
	// graded.
	FirstFailure string `json:"firstFailure,omitempty"`
	Cases        []Case `json:"cases,omitempty"`
	// Attempts is, from fleet collect, how many pods the index took
	// (more than one: retried after an infrastructure error).
	Attempts int `json:"attempts,omitempty"`
	// Truncated says messages were cut, or cases left out, to fit
	// MaxResultBytes.
	Truncated bool `json:"truncated,omitempty"`
}

// Case is one graded task (or step) of a target: a JUnit test case.
type Case struct {
	Name    string        `json:"name"`
	Status  runner.Status `json:"status"`
	Class   runner.Class  `json:"class,omitempty"`
	Message string        `json:"message,omitempty"`
	// Hint is the playbook's hint for the problem Message names, for a
	// page that shows it to the learner apart (the class board).
	Hint    string  `json:"hint,omitempty"`
	Seconds float64 `json:"seconds,omitempty"`
}

// MaxResultBytes is the most a result line may take: a shard's
// MaxShardTargets lines fit the 1 MiB of the ConfigMap they are stored
// in, and each stays one readable line of a log.
const MaxResultBytes = 4096

// maxMessage is the longest message a result keeps before it is cut to
// fit: a first failure is one line a teacher reads in a table.
const maxMessage = 300

// FromOutcome is the result of checking target t (at index i) that ended
// in o with exit code exit.
func FromOutcome(i int, t Target, o *runner.Outcome, exit int) Result {
	r := Result{Index: i, Target: t.Name, Verdict: o.Verdict(), Exit: exit, Seconds: o.Seconds, Class: o.Class}
	if o.Status == runner.Interrupted {
		r.FirstFailure = "interrupted"
	}
	if len(o.Tasks) > 0 {
		r.Cases = taskCases(o)
	} else {
		r.Cases = stepCases(o)
	}
	for _, c := range r.Cases {
		r.Tasks++
		if c.Status == runner.Passed {
			r.Passed++
		} else if r.FirstFailure == "" && c.Message != "" {
			r.FirstFailure = c.Name + ": " + c.Message
		}
	}
	if r.FirstFailure == "" && r.Verdict != runner.VerdictPassed {
		r.FirstFailure = firstStepError(o)
	}
	return r
}

// Refused is the result of a target whose check could not start: its
// variables or its playbook were refused (err), class config.
func Refused(i int, t Target, err error, exit int) Result {
	return Result{Index: i, Target: t.Name, Verdict: runner.VerdictNotGraded, Class: runner.ClassConfig, Exit: exit, FirstFailure: oneLine(err.Error())}
}

// taskCases are a case per graded task: those check skipped because it
// was asked for others are left out.
func taskCases(o *runner.Outcome) []Case {
	secs := map[int]float64{}
	for _, s := range o.Steps {
		secs[s.Task] += s.Seconds
	}
	var out []Case
	for _, t := range o.Tasks {
		if len(o.Only) > 0 && t.Status == runner.Skipped {
			continue
		}
		c := Case{Name: fmt.Sprintf("task %d: %s", t.Number, t.Title), Status: t.Status, Class: t.Class, Seconds: secs[t.Number]}
		if t.Status != runner.Passed {
			c.Message, c.Hint = oneLine(t.Reason), oneLine(t.Hint)
		}
		out = append(out, c)
	}
	return out
}

// stepCases are a case per step that ran, for a lab without tasks.
func stepCases(o *runner.Outcome) []Case {
	var out []Case
	for _, s := range o.Steps {
		if s.Status == runner.Skipped || s.Status == runner.Restored {
			continue
		}
		c := Case{Name: s.ID, Status: s.Status, Class: s.Class, Seconds: s.Seconds}
		if s.Status == runner.Failed {
			c.Message, c.Hint = oneLine(stepMessage(s)), oneLine(s.FirstHint())
		}
		out = append(out, c)
	}
	return out
}

// stepMessage is why a step failed: its error, else its first failed
// assertion.
func stepMessage(s *runner.StepRecord) string {
	if s.Error != "" {
		return s.Error
	}
	for _, a := range s.Assertions {
		if !a.Passed {
			return a.Failure()
		}
	}
	return string(s.Status)
}

// firstStepError is the first failed step's message, for a run that
// failed before any task or step case said why.
func firstStepError(o *runner.Outcome) string {
	for _, s := range o.Steps {
		if s.Status == runner.Failed {
			return s.ID + ": " + oneLine(stepMessage(s))
		}
	}
	return ""
}

// oneLine is s's first line, cut to maxMessage bytes.
func oneLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return cut(s, maxMessage)
}

// cut shortens s to at most n bytes, on a rune boundary, marking the cut.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && n < len(s) && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "…"
}

// Line is r as one JSON line (newline included) of at most
// MaxResultBytes: when it is longer, case messages are shortened, then
// cases left out from the last, and Truncated set. Control characters
// and bidi controls are escaped (visible.Bytes, with JSON's escapes, as
// encoding/json leaves DEL, C1 and bidi controls as they are): the line
// is a line of a pod's log, which people read.
func (r Result) Line() ([]byte, error) {
	for limit := maxMessage; ; limit /= 2 {
		b, err := json.Marshal(r)
		b = visible.Bytes(b)
		if err != nil || len(b)+1 <= MaxResultBytes {
			return append(b, '\n'), err
		}
		r.Truncated = true
		r.Cases = append([]Case(nil), r.Cases...)
		if limit > 16 {
			for i := range r.Cases {
				r.Cases[i].Message = cut(r.Cases[i].Message, limit)
				r.Cases[i].Hint = cut(r.Cases[i].Hint, limit)
			}
			r.FirstFailure = cut(r.FirstFailure, limit)
			continue
		}
		if len(r.Cases) == 0 {
			return nil, fmt.Errorf("the result of target %q does not fit in %d bytes", r.Target, MaxResultBytes)
		}
		r.Cases = r.Cases[:len(r.Cases)/2]
	}
}

// ParseLine reads a result line as Line wrote it.
func ParseLine(data []byte) (Result, error) {
	var r Result
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return Result{}, fmt.Errorf("not a result line: %w", err)
	}
	if r.Target == "" || r.Verdict == "" {
		return Result{}, fmt.Errorf("not a result line: no target or verdict")
	}
	return r, nil
}

// Graded reports whether the target's work was graded, right or wrong.
func (r Result) Graded() bool { return r.Verdict.Graded() }
