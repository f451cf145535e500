package syntax

import (
	"strings"

	"github.com/labrun/labrun/internal/lang/diag"
	"gopkg.in/yaml.v3"
)

// Checks across the whole decoded document: step ids, keys that depend
// on each other, and each step's task.

// checkPlaybook runs the cross-field checks of the whole document.
func (d *decoder) checkPlaybook(pb *Playbook) {
	if pb.Root != nil && len(pb.Steps) == 0 {
		for i := 0; i+1 < len(pb.Root.Content); i += 2 {
			if v := pb.Root.Content[i+1]; pb.Root.Content[i].Value == "steps" && v.Kind == yaml.SequenceNode && len(v.Content) == 0 {
				d.errorf(pb.Root.Content[i+1], "steps must list at least one step")
			}
		}
	}
	for _, s := range pb.Finally {
		s.Cleanup = true
		if s.Parallel != nil {
			d.errs.Add(s.ParallelPos, "finally steps run one after another; parallel is for steps")
		}
		if s.During != nil {
			d.errs.Add(s.DuringPos, "finally steps clean up; a step with during (a capture) is for steps")
		}
	}
	ids := map[string]diag.Pos{}
	for _, s := range pb.AllSteps() {
		if s.ID.Node == nil {
			continue
		}
		if first, dup := ids[s.ID.Value]; dup {
			d.errorf(s.ID.Node, "duplicate step id %q (first used at %s)", s.ID.Value, first)
			continue
		}
		ids[s.ID.Value] = s.ID.Pos
		if s.Interval.Set && !s.Until.IsSet() && s.Retries == 0 {
			d.errs.Add(s.Interval.Pos, "interval has no effect without until or retries")
		}
		if s.FailWhen != nil && !s.Until.IsSet() {
			d.errs.Add(s.FailWhen.Pos, "failWhen ends a wait early: it needs until (a step without until fails by its assert)")
		}
		if o := s.Only; o.IsSet() && o.Value != OnlySolve && o.Value != OnlyCheck {
			d.errs.Add(o.Pos, "only is %q; expected solve (the step runs only in labrun run) or check (only in labrun check)%s", o.Value, diag.DidYouMean(o.Value, []string{OnlySolve, OnlyCheck}))
		}
	}
	d.checkTasks(pb)
}

// checkTasks links every step to its task. Once a playbook declares tasks,
// every step under steps belongs to one (its own task:, or its parallel
// step's), so that each outcome is graded under a task; each task has a
// step; finally steps, which clean up after every task, name none.
func (d *decoder) checkTasks(pb *Playbook) {
	byID := map[string]*Task{}
	var ids []string
	for _, t := range pb.Tasks {
		byID[t.ID] = t
		ids = append(ids, t.ID)
	}
	used := map[*Task]bool{}
	for _, s := range pb.AllSteps() {
		ref := s.TaskRef
		switch {
		case s.Cleanup && ref.IsSet():
			d.errs.Add(ref.Pos, "a finally step belongs to no task: it cleans up after all of them; remove task")
			continue
		case s.Cleanup:
			continue
		case ref.IsSet() && len(pb.Tasks) == 0:
			d.errs.Add(ref.Pos, "task %q is not declared: the playbook has no tasks (add tasks: with %s: <title>)", ref.Value, ref.Value)
			continue
		case ref.IsSet():
			t := byID[ref.Value]
			if t == nil {
				d.errs.Add(ref.Pos, "unknown task %q%s; the tasks are: %s", ref.Value, diag.DidYouMean(ref.Value, ids), strings.Join(ids, ", "))
				continue
			}
			s.Task = t
		case s.Group != nil:
			s.Task = s.Group.Task
		case s.Around != nil:
			s.Task = s.Around.Task
		}
		if s.Task != nil {
			used[s.Task] = true
		} else if len(pb.Tasks) > 0 && s.Parallel == nil && s.ID.IsSet() {
			d.errorf(s.ID.Node, "step %q belongs to no task; add task: with one of %s (on it, or on its parallel step)", s.ID.Value, strings.Join(ids, ", "))
		}
	}
	for _, t := range pb.Tasks {
		if !used[t] {
			d.errs.Add(t.Pos, "task %s has no steps; name it with task: %s on the steps that do it", t.ID, t.ID)
		}
	}
}
