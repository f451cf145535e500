package runner

import (
	"fmt"

	"github.com/labrun/labrun/actions"
	"github.com/labrun/labrun/internal/lang/diag"
	"github.com/labrun/labrun/internal/lang/eval"
)

// What each mode runs, and the reads of a result a mode never has.
//
// Some steps never run in one of the two modes, whatever the state of the
// system: a step with only: solve in labrun check, one with only: check
// in labrun run, a step whose when (or its parallel step's) holds in the
// other mode alone (when: mode == "solve"), and in labrun check a step
// that changes the system. Such a step has no result in that mode: its
// steps.ID is nil there (Runner.zero). An expression that mode evaluates
// and that reads it must say what it does without it, behind a guard the
// compiler sees (internal/lang/eval/guards.go); validate refuses any
// other read at its file:line:col, since it would read nothing in that
// mode, or fail on it (int(trim(steps.before.stdout)) in check).

// modes are the two modes, as expressions name them.
var modes = []string{eval.ModeSolve, eval.ModeCheck}

// modeOf names the mode of a run as expressions do.
func modeOf(m actions.Mode) string {
	if m == actions.Check {
		return eval.ModeCheck
	}
	return eval.ModeSolve
}

// whenScope is what holds wherever step s's when is evaluated: its only,
// and all that holds for its parallel step's members.
func (s *StepPlan) whenScope() eval.Guard {
	g := eval.Guard{Mode: s.Only}
	if s.Group != nil {
		g = g.And(s.Group.scope())
	}
	return g
}

// scope is what holds wherever step s's action and its other expressions
// (spec, loop, until, failWhen, assertions) run: its when scope and its
// when being true.
func (s *StepPlan) scope() eval.Guard {
	return s.whenScope().And(s.whenGuard)
}

// RunsIn reports whether step s may run its action in mode (eval.ModeSolve
// or eval.ModeCheck); when it does not, its result there is nil.
func (s *StepPlan) RunsIn(mode string) bool {
	return s.scope().Reaches(mode) && !(mode == eval.ModeCheck && s.Mutates)
}

// notRunIn says why step s never runs in mode, "" when it may.
func (s *StepPlan) notRunIn(mode string) string {
	switch {
	case s.Only != "" && s.Only != mode:
		return "it is only: " + s.Only
	case s.Group != nil && !s.Group.RunsIn(mode):
		return fmt.Sprintf("its parallel step %s: %s", s.Group.ID, s.Group.notRunIn(mode))
	case !s.whenGuard.Reaches(mode):
		return "its when holds in " + commandOf(otherMode(mode)) + " alone"
	case mode == eval.ModeCheck && s.Mutates:
		return "it changes the system; labrun check only looks"
	}
	return ""
}

func otherMode(mode string) string {
	if mode == eval.ModeSolve {
		return eval.ModeCheck
	}
	return eval.ModeSolve
}

// commandOf names the command that runs in mode.
func commandOf(mode string) string {
	if mode == eval.ModeCheck {
		return "labrun check"
	}
	return "labrun run"
}

// guardedExpr is an expression of a step with what holds wherever it is
// evaluated, and whether it is evaluated in mode at all.
type guardedExpr struct {
	x     *eval.Expr
	known eval.Guard
}

// exprsIn lists the expressions of step s that mode evaluates: its when
// wherever its when scope reaches mode (a step that changes the system
// asks it in check too), the others where the step runs.
func (s *StepPlan) exprsIn(mode string) []guardedExpr {
	var out []guardedExpr
	if s.When != nil && s.whenScope().Reaches(mode) {
		out = append(out, guardedExpr{s.When, s.whenScope()})
	}
	if !s.RunsIn(mode) {
		return out
	}
	known := s.scope()
	for _, x := range s.exprs() {
		if x != s.When {
			out = append(out, guardedExpr{x, known})
		}
	}
	return out
}

// missingReads refuses every read, in an expression a mode evaluates, of
// a step that mode never runs, unless a guard covers it.
func (c *compiler) missingReads() {
	byID := map[string]*StepPlan{}
	for _, s := range c.plan.Steps {
		byID[s.ID] = s
	}
	reported := map[diag.Pos]bool{}
	for _, mode := range modes {
		absent := map[string]bool{}
		for _, s := range c.plan.Steps {
			if s.Parallel == nil && !s.RunsIn(mode) {
				absent[s.ID] = true
			}
		}
		if len(absent) == 0 {
			continue // most playbooks, in solve
		}
		missing := func(id string) bool { return absent[id] }
		for _, s := range c.plan.Steps {
			for _, e := range s.exprsIn(mode) {
				for _, r := range e.x.UnguardedReads(mode, e.known, missing) {
					if reported[r.Pos] {
						continue
					}
					reported[r.Pos] = true
					c.errs.Append(diag.Errorf(r.Pos, "%s", missingRead(r, byID[r.Step], mode)))
				}
			}
		}
	}
}

// missingRead is the message for read r of step t, which mode never runs:
// why t has no result there and the guards that say what to do without
// it.
func missingRead(r eval.StepRead, t *StepPlan, mode string) string {
	field, def := "FIELD", "DEFAULT"
	if r.Field != "" {
		field = r.Field
	}
	through := ""
	if r.Define != "" {
		through = " (through define " + r.Define + ")"
	}
	other := otherMode(mode)
	return fmt.Sprintf("steps.%s has no result in %s (%s), and this expression reads it there%s: read it behind a test of mode, "+
		`as in mode == %q ? steps.%s.%s : %s, or as steps.%s?.%s ?? %s; or give this step only: %s or when: mode == %q`,
		t.ID, commandOf(mode), t.notRunIn(mode), through,
		other, t.ID, field, def, t.ID, field, def, other, other)
}
