package runner

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/labrun/labrun/actions"
	"github.com/labrun/labrun/internal/lang/eval"
)

// runStep runs one step through when, the action (with until, retries and
// timeout) and its assertions.
func (r *Runner) runStep(ctx context.Context, s *StepPlan) *StepRecord {
	return r.runStepAround(ctx, s, nil)
}

// runStepAround is runStep for a step whose action runs around its
// during steps, which during runs (nil for any other step).
func (r *Runner) runStepAround(ctx context.Context, s *StepPlan, during func(context.Context) error) *StepRecord {
	rec := newRecord(s)
	rec.support = r.isSupport(s)
	defer func() {
		rec.Seconds = time.Since(rec.Started).Seconds()
		r.shareEncoding(rec)
		r.keep(rec)
		r.failed.note(rec)
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
			r.fail(ctx, rec, r.exprError(s, err))
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
		res, attempts, err := r.execute(ctx, s, r.env, during)
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
		r.fail(ctx, rec, r.exprError(s, err))
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
	n := items.Len()
	if n > MaxLoopItems {
		rec.Error = fmt.Sprintf("%s: %s", s.Loop.Pos, loopTooLong(uint64(n)))
		rec.failWith(ClassConfig)
		return
	}
	rec.Status = Passed
	for i := 0; i < n; i++ {
		item := items.Index(i).Interface()
		label := itemLabel(i, item)
		env, err := r.env.WithItem(item, i, s.Item)
		if err != nil {
			r.fail(ctx, rec, fmt.Errorf("%s: %w", label, r.exprError(s, err)))
			return
		}
		if r.Observer != nil {
			r.Observer.StepProgress(s, fmt.Sprintf("%s, %d of %d", label, i+1, n))
		}
		res, attempts, err := r.execute(ctx, s, env, nil)
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

// MaxLoopItems bounds the items of a step's loop (docs/language.md,
// Limits): each runs the step's action, and a playbook may come from
// someone else. A list written out, or a range with constant ends, is
// held to it when the playbook is validated; any other, before the first
// item runs.
const MaxLoopItems = 10_000

func loopTooLong(n uint64) string {
	return fmt.Sprintf("loop over %d items; a loop runs at most %d (labrun's limit, docs/language.md#limits)", n, MaxLoopItems)
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
		class := ClassAssertion
		ok, err := a.That.EvalBool(env)
		if err != nil {
			if failed := r.failed.readFailed(a.That); failed != nil && !a.That.WholeSteps {
				// it reads a step that failed: that failure, not
				// what the condition made of the step's empty result
				err, class = failed, classOf(failed)
			}
			ar.Passed, ar.Error = false, err.Error()
		} else if !ok {
			ar.Passed = false
			ar.Operands = a.That.Explain(env)
		}
		if !ar.Passed {
			rec.failWith(class)
			all = false
		}
		rec.Assertions = append(rec.Assertions, ar)
	}
	return all
}
