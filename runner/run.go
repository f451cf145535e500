package runner

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/labrun/labrun/actions"
	"github.com/labrun/labrun/internal/lang/eval"
	"github.com/labrun/labrun/internal/lang/syntax"
	"github.com/labrun/labrun/internal/leaf/secret"
)

// Runner executes a plan.
type Runner struct {
	Plan     *Plan
	Runtime  *actions.Runtime
	Observer Observer
	// From resumes at this step id, restoring earlier results from the
	// journal in the output directory.
	From string
	// Environ reads environment variables (os.Getenv when nil).
	Environ func(string) string
	// KeepGoing runs the remaining steps after a failure (check mode
	// grades every file, not only up to the first wrong one).
	KeepGoing bool
	// CleanupTimeout bounds the finally steps once the run is interrupted
	// or its time limit passes (DefaultCleanupTimeout when zero).
	CleanupTimeout time.Duration
	// Sequential runs the branches of parallel steps one after another,
	// in the order written, instead of at the same time.
	Sequential bool
	// OnGradedFile, when set, receives each file check grades (a write
	// step's comparison and assertions), so that labrun test can grade
	// changed copies of it the same way. Parallel branches call it at the
	// same time.
	OnGradedFile func(*GradedFile)
	// Timeout, when set, bounds the steps of the whole run (not the
	// finally steps, which get CleanupTimeout after it): the running
	// step fails, naming the limit, and the rest are skipped.
	Timeout time.Duration

	// Secrets receives the values of the plan's secret variables and env
	// names when the run starts; the journal is redacted through it, and
	// so should everything else the caller prints or writes. A fresh one
	// is made when nil.
	Secrets *secret.Redactor

	// Only, in check mode of a playbook with tasks, are the tasks to
	// grade (--task, --upto); nil grades every task the learner started.
	Only []*syntax.Task
	// EncodeResults encodes each step's result as JSON as the step ends,
	// beside the steps still running, for a JSON report written at the
	// end (StepRecord.ResultJSON).
	EncodeResults bool
	// CheckOutage bounds how long a check waits out a cluster that does
	// not answer, counted from the first transient failure any of its
	// steps meets (DefaultCheckOutage when zero).
	CheckOutage time.Duration

	env     *eval.Env
	journal *Journal
	scope   *checkScope // check mode of a playbook with tasks
	reads   readMemo    // check mode's shared reads
	// encodings are the JSON encodings of pointer results, by the result
	// (shareEncoding)
	encodings sync.Map
	outage    outage // check mode's one wait for a cluster that does not answer
	// failed are the steps that failed so far, for the class of an
	// expression that reads one (exprError)
	failed failures
	// exprMode, when set, is the mode expressions see instead of the
	// runtime's (labrun eval reads a solve's journal in check's runtime)
	exprMode string
}

// Run executes every step, then the finally steps. It returns the outcome
// and an error only for problems outside the steps (bad variables, an
// unusable output directory, a missing journal for --from).
func (r *Runner) Run(ctx context.Context) (*Outcome, error) {
	out, restored, err := r.start()
	if err != nil {
		return nil, err
	}
	if r.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, r.Timeout, &runTimeout{limit: r.Timeout})
		defer cancel()
	}
	l := &ledger{out: out}
	if r.Runtime.Mode == actions.Check && r.canRunGraph(restored) {
		l.add(r.runGraph(ctx))
	} else {
		r.runSteps(ctx, restored, l)
	}
	r.runCleanup(ctx, l)
	return r.finish(ctx, l)
}

// start readies the run: its outcome, the variables and the output
// directory, the check's scope, the results --from restores and the run
// manifest.
func (r *Runner) start() (*Outcome, map[string]*StepRecord, error) {
	p := r.Plan
	out := &Outcome{Playbook: p.Playbook.File, PlaybookDigest: p.Digest(), Name: p.Playbook.Name, Mode: "solve", Status: Passed, Started: time.Now()}
	if r.Runtime.Mode == actions.Check {
		out.Mode = "check"
		r.outage.limit = cmp.Or(r.CheckOutage, DefaultCheckOutage)
	}
	if err := r.prepare(); err != nil {
		return nil, nil, err
	}
	if r.Runtime.Out != nil {
		out.OutputDir = r.Runtime.Out.Path
	}
	if r.Observer != nil {
		r.Observer.RunStart(p)
	}
	r.scope = r.planScope()
	restored, err := r.restore()
	if err != nil {
		return nil, nil, err
	}
	if err := r.startRun(out); err != nil {
		return nil, nil, err
	}
	return out, restored, nil
}

// ledger keeps the records of a run's steps as they end, in order, and
// notes a failure or an interruption, which the steps after them heed.
type ledger struct {
	out         *Outcome
	failed      bool
	interrupted bool
}

func (l *ledger) add(recs []*StepRecord) {
	for _, rec := range recs {
		l.out.Steps = append(l.out.Steps, rec)
		switch rec.Status {
		case Failed:
			l.failed = true
		case Interrupted:
			l.interrupted = true
		}
	}
}

// runSteps runs the steps (all but the finally steps) one after another,
// a parallel step with its branches, restoring those before --from and
// skipping the rest once one fails (unless KeepGoing) or the run ends.
func (r *Runner) runSteps(ctx context.Context, restored map[string]*StepRecord, l *ledger) {
	for _, s := range r.Plan.Steps {
		if s.Cleanup || s.Group != nil || s.Around != nil {
			// branch steps run with their parallel step, during steps
			// with the step that runs around them
			continue
		}
		var recs []*StepRecord
		switch {
		case restored[s.ID] != nil:
			for _, m := range withMembers(s) {
				rec := restored[m.ID]
				r.env.SetStep(m.ID, rec.Result)
				r.notifyEnd(rec)
				recs = append(recs, rec)
			}
		case l.interrupted:
			recs = r.skipAll(withMembers(s), "interrupted")
		case ctx.Err() != nil:
			_, why := stopped(ctx)
			recs = r.skipAll(withMembers(s), why)
		case l.failed && !r.KeepGoing:
			recs = r.skipAll(withMembers(s), "an earlier step failed")
		case r.whyUngraded(s) != "":
			recs = r.skipUngraded(withMembers(s))
		case s.Parallel != nil:
			recs = r.runGroup(ctx, s)
		case s.During != nil:
			recs = r.runAround(ctx, s)
		default:
			recs = []*StepRecord{r.runStep(ctx, s)}
		}
		l.add(recs)
	}
}

// runCleanup runs the finally steps, whatever happened before them, in a
// context of their own (cleanupContext).
func (r *Runner) runCleanup(ctx context.Context, l *ledger) {
	cctx, cancel := r.cleanupContext(ctx)
	defer cancel()
	for _, s := range r.Plan.Steps {
		if !s.Cleanup {
			continue
		}
		rec := r.runStep(cctx, s)
		l.out.Steps = append(l.out.Steps, rec)
		if rec.Status == Failed {
			l.failed = true
		}
	}
}

// finish gives the run its status and its tasks' records, closes the
// journal and the run manifest, and tells the observer.
func (r *Runner) finish(ctx context.Context, l *ledger) (*Outcome, error) {
	out := l.out
	switch {
	case l.interrupted:
		out.Status = Interrupted
	case ctx.Err() != nil:
		out.Status, _ = stopped(ctx)
	case l.failed:
		out.Status = Failed
	}
	if len(r.Plan.Tasks) > 0 {
		out.Tasks = r.taskRecords(out.Steps)
		for _, t := range r.Only {
			out.Only = append(out.Only, t.Number)
		}
		if out.Status == Passed && r.Only == nil && slices.ContainsFunc(out.Tasks, func(t *TaskRecord) bool { return t.Status == NotStarted }) {
			// the lab is not done: check passes only when every task does
			out.Status = Failed
		}
	}
	if out.Status == Failed {
		out.Class = runClass(ctx, out)
	}
	out.Seconds = time.Since(out.Started).Seconds()
	if r.journal != nil {
		r.journal.Close()
		if err := r.Runtime.Out.FinishRun(string(out.Status)); err != nil {
			return nil, fmt.Errorf("cannot record the run's end: %w", err)
		}
	}
	if r.Observer != nil {
		r.Observer.RunEnd(out)
	}
	return out, nil
}
