package runner

import (
	"reflect"
	"time"

	"github.com/labrun/labrun/actions"
	"github.com/labrun/labrun/internal/lang/syntax"
)

// zero is the result later steps see for a step that did not run: zero
// values, or for a step with loop an empty list; nil for a step the run's
// mode never runs (only, a when that holds in the other mode alone, a
// change of the system in check), which validate lets expressions read
// only behind a guard (modereads.go).
func (r *Runner) zero(s *StepPlan) any {
	if !s.RunsIn(r.mode()) {
		return nil
	}
	if s.Loop != nil {
		return reflect.MakeSlice(s.Result, 0, 0).Interface()
	}
	return reflect.New(s.Result).Interface()
}

// mode is the mode the run's expressions see: eval.ModeSolve or
// eval.ModeCheck.
func (r *Runner) mode() string {
	if r.exprMode != "" {
		return r.exprMode
	}
	return modeOf(r.Runtime.Mode)
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
