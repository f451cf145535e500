package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/labrun/labrun/actions"
	"github.com/labrun/labrun/cmd/labrun/internal/board"
	"github.com/labrun/labrun/cmd/labrun/internal/console"
	"github.com/labrun/labrun/cmd/labrun/internal/platform"
	"github.com/labrun/labrun/cmd/labrun/internal/report"
	"github.com/labrun/labrun/internal/boundary/cluster"
	"github.com/labrun/labrun/internal/heavy/bpfmaps"
	"github.com/labrun/labrun/internal/heavy/helmproc"
	"github.com/labrun/labrun/internal/heavy/kube"
	"github.com/labrun/labrun/internal/lang/syntax"
	"github.com/labrun/labrun/internal/lang/visible"
	"github.com/labrun/labrun/internal/leaf/secret"
	"github.com/labrun/labrun/runner"
	"github.com/spf13/pflag"
)

// runCmd is labrun run and labrun check: load and compile the playbook,
// connect to the cluster on the first step that needs it, run the plan
// with progress on stdout, and write the reports asked for. Ctrl-C stops
// the running step and still runs finally.
func runCmd(args []string, mode actions.Mode, stdout, stderr io.Writer) int {
	a, code, ok := readRunArgs(args, mode, stderr)
	if !ok {
		if code != exitOK {
			a.notChecked(stdout, runner.ClassConfig)
		}
		return code
	}
	if a.targets.file != "" {
		return a.checkTargets(stdout, stderr)
	}
	if mode == actions.Check && os.Getenv("GOGC") == "" {
		// A check lives for a fraction of a second on every click of a
		// Check button, and most of what it allocates (the results it
		// reads) stays live until its report: collecting at the default
		// pace rescans them a handful of times for little. Five times the
		// live heap keeps a check of the labs here well under 100 MB.
		debug.SetGCPercent(400)
	}
	plan, err := runner.Load(a.playbook, a.options())
	if err != nil {
		a.notChecked(stdout, runner.ClassConfig)
		return printLoadError(stderr, err)
	}
	only, err := plan.SelectTasks(a.tasks, a.upto)
	if err != nil {
		a.notChecked(stdout, runner.ClassConfig)
		fmt.Fprintf(stderr, "labrun %s: %v\n", a.name, err)
		return exitInvalid
	}
	if a.rerunFailed != "" {
		if only, code, ok = a.rerunTasks(plan, only, stdout, stderr); !ok {
			if code != exitOK {
				a.notChecked(stdout, runner.ClassConfig)
			}
			return code
		}
	}
	if a.dryRun {
		printPlan(stdout, plan)
		return exitOK
	}
	return a.run(plan, mode, only, stdout, stderr)
}

// runArgs is the command line of labrun run or check.
// options are how the playbook is compiled: as varFlags say, and for
// labrun check, which runs no step that changes the system, without
// apply's check of its manifests (a check is on a learner's Check
// button's clock).
func (a *runArgs) options() runner.Options {
	o := a.varFlags.options()
	o.NoManifests = a.name == "check"
	return o
}

type runArgs struct {
	runFlags
	name     string // the command, run or check, for messages
	playbook string
	reports  []reportReq
	from     string // --from: the step to resume at
	dryRun   bool   // --dry-run: print the plan, run nothing
	// noPreflight: --no-preflight, do not ask the cluster for the
	// permissions the steps need before the first one.
	noPreflight bool
	tasks       []string // check's --task: the tasks to grade
	upto        string   // check's --upto: grade the tasks up to this one
	// platform is check's --format: print the result as this lab
	// platform's check script shows it (checkformat.go); nil for none.
	platform *platform.Format
	// rerunFailed is check's --rerun-failed: the JSON report of an
	// earlier check, whose failed tasks are graded (rerun.go).
	rerunFailed string
	targets     targetFlags
}

// reportReq is one --report: a report's format and the file it goes to.
type reportReq struct{ format, path string }

// readRunArgs reads the command line of labrun run or check (by mode).
// When it is wrong or asks for help, ok is false and code is the exit code.
func readRunArgs(args []string, mode actions.Mode, stderr io.Writer) (a runArgs, code int, ok bool) {
	a.name = "run"
	if mode == actions.Check {
		a.name = "check"
	}
	fs := newFlagSet(a.name, stderr, fmt.Sprintf("Usage: labrun %s PLAYBOOK [flags]\n\nFlags:\n", a.name))
	a.register(fs)
	if mode != actions.Check {
		a.leaseFlags.register(fs)
	}
	var format string
	reports := fs.StringArray("report", nil, "write a report: FORMAT=FILE with FORMAT json, junit or html (a page for people: the learner's tasks, or with --targets the class board); repeatable")
	fs.StringVar(&a.from, "from", "", "resume at this step, restoring earlier results from the journal in the output directory")
	fs.BoolVar(&a.dryRun, "dry-run", false, "validate and print the plan; run nothing")
	fs.BoolVar(&a.noPreflight, "no-preflight", false, "do not ask the cluster for the permissions the steps need before the first one")
	if mode == actions.Check {
		fs.StringArrayVar(&a.tasks, "task", nil, "grade only this task of the lab: its number or id; repeatable (other tasks are not graded)")
		fs.StringVar(&a.upto, "upto", "", "grade the lab's tasks 1 to this one (its number or id)")
		fs.StringVar(&a.rerunFailed, "rerun-failed", "", "grade only the tasks that failed in `REPORT`, the JSON report of an earlier check of the same playbook (with --task or --upto: those of them that failed)")
		fs.BoolVarP(&a.quiet, "quiet", "q", false, "print only the result: one line per task graded (PASS:, FAIL: with the first reason, TODO: not started), for lab platforms' check scripts")
		fs.StringVar(&format, "format", "", "print only the verdict, as the check script of lab platform `PLATFORM` must print it: "+strings.Join(platform.Names(), ", ")+" (docs/platforms.md)")
		a.targets.register(fs)
	}
	if code, ok := parseFlags(fs, args, stderr); !ok {
		return a, code, false
	}
	if code, ok := a.setFormat(format, stderr); !ok {
		return a, code, false
	}
	if msg := a.targets.conflicts(&a); mode == actions.Check && msg != "" {
		fmt.Fprintf(stderr, "labrun %s: %s\n", a.name, msg)
		return a, exitInvalid, false
	}
	if fs.NArg() != 1 {
		fmt.Fprintf(stderr, "labrun %s: expected exactly one playbook, got %d\n", a.name, fs.NArg())
		return a, exitInvalid, false
	}
	a.playbook = fs.Arg(0)
	if a.reports, ok = readReports(*reports, a.name, stderr); !ok {
		return a, exitInvalid, false
	}
	return a, 0, true
}

// readReports reads the --report flags of command name.
func readReports(flags []string, name string, stderr io.Writer) ([]reportReq, bool) {
	var out []reportReq
	for _, r := range flags {
		format, path, ok := strings.Cut(r, "=")
		if !ok || path == "" || !slices.Contains(report.Formats, format) {
			fmt.Fprintf(stderr, "labrun %s: --report %q: expected json=FILE, junit=FILE or html=FILE\n", name, r)
			return nil, false
		}
		out = append(out, reportReq{format, path})
	}
	return out, true
}

// run runs plan in mode (grading only the tasks in only, when not nil), with
// its progress on stdout, writes the reports asked for and returns the
// exit code.
func (a *runArgs) run(plan *runner.Plan, mode actions.Mode, only []*syntax.Task, stdout, stderr io.Writer) (code int) {
	// The run fills secrets with the values of secret variables and env
	// names once it has read them; everything printed goes through it.
	secrets := &secret.Redactor{}
	live := a.live(stdout)
	stdout, stderr = secrets.Writer(stdout), secrets.Writer(stderr)
	ctx, stop := interruptible(plan, stderr)
	defer stop()
	r := a.runner(plan, mode, a.progressTo(stdout), live, secrets)
	r.Only = only
	r.From = a.from
	r.EncodeResults = slices.ContainsFunc(a.reports, func(rq reportReq) bool { return rq.format == "json" })
	if code, ok := preflight(ctx, r, a.noPreflight, a.noLock, stderr); !ok {
		a.notChecked(stdout, runner.ClassForbidden)
		return code
	}
	// A check only reads: it takes no Lease, so that a Check button
	// clicked while a solve runs answers at once and changes nothing.
	release, code, ok := func() int { return 0 }, 0, true
	if mode != actions.Check {
		release, code, ok = a.takeLease(ctx, plan, r.Runtime.Cluster, a.name, stderr)
	}
	if !ok {
		return code
	}
	defer func() {
		if c := release(); c != 0 && code == exitOK {
			code = c
		}
	}()
	out, err := r.Run(ctx)
	defer r.Runtime.Out.Close()
	if err != nil {
		a.notChecked(stdout, runner.ClassConfig)
		fmt.Fprintf(stderr, "labrun %s: %v\n", a.name, err)
		return exitInvalid
	}
	a.printVerdict(out, stdout, stderr)
	for _, rq := range a.reports {
		if err := report.Write(rq.format, rq.path, out, r.Runtime.Out, secrets, board.About{Version: thisVersion()}); err != nil {
			fmt.Fprintf(stderr, "labrun %s: cannot write %s report: %v\n", a.name, rq.format, err)
			return exitFailed
		}
	}
	return exitCode(out)
}

// runFlags are the flags of the commands that run a playbook's steps
// (run, check and test): variables, the cluster's connection, progress and
// the run's limits.
type runFlags struct {
	varFlags
	leaseFlags
	verbose, noProgress, sequential bool
	// quiet is check's --quiet, which readRunArgs registers: the console
	// prints only a line per task graded and draws nothing live. run and
	// test leave it false.
	quiet                   bool
	timeout                 time.Duration
	kubeconfig, kubeContext string
	// connections is how many clients' worth of requests a connection
	// may make at once (kube.DefaultQPS and DefaultBurst times it; 0 is
	// 1): a check of many targets (check --targets --parallel N) shares
	// one connection among N/4 clients' worth of checks, as many as the
	// pods of fleet render's Job at the same --parallel, each with its
	// own connection.
	connections int
}

func (f *runFlags) register(fs *pflag.FlagSet) {
	f.varFlags.register(fs)
	fs.BoolVarP(&f.verbose, "verbose", "v", false, "print each step as it starts")
	fs.BoolVar(&f.noProgress, "no-progress", false, "plain lines even on a terminal")
	fs.BoolVar(&f.sequential, "sequential", false, "run the branches of parallel steps one after another, in the order written")
	fs.DurationVar(&f.timeout, "timeout", 0, "time limit for the steps of the whole run (e.g. 10m); finally steps still run after it")
	fs.StringVar(&f.kubeconfig, "kubeconfig", "", "kubeconfig file (default: $KUBECONFIG, ~/.kube/config, in a pod its service account, then /etc/rancher/k3s/k3s.yaml)")
	fs.StringVar(&f.kubeContext, "context", "", "kubeconfig context to use (default: its current context)")
}

// connect connects to the cluster of the kubeconfig's context (its
// current one when empty) on its first call, and returns the same
// connection after. The API server's warnings go to stderr escaped, as
// every message does.
func (f *runFlags) connect(context string) func() (cluster.Cluster, error) {
	n := max(f.connections, 1)
	return kube.Lazy(kube.ConnectOptions{Kubeconfig: f.kubeconfig, Context: context, Warnings: visible.Writer(os.Stderr),
		QPS: kube.DefaultQPS * float32(n), Burst: kube.DefaultBurst * n})
}

// contextNamespace is the namespace labrun run and check give the steps
// that name none: the kubeconfig context's, found as they find it
// (kube.Connect; no server is asked), and where it came from. labrun rbac
// places those steps' permissions there. With no kubeconfig anywhere and
// none asked for (no --kubeconfig, --context or KUBECONFIG) it is
// "default", which a context without a namespace gives too. It lives on
// the run path, beside connect, since it links client-go.
func contextNamespace(kubeconfig, kubeContext string) (ns, source string, err error) {
	c, err := kube.Connect(kube.ConnectOptions{Kubeconfig: kubeconfig, Context: kubeContext})
	switch {
	case err == nil && c.Context == "in-cluster":
		return c.DefaultNamespace(), "the pod's own (labrun in a pod, with no kubeconfig)", nil
	case err == nil:
		return c.DefaultNamespace(), fmt.Sprintf("the namespace of context %s of %s", c.Context, c.Source), nil
	case kubeconfig == "" && kubeContext == "" && os.Getenv("KUBECONFIG") == "":
		return "default", "no kubeconfig was found", nil
	}
	return "", "", err
}

// releases reaches Helm releases through labrun-helm, started on the
// first helm step, connected as labrun is (--kubeconfig, and context).
func (f *runFlags) releases(context string) func() (cluster.Releases, error) {
	return helmproc.Lazy(helmproc.Options{Kubeconfig: f.kubeconfig, Context: context})
}

// live says whether progress on stdout is drawn live: on a terminal,
// unless --no-progress.
func (f *runFlags) live(stdout io.Writer) bool {
	file, ok := stdout.(*os.File)
	return ok && !f.noProgress && console.IsTerminal(file)
}

// runner makes the runner of plan in mode, its progress on stdout (live
// on a terminal) and everything it keeps redacted through secrets.
func (f *runFlags) runner(plan *runner.Plan, mode actions.Mode, stdout io.Writer, live bool, secrets *secret.Redactor) *runner.Runner {
	conn := f.connect(f.kubeContext)
	return &runner.Runner{
		Plan: plan,
		Runtime: &actions.Runtime{
			Mode:     mode,
			Cluster:  conn,
			BPFMaps:  bpfmaps.Opener(),
			Releases: f.releases(f.kubeContext),
		},
		Observer: console.New(stdout, live && !f.quiet, f.verbose, f.quiet),
		// Grading goes on after a wrong file, so the learner sees every
		// problem at once.
		KeepGoing:  mode == actions.Check,
		Sequential: f.sequential,
		Timeout:    f.timeout,
		Secrets:    secrets,
	}
}

// interruptible is the context of a run: the first Ctrl-C (or SIGTERM)
// cancels it, so the running step ends and the finally steps run. A
// second one ends labrun at once, killing the programs still running
// first: none may outlive labrun and race the learner's next run. stop
// ends the watch on signals.
func interruptible(plan *runner.Plan, stderr io.Writer) (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	finished := make(chan struct{})
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
	return ctx, func() {
		close(finished)
		signal.Stop(sigs)
		cancel()
	}
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
