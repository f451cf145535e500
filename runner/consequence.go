package runner

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/labrun/labrun/internal/lang/diag"
	"github.com/labrun/labrun/internal/lang/eval"
)

// failures keeps every step of the run that failed, by id, for the
// steps that read it after (a check runs steps side by side, so it is
// locked).
type failures struct {
	mu    sync.Mutex
	steps map[string]failure
	order []string
}

// failure is what became of a failed step: its class, its problem in one
// line (its error, else its first failed assertion) and its place in the
// playbook.
type failure struct {
	class Class
	why   string
	pos   diag.Pos
}

// note records a step that ended failed.
func (f *failures) note(rec *StepRecord) {
	if rec.Status != Failed || rec.Class == "" {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.steps == nil {
		f.steps = map[string]failure{}
	}
	if _, ok := f.steps[rec.ID]; !ok {
		f.order = append(f.order, rec.ID)
	}
	why := rec.FirstReason()
	if rec.Error != "" {
		why = oneLine(rec.Error)
	}
	fl := failure{class: rec.Class, why: why}
	if rec.Step != nil {
		fl.pos = rec.Step.Pos
	}
	f.steps[rec.ID] = fl
}

// exprError marks err, an expression of step s that could not be
// evaluated (its spec, when, loop or until), with its class. An
// expression is the playbook's fault (ClassConfig) unless it reads a
// step that failed: then it failed because that step left nothing to
// read (a Service the get did not find, a read the cluster did not
// answer), and the error is that step's failure, at the read, with its
// class (readFailed), so that a learner who has not done a task is told
// so, not that the lab is broken or that an index is out of range.
func (r *Runner) exprError(s *StepPlan, err error) error {
	if err == nil {
		return nil
	}
	var re *eval.RunError
	if errors.As(err, &re) && re.Expr() != nil && !re.Expr().WholeSteps {
		if failed := r.failed.readFailed(re.Expr()); failed != nil {
			return failed
		}
		return withClass(ClassConfig, err)
	}
	// an expression that reads steps by a computed name, or an error
	// that names no expression: any failed step s reads may be the cause
	causes, c := r.failed.readBy(s)
	if c == "" {
		return withClass(ClassConfig, err)
	}
	return withClass(c, fmt.Errorf("%w (it reads %s, which failed)", err, strings.Join(causes, ", ")))
}

// readFailed is the error of expression x, which could not be evaluated,
// when it reads steps that failed: each one's failure, in the playbook's
// order (a check's steps fail in any order), at x's first read of the
// first, with the most decisive of their classes (steps.ep (line 6)
// failed: pods "web" not found). nil when x reads none.
func (f *failures) readFailed(x *eval.Expr) error {
	type read struct {
		id string
		failure
	}
	var reads []read
	f.mu.Lock()
	for _, id := range f.order {
		if slices.Contains(x.Refs, eval.RootSteps+"."+id) {
			reads = append(reads, read{id, f.steps[id]})
		}
	}
	f.mu.Unlock()
	if len(reads) == 0 {
		return nil
	}
	slices.SortStableFunc(reads, func(a, b read) int { return a.pos.Line - b.pos.Line })
	var c Class
	whys := make([]string, len(reads))
	for i, r := range reads {
		c = decisive(c, r.class)
		whys[i] = fmt.Sprintf("steps.%s (line %d) failed: %s", r.id, r.pos.Line, r.why)
	}
	return withClass(c, diag.Errorf(x.ReadPos(reads[0].id), "%s", strings.Join(whys, "; ")))
}

// readBy lists the failed steps that s reads, with the most decisive of
// their classes ("" when s reads none).
func (f *failures) readBy(s *StepPlan) (ids []string, c Class) {
	f.mu.Lock()
	defer f.mu.Unlock()
	all := s.ReadsAllSteps()
	reads := s.Reads()
	for _, id := range f.order {
		if id == s.ID || (!all && !slices.Contains(reads, "steps."+id)) {
			continue
		}
		ids = append(ids, "step "+id)
		c = decisive(c, f.steps[id].class)
	}
	return ids, c
}

// oneLine is a step's error on one line, for the message of a step that
// read it: its lines trimmed and joined, cut after 300 characters (a
// wait's last state can run long).
func oneLine(s string) string {
	var parts []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			parts = append(parts, l)
		}
	}
	out := strings.Join(parts, " ")
	if r := []rune(out); len(r) > 300 {
		out = string(r[:297]) + "..."
	}
	return out
}
