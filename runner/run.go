package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/labrun/labrun/actions"
	"github.com/labrun/labrun/eval"
	"github.com/labrun/labrun/internal/outdir"
)

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
	ID         string          `json:"id"`
	Name       string          `json:"name,omitempty"`
	Action     string          `json:"action"`
	Parallel   string          `json:"parallel,omitempty"` // the parallel step it runs in
	Branch     string          `json:"branch,omitempty"`   // and the name of its branch
	Status     Status          `json:"status"`
	Reason     string          `json:"reason,omitempty"` // why skipped
	Started    time.Time       `json:"started"`
	Seconds    float64         `json:"seconds"`
	Attempts   int             `json:"attempts,omitempty"`
	Error      string          `json:"error,omitempty"`
	Hint       string          `json:"hint,omitempty"`
	Assertions []AssertRecord  `json:"assertions,omitempty"`
	Result     any             `json:"result,omitempty"`
	Cleanup    bool            `json:"cleanup,omitempty"`
	Step       *StepPlan       `json:"-"`
	Outcome    *AttemptOutcome `json:"-"`
	// whenSkipped: skipped because its when (or its parallel step's) was
	// false, an outcome as final as a result, which the journal keeps.
	whenSkipped bool
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

// AttemptOutcome carries the last state seen by a poll, for messages.
type AttemptOutcome struct {
	LastResult any
	LastError  error
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
	Playbook  string        `json:"playbook"`
	Name      string        `json:"name"`
	Mode      string        `json:"mode"`
	Status    Status        `json:"status"`
	Started   time.Time     `json:"started"`
	Seconds   float64       `json:"seconds"`
	OutputDir string        `json:"outputDir,omitempty"`
	Steps     []*StepRecord `json:"steps"`
}

// Failed reports whether any step failed.
func (o *Outcome) Failed() bool { return o.Status == Failed }

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
	// CleanupTimeout bounds the finally steps after an interrupt.
	CleanupTimeout time.Duration
	// Sequential runs the branches of parallel steps one after another,
	// in the order written, instead of at the same time.
	Sequential bool
	// Timeout, when set, bounds the steps of the whole run (not the
	// finally steps, which get CleanupTimeout after it): the running
	// step fails, naming the limit, and the rest are skipped.
	Timeout time.Duration

	env     *eval.Env
	journal *Journal
}

// Run executes every step, then the finally steps. It returns the outcome
// and an error only for problems outside the steps (bad variables, an
// unusable output directory, a missing journal for --from).
func (r *Runner) Run(ctx context.Context) (*Outcome, error) {
	p := r.Plan
	out := &Outcome{Playbook: p.Playbook.File, Name: p.Playbook.Name, Mode: "solve", Status: Passed, Started: time.Now()}
	if r.Runtime.Mode == actions.Check {
		out.Mode = "check"
	}
	if err := r.prepare(); err != nil {
		return nil, err
	}
	if r.Runtime.Out != nil {
		out.OutputDir = r.Runtime.Out.Path
	}
	if r.Observer != nil {
		r.Observer.RunStart(p)
	}
	restored, err := r.restore()
	if err != nil {
		return nil, err
	}
	if r.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, r.Timeout, &runTimeout{limit: r.Timeout})
		defer cancel()
	}
	interrupted := false
	failed := false
	for _, s := range p.Steps {
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
		case interrupted:
			recs = r.skipAll(withMembers(s), "interrupted")
		case ctx.Err() != nil:
			_, why := stopped(ctx)
			recs = r.skipAll(withMembers(s), why)
		case failed && !r.KeepGoing:
			recs = r.skipAll(withMembers(s), "an earlier step failed")
		case s.Parallel != nil:
			recs = r.runGroup(ctx, s)
		default:
			recs = []*StepRecord{r.runStep(ctx, s)}
		}
		for _, rec := range recs {
			out.Steps = append(out.Steps, rec)
			switch rec.Status {
			case Failed:
				failed = true
			case Interrupted:
				interrupted = true
			}
		}
	}
	// Cleanup runs whatever happened, with a context of its own: Ctrl-C
	// has cancelled ctx, and the cleanup must still get to talk to the
	// cluster.
	cctx := context.Background()
	if interrupted || ctx.Err() != nil {
		timeout := r.CleanupTimeout
		if timeout == 0 {
			timeout = 30 * time.Second
		}
		var cancel context.CancelFunc
		cctx, cancel = context.WithTimeout(cctx, timeout)
		defer cancel()
	}
	for _, s := range p.Steps {
		if !s.Cleanup {
			continue
		}
		rec := r.runStep(cctx, s)
		out.Steps = append(out.Steps, rec)
		if rec.Status == Failed {
			failed = true
		}
	}
	switch {
	case interrupted:
		out.Status = Interrupted
	case ctx.Err() != nil:
		out.Status, _ = stopped(ctx)
	case failed:
		out.Status = Failed
	}
	out.Seconds = time.Since(out.Started).Seconds()
	if r.journal != nil {
		r.journal.Close()
	}
	if r.Observer != nil {
		r.Observer.RunEnd(out)
	}
	return out, nil
}

// prepare evaluates variables and the output directory.
func (r *Runner) prepare() error {
	r.env = r.Plan.compiler.NewEnv()
	getenv := r.Environ
	if getenv == nil {
		getenv = os.Getenv
	}
	for _, name := range r.Plan.EnvNames {
		r.env.SetEnv(name, getenv(name))
	}
	for _, v := range r.Plan.Vars {
		if v.Value == nil {
			continue
		}
		x, err := v.Value.Eval(r.env)
		if err != nil {
			return fmt.Errorf("variable %s: %v", v.Name, err)
		}
		if err := r.env.SetVar(v.Name, eval.Plain(x)); err != nil {
			return err
		}
	}
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
			r.journal = j
		}
	}
	if r.Runtime.PlaybookDir == "" {
		r.Runtime.PlaybookDir = filepath.Dir(r.Plan.Playbook.File)
	}
	return nil
}

// restore loads results of the steps before --from out of the journal.
func (r *Runner) restore() (map[string]*StepRecord, error) {
	out := map[string]*StepRecord{}
	if r.From == "" {
		return out, nil
	}
	var target *StepPlan
	for _, s := range r.Plan.Steps {
		if s.ID == r.From && !s.Cleanup {
			target = s
		}
	}
	if target == nil {
		var ids []string
		for _, s := range r.Plan.Steps {
			if !s.Cleanup && s.Group == nil {
				ids = append(ids, s.ID)
			}
		}
		return nil, fmt.Errorf("--from %s: no such step; steps are: %s", r.From, strings.Join(ids, ", "))
	}
	if target.Group != nil {
		return nil, fmt.Errorf("--from %s: the step runs in branch %s of parallel step %s; resume from %s", r.From, target.Branch, target.Group.ID, target.Group.ID)
	}
	if r.journal == nil {
		return nil, fmt.Errorf("--from needs the journal kept in the output directory, and this playbook has no outputDir")
	}
	saved := r.journal.Loaded()
	for _, s := range r.Plan.Steps {
		if s.Index >= target.Index || s.Cleanup {
			break
		}
		e, ok := saved[s.ID]
		if !ok {
			return nil, fmt.Errorf("--from %s: step %s has no completed result in the journal %s; run without --from first", r.From, s.ID, r.journal.Path())
		}
		res, err := r.decodeEntry(s, e)
		if err != nil {
			return nil, fmt.Errorf("--from %s: %v", r.From, err)
		}
		rec := newRecord(s)
		rec.Status, rec.Result = Restored, res
		out[s.ID] = rec
	}
	return out, nil
}

// decodeEntry turns a journal entry back into step s's typed result.
func (r *Runner) decodeEntry(s *StepPlan, e journalEntry) (any, error) {
	if len(e.Result) == 0 || s.Action == nil {
		return r.zero(s), nil
	}
	p := reflect.New(s.Result)
	if err := e.decode(p.Interface()); err != nil {
		return nil, fmt.Errorf("journal entry of step %s: %v", s.ID, err)
	}
	if s.Loop != nil {
		return p.Elem().Interface(), nil
	}
	return p.Interface(), nil
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
	rec := &StepRecord{ID: s.ID, Name: s.Name, Action: s.ActionName(), Started: time.Now(), Hint: s.Hint, Step: s, Cleanup: s.Cleanup, Branch: s.Branch}
	if s.Group != nil {
		rec.Parallel = s.Group.ID
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
		rec.Status, rec.Reason = Skipped, reason
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
	if r.journal == nil || (rec.Status != Passed && !rec.whenSkipped) {
		return
	}
	if err := r.journal.Append(rec); err != nil {
		rec.Status, rec.Reason, rec.Error, rec.whenSkipped = Failed, "", err.Error(), false
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
	defer func() {
		rec.Seconds = time.Since(rec.Started).Seconds()
		r.keep(rec)
		r.notifyEnd(rec)
	}()
	r.env.SetStep(s.ID, r.zero(s))
	if s.When != nil {
		ok, err := s.When.EvalBool(r.env)
		if err != nil {
			rec.Status, rec.Error = Failed, err.Error()
			return rec
		}
		if !ok {
			rec.Status, rec.Reason, rec.whenSkipped = Skipped, "when is false: "+s.When.Src, true
			return rec
		}
	}
	if s.Mutates && r.Runtime.Mode == actions.Check {
		rec.Status, rec.Reason = Skipped, "changes the system; labrun check only looks"
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
		}
		if m, ok := res.(*map[string]any); ok && err == nil {
			// compute: the values become the step's own struct type
			result, err = eval.ToStruct(*m, s.Result)
		}
		r.env.SetStep(s.ID, result)
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
		rec.Status, rec.Error = Failed, err.Error()
		return
	}
	items := reflect.ValueOf(x)
	if x == nil {
		items = reflect.ValueOf([]any{})
	}
	if items.Kind() != reflect.Slice && items.Kind() != reflect.Array {
		rec.Status, rec.Error = Failed, fmt.Sprintf("%s: loop gave %s, expected a list", s.Loop.Pos, eval.Show(x))
		return
	}
	rec.Status = Passed
	n := items.Len()
	for i := 0; i < n; i++ {
		item := items.Index(i).Interface()
		label := itemLabel(i, item)
		env, err := r.env.WithItem(item, i, s.Item)
		if err != nil {
			rec.Status, rec.Error = Failed, fmt.Sprintf("%s: %v", label, err)
			return
		}
		if r.Observer != nil {
			r.Observer.StepProgress(s, fmt.Sprintf("%s, %d of %d", label, i+1, n))
		}
		res, attempts, err := r.execute(ctx, s, env)
		rec.Attempts += attempts
		if res != nil {
			results = reflect.Append(results, reflect.ValueOf(res))
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

// fail records why a step's action failed: an error of its own, or the
// run stopping it (Ctrl-C, or another branch of its parallel step failed).
func (r *Runner) fail(ctx context.Context, rec *StepRecord, err error) {
	rec.Error = err.Error()
	rec.Status = Failed
	var stop *branchStopped
	switch {
	case errors.As(context.Cause(ctx), &stop):
		rec.Status, rec.Error, rec.Reason = Skipped, "", stop.Error()
	case ctx.Err() != nil:
		var why string
		rec.Status, why = stopped(ctx)
		if rec.Status == Interrupted {
			rec.Error = why
		} else if !strings.Contains(rec.Error, why) {
			rec.Error = why + ": " + rec.Error
		}
	}
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
	if errors.As(context.Cause(ctx), &limit) {
		return Failed, limit.Error()
	}
	return Interrupted, "interrupted"
}

// checkAsserts evaluates the step's assertions in env, records them (for
// item, the item of a step with loop they were checked on) and reports
// whether all held; a failed one fails the step.
func (r *Runner) checkAsserts(rec *StepRecord, s *StepPlan, env *eval.Env, item string) bool {
	all := true
	for _, a := range s.Asserts {
		ar := AssertRecord{That: a.That.Src, Item: item, Message: a.Message, Hint: a.Hint, Passed: true}
		ok, err := a.That.EvalBool(env)
		if err != nil {
			ar.Passed, ar.Error = false, err.Error()
		} else if !ok {
			ar.Passed = false
			ar.Operands = a.That.Explain(env)
		}
		if !ar.Passed {
			rec.Status = Failed
			all = false
		}
		rec.Assertions = append(rec.Assertions, ar)
	}
	return all
}

// execute runs the action, repeating it for until and retries; env is the
// run's environment, with the current item for a step with loop.
func (r *Runner) execute(ctx context.Context, s *StepPlan, env *eval.Env) (any, int, error) {
	ctx, cancel := context.WithTimeout(ctx, s.Timeout)
	defer cancel()
	rt := *r.Runtime
	rt.Progress = func(msg string) {
		if r.Observer != nil {
			r.Observer.StepProgress(s, msg)
		}
	}
	// The spec reads only variables and earlier steps, which no attempt
	// changes: it is rendered once for all retries and polls.
	spec := s.Action.NewSpec()
	if err := s.Spec.Decode(env, reflect.ValueOf(spec).Elem()); err != nil {
		return nil, 0, err
	}
	attempts := 0
	runOnce := func() (any, error) {
		attempts++
		return s.Action.Run(ctx, &rt, spec)
	}
	if s.Until == nil {
		var res any
		var err error
		for try := 0; try <= s.Retries; try++ {
			res, err = runOnce()
			if err == nil || ctx.Err() != nil || try == s.Retries {
				break
			}
			rt.Progress(fmt.Sprintf("attempt %d failed: %v; retrying", try+1, eval.FirstLine(err.Error())))
			if !sleepCtx(ctx, s.Interval) {
				break
			}
		}
		if err != nil && errors.Is(err, context.DeadlineExceeded) && ctx.Err() != nil {
			var limit *runTimeout
			if errors.As(context.Cause(ctx), &limit) {
				err = fmt.Errorf("%s: %v", limit, err)
			} else {
				err = fmt.Errorf("step timed out after %s: %v", s.Timeout, err)
			}
		}
		return res, attempts, err
	}
	cond := func(res any) (bool, error) {
		return s.Until.EvalBool(env.WithResult(res))
	}
	if r.Runtime.Mode == actions.Check {
		// Grading looks at the state the learner left; nothing is acting
		// on the cluster, so waiting for a condition only delays. The step
		// reads once and the write steps judge what it saw.
		res, err := runOnce()
		if err == nil {
			if ok, cerr := cond(res); cerr == nil && !ok {
				rt.Progress("check mode reads once; until does not hold: " + describeLast(s, env.WithResult(res)))
			}
		}
		return res, attempts, err
	}
	if s.Action.CanWatch() {
		var last any
		res, err := s.Action.Watch(ctx, &rt, spec, func(res any) (bool, error) {
			last = res
			ok, err := cond(res)
			if err == nil && !ok {
				rt.Progress(describeLast(s, env.WithResult(res)))
			}
			return ok, err
		})
		if err != nil && ctx.Err() != nil && !errors.Is(context.Cause(ctx), context.Canceled) {
			return res, 1, untilTimeout(ctx, s, env, last, err)
		}
		return res, 1, err
	}
	var lastRes any
	var lastErr error
	for {
		res, err := runOnce()
		if ctx.Err() != nil {
			if parent := context.Cause(ctx); errors.Is(parent, context.Canceled) {
				return lastRes, attempts, parent
			}
			return lastRes, attempts, untilTimeout(ctx, s, env, lastRes, lastErr)
		}
		if err == nil {
			lastRes, lastErr = res, nil
			ok, cerr := cond(res)
			if cerr != nil {
				return res, attempts, cerr
			}
			if ok {
				return res, attempts, nil
			}
			rt.Progress(describeLast(s, env.WithResult(res)))
		} else {
			lastErr = err
			rt.Progress("not yet: " + eval.FirstLine(err.Error()))
		}
		if !sleepCtx(ctx, s.Interval) {
			if errors.Is(context.Cause(ctx), context.Canceled) {
				return lastRes, attempts, context.Canceled
			}
			return lastRes, attempts, untilTimeout(ctx, s, env, lastRes, lastErr)
		}
	}
}

// untilTimeout says what was awaited and the last thing seen, and which
// limit ended the wait: the step's, or the run's.
func untilTimeout(ctx context.Context, s *StepPlan, env *eval.Env, last any, lastErr error) error {
	msg := fmt.Sprintf("timed out after %s waiting for until: %s", s.Timeout, s.Until.Src)
	var limit *runTimeout
	if errors.As(context.Cause(ctx), &limit) {
		msg = fmt.Sprintf("%s while waiting for until: %s", limit, s.Until.Src)
	}
	if last != nil {
		msg += "; last seen: " + describeLast(s, env.WithResult(last))
	}
	if lastErr != nil {
		msg += "; last error: " + eval.FirstLine(lastErr.Error())
	}
	return errors.New(msg)
}

// describeLast renders the operands of the until condition for the last
// result, e.g. "len(result.items) = 3".
func describeLast(s *StepPlan, env *eval.Env) string {
	ops := s.Until.Explain(env)
	if len(ops) == 0 {
		return "condition false"
	}
	parts := make([]string, len(ops))
	for i, o := range ops {
		parts[i] = o.Expr + " = " + o.Value
	}
	return strings.Join(parts, ", ")
}

// sleepCtx waits d or until ctx ends; false when ctx ended.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
