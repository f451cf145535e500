package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/labrun/labrun/actions"
	"github.com/labrun/labrun/internal/lang/visible"
	"github.com/labrun/labrun/internal/secret"
	"github.com/labrun/labrun/runner"
	"github.com/labrun/labrun/runner/labtest"
)

// testCmd is labrun test: solve the lab, check the files it wrote (they
// must pass), then change each value of each graded file in turn and
// grade the changed file again; a change that passes is a survivor
// (labtest does all this). Exit 1 when any survives (a loose value
// declared with its reason does not count) or a change fails without
// naming the value.
func testCmd(args []string, stdout, stderr io.Writer) (code int) {
	fs := newFlagSet("test", stderr, "Usage: labrun test PLAYBOOK [flags]\n\nSolves the lab, checks its files, then changes each value of each file in turn:\nevery change must fail the check, naming that value. Then writes each file other\nways with the same meaning (key order, spacing, number forms, list order, final\nnewline): every one must pass.\n\nFlags:\n")
	var rf runFlags
	rf.register(fs)
	rf.leaseFlags.register(fs)
	noSolve := fs.Bool("no-solve", false, "grade the files already in the output directory instead of solving the lab first")
	protocol := fs.Bool("protocol", false, "first check every task on the lab untouched (a fresh cluster, an empty output directory): each must fail; then solve, check and change as without it")
	if code, ok := parseFlags(fs, args, stderr); !ok {
		return code
	}
	if *protocol && *noSolve {
		fmt.Fprintln(stderr, "labrun test: --protocol solves the lab after checking it untouched; it cannot take --no-solve")
		return exitInvalid
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
	// One Lease for the solve, the check and every change graded: no
	// other run may interleave with any of them.
	release, code, ok := rf.takeLease(ctx, plan, rf.connect(rf.kubeContext), "test", stderr)
	if !ok {
		return code
	}
	defer func() {
		if c := release(); c != 0 && code == exitOK {
			code = c
		}
	}()

	t := &labtest.Test{
		Plan:     plan,
		NoSolve:  *noSolve,
		Protocol: *protocol,
		NewRunner: func(mode actions.Mode) *runner.Runner {
			return rf.runner(plan, mode, stdout, live, secrets)
		},
		Announce:    func(pass string) { fmt.Fprintln(stdout, "labrun test: "+visible.Text(pass)) },
		OnUntouched: func(u labtest.Untouched) { fmt.Fprintln(stdout, visible.Text(u.String())) },
	}
	res, err := t.Run(ctx)
	if err != nil {
		if !errors.Is(err, labtest.ErrInterrupted) {
			fmt.Fprintf(stderr, "labrun test: %v\n", err)
		}
		return testExit(err)
	}
	for _, c := range res.Changes {
		if c.Finding != labtest.Rejected || rf.verbose {
			// a change names a learner's key and value, and why
			fmt.Fprintln(stdout, visible.Text(c.String()))
		}
	}
	fmt.Fprintf(stdout, "labrun test: %s to %s: %d rejected naming the value, %d declared loose, %d survived, %d rejected naming another value\n",
		plural(len(res.Changes), "change"), plural(res.Files, "graded file"), res.Count(labtest.Rejected), res.Count(labtest.Declared), res.Count(labtest.Survived), res.Count(labtest.Unnamed))
	for _, r := range res.Renderings {
		if r.Refused() || rf.verbose {
			fmt.Fprintln(stdout, r)
		}
	}
	fmt.Fprintf(stdout, "labrun test: %s written other ways with the same meaning: %d passed, %d refused\n",
		plural(res.Files, "graded file"), len(res.Renderings)-len(res.Refused()), len(res.Refused()))
	if *protocol {
		printProtocol(stdout, res)
	}
	if res.Failed() {
		return exitFailed
	}
	return exitOK
}

// testExit is labrun test's exit code for an error that stopped it: a
// pass that failed exits by its class as run and check do (a solve that
// failed on an assertion 1, a broken lab 2, a cluster that did not answer
// 3, time running out 4), a pass that could not start 2.
func testExit(err error) int {
	var re *labtest.RunError
	var fe *labtest.FailedError
	switch {
	case errors.Is(err, labtest.ErrInterrupted):
		return exitInterrupted
	case errors.As(err, &re):
		return exitInvalid
	case errors.As(err, &fe):
		if code, ok := classExit[fe.Class]; ok {
			return code
		}
	}
	return exitFailed
}

// printProtocol prints what --protocol found of the untouched lab.
func printProtocol(stdout io.Writer, res *labtest.Result) {
	bad := res.PassedUntouched()
	if len(bad) == 0 {
		fmt.Fprintf(stdout, "labrun test: protocol: %s failed on the untouched lab and passed once solved\n", plural(len(res.Untouched), "task"))
		return
	}
	var names []string
	for _, u := range bad {
		names = append(names, u.What())
	}
	fmt.Fprintf(stdout, "labrun test: protocol: %d of %s passed on the untouched lab, a defect of the lab: %s\n", len(bad), plural(len(res.Untouched), "task"), strings.Join(names, ", "))
}
