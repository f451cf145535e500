package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/labrun/labrun/actions"
	"github.com/labrun/labrun/bpfmaps"
	"github.com/labrun/labrun/console"
	"github.com/labrun/labrun/internal/secret"
	"github.com/labrun/labrun/kube"
	"github.com/labrun/labrun/report"
	"github.com/labrun/labrun/runner"
	"github.com/spf13/pflag"
)

// runCmd is labrun run and labrun check: load and compile the playbook,
// connect to the cluster on the first step that needs it, run the plan
// with progress on stdout, and write the reports asked for. Ctrl-C stops
// the running step and still runs finally.
func runCmd(args []string, mode actions.Mode, stdout, stderr io.Writer) int {
	name := "run"
	if mode == actions.Check {
		name = "check"
	}
	fs := newFlagSet(name, stderr, fmt.Sprintf("Usage: labrun %s PLAYBOOK [flags]\n\nFlags:\n", name))
	var vf varFlags
	vf.register(fs)
	reports := fs.StringArray("report", nil, "write a report: FORMAT=FILE with FORMAT json or junit; repeatable")
	from := fs.String("from", "", "resume at this step, restoring earlier results from the journal in the output directory")
	dryRun := fs.Bool("dry-run", false, "validate and print the plan; run nothing")
	verbose := fs.BoolP("verbose", "v", false, "print each step as it starts")
	noProgress := fs.Bool("no-progress", false, "plain lines even on a terminal")
	sequential := fs.Bool("sequential", false, "run the branches of parallel steps one after another, in the order written")
	timeout := fs.Duration("timeout", 0, "time limit for the steps of the whole run (e.g. 10m); finally steps still run after it")
	kubeconfig := fs.String("kubeconfig", "", "kubeconfig file (default: $KUBECONFIG, ~/.kube/config, then /etc/rancher/k3s/k3s.yaml)")
	kubeContext := fs.String("context", "", "kubeconfig context to use (default: its current context)")
	var taskArgs []string
	var upto string
	var quiet bool
	if mode == actions.Check {
		fs.StringArrayVar(&taskArgs, "task", nil, "grade only this task of the lab: its number or id; repeatable (other tasks are not graded)")
		fs.StringVar(&upto, "upto", "", "grade the lab's tasks 1 to this one (its number or id)")
		fs.BoolVarP(&quiet, "quiet", "q", false, "print only the result: one line per task graded (PASS:, FAIL: with the first reason, TODO: not started), for lab platforms' check scripts")
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return exitOK
		}
		return exitInvalid
	}
	if fs.NArg() != 1 {
		fmt.Fprintf(stderr, "labrun %s: expected exactly one playbook, got %d\n", name, fs.NArg())
		return exitInvalid
	}
	type reportReq struct{ format, path string }
	var reqs []reportReq
	for _, r := range *reports {
		format, path, ok := strings.Cut(r, "=")
		if !ok || path == "" || (format != "json" && format != "junit") {
			fmt.Fprintf(stderr, "labrun %s: --report %q: expected json=FILE or junit=FILE\n", name, r)
			return exitInvalid
		}
		reqs = append(reqs, reportReq{format, path})
	}
	plan, err := runner.Load(fs.Arg(0), vf.options())
	if err != nil {
		return printLoadError(stderr, err)
	}
	only, err := plan.SelectTasks(taskArgs, upto)
	if err != nil {
		fmt.Fprintf(stderr, "labrun %s: %v\n", name, err)
		return exitInvalid
	}
	if *dryRun {
		printPlan(stdout, plan)
		return exitOK
	}

	live := false
	if f, ok := stdout.(*os.File); ok && !*noProgress {
		live = console.IsTerminal(f)
	}
	// The run fills secrets with the values of secret variables and env
	// names once it has read them; everything printed goes through it.
	secrets := &secret.Redactor{}
	stdout, stderr = secrets.Writer(stdout), secrets.Writer(stderr)

	// The first Ctrl-C (or SIGTERM) cancels ctx: the running step ends
	// and the finally steps run. A second one ends labrun at once, killing
	// the programs still running first: none may outlive labrun and race
	// the learner's next run.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	finished := make(chan struct{})
	defer close(finished)
	go func() {
		select {
		case <-sigs:
		case <-finished:
			return
		}
		cancel()
		if hasCleanup(plan) {
			fmt.Fprintf(stderr, "labrun: interrupted; finishing cleanup (Ctrl-C again to stop; at most %s)\n", runner.DefaultCleanupTimeout)
		}
		select {
		case <-sigs:
		case <-finished:
			return
		}
		actions.KillRunning()
		fmt.Fprintln(stderr, "labrun: interrupted again; stopping without finishing cleanup")
		os.Exit(exitInterrupted)
	}()
	r := &runner.Runner{
		Plan: plan,
		Runtime: &actions.Runtime{
			Mode:    mode,
			Cluster: kube.Lazy(kube.ConnectOptions{Kubeconfig: *kubeconfig, Context: *kubeContext}),
			BPFMaps: bpfmaps.Opener(),
		},
		Observer: console.New(stdout, live && !quiet, *verbose, quiet),
		Only:     only,
		From:     *from,
		// Grading goes on after a wrong file, so the learner sees every
		// problem at once.
		KeepGoing:  mode == actions.Check,
		Sequential: *sequential,
		Timeout:    *timeout,
		Secrets:    secrets,
	}
	out, err := r.Run(ctx)
	defer r.Runtime.Out.Close()
	if err != nil {
		fmt.Fprintf(stderr, "labrun %s: %v\n", name, err)
		return exitInvalid
	}
	for _, rq := range reqs {
		if err := report.Write(rq.format, rq.path, out, r.Runtime.Out, secrets); err != nil {
			fmt.Fprintf(stderr, "labrun %s: cannot write %s report: %v\n", name, rq.format, err)
			return exitFailed
		}
	}
	switch out.Status {
	case runner.Interrupted:
		return exitInterrupted
	case runner.Failed:
		return exitFailed
	}
	return exitOK
}

// hasCleanup reports whether the plan has finally steps, which an
// interrupted run still runs.
func hasCleanup(p *runner.Plan) bool {
	for _, s := range p.Steps {
		if s.Cleanup {
			return true
		}
	}
	return false
}
