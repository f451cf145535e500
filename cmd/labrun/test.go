package main

import (
	"fmt"
	"io"
	"os"
	"slices"
	"sync"

	"github.com/labrun/labrun/actions"
	"github.com/labrun/labrun/internal/outdir"
	"github.com/labrun/labrun/internal/secret"
	"github.com/labrun/labrun/runner"
	"github.com/labrun/labrun/runner/labtest"
)

// testCmd is labrun test: solve the lab, check the files it wrote (they
// must pass), then change each value of each graded file in turn and
// grade the changed file again; a change that passes is a survivor. Exit 1
// when any survives (a loose value declared with its reason does not
// count) or a change fails without naming the value.
func testCmd(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("test", stderr, "Usage: labrun test PLAYBOOK [flags]\n\nSolves the lab, checks its files, then changes each value of each file in turn:\nevery change must fail the check, naming that value.\n\nFlags:\n")
	var rf runFlags
	rf.register(fs)
	noSolve := fs.Bool("no-solve", false, "grade the files already in the output directory instead of solving the lab first")
	if code, ok := parseFlags(fs, args, stderr); !ok {
		return code
	}
	if fs.NArg() != 1 {
		fmt.Fprintf(stderr, "labrun test: expected exactly one playbook, got %d\n", fs.NArg())
		return exitInvalid
	}
	plan, err := runner.Load(fs.Arg(0), rf.options())
	if err != nil {
		return printLoadError(stderr, err)
	}
	if plan.OutputDir == nil {
		fmt.Fprintln(stderr, "labrun test: the playbook declares no outputDir, so it writes no file to grade")
		return exitInvalid
	}
	secrets := &secret.Redactor{}
	live := rf.live(stdout)
	stdout, stderr = secrets.Writer(stdout), secrets.Writer(stderr)
	ctx, stop := interruptible(plan, stderr)
	defer stop()

	// run is one pass over the plan in mode; its output directory stays
	// open for the caller to close.
	run := func(mode actions.Mode, graded func(*runner.Regrade)) (*runner.Outcome, *outdir.Dir, int) {
		r := rf.runner(plan, mode, stdout, live, secrets)
		r.Graded = graded
		out, err := r.Run(ctx)
		if err != nil {
			fmt.Fprintf(stderr, "labrun test: %v\n", err)
			return nil, nil, exitInvalid
		}
		switch out.Status {
		case runner.Interrupted:
			return out, r.Runtime.Out, exitInterrupted
		case runner.Failed:
			return out, r.Runtime.Out, exitFailed
		}
		return out, r.Runtime.Out, exitOK
	}
	if !*noSolve {
		fmt.Fprintln(stdout, "labrun test: solving the lab")
		_, dir, code := run(actions.Solve, nil)
		dir.Close()
		if code != exitOK {
			if code == exitFailed {
				fmt.Fprintln(stderr, "labrun test: the lab's solve failed, so there are no files to grade")
			}
			return code
		}
	}
	fmt.Fprintln(stdout, "labrun test: checking the files as written")
	// Parallel branches grade at the same time; the changes are made in
	// the order the steps are written.
	var mu sync.Mutex
	var gradings []*runner.Regrade
	_, dir, code := run(actions.Check, func(g *runner.Regrade) {
		mu.Lock()
		defer mu.Unlock()
		gradings = append(gradings, g)
	})
	order := map[*runner.StepPlan]int{}
	for i, s := range plan.Steps {
		order[s] = i
	}
	slices.SortStableFunc(gradings, func(a, b *runner.Regrade) int { return order[a.Step] - order[b.Step] })
	defer dir.Close()
	if code != exitOK {
		switch {
		case code != exitFailed:
		case *noSolve:
			fmt.Fprintln(stderr, "labrun test: check fails on the files as they are; give it files that pass (a solve's) to change")
		default:
			fmt.Fprintln(stderr, "labrun test: check fails on the files the solve wrote: the grader refuses a right answer")
		}
		return code
	}
	if len(gradings) == 0 {
		fmt.Fprintln(stderr, "labrun test: check graded no file: the playbook has no write step that ran")
		return exitFailed
	}

	// The changed files go to a scratch directory of labrun's own; the
	// graded directory is only read.
	tmp, err := os.MkdirTemp("", "labrun-test-")
	if err != nil {
		fmt.Fprintf(stderr, "labrun test: %v\n", err)
		return exitFailed
	}
	defer os.RemoveAll(tmp)
	scratch, err := outdir.Create(tmp)
	if err != nil {
		fmt.Fprintf(stderr, "labrun test: %v\n", err)
		return exitFailed
	}
	defer scratch.Close()
	changes, err := labtest.Run(gradings, dir, scratch)
	if err != nil {
		fmt.Fprintf(stderr, "labrun test: %v\n", err)
		return exitFailed
	}
	count := map[labtest.Verdict]int{}
	for _, c := range changes {
		count[c.Verdict]++
		if c.Verdict != labtest.Rejected || rf.verbose {
			fmt.Fprintln(stdout, c)
		}
	}
	fmt.Fprintf(stdout, "labrun test: %s to %s: %d rejected naming the value, %d declared loose, %d survived, %d rejected naming another value\n",
		plural(len(changes), "change"), plural(len(gradings), "graded file"), count[labtest.Rejected], count[labtest.Declared], count[labtest.Survived], count[labtest.Unnamed])
	if count[labtest.Survived]+count[labtest.Unnamed] > 0 {
		return exitFailed
	}
	return exitOK
}
