package runner

import (
	"fmt"
	"slices"
	"strings"

	"github.com/labrun/labrun/actions"
	"github.com/labrun/labrun/internal/lang/syntax"
)

// Grading, and the words labrun check, labrun test and labrun fleet use
// for it, each for one thing:
//
//   - grade: what check does to a learner's file. It compares the file
//     with the one its write step would write (a comparison), then checks
//     the step's assertions on it (result.file).
//   - comparison (actions.Comparison): a write step's expected file,
//     rendered from what the check read, with its loose keys and hints;
//     it compares any copy of the learner's file.
//   - problem (actions.Problem): one thing wrong in a learner's file, with
//     the path of the value at fault.
//   - graded file (GradedFile): a file check graded, kept with its
//     comparison and the environment its assertions were checked in, so
//     that labrun test can grade changed copies of it the same way
//     (Runner.OnGradedFile hands each one over).
//   - scope (checkScope): which tasks a check grades and which steps run
//     for them. A graded task is one whose status the check decides; the
//     others are not started (none of their files exists) or not asked
//     for (--task, --upto).
//   - task status (TaskRecord.Status): what became of a task: passed,
//     failed (with its class), or why it was not graded.
//   - support step: a step of a task not graded that check runs only
//     because a graded task reads its result ("only read" in progress).
//     It grades nothing: its write compares no file, and a failure there
//     is the reading task's.
//   - ungraded step: a step no graded task needs, which check skips
//     (skipUngraded).
//   - verdict (Verdict, verdict.go): what a check says of the learner's
//     work as a whole: passed, wrong, or not graded, with the class that
//     says why. Defined here once; fleet's results, the platforms' lines
//     and the reports format it.
//   - change (labtest.Change): in labrun test, a graded file with one value
//     changed or one key removed (a mutant), graded again.
//   - finding (labtest.Finding): what grading a change found of the grader
//     (not of a learner): check rejected it naming the value, or the
//     change survived.
//   - target (fleet.Target): one learner's place to grade, a namespace or
//     a kubeconfig context; its result (fleet.Result) is its verdict as
//     one line. A shard (fleet.Shard) is the slice of a class's targets
//     one pod of labrun fleet render's Job grades.

// checkScope is the scope of labrun check on a playbook with tasks: the
// tasks it grades (those asked for whose learner has started them), and
// the steps that run for them: their own and, transitively, the steps
// they read. A step of a task not graded that runs only to be read is a
// support step.
type checkScope struct {
	graded  map[*syntax.Task]bool
	why     map[*syntax.Task]string // why a task is not graded
	status  map[*syntax.Task]Status // NotStarted or Skipped, for those
	runs    map[*StepPlan]bool
	support map[*StepPlan]bool
	// reads are, per graded task, the support steps it reads: a failure
	// there is the task's, since nothing else grades them.
	reads map[*syntax.Task][]*StepPlan
}

// planScope decides, in check mode of a playbook with tasks, which tasks
// are graded and which steps run; nil otherwise, when every step runs.
// Only, when not nil, are the tasks asked for (--task, --upto).
func (r *Runner) planScope() *checkScope {
	p := r.Plan
	if len(p.Tasks) == 0 || r.Runtime.Mode != actions.Check {
		return nil
	}
	sc := &checkScope{graded: map[*syntax.Task]bool{}, why: map[*syntax.Task]string{}, status: map[*syntax.Task]Status{},
		runs: map[*StepPlan]bool{}, support: map[*StepPlan]bool{}, reads: map[*syntax.Task][]*StepPlan{}}
	for _, t := range p.Tasks {
		asked := r.Only != nil && slices.Contains(r.Only, t)
		files, known := p.TaskFiles(t, r.env)
		switch {
		case asked:
			// a task asked for is graded: a missing file fails it
		case known && len(files) > 0 && !slices.ContainsFunc(files, r.fileExists):
			sc.status[t], sc.why[t] = NotStarted, fmt.Sprintf("not started: no %s yet", strings.Join(files, ", no "))
			continue
		case r.Only != nil:
			sc.status[t], sc.why[t] = Skipped, fmt.Sprintf("not graded: only %s asked for", taskNumbers(r.Only))
			continue
		}
		sc.graded[t] = true
	}
	byID := map[string]*StepPlan{}
	for _, s := range p.Steps {
		byID[s.ID] = s
	}
	for _, t := range p.Tasks {
		if !sc.graded[t] {
			continue
		}
		for _, s := range p.Steps {
			if s.Task == t {
				sc.need(s, t, byID)
			}
		}
	}
	for _, s := range p.Steps {
		if s.Cleanup {
			sc.runs[s] = true
		}
		if sc.runs[s] && s.Group != nil {
			sc.runs[s.Group] = true
		}
		if sc.runs[s] && s.Around != nil {
			sc.runs[s.Around] = true
		}
	}
	// a step that runs around steps runs them all: a capture without the
	// traffic it listens to would see nothing
	for _, s := range p.Steps {
		if sc.runs[s] {
			for _, m := range s.During {
				sc.runs[m] = true
			}
		}
	}
	return sc
}

// need marks step s to run for task t, and the steps it reads, in turn.
func (sc *checkScope) need(s *StepPlan, t *syntax.Task, byID map[string]*StepPlan) {
	if s.Task != nil && s.Task != t && !sc.graded[s.Task] {
		if slices.Contains(sc.reads[t], s) {
			return
		}
		sc.support[s] = true
		sc.reads[t] = append(sc.reads[t], s)
	} else if sc.runs[s] {
		return
	}
	sc.runs[s] = true
	for _, ref := range s.Reads() {
		if id, ok := strings.CutPrefix(ref, "steps."); ok && byID[id] != nil {
			sc.need(byID[id], t, byID)
		}
	}
}

// isSupport reports whether s is a support step of this check.
func (r *Runner) isSupport(s *StepPlan) bool {
	return r.scope != nil && r.scope.support[s]
}

// fileExists reports whether the learner's file rel (a write path) is in
// the output directory; anything in its place counts, a link included,
// and grading then says what is wrong with it.
func (r *Runner) fileExists(rel string) bool {
	if r.Runtime.Out == nil {
		return false
	}
	path, err := r.Runtime.Out.Resolve(rel)
	if err != nil {
		return true
	}
	return r.Runtime.Out.Exists(path)
}

func taskNumbers(ts []*syntax.Task) string {
	var out []string
	for _, t := range ts {
		out = append(out, fmt.Sprint(t.Number))
	}
	if len(out) == 1 {
		return "task " + out[0]
	}
	return "tasks " + strings.Join(out, ", ")
}

// whyUngraded says why step s does not run in this check: it serves only
// tasks that are not graded; "" when it runs.
func (r *Runner) whyUngraded(s *StepPlan) string {
	sc := r.scope
	if sc == nil || sc.runs[s] {
		return ""
	}
	if s.Task != nil {
		return fmt.Sprintf("task %d %s", s.Task.Number, sc.why[s.Task])
	}
	return "no graded task needs it"
}
