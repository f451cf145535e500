package runner

import (
	"encoding/json"
	"sync"
	"time"

	"github.com/labrun/labrun/internal/lang/eval"
	"github.com/labrun/labrun/internal/leaf/outdir"
)

// The outcome model: what happened to each step and to the run, which
// the console, the reports and the journal read.

// Status of a step or a whole run.
type Status string

// The statuses a step can end in.
const (
	Passed      Status = "passed"
	Failed      Status = "failed"
	Skipped     Status = "skipped"
	Restored    Status = "restored" // taken from the journal by --from
	Interrupted Status = "interrupted"
)

// StepRecord is what happened to one step, for progress, reports and the
// journal.
type StepRecord struct {
	ID         string         `json:"id"`
	Name       string         `json:"name,omitempty"`
	Action     string         `json:"action"`
	Parallel   string         `json:"parallel,omitempty"` // the parallel step it runs in
	Branch     string         `json:"branch,omitempty"`   // and the name of its branch
	Task       int            `json:"task,omitempty"`     // the number of its task
	Status     Status         `json:"status"`
	Class      Class          `json:"class,omitempty"`  // a failed step's kind of failure
	Reason     string         `json:"reason,omitempty"` // why skipped
	Started    time.Time      `json:"started"`
	Seconds    float64        `json:"seconds"`
	Attempts   int            `json:"attempts,omitempty"` // calls of its action
	Error      string         `json:"error,omitempty"`
	Hint       string         `json:"hint,omitempty"`
	Assertions []AssertRecord `json:"assertions,omitempty"`
	Result     any            `json:"result,omitempty"`
	Cleanup    bool           `json:"cleanup,omitempty"`
	Step       *StepPlan      `json:"-"`
	// skip is why the step was skipped, when it was.
	skip skipKind
	// support: a support step (grading.go), run by labrun check only
	// because a graded task reads its result; it grades nothing itself.
	support bool
	// encoded is Result as JSON, made once (see ResultJSON).
	encoded *encodedResult
}

// encodedResult is a step result's JSON, encoded at most once.
type encodedResult struct {
	once sync.Once
	data []byte
	err  error
}

// ResultJSON returns the step's result as compact JSON, nil when it has
// none. It is encoded once for the journal and a JSON report alike: a
// step's result can be megabytes (a conntrack table, an agent document),
// and a run that encodes it as the step ends does that work while other
// steps wait on the cluster, not after the last one. The result must not
// change once this is called.
func (r *StepRecord) ResultJSON() ([]byte, error) {
	if r.encoded == nil {
		return encodeResult(r.Result)
	}
	r.encoded.once.Do(func() { r.encoded.data, r.encoded.err = encodeResult(r.Result) })
	return r.encoded.data, r.encoded.err
}

func encodeResult(v any) ([]byte, error) {
	if v == nil {
		return nil, nil
	}
	return json.Marshal(v)
}

// Support reports whether the step is a support step: labrun check ran
// it only because a graded task reads its result (a write then compares
// no file).
func (r *StepRecord) Support() bool { return r.support }

// Ungraded reports whether labrun check skipped the step because no
// graded task needs it.
func (r *StepRecord) Ungraded() bool { return r.skip == skipUngraded }

// skipKind is why a step was skipped. It decides what the skip means to
// the journal (whether --from may resume after the step) and to the
// step's task (whether the task can still pass); Reason says it in words.
type skipKind int

const (
	notSkipped skipKind = iota
	// skipCut: the run ended before the step (an earlier failure, an
	// interrupt, a time limit, a failure in another branch of its
	// parallel step). Its task did not get to it and is skipped.
	skipCut
	// skipWhen: its when was false, or its only: names the other mode.
	// As final as a result: the journal keeps it.
	skipWhen
	// skipInGroup: its parallel step's when was false, or its only:
	// names the other mode. The journal keeps it, as skipWhen; its task
	// is skipped, as for skipCut.
	skipInGroup
	// skipLooks: it changes the system, and labrun check only looks.
	skipLooks
	// skipUngraded: labrun check grades no task that needs it; progress
	// leaves it out, saying it once on its task's line.
	skipUngraded
)

// kept reports whether the journal keeps a step skipped this way, so
// that --from resumes after it as after a step that passed.
func (k skipKind) kept() bool { return k == skipWhen || k == skipInGroup }

// final reports whether the step was skipped by design, not because the
// run ended before it: a task with such a step can still pass.
func (k skipKind) final() bool { return k == skipWhen || k == skipLooks || k == skipUngraded }

// skipped marks the record skipped, of kind k, for the reason why.
func (r *StepRecord) skipped(k skipKind, why string) {
	r.Status, r.Reason, r.skip, r.Class = Skipped, why, k, ""
}

// AssertRecord is one checked assertion.
type AssertRecord struct {
	That string `json:"that"`
	// Item names the item of a step with loop the assertion was checked
	// on ("item 2 (\"b\")"); empty for other steps.
	Item     string         `json:"item,omitempty"`
	Passed   bool           `json:"passed"`
	Message  string         `json:"message,omitempty"`
	Hint     string         `json:"hint,omitempty"`
	Operands []eval.Operand `json:"operands,omitempty"`
	Error    string         `json:"error,omitempty"`
}

// Failure is the line that reports the assertion failed, naming the item
// of a step with loop it failed on.
func (a AssertRecord) Failure() string {
	if a.Item != "" {
		return "assertion failed for " + a.Item + ": " + a.That
	}
	return "assertion failed: " + a.That
}

// Observer is told what the runner does, for progress display and reports.
type Observer interface {
	RunStart(p *Plan)
	StepStart(s *StepPlan)
	// StepProgress reports the state a long step last observed.
	StepProgress(s *StepPlan, msg string)
	StepEnd(r *StepRecord)
	RunEnd(r *Outcome)
}

// Outcome is the result of a whole run.
type Outcome struct {
	Playbook string `json:"playbook"`
	// PlaybookDigest names the playbook's text (Plan.Digest): check
	// --rerun-failed takes a report only of the playbook it checks.
	PlaybookDigest string    `json:"playbookDigest"`
	Name           string    `json:"name"`
	Mode           string    `json:"mode"`
	Status         Status    `json:"status"`
	Class          Class     `json:"class,omitempty"` // a failed run's kind of failure, the one its exit code says
	Started        time.Time `json:"started"`
	Seconds        float64   `json:"seconds"`
	OutputDir      string    `json:"outputDir,omitempty"`
	// OutputRun is, in check mode, the manifest of the labrun run that
	// wrote the output directory, when one did.
	OutputRun *outdir.RunStatus `json:"outputRun,omitempty"`
	// Warnings say what the run found that does not fail it (check: the
	// files of a run that did not pass).
	Warnings []string      `json:"warnings,omitempty"`
	Steps    []*StepRecord `json:"steps"`
	// Tasks are the lab's tasks and what became of each; none when the
	// playbook declares no tasks.
	Tasks []*TaskRecord `json:"tasks,omitempty"`
	// Only are the numbers of the tasks labrun check was asked to grade
	// (--task, --upto, --rerun-failed); none when it graded every task
	// started.
	Only []int `json:"only,omitempty"`
}

// Failed reports whether any step failed.
func (o *Outcome) Failed() bool { return o.Status == Failed }
