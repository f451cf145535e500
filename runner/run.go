package runner

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/labrun/labrun/actions"
	"github.com/labrun/labrun/internal/lang/eval"
	"github.com/labrun/labrun/internal/lang/syntax"
	"github.com/labrun/labrun/internal/outdir"
	"github.com/labrun/labrun/internal/secret"
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
	out := &Outcome{Playbook: p.Playbook.File, Name: p.Playbook.Name, Mode: "solve", Status: Passed, Started: time.Now()}
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
		if s.Cleanup || s.Group != nil {
			// branch steps run with their parallel step
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
			return nil, fmt.Errorf("cannot record the run's end: %v", err)
		}
	}
	if r.Observer != nil {
		r.Observer.RunEnd(out)
	}
	return out, nil
}

// startRun starts the run manifest of a run that writes an output
// directory (a fresh run removes the previous run's files there). check
// reads the manifest instead: files a run left that did not finish are
// graded all the same, with a warning, and the report carries the
// manifest for the platform.
func (r *Runner) startRun(out *Outcome) error {
	d := r.Runtime.Out
	switch {
	case d == nil:
		return nil
	case r.Runtime.Mode != actions.Check:
		return d.StartRun(r.Plan.Playbook.File, r.From)
	}
	st, err := d.ReadStatus()
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		out.Warnings = append(out.Warnings, err.Error())
	default:
		out.OutputRun = st
		if why := st.Stale(); why != "" {
			out.Warnings = append(out.Warnings, "the output directory holds the files of a run that did not pass: "+why)
		}
	}
	return nil
}

// DefaultCleanupTimeout is CleanupTimeout when it is not set.
const DefaultCleanupTimeout = 30 * time.Second

// cleanupContext is the context of the finally steps. They run whatever
// happened, with a context of their own: Ctrl-C has cancelled ctx, and
// the cleanup must still get to talk to the cluster. Once ctx ends,
// before the finally steps or while they run, they get CleanupTimeout
// more and no longer: an interrupted learner never waits on a cleanup
// without end.
func (r *Runner) cleanupContext(ctx context.Context) (context.Context, context.CancelFunc) {
	limit := r.CleanupTimeout
	if limit == 0 {
		limit = DefaultCleanupTimeout
	}
	cctx, cancel := context.WithCancelCause(context.Background())
	var mu sync.Mutex
	var timer *time.Timer
	stop := context.AfterFunc(ctx, func() {
		mu.Lock()
		defer mu.Unlock()
		timer = time.AfterFunc(limit, func() { cancel(&cleanupTimeout{limit: limit}) })
	})
	return cctx, func() {
		stop()
		mu.Lock()
		defer mu.Unlock()
		if timer != nil {
			timer.Stop()
		}
		cancel(nil)
	}
}

// cleanupTimeout ends the finally steps' context when the time they have
// after an interrupt passes.
type cleanupTimeout struct{ limit time.Duration }

func (e *cleanupTimeout) Error() string {
	return fmt.Sprintf("the cleanup's time limit of %s passed", e.limit)
}

// prepare evaluates variables and the output directory.
func (r *Runner) prepare() error {
	getenv := r.Environ
	if getenv == nil {
		getenv = os.Getenv
	}
	if r.Secrets == nil {
		r.Secrets = &secret.Redactor{}
	}
	env, err := r.Plan.Env(r.Runtime.Mode, getenv, r.Secrets)
	if err != nil {
		return err
	}
	r.env = env
	if r.Plan.OutputDir != nil {
		x, err := r.Plan.OutputDir.Eval(r.env)
		if err != nil {
			return fmt.Errorf("outputDir: %v", err)
		}
		dir, ok := x.(string)
		if !ok || dir == "" {
			return fmt.Errorf("%s: outputDir must be a non-empty path, got %s", r.Plan.OutputDir.Pos, eval.Show(x))
		}
		if r.Runtime.Mode == actions.Check {
			// check writes nothing: the learner's directory is read
			// as it is.
			d, err := outdir.Open(dir)
			if err != nil {
				return err
			}
			r.Runtime.Out = d
		} else {
			d, err := outdir.Create(dir)
			if err != nil {
				return err
			}
			r.Runtime.Out = d
			j, err := OpenJournal(d, r.From != "")
			if err != nil {
				return err
			}
			j.redact = r.Secrets
			r.journal = j
		}
	}
	if r.Runtime.PlaybookDir == "" {
		r.Runtime.PlaybookDir = filepath.Dir(r.Plan.Playbook.File)
	}
	return nil
}

// addSecret records every scalar inside a secret variable's value.
func addSecret(r *secret.Redactor, x any) {
	switch v := x.(type) {
	case nil:
	case []any:
		for _, e := range v {
			addSecret(r, e)
		}
	case map[string]any:
		for _, e := range v {
			addSecret(r, e)
		}
	default:
		r.Add(eval.Format(v))
	}
}

// zero is the result later steps see for a step that did not run: zero
// values, or for a step with loop an empty list.
func (r *Runner) zero(s *StepPlan) any {
	if s.Loop != nil {
		return reflect.MakeSlice(s.Result, 0, 0).Interface()
	}
	return reflect.New(s.Result).Interface()
}

// newRecord starts the record of step s.
func newRecord(s *StepPlan) *StepRecord {
	rec := &StepRecord{ID: s.ID, Name: s.Name, Action: s.ActionName(), Started: time.Now(), Hint: s.Hint, Step: s, Cleanup: s.Cleanup, Branch: s.Branch,
		encoded: &encodedResult{}}
	if s.Group != nil {
		rec.Parallel = s.Group.ID
	}
	if s.Task != nil {
		rec.Task = s.Task.Number
	}
	return rec
}

// skipAll records steps that do not run, giving later steps their zero
// results.
func (r *Runner) skipAll(steps []*StepPlan, reason string) []*StepRecord {
	var out []*StepRecord
	for _, s := range steps {
		r.env.SetStep(s.ID, r.zero(s))
		rec := newRecord(s)
		rec.skipped(skipCut, reason)
		r.notifyEnd(rec)
		out = append(out, rec)
	}
	return out
}

// otherMode says why step s does not run in this run's mode: it is
// declared only: solve or only: check, and this is the other one; "" when
// it runs. Like a false when, this is final, and the journal keeps it.
func (r *Runner) otherMode(s *StepPlan) string {
	switch {
	case s.Only == syntax.OnlySolve && r.Runtime.Mode == actions.Check:
		return "only: solve; labrun check skips it"
	case s.Only == syntax.OnlyCheck && r.Runtime.Mode != actions.Check:
		return "only: check; labrun run skips it"
	}
	return ""
}

// skipUngraded records the steps of a check that no graded task needs.
func (r *Runner) skipUngraded(steps []*StepPlan) []*StepRecord {
	var out []*StepRecord
	for _, s := range steps {
		r.env.SetStep(s.ID, r.zero(s))
		rec := newRecord(s)
		rec.skipped(skipUngraded, r.whyUngraded(s))
		r.notifyEnd(rec)
		out = append(out, rec)
	}
	return out
}

// keep appends a finished step to the journal, so that --from can
// resume after it: a step that passed, or that its when skipped. A step
// whose result cannot be kept fails, naming the journal: a run that
// cannot be resumed must not pass as if it could, and the learner sees
// the full disk at the step it struck.
func (r *Runner) keep(rec *StepRecord) {
	if r.journal == nil || (rec.Status != Passed && !rec.skip.kept()) {
		return
	}
	if err := r.journal.Append(rec); err != nil {
		rec.Reason, rec.Error, rec.skip = "", err.Error(), notSkipped
		rec.failWith(ClassConfig) // the output directory cannot be used
	}
}

// shareEncoding gives a step whose result is the very value of an earlier
// step's (a check's read shared by several steps, such as the re-reads of
// its report) that step's encoding of it, so that a megabyte conntrack
// table is encoded once however many steps read it.
func (r *Runner) shareEncoding(rec *StepRecord) {
	v := reflect.ValueOf(rec.Result)
	if v.Kind() != reflect.Pointer || v.IsNil() {
		return
	}
	if e, loaded := r.encodings.LoadOrStore(rec.Result, rec.encoded); loaded {
		rec.encoded = e.(*encodedResult)
	}
}

func (r *Runner) notifyEnd(rec *StepRecord) {
	if r.Observer != nil {
		r.Observer.StepEnd(rec)
	}
}

// runStep runs one step through when, the action (with until, retries and
// timeout) and its assertions.
func (r *Runner) runStep(ctx context.Context, s *StepPlan) *StepRecord {
	rec := newRecord(s)
	rec.support = r.isSupport(s)
	defer func() {
		rec.Seconds = time.Since(rec.Started).Seconds()
		r.shareEncoding(rec)
		r.keep(rec)
		if r.EncodeResults && rec.Result != nil {
			go rec.ResultJSON()
		}
		r.notifyEnd(rec)
	}()
	r.env.SetStep(s.ID, r.zero(s))
	if why := r.whyUngraded(s); why != "" {
		rec.skipped(skipUngraded, why)
		return rec
	}
	if why := r.otherMode(s); why != "" {
		rec.skipped(skipWhen, why)
		return rec
	}
	if s.When != nil {
		ok, err := s.When.EvalBool(r.env)
		if err != nil {
			rec.Error = err.Error()
			rec.failWith(ClassConfig)
			return rec
		}
		if !ok {
			rec.skipped(skipWhen, "when is false: "+s.When.Src)
			return rec
		}
	}
	if s.Mutates && r.Runtime.Mode == actions.Check {
		rec.skipped(skipLooks, "changes the system; labrun check only looks")
		return rec
	}
	if r.Observer != nil {
		r.Observer.StepStart(s)
	}
	if s.Loop != nil {
		r.runLoop(ctx, s, rec)
		return rec
	}
	var result any = r.zero(s)
	if s.Action != nil {
		res, attempts, err := r.execute(ctx, s, r.env)
		rec.Attempts = attempts
		if res != nil {
			result = res
			r.handOver(s, res, r.env)
		}
		stored, serr := r.env.SetStep(s.ID, result)
		if serr != nil {
			err = errors.Join(err, serr)
		} else {
			result = stored
		}
		rec.Result = result
		if err != nil {
			r.fail(ctx, rec, err)
			return rec
		}
	}
	rec.Status = Passed
	r.checkAsserts(rec, s, r.env.WithResult(result), "")
	return rec
}

// runLoop runs a step with loop: the action once per item, in order, each
// item with its own until, retries, timeout and assertions. The step stops
// at the first item that fails, as a playbook stops at the first step
// (check mode grades every item, as it grades every step); its result is
// the list of the results of the items that ran, a failing one's (its
// last attempt) included.
func (r *Runner) runLoop(ctx context.Context, s *StepPlan, rec *StepRecord) {
	results := reflect.MakeSlice(s.Result, 0, 0)
	defer func() {
		r.env.SetStep(s.ID, results.Interface())
		rec.Result = results.Interface()
	}()
	x, err := s.Loop.Eval(r.env)
	if err != nil {
		rec.Error = err.Error()
		rec.failWith(ClassConfig)
		return
	}
	items := reflect.ValueOf(x)
	if x == nil {
		items = reflect.ValueOf([]any{})
	}
	if items.Kind() != reflect.Slice && items.Kind() != reflect.Array {
		rec.Error = fmt.Sprintf("%s: loop gave %s, expected a list", s.Loop.Pos, eval.Show(x))
		rec.failWith(ClassConfig)
		return
	}
	rec.Status = Passed
	n := items.Len()
	for i := 0; i < n; i++ {
		item := items.Index(i).Interface()
		label := itemLabel(i, item)
		env, err := r.env.WithItem(item, i, s.Item)
		if err != nil {
			rec.Error = fmt.Sprintf("%s: %v", label, err)
			rec.failWith(ClassConfig)
			return
		}
		if r.Observer != nil {
			r.Observer.StepProgress(s, fmt.Sprintf("%s, %d of %d", label, i+1, n))
		}
		res, attempts, err := r.execute(ctx, s, env)
		rec.Attempts += attempts
		if res != nil {
			results = reflect.Append(results, reflect.ValueOf(res))
			r.handOver(s, res, env)
		}
		if err != nil {
			earlier := rec.Error
			r.fail(ctx, rec, fmt.Errorf("%s: %w", label, err))
			if earlier != "" && rec.Status == Failed {
				rec.Error = earlier + "\n" + rec.Error
			}
			if !r.gradesOn(ctx) {
				return
			}
			continue
		}
		if !r.checkAsserts(rec, s, env.WithResult(res), label) && !r.gradesOn(ctx) {
			return
		}
	}
}

// gradesOn reports whether a loop goes on to its next item after one
// failed: in check mode (KeepGoing), so the learner sees every wrong file
// at once, unless the run itself is ending.
func (r *Runner) gradesOn(ctx context.Context) bool {
	return r.KeepGoing && ctx.Err() == nil
}

// itemLabel names item i of a loop in messages: its index, and its value
// when that is short enough to read in a line.
func itemLabel(i int, item any) string {
	if v := eval.Show(item); utf8.RuneCountInString(v) <= 60 {
		return fmt.Sprintf("item %d (%s)", i, v)
	}
	return fmt.Sprintf("item %d", i)
}

// fail records why a step's action failed, and the class of that
// failure: an error of its own, or the run stopping it (Ctrl-C, its time
// limit, or another branch of its parallel step failed).
func (r *Runner) fail(ctx context.Context, rec *StepRecord, err error) {
	rec.Error = err.Error()
	if fw := (*FailWhenError)(nil); errors.As(err, &fw) && fw.Hint != "" {
		rec.Hint = fw.Hint
	}
	class := classOf(err)
	var stop *branchStopped
	switch {
	case errors.As(context.Cause(ctx), &stop):
		rec.Error = ""
		rec.skipped(skipCut, stop.Error())
		return
	case ctx.Err() != nil:
		status, why := stopped(ctx)
		if status == Interrupted {
			rec.Status, rec.Error, rec.Class = Interrupted, why, ""
			return
		}
		if !strings.Contains(rec.Error, why) {
			rec.Error = why + ": " + rec.Error
		}
		// the run's time limit, or the cleanup's, ended the step
		class = decisive(class, ClassTimeout)
	}
	rec.failWith(class)
}

// runTimeout ends a run's context when its time limit (--timeout) passes.
type runTimeout struct{ limit time.Duration }

func (e *runTimeout) Error() string {
	return fmt.Sprintf("the run's time limit of %s passed", e.limit)
}

// stopped says how a step ends when the run's context ends under it:
// interrupted (Ctrl-C), or failed because the run's time limit passed;
// and why, in words.
func stopped(ctx context.Context) (Status, string) {
	var limit *runTimeout
	var cleanup *cleanupTimeout
	switch cause := context.Cause(ctx); {
	case errors.As(cause, &limit):
		return Failed, limit.Error()
	case errors.As(cause, &cleanup):
		return Failed, cleanup.Error()
	}
	return Interrupted, "interrupted"
}

// checkAsserts evaluates the step's assertions in env, records them (for
// item, the item of a step with loop they were checked on) and reports
// whether all held; a failed one fails the step.
func (r *Runner) checkAsserts(rec *StepRecord, s *StepPlan, env *eval.Env, item string) bool {
	all := true
	for _, a := range s.Asserts {
		if rec.support && slices.Contains(a.That.ResultFields, "file") {
			// A step run only to be read grades no file: its result.file
			// is what it would write, not the learner's file, and a
			// "before" value that only the solve could read would fail
			// such an assertion on a right answer.
			continue
		}
		ar := AssertRecord{That: a.That.Src, Item: item, Message: a.Message, Hint: a.Hint, Passed: true}
		ok, err := a.That.EvalBool(env)
		if err != nil {
			ar.Passed, ar.Error = false, err.Error()
		} else if !ok {
			ar.Passed = false
			ar.Operands = a.That.Explain(env)
		}
		if !ar.Passed {
			rec.failWith(ClassAssertion)
			all = false
		}
		rec.Assertions = append(rec.Assertions, ar)
	}
	return all
}
