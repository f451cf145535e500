package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/labrun/labrun/actions"
	"github.com/labrun/labrun/cmd/labrun/internal/board"
	"github.com/labrun/labrun/cmd/labrun/internal/report"
	"github.com/labrun/labrun/internal/lang/visible"
	"github.com/labrun/labrun/internal/leaf/secret"
	"github.com/labrun/labrun/runner"
	"github.com/labrun/labrun/runner/fleet"
	"github.com/spf13/pflag"
)

// targetFlags are check's flags for grading many targets: a class's
// namespaces or contexts (check --targets), or one of them (--index).
type targetFlags struct {
	file     string
	parallel int
	index    int
	// outputs: --outputs VAR=DIR, each target's output directory.
	outputs string
}

func (f *targetFlags) register(fs *pflag.FlagSet) {
	f.registerClass(fs)
	fs.IntVar(&f.index, "index", -1, "with --targets: check only the target at this index (from 0), with that check's own progress")
}

// registerClass registers the flags check --targets and a pod of the
// Job (labrun fleet grade) share.
func (f *targetFlags) registerClass(fs *pflag.FlagSet) {
	fs.StringVar(&f.file, "targets", "", "grade each target of this file (namespaces or kubeconfig contexts; docs/fleet.md): a line per target, then a table")
	fs.IntVar(&f.parallel, "parallel", fleet.DefaultParallel, "with --targets: how many targets are checked at once")
	fs.StringVar(&f.outputs, "outputs", "", "with --targets: `VAR=DIR` sets each target's playbook variable VAR to DIR/<target name>, the directory of that learner's files")
}

// conflicts says what is wrong with the flags together, "" when nothing.
func (f *targetFlags) conflicts(a *runArgs) string {
	switch {
	case f.file == "" && (f.index >= 0 || f.outputs != ""):
		return "--index and --outputs are for the targets of a targets file: give --targets"
	case f.file == "":
		return ""
	case f.parallel < 1:
		return fmt.Sprintf("--parallel %d: expected at least 1", f.parallel)
	case a.from != "" || a.dryRun:
		return "--targets grades each target afresh: --from and --dry-run are for one run"
	case a.kubeContext != "":
		return "--targets names each target's context in its file: --context is for one run"
	}
	return ""
}

// checkTargets is labrun check --targets: each target graded by
// fleet.Grader, --parallel at a time, a line as each ends, then a table,
// the reports and the exit code: 0 when every target was graded, right
// or wrong (the reports say which), else the code of the most decisive
// class among those that could not be (docs/exit-codes.md).
func (a *runArgs) checkTargets(stdout, stderr io.Writer) int {
	ts, err := a.readTargets(stderr)
	if err != nil {
		return exitInvalid
	}
	indexes := make([]int, len(ts.List))
	for i := range indexes {
		indexes[i] = i
	}
	if a.targets.index >= 0 {
		if _, err := ts.Pick(a.targets.index); err != nil {
			fmt.Fprintf(stderr, "labrun check: %v\n", err)
			return exitInvalid
		}
		indexes = []int{a.targets.index}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	started := time.Now()
	a.connections = a.targets.parallel / fleet.DefaultParallel
	results := a.grader(ts, stdout).GradeAll(ctx, indexes)
	took := time.Since(started)
	writeTable(stdout, results, took)
	code := fleetExit(ctx, results)
	about := board.About{Version: thisVersion(), Playbook: a.playbook, Source: "check --targets " + a.targets.file, Started: started, Seconds: took.Seconds()}
	for _, rq := range a.reports {
		if err := report.WriteFleet(rq.format, rq.path, results, about); err != nil {
			fmt.Fprintf(stderr, "labrun check: cannot write %s report: %v\n", rq.format, err)
			return cmp.Or(code, exitFailed)
		}
	}
	return code
}

// readTargets reads --targets and --outputs; a problem is printed, its
// error returned.
func (a *runArgs) readTargets(stderr io.Writer) (*fleet.Targets, error) {
	ts, err := fleet.ReadTargets(a.targets.file)
	if err != nil {
		printLoadError(stderr, err)
		return nil, err
	}
	if a.targets.outputs != "" {
		if err := ts.SetOutputs(a.targets.outputs); err != nil {
			fmt.Fprintf(stderr, "labrun %s: %v\n", a.name, err)
			return nil, err
		}
	}
	return ts, nil
}

// grader is the grader of the targets ts with a's flags: the command's
// connections, runners, preflight and exit codes. One target alone
// prints its check's progress on stdout, as labrun check does; several
// print a line as each ends.
func (a *runArgs) grader(ts *fleet.Targets, stdout io.Writer) *fleet.Grader {
	g := &fleet.Grader{
		Playbook: a.playbook, Targets: ts, Options: a.options(), Tasks: a.tasks, Upto: a.upto, Parallel: a.targets.parallel,
		Connect: func(context string) fleet.Connection {
			return fleet.Connection{Cluster: a.connect(context), Releases: a.releases(context)}
		},
		NewRunner: func(plan *runner.Plan, progress io.Writer, secrets *secret.Redactor) *runner.Runner {
			return a.runner(plan, actions.Check, progress, false, secrets)
		},
		ExitCode: exitCode,
		Progress: stdout,
		OnResult: func(done, total int, r fleet.Result) {
			if total > 1 {
				fmt.Fprintf(stdout, "[%*d/%d] %s\n", len(fmt.Sprint(total)), done, total, resultLine(r))
			}
		},
	}
	if !a.noPreflight {
		g.Preflight = func(ctx context.Context, r *runner.Runner, w io.Writer) (int, bool) {
			return preflight(ctx, r, false, true, w)
		}
	}
	return g
}

// fleetExit is the exit code of a check of many targets: 130 when
// interrupted, 0 when every target was graded, else the code of the most
// decisive class among those that were not.
func fleetExit(ctx context.Context, results []fleet.Result) int {
	if ctx.Err() != nil {
		return exitInterrupted
	}
	if c := fleet.WorstClass(results); c != "" {
		return classExit[c]
	}
	return exitOK
}

// resultLine is a target's progress line, its name and first failure
// through visible.Line.
func resultLine(r fleet.Result) string {
	s := fmt.Sprintf("%s: %s, %d/%d passed, %.1fs", visible.Line(r.Target), r.Verdict, r.Passed, r.Tasks, r.Seconds)
	if r.Class != "" && r.Verdict != runner.VerdictPassed {
		s += " [" + string(r.Class) + "]"
	}
	if r.FirstFailure != "" {
		s += ": " + visible.Line(r.FirstFailure)
	}
	return s
}

// writeTable writes the summary: a row per target (its verdict, the
// tasks that passed, its time, its first failure), then the counts. A
// target's name and first failure go through visible.Line: neither can
// end a row or a column, or control the terminal.
func writeTable(w io.Writer, results []fleet.Result, took time.Duration) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "TARGET\tVERDICT\tPASSED\tTIME\tFIRST FAILURE")
	for _, r := range results {
		verdict := string(r.Verdict)
		if r.Class != "" && !r.Graded() {
			verdict += " (" + string(r.Class) + ")"
		}
		if r.Attempts > 1 {
			verdict += fmt.Sprintf(" after %d attempts", r.Attempts)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d/%d\t%.1fs\t%s\n", visible.Line(r.Target), verdict, r.Passed, r.Tasks, r.Seconds, visible.Line(r.FirstFailure))
	}
	tw.Flush()
	c := fleet.Count(results)
	fmt.Fprintf(w, "%s: %d passed, %d wrong, %d not graded", plural(len(results), "target"), c.Passed, c.Wrong, c.NotGraded)
	if c.Missing > 0 {
		fmt.Fprintf(w, ", %d missing", c.Missing)
	}
	if took > 0 {
		fmt.Fprintf(w, " in %.1fs", took.Seconds())
	}
	fmt.Fprintln(w)
}
