package main

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/labrun/labrun/cmd/labrun/internal/report"
	"github.com/labrun/labrun/internal/lang/diag"
	"github.com/labrun/labrun/internal/lang/syntax"
	"github.com/labrun/labrun/runner"
)

// rerunTasks gives the tasks check --rerun-failed grades: those that
// failed in the JSON report a.rerunFailed, and, when --task or --upto
// asked for tasks too (asked), only those of them (the intersection: a
// script may re-check task 3 only if it failed). The check then runs
// exactly what --task runs for those tasks: their steps and the steps
// they read. When ok is false the command ends with code: 2 when the
// report cannot be used (not a labrun report, not a check's, of another
// playbook or version), 0 when there is nothing to re-check, said on
// stdout, before anything touches the cluster.
func (a *runArgs) rerunTasks(plan *runner.Plan, asked []*syntax.Task, stdout, stderr io.Writer) (only []*syntax.Task, code int, ok bool) {
	prev, err := report.Read(a.rerunFailed)
	if err != nil {
		return nil, printRerunError(stderr, a.rerunFailed, err), false
	}
	failed, err := failedTasks(plan, prev)
	if err != nil {
		return nil, printRerunError(stderr, a.rerunFailed, err), false
	}
	if len(failed) == 0 {
		fmt.Fprintf(stdout, "labrun check: no task failed in %s: nothing to re-check\n", a.rerunFailed)
		return nil, exitOK, false
	}
	if asked == nil {
		return failed, 0, true
	}
	for _, t := range failed {
		if slices.Contains(asked, t) {
			only = append(only, t)
		}
	}
	if len(only) == 0 {
		fmt.Fprintf(stdout, "labrun check: of the tasks asked for (%s), none failed in %s (failed: %s): nothing to re-check\n",
			taskList(asked), a.rerunFailed, taskList(failed))
		return nil, exitOK, false
	}
	return only, 0, true
}

// failedTasks are the plan's tasks that failed in prev, in the lab's
// order. prev must be a check's report of this playbook in this version
// (the same playbookDigest), so that its task numbers name the same
// tasks; each failed task is still matched by number and id.
func failedTasks(plan *runner.Plan, prev *report.Previous) ([]*syntax.Task, error) {
	file := diag.Pos{File: prev.File, Line: 1, Col: 1}
	switch {
	case len(plan.Tasks) == 0:
		return nil, fmt.Errorf("playbook %s declares no tasks: --rerun-failed re-checks the tasks a check failed", plan.Playbook.File)
	case prev.Mode != "check":
		return nil, diag.Errorf(file, "the report of a labrun run (mode %s), not of a check: --rerun-failed re-checks the tasks a check failed", prev.Mode)
	case prev.Name != plan.Playbook.Name:
		return nil, diag.Errorf(file, "a report of playbook %q, not of %q (%s)", prev.Name, plan.Playbook.Name, plan.Playbook.File)
	case prev.PlaybookDigest != plan.Digest():
		return nil, diag.Errorf(prev.DigestPos(), "a report of another version of playbook %q: its playbookDigest is %s, %s's is %s; its task numbers may name other tasks: check the whole lab (or the tasks by --task)",
			plan.Playbook.Name, prev.PlaybookDigest, plan.Playbook.File, plan.Digest())
	}
	var out []*syntax.Task
	for _, pt := range prev.Tasks {
		if pt.Status != runner.Failed {
			continue
		}
		t, err := plan.Task(strconv.Itoa(pt.Number))
		if err != nil || t.ID != pt.ID {
			return nil, diag.Errorf(prev.TaskPos(pt), "task %d (%s) failed in the report, but the playbook's task %d is not %s", pt.Number, pt.ID, pt.Number, pt.ID)
		}
		out = append(out, t)
	}
	slices.SortFunc(out, func(a, b *syntax.Task) int { return a.Number - b.Number })
	return slices.Compact(out), nil
}

// printRerunError prints why the report of --rerun-failed cannot be used:
// positioned errors as every input error is, another with the file's name.
func printRerunError(stderr io.Writer, file string, err error) int {
	if d := diagnostics("", err); d[0].Pos.File != "" {
		diag.Render(stderr, d, nil)
		return exitInvalid
	}
	fmt.Fprintf(stderr, "labrun check: --rerun-failed %s: %v\n", file, err)
	return exitInvalid
}

// taskList names tasks by number and id: "2 (svc), 5 (prog)".
func taskList(ts []*syntax.Task) string {
	var s []string
	for _, t := range ts {
		s = append(s, fmt.Sprintf("%d (%s)", t.Number, t.ID))
	}
	return strings.Join(s, ", ")
}
