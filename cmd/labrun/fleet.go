package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/labrun/labrun/cmd/labrun/internal/board"
	"github.com/labrun/labrun/cmd/labrun/internal/report"
	"github.com/labrun/labrun/internal/boundary/cluster"
	"github.com/labrun/labrun/internal/lang/eval"
	"github.com/labrun/labrun/runner"
	"github.com/labrun/labrun/runner/access"
	"github.com/labrun/labrun/runner/fleet"
)

const fleetUsage = `Usage: labrun fleet render PLAYBOOK --targets FILE [flags]
       labrun fleet collect --job NAME [flags]
       labrun fleet grade PLAYBOOK --targets FILE --shard I/N --job NAME [flags]

Grades a class inside the cluster, as one Indexed Job whose pods each
grade a shard of the targets of the targets file (its namespaces): the
same check of each target as labrun check --targets does, by the same
function (docs/fleet.md).

render prints, as YAML kubectl applies, the Job's ServiceAccount, a
ConfigMap with the playbook and the targets file, the Roles labrun check
needs in each target's namespace (derived from the steps, as labrun rbac
does) bound to the ServiceAccount, the Role that lets the pods store
their results (create ConfigMaps in the Job's namespace), and the Job: a
shard per index, each retried when its pod dies before its results are
stored.

grade is what each pod runs: it checks the targets of its shard, as
check --targets does, and stores their results in a new ConfigMap.

collect reads the results the shards stored (it needs get on the Job and
list on ConfigMaps and pods in its namespace; the results outlast the
pods and the Job) and prints the table check --targets prints; --report
writes the JSON lines and the JUnit suites. A target with no result is
missing. With --wait it first waits for the Job to end. Exit 0 when
every target was graded, right or wrong, else as check --targets.

`

func fleetCmd(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, fleetUsage)
		return exitInvalid
	}
	switch args[0] {
	case "render":
		return fleetRender(args[1:], stdout, stderr)
	case "collect":
		return fleetCollect(args[1:], stdout, stderr)
	case "grade":
		return fleetGrade(args[1:], stdout, stderr)
	case "-h", "--help", "help":
		fmt.Fprint(stdout, fleetUsage)
		return exitOK
	}
	fmt.Fprintf(stderr, "labrun fleet: unknown subcommand %q: expected render, collect or grade\n", args[0])
	return exitInvalid
}

// fleetRender is labrun fleet render.
func fleetRender(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("fleet render", stderr, fleetUsage+"Flags of render:\n")
	targets := fs.String("targets", "", "the targets file: the namespaces to grade (required)")
	var set []string
	fs.StringArrayVar(&set, "set", nil, "override a variable for every target: name=value; repeatable")
	j := fleet.Job{}
	fs.StringVar(&j.Name, "name", "", "the name of the Job, its ServiceAccount and ConfigMap (default labrun-PLAYBOOK-fleet)")
	fs.StringVarP(&j.Namespace, "namespace", "n", "labrun", "the namespace the Job runs in")
	fs.StringVar(&j.Image, "image", "labrun.local/labrun:latest", "labrun's image (make image)")
	parallel := fs.Int("parallel", fleet.DefaultParallel, "how many targets are checked at once in all: each pod checks "+fmt.Sprint(fleet.DefaultParallel)+" at once (fewer when this is lower), so this allows this/"+fmt.Sprint(fleet.DefaultParallel)+" pods at once")
	fs.IntVar(&j.Pods, "pods", 0, "cut the targets into this many shards, one pod each (default: as many as keep each pod grading for longer than it takes to start, "+fleet.PodStartup.String()+", by the playbook's steps' typical costs, and at most as many as --parallel runs at once; as many as that when the check runs a program (exec, run), whose time its kind cannot say; at most "+fmt.Sprint(fleet.MaxShardTargets)+" targets a pod)")
	fs.IntVar(&j.BackoffLimitPerIndex, "retries", 2, "how many times a shard is graded again after its pod died before storing its results")
	fs.IntVar(&j.MaxFailedIndexes, "max-failed", 0, "stop the Job when more shards than this fail (default: a tenth of them, at least 1)")
	fs.DurationVar(&j.Timeout, "timeout", 5*time.Minute, "time limit of one target's check")
	includes := fs.StringArray("include", nil, "carry this file the playbook reads (a schema, say), by its `PATH` from the playbook's directory, to the same place in the pods; repeatable")
	outputs := fs.String("outputs", "", "`VAR=DIR`: carry each learner's files, DIR/<target name>/, to its pod, and set its playbook variable VAR to their directory there (as check --targets --outputs)")
	if code, ok := parseFlags(fs, args, stderr); !ok {
		return code
	}
	if fs.NArg() != 1 || *targets == "" {
		fmt.Fprintln(stderr, "labrun fleet render: expected one playbook and --targets FILE")
		return exitInvalid
	}
	j.Playbook, j.Set = fs.Arg(0), set
	ts, err := fleet.ReadTargets(*targets)
	if err != nil {
		return printLoadError(stderr, err)
	}
	if *outputs != "" {
		if err := ts.SetOutputs(*outputs); err != nil {
			fmt.Fprintf(stderr, "labrun fleet render: %v\n", err)
			return exitInvalid
		}
	}
	plan, err := runner.Load(j.Playbook, runner.Options{Set: set})
	if err != nil {
		return printLoadError(stderr, err)
	}
	needs, err := fleet.DeriveNeeds(j.Playbook, ts, runner.Options{Set: set})
	if err != nil {
		fmt.Fprintf(stderr, "labrun fleet render: %v\n", err)
		return exitInvalid
	}
	if j.Name == "" {
		j.Name = access.RoleName(plan.Playbook.Name, "fleet")
	}
	if *parallel < 1 {
		fmt.Fprintf(stderr, "labrun fleet render: --parallel %d: expected at least 1\n", *parallel)
		return exitInvalid
	}
	sz, err := fleet.Size(len(ts.List), *parallel, j.Pods, fleet.CheckCost(plan))
	if err != nil {
		fmt.Fprintf(stderr, "labrun fleet render: %v\n", err)
		return exitInvalid
	}
	j.Pods, j.Parallelism, j.PerPod = sz.Pods, sz.AtOnce, sz.PerPod
	if j.MaxFailedIndexes == 0 {
		j.MaxFailedIndexes = max(1, j.Pods/10)
	}
	if j.PlaybookData, err = os.ReadFile(j.Playbook); err == nil {
		j.TargetsData, err = os.ReadFile(*targets)
	}
	if err == nil {
		err = fleet.CarryFiles(&j, ts, *includes)
	}
	if err == nil {
		err = fleet.Render(stdout, j, ts, needs, access.RoleName(plan.Playbook.Name, "check"))
	}
	if err != nil {
		fmt.Fprintf(stderr, "labrun fleet render: %v\n", err)
		return exitInvalid
	}
	return exitOK
}

// fleetCollect is labrun fleet collect.
func fleetCollect(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("fleet collect", stderr, fleetUsage+"Flags of collect:\n")
	var f runFlags
	name := fs.String("job", "", "the Job's name (required)")
	namespace := fs.StringP("namespace", "n", "labrun", "the Job's namespace")
	targets := fs.String("targets", "", "the targets file the Job was rendered from: names the targets that left no result")
	wait := fs.Duration("wait", 0, "first wait up to this long for the Job to end, printing its progress")
	reports := fs.StringArray("report", nil, "write a report: FORMAT=FILE with FORMAT json (a line per target) or junit; repeatable")
	fs.StringVar(&f.kubeconfig, "kubeconfig", "", "kubeconfig file (default: $KUBECONFIG, ~/.kube/config, then /etc/rancher/k3s/k3s.yaml)")
	fs.StringVar(&f.kubeContext, "context", "", "kubeconfig context to use (default: its current context)")
	if code, ok := parseFlags(fs, args, stderr); !ok {
		return code
	}
	reqs, ok := readReports(*reports, "fleet collect", stderr)
	if !ok || *name == "" || fs.NArg() > 0 {
		if ok {
			fmt.Fprintln(stderr, "labrun fleet collect: expected --job NAME and no arguments")
		}
		return exitInvalid
	}
	var names []string
	if *targets != "" {
		ts, err := fleet.ReadTargets(*targets)
		if err != nil {
			return printLoadError(stderr, err)
		}
		for _, t := range ts.List {
			names = append(names, t.Name)
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	c, err := f.connect(f.kubeContext)()
	if err != nil {
		fmt.Fprintf(stderr, "labrun fleet collect: %v\n", err)
		return exitInvalid
	}
	results, err := fleet.CollectJob(ctx, c, *namespace, *name, *wait, names, stdout)
	if err != nil {
		fmt.Fprintf(stderr, "labrun fleet collect: %s\n", eval.FirstLine(err.Error()))
		return collectErrorExit(err)
	}
	writeTable(stdout, results, 0)
	about := board.About{Version: thisVersion(), Source: fmt.Sprintf("Job %s/%s (fleet collect)", *namespace, *name)}
	for _, rq := range reqs {
		if err := report.WriteFleet(rq.format, rq.path, results, about); err != nil {
			fmt.Fprintf(stderr, "labrun fleet collect: cannot write %s report: %v\n", rq.format, err)
			return exitFailed
		}
	}
	return fleetExit(ctx, results)
}

// collectErrorExit is the exit code of a failed read of the Job: as for a
// step's failure of its class; a Job that did not end in time, 4.
func collectErrorExit(err error) int {
	var tr *cluster.TransientError
	var we *fleet.WaitError
	switch {
	case errors.As(err, &we):
		return exitTimeout
	case errors.As(err, &tr):
		return exitTransport
	}
	return exitInvalid
}
