package runner

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/labrun/labrun/actions"
	"github.com/labrun/labrun/internal/boundary/cluster"
	"github.com/labrun/labrun/internal/lang/diag"
	"github.com/labrun/labrun/internal/lang/eval"
)

// The policies that decide how often a step's action runs: once, or again
// after an error (retries); until a condition holds, by polling or by a
// watch; and check mode's single read. execute picks one; each is a
// function of its own.

// execute runs the action under the step's policy; env is the run's
// environment, with the current item for a step with loop, and during
// runs the during steps of a step whose action runs around them. It
// returns the last result, the number of attempts and the error that
// ended them.
func (r *Runner) execute(ctx context.Context, s *StepPlan, env *eval.Env, during func(context.Context) error) (any, int, error) {
	ctx, cancel := context.WithTimeout(ctx, s.Timeout)
	defer cancel()
	rt := *r.Runtime
	rt.Support = r.isSupport(s)
	rt.Progress = func(msg string) {
		if r.Observer != nil {
			r.Observer.StepProgress(s, msg)
		}
	}
	// The spec reads only variables and earlier steps, which no attempt
	// changes: it is rendered once for all retries and polls.
	spec := s.Action.NewSpec()
	if err := s.Spec.Decode(env, reflect.ValueOf(spec).Elem()); err != nil {
		return nil, 0, r.exprError(s, err)
	}
	x := &execution{ctx: ctx, rt: &rt, s: s, env: env, spec: spec, exprError: r.exprError}
	if r.Runtime.Mode == actions.Check {
		x.memo = &r.reads
		x.outage = &r.outage
	}
	var res any
	var err error
	switch {
	case s.During != nil:
		res, err = x.around(during)
	case s.Until == nil:
		res, err = x.retry()
	case r.Runtime.Mode == actions.Check:
		res, err = x.readOnce()
	case s.Action.CanWatch():
		res, err = x.watch()
	default:
		res, err = x.poll()
	}
	return res, x.attempts, placeSpecError(s, err)
}

// placeSpecError puts an action's error about one value of its spec at
// that value in the playbook, with the others joined to it; the value is
// the playbook's fault (ClassConfig).
func placeSpecError(s *StepPlan, err error) error {
	var errs []error
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		errs = joined.Unwrap()
	} else if err != nil {
		errs = []error{err}
	}
	placed := false
	for i, e := range errs {
		var se *actions.SpecError
		if errors.As(e, &se) {
			errs[i] = withClass(ClassConfig, diag.Errorf(specErrorPos(s, se), "%v", se.Err))
			placed = true
		}
	}
	if !placed {
		return err
	}
	return errors.Join(errs...)
}

// specErrorPos is where a SpecError's value is written.
func specErrorPos(s *StepPlan, se *actions.SpecError) diag.Pos {
	switch {
	case !se.Pos.IsZero():
		return se.Pos
	case se.At != nil:
		if v := s.Spec.Lookup(se.Key); v != nil {
			return v.PosAt(se.At)
		}
		return s.Spec.KeyPos(se.Key)
	}
	return s.Spec.Locate(se.Key, se.Text)
}

// execution is one step's action run under the step's policy, with its
// rendered spec; it counts the attempts (each call of the action).
type execution struct {
	ctx  context.Context // bounded by the step's timeout
	rt   *actions.Runtime
	s    *StepPlan
	env  *eval.Env
	spec any
	// attempts counts the calls of the action (StepRecord.Attempts).
	attempts int
	memo     *readMemo // in check mode: reads shared by steps that make the same one
	// outage, in check mode, ends the retries of transient failures for
	// every step of the check at once (outage.go).
	outage *outage
	// exprError classes an expression of the step that could not be
	// evaluated (Runner.exprError).
	exprError func(*StepPlan, error) error
}

// run calls the action once.
func (x *execution) run() (any, error) {
	x.attempts++
	if x.memo != nil && x.s.Around == nil {
		if key, ok := readKey(x.s.Action.Name, x.spec); ok {
			return x.memo.do(key, func() (any, error) { return x.s.Action.Run(x.ctx, x.rt, x.spec) })
		}
	}
	return x.s.Action.Run(x.ctx, x.rt, x.spec)
}

// Backoff of a read-only step's call that met a transient cluster failure,
// as client-go's reflector backs off (doubling, capped) but within a lab's
// patience: 250 ms, 500 ms, 1 s, 2 s, then every 4 s, inside the step's
// timeout.
const (
	transientMin = 250 * time.Millisecond
	transientMax = 4 * time.Second
)

// retryTransient runs the action; while it fails with a
// *cluster.TransientError (the API server or a kubelet restarting, a lost
// exec status) and the step changes nothing, it runs it again after a
// backoff, saying in progress what it waits for, until the step's time is
// up. A step that
// changes the system is never run again this way: its call may have taken
// effect before the failure. The step's own retries count only the
// failures left.
func (x *execution) retryTransient() (any, error) {
	delay := transientMin
	start := time.Now()
	for {
		res, err := x.run()
		var te *cluster.TransientError
		if err == nil || x.s.Mutates || !errors.As(err, &te) || x.ctx.Err() != nil {
			return res, err
		}
		wait := delay
		if x.outage != nil {
			left := x.outage.left()
			if left <= 0 {
				return res, &gaveUp{last: err, tries: x.attempts, since: time.Since(start), ctx: x.outage.err()}
			}
			wait = min(wait, left)
		}
		x.rt.Progress(fmt.Sprintf("cluster not answering (%s); trying again in %s", te.Reason, wait))
		if !sleepCtx(x.ctx, wait) {
			return res, &gaveUp{last: err, tries: x.attempts, since: time.Since(start), ctx: x.ctx.Err()}
		}
		delay = min(2*delay, transientMax)
	}
}

// gaveUp is a transient failure that lasted until the step's time ran out
// (or the run was interrupted, or a check's outage limit passed); it
// unwraps to both the last failure and the reason it stopped.
type gaveUp struct {
	last  error
	tries int
	since time.Duration
	ctx   error
}

func (e *gaveUp) Error() string {
	attempts := "attempts"
	if e.tries == 1 {
		attempts = "attempt"
	}
	why := ""
	if e.ctx != nil && !errors.Is(e.ctx, context.Canceled) && !errors.Is(e.ctx, context.DeadlineExceeded) {
		why = ": " + e.ctx.Error() // a check's outage limit
	}
	return fmt.Sprintf("%v (still failing after %d %s in %s%s)", e.last, e.tries, attempts, e.since.Round(time.Millisecond), why)
}

func (e *gaveUp) Unwrap() []error { return []error{e.last, e.ctx} }

// until evaluates the step's condition on a result. When it does not hold
// and the step's failWhen does, the error is a *FailWhenError: the wait
// ends as a failure at once. A condition that cannot be evaluated is the
// playbook's fault (ClassConfig).
func (x *execution) until(res any) (bool, error) {
	env := x.env.WithResult(res)
	ok, err := x.s.Until.EvalBool(env)
	if ok || err != nil || x.s.FailWhen == nil {
		return ok, x.exprError(x.s, err)
	}
	failed, err := x.s.FailWhen.That.EvalBool(env)
	if err != nil || !failed {
		return false, x.exprError(x.s, err)
	}
	return false, newFailWhenError(x.s.FailWhen, env)
}

// FailWhenError is a step's failWhen holding on a result: what the author
// said it means, the condition and its operands' values, and the hint for
// the learner.
type FailWhenError struct {
	Msg  string
	Hint string
}

func (e *FailWhenError) Error() string { return e.Msg }

func newFailWhenError(f *AssertPlan, env *eval.Env) *FailWhenError {
	cond := "failWhen " + f.That.Src
	if ops := explain(f.That, env); ops != "" {
		cond += " (" + ops + ")"
	}
	msg := cond
	if f.Message != "" {
		msg = f.Message + ": " + cond
	}
	return &FailWhenError{Msg: msg, Hint: f.Hint}
}

// retry runs the action once, and again after an error up to retries
// more times, an interval apart.
func (x *execution) retry() (any, error) {
	s := x.s
	var res any
	var err error
	for try := 0; try <= s.Retries; try++ {
		res, err = x.retryTransient()
		if err == nil || x.ctx.Err() != nil || try == s.Retries {
			break
		}
		x.rt.Progress(fmt.Sprintf("attempt %d failed: %v; retrying", try+1, eval.FirstLine(err.Error())))
		if !sleepCtx(x.ctx, s.Interval) {
			break
		}
	}
	if err != nil && errors.Is(err, context.DeadlineExceeded) && x.ctx.Err() != nil {
		var limit *runTimeout
		if errors.As(context.Cause(x.ctx), &limit) {
			err = timedOut(err, fmt.Errorf("%s: %w", limit, err))
		} else {
			err = timedOut(err, fmt.Errorf("step timed out after %s: %w", s.Timeout, err))
		}
	} else if err != nil && errors.Is(x.ctx.Err(), context.DeadlineExceeded) {
		// the action said in its own words that the time ran out (a
		// program killed)
		err = timedOut(err, err)
	}
	return res, err
}

// timedOut is msg, the error of a step whose time ran out (its own or
// the run's) while last was its latest failure, with the class that
// decides between the two: timeout, unless last says more (the cluster
// not answering all along, a spec value the action refuses). The class is
// taken here, not left to last's chain, since msg only quotes last.
func timedOut(last, msg error) error {
	return withClass(decisive(classOf(last), ClassTimeout), msg)
}

// readOnce is until in check mode. Check looks at the state the learner
// left; nothing is acting on the cluster, so waiting for a condition only
// delays. The step reads once and the write steps judge what it saw.
func (x *execution) readOnce() (any, error) {
	res, err := x.retryTransient()
	if err == nil {
		ok, cerr := x.until(res)
		var fw *FailWhenError
		if errors.As(cerr, &fw) {
			return res, cerr
		}
		if cerr == nil && !ok {
			x.rt.Progress("check mode reads once; until does not hold: " + describeLast(x.s, x.env.WithResult(res)))
		}
	}
	return res, err
}

// watch is until for an action that can follow changes (a Kubernetes
// watch): one attempt that ends when the condition holds.
func (x *execution) watch() (any, error) {
	x.attempts = 1
	var last any
	res, err := x.s.Action.Watch(x.ctx, x.rt, x.spec, func(res any) (bool, error) {
		last = res
		ok, err := x.until(res)
		if err == nil && !ok {
			x.rt.Progress(describeLast(x.s, x.env.WithResult(res)))
		}
		return ok, err
	})
	if err != nil && x.ctx.Err() != nil && !errors.Is(context.Cause(x.ctx), context.Canceled) {
		return res, untilTimeout(x.ctx, x.s, x.env, last, err)
	}
	return res, err
}

// around runs an action around its step's during steps, once: the
// action calls during when it is ready for them, and asks the step's
// until (when it has one) once they are done, as a watch does. The
// step's timeout covers the steps and the action alike.
func (x *execution) around(during func(context.Context) error) (any, error) {
	x.attempts = 1
	var cond actions.Condition
	var last any
	if x.s.Until != nil {
		cond = func(res any) (bool, error) {
			last = res
			ok, err := x.until(res)
			if err == nil && !ok {
				x.rt.Progress(describeLast(x.s, x.env.WithResult(res)))
			}
			return ok, err
		}
	}
	res, err := x.s.Action.Around(x.ctx, x.rt, x.spec, actions.Nested{Run: during, Until: cond})
	if err == nil || x.ctx.Err() == nil || errors.Is(context.Cause(x.ctx), context.Canceled) {
		return res, err
	}
	var df *duringFailed
	switch {
	case errors.As(err, &df):
		return res, err
	case x.s.Until != nil && last != nil:
		// the steps ran and until was asked: the wait is what timed out
		return res, untilTimeout(x.ctx, x.s, x.env, last, nil)
	}
	var limit *runTimeout
	if errors.As(context.Cause(x.ctx), &limit) {
		return res, timedOut(err, fmt.Errorf("%s: %v", limit, err))
	}
	return res, timedOut(err, fmt.Errorf("step timed out after %s: %v", x.s.Timeout, err))
}

// poll is until for other actions: run, test, wait an interval, until the
// condition holds or the time runs out. An error is one more "not yet".
func (x *execution) poll() (any, error) {
	ctx, s := x.ctx, x.s
	var lastRes any
	var lastErr error
	for {
		res, err := x.run()
		if ctx.Err() != nil {
			if parent := context.Cause(ctx); errors.Is(parent, context.Canceled) {
				return lastRes, parent
			}
			return lastRes, untilTimeout(ctx, s, x.env, lastRes, lastErr)
		}
		if err == nil {
			lastRes, lastErr = res, nil
			ok, cerr := x.until(res)
			if cerr != nil {
				return res, cerr
			}
			if ok {
				return res, nil
			}
			x.rt.Progress(describeLast(s, x.env.WithResult(res)))
		} else {
			lastErr = err
			x.rt.Progress("not yet: " + eval.FirstLine(err.Error()))
		}
		if !sleepCtx(ctx, s.Interval) {
			if errors.Is(context.Cause(ctx), context.Canceled) {
				return lastRes, context.Canceled
			}
			return lastRes, untilTimeout(ctx, s, x.env, lastRes, lastErr)
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
	return timedOut(lastErr, errors.New(msg))
}

// describeLast renders the operands of the until condition for the last
// result, e.g. "len(result.items) = 3".
func describeLast(s *StepPlan, env *eval.Env) string {
	if ops := explain(s.Until, env); ops != "" {
		return ops
	}
	return "condition false"
}

// explain renders the operands of a condition, e.g. "len(result.items) =
// 3, result.ready = 1" ("" when it has none worth showing).
func explain(e *eval.Expr, env *eval.Env) string {
	ops := e.Explain(env)
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
