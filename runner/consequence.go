package runner

import (
	"fmt"
	"slices"
	"strings"
	"sync"
)

// failures keeps the class of every step of the run that failed, by id,
// for the steps that read it after (a check runs steps side by side, so
// it is locked).
type failures struct {
	mu    sync.Mutex
	class map[string]Class
	order []string
}

// note records a step that ended failed.
func (f *failures) note(rec *StepRecord) {
	if rec.Status != Failed || rec.Class == "" {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.class == nil {
		f.class = map[string]Class{}
	}
	if _, ok := f.class[rec.ID]; !ok {
		f.order = append(f.order, rec.ID)
	}
	f.class[rec.ID] = rec.Class
}

// exprError marks err, an expression of step s that could not be
// evaluated (its spec, when, loop or until), with its class. An
// expression is the playbook's fault (ClassConfig) unless it reads a
// step that failed: then it failed because that step left no value (a
// Service the get did not find, a read the cluster did not answer), and
// it takes the class of that cause, named in the message, so that a
// learner who has not done a task is told so, not that the lab is broken.
func (r *Runner) exprError(s *StepPlan, err error) error {
	if err == nil {
		return nil
	}
	causes, c := r.failed.readBy(s)
	if c == "" {
		return withClass(ClassConfig, err)
	}
	return withClass(c, fmt.Errorf("%w (it reads %s, which failed)", err, strings.Join(causes, ", ")))
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
		c = decisive(c, f.class[id])
	}
	return ids, c
}
