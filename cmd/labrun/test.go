package main

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/labrun/labrun/actions"
	"github.com/labrun/labrun/cmd/labrun/internal/report"
	"github.com/labrun/labrun/internal/lang/visible"
	"github.com/labrun/labrun/internal/leaf/secret"
	"github.com/labrun/labrun/runner"
	"github.com/labrun/labrun/runner/labtest"
)

// testCmd is labrun test: solve the lab, check the files it wrote (they
// must pass), then change each value of each graded file in turn and
// grade the changed file again; a change that passes is a survivor
// (labtest does all this). Exit 1 when any survives (a loose value
// declared with its reason does not count) or a change fails without
// naming the value. With --repeat N it solves and checks N times on a
// fresh lab first, then once on the lab as left, and a task that passed
// some runs and failed others exits 5 (repeatExit).
func testCmd(args []string, stdout, stderr io.Writer) (code int) {
	fs := newFlagSet("test", stderr, "Usage: labrun test PLAYBOOK [flags]\n\nSolves the lab, checks its files, then changes each value of each file in turn:\nevery change must fail the check, naming that value. Then writes each file other\nways with the same meaning (key order, spacing, number forms, list order, final\nnewline): every one must pass. With --repeat N, solves and checks N times first,\neach on a fresh lab, then once on the lab as the last run left it, and reports\neach task's flake rate.\n\nFlags:\n")
	var rf runFlags
	rf.register(fs)
	rf.leaseFlags.register(fs)
	noSolve := fs.Bool("no-solve", false, "grade the files already in the output directory instead of solving the lab first")
	protocol := fs.Bool("protocol", false, "first check every task on the lab untouched (a fresh cluster, an empty output directory): each must fail; then solve, check and change as without it")
	repeat := fs.Int("repeat", 0, "solve and check the lab `N` times, each on a fresh lab (see --fresh), then once on the lab as the last run left it; report each task's passes, failures and flake rate, and for a task that did not pass every run the values that differed")
	fresh := fs.String("fresh", freshAuto, "with --repeat, how each run gets a fresh lab: auto (the lab's cleanup playbook LAB/cleanup.yaml beside it, else deleting the namespaces it makes, else none), namespaces, none, or a cleanup playbook's path")
	reports := fs.StringArray("report", nil, "with --repeat, write the runs and each task's figures: FORMAT=FILE with FORMAT json or junit; repeatable")
	if code, ok := parseFlags(fs, args, stderr); !ok {
		return code
	}
	switch {
	case *protocol && *noSolve:
		fmt.Fprintln(stderr, "labrun test: --protocol solves the lab after checking it untouched; it cannot take --no-solve")
		return exitInvalid
	case *repeat < 0:
		fmt.Fprintf(stderr, "labrun test: --repeat %d: expected a number of runs of at least 1\n", *repeat)
		return exitInvalid
	case *repeat > 0 && *noSolve:
		fmt.Fprintln(stderr, "labrun test: --repeat solves the lab each run; it cannot take --no-solve")
		return exitInvalid
	case *repeat == 0 && (fs.Changed("fresh") || len(*reports) > 0):
		fmt.Fprintln(stderr, "labrun test: --fresh and --report are of --repeat: give --repeat N")
		return exitInvalid
	}
	reqs, ok := readReports(*reports, "test", stderr)
	if !ok {
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
		Repeat:   *repeat,
		NewRunner: func(mode actions.Mode) *runner.Runner {
			return rf.runner(plan, mode, stdout, live, secrets)
		},
		Announce:    func(pass string) { fmt.Fprintln(stdout, "labrun test: "+visible.Text(pass)) },
		OnUntouched: func(u labtest.Untouched) { fmt.Fprintln(stdout, visible.Text(u.String())) },
		OnRun:       func(r labtest.Run, total int) { fmt.Fprintln(stdout, visible.Text(r.Line(plan, total))) },
	}
	if *repeat > 0 {
		reset, note, code, ok := freshReset(*fresh, fs.Arg(0), plan, &rf, func(p *runner.Plan) *runner.Runner {
			return rf.runner(p, actions.Solve, stdout, live, secrets)
		}, stderr)
		if !ok {
			return code
		}
		t.Reset = reset
		fmt.Fprintln(stdout, "labrun test: "+visible.Text(note))
	}
	res, err := t.Run(ctx)
	if err != nil {
		if !errors.Is(err, labtest.ErrInterrupted) {
			fmt.Fprintf(stderr, "labrun test: %v\n", err)
		}
		return testExit(err)
	}
	if res.Repeated() {
		printRepeat(stdout, res, t.Reset, rf.verbose)
		rep := report.NewRepeat(fs.Arg(0), plan.Digest(), plan.Playbook.Name, *repeat, t.Reset, res)
		for _, rq := range reqs {
			if err := report.WriteRepeat(rq.format, rq.path, rep, secrets); err != nil {
				fmt.Fprintf(stderr, "labrun test: cannot write %s report: %v\n", rq.format, err)
				return exitFailed
			}
		}
		if !res.Graded {
			fmt.Fprintln(stdout, "labrun test: no value changed: the last run's check failed, so its files are not a right answer to change")
			if *protocol {
				printProtocol(stdout, res)
			}
			return repeatExit(res)
		}
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
			fmt.Fprintln(stdout, visible.Text(r.String()))
		}
	}
	fmt.Fprintf(stdout, "labrun test: %s written other ways with the same meaning: %d passed, %d refused\n",
		plural(res.Files, "graded file"), len(res.Renderings)-len(res.Refused()), len(res.Refused()))
	if *protocol {
		printProtocol(stdout, res)
	}
	if res.Repeated() {
		return repeatExit(res)
	}
	if res.Failed() {
		return exitFailed
	}
	return exitOK
}

// repeatExit is labrun test --repeat's exit code, the first of these
// that applies: a task that failed every run exits by its class, as a
// run that failed does (the lab is broken, not flaky: 1 for assertion, 2
// for config, 4 for timeout); a task that passed some runs and failed
// others exits 5 (exitFlaky); a finding of the changes, the renderings
// or the protocol 1; else 0 (docs/exit-codes.md).
func repeatExit(res *labtest.Result) int {
	code, best := exitOK, -1
	for _, f := range res.FailedEveryRun() {
		if i := slices.Index(runner.Classes, f.Class()); best < 0 || i < best {
			best, code = i, classExit[f.Class()]
		}
	}
	switch {
	case best >= 0:
		return code
	case len(res.Flaky()) > 0:
		return exitFlaky
	case res.Failed():
		return exitFailed
	}
	return exitOK
}

// printRepeat prints what the runs of --repeat found: their number and
// time, each task's figures and, for a task that did not pass every
// run, why it failed and the values that differed (ten of them, all
// with -v).
func printRepeat(stdout io.Writer, res *labtest.Result, reset *labtest.Reset, verbose bool) {
	fmt.Fprintln(stdout, visible.Text(res.Summary(reset)))
	limit := 10
	if verbose {
		limit = 0
	}
	for _, f := range res.Tasks {
		fmt.Fprintln(stdout, visible.Text(f.String()))
		for _, l := range f.Lines(limit) {
			fmt.Fprintln(stdout, visible.Text(l))
		}
	}
	flaky, broken := res.Flaky(), res.FailedEveryRun()
	if len(res.Tasks) == 1 && res.Tasks[0].Number == 0 {
		switch {
		case len(flaky) > 0:
			fmt.Fprintf(stdout, "labrun test: the lab is flaky: it passed %d of %d runs\n", res.Tasks[0].Passed, len(res.Runs))
		case len(broken) > 0:
			fmt.Fprintf(stdout, "labrun test: the lab failed every one of %d runs\n", len(res.Runs))
		default:
			fmt.Fprintf(stdout, "labrun test: the lab is not flaky: it passed all %d runs\n", len(res.Runs))
		}
		return
	}
	var names []string
	for _, f := range flaky {
		names = append(names, f.What())
	}
	switch {
	case len(flaky) > 0:
		fmt.Fprintf(stdout, "labrun test: %d of %s flaky in %d runs: %s\n", len(flaky), plural(len(res.Tasks), "task"), len(res.Runs), strings.Join(names, ", "))
	case len(broken) == 0:
		fmt.Fprintf(stdout, "labrun test: no flaky task: %s passed all %d runs\n", plural(len(res.Tasks), "task"), len(res.Runs))
	}
	if len(broken) > 0 {
		names = nil
		for _, f := range broken {
			names = append(names, f.What())
		}
		fmt.Fprintf(stdout, "labrun test: %d of %s failed every run: %s\n", len(broken), plural(len(res.Tasks), "task"), strings.Join(names, ", "))
	}
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
