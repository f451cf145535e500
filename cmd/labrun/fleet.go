package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/labrun/labrun/cmd/labrun/internal/board"
	"github.com/labrun/labrun/cmd/labrun/internal/report"
	"github.com/labrun/labrun/internal/boundary/cluster"
	"github.com/labrun/labrun/internal/lang/eval"
	"github.com/labrun/labrun/internal/lang/visible"
	"github.com/labrun/labrun/runner"
	"github.com/labrun/labrun/runner/access"
	"github.com/labrun/labrun/runner/fleet"
)

const fleetUsage = `Usage: labrun fleet render PLAYBOOK --targets FILE [flags]
       labrun fleet collect --job NAME [flags]

Grades a class inside the cluster, as one Indexed Job with an index per
target of the targets file (its namespaces): the same check of each
target as labrun check --targets does (docs/fleet.md).

render prints, as YAML kubectl applies, the Job's ServiceAccount, a
ConfigMap with the playbook and the targets file, the Roles labrun check
needs in each target's namespace (derived from the steps, as labrun rbac
does) bound to the ServiceAccount, and the Job: an index per target,
each retried after an infrastructure error (exit 3, 4, or a stopped pod)
and failed at once on a broken playbook or permission (exit 2).

collect reads the results the Job's pods left as their termination
messages (it needs get on the Job and list on pods in its namespace) and
prints the table check --targets prints; --report writes the JSON lines,
the JUnit suites and the class board (html). With --wait it first waits for the Job to end.
Exit 0 when every target was graded, right or wrong, else as check
--targets.

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
	case "-h", "--help", "help":
		fmt.Fprint(stdout, fleetUsage)
		return exitOK
	}
	fmt.Fprintf(stderr, "labrun fleet: unknown subcommand %q: expected render or collect\n", args[0])
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
	fs.IntVar(&j.Parallelism, "parallel", 4, "how many targets are checked at once")
	fs.IntVar(&j.BackoffLimitPerIndex, "retries", 2, "how many times a target is checked again after an infrastructure error")
	fs.IntVar(&j.MaxFailedIndexes, "max-failed", 0, "stop the Job when more targets than this cannot be graded (default: a tenth of them, at least 1)")
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
	if j.MaxFailedIndexes == 0 {
		j.MaxFailedIndexes = max(1, len(ts.List)/10)
	}
	if j.PlaybookData, err = os.ReadFile(j.Playbook); err == nil {
		j.TargetsData, err = os.ReadFile(*targets)
	}
	if err == nil {
		err = carryFiles(&j, ts, *includes)
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

// carryFiles reads the files the Job's ConfigMaps carry besides the
// playbook and the targets file: the included ones and the learners'.
// The playbook is then loaded, for the first target, from a copy of what
// the pods will have, so that a file it reads and nobody included is
// found here, not in every pod.
func carryFiles(j *fleet.Job, ts *fleet.Targets, includes []string) error {
	for _, p := range includes {
		if !filepath.IsLocal(p) {
			return fmt.Errorf("--include %s: expected a path inside the playbook's directory, relative to it", p)
		}
		data, err := os.ReadFile(filepath.Join(filepath.Dir(j.Playbook), p))
		if err != nil {
			return fmt.Errorf("--include %s: %w", p, err)
		}
		j.Includes = append(j.Includes, fleet.File{Path: filepath.ToSlash(filepath.Clean(p)), Data: data})
	}
	if ts.OutputsVar != "" {
		var err error
		if j.Outputs, err = fleet.ReadOutputs(ts); err != nil {
			return err
		}
		j.OutputsVar = ts.OutputsVar
	}
	stage, err := os.MkdirTemp("", "labrun-fleet-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(stage)
	files := append([]fleet.File{{Path: filepath.Base(j.Playbook), Data: j.PlaybookData}}, j.Includes...)
	for _, f := range files {
		p := filepath.Join(stage, filepath.FromSlash(f.Path))
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			return err
		}
		if err := os.WriteFile(p, f.Data, 0o600); err != nil {
			return err
		}
	}
	if _, err := runner.Load(filepath.Join(stage, files[0].Path), ts.Options(ts.List[0], runner.Options{Set: j.Set})); err != nil {
		return fmt.Errorf("the Job's pods could not load the playbook with only the files it carries (give each file the playbook reads with --include PATH):\n%s",
			strings.ReplaceAll(err.Error(), stage+string(filepath.Separator), ""))
	}
	return nil
}

// fleetCollect is labrun fleet collect.
func fleetCollect(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("fleet collect", stderr, fleetUsage+"Flags of collect:\n")
	var f runFlags
	name := fs.String("job", "", "the Job's name (required)")
	namespace := fs.StringP("namespace", "n", "labrun", "the Job's namespace")
	targets := fs.String("targets", "", "the targets file the Job was rendered from: names the targets that left no result")
	wait := fs.Duration("wait", 0, "first wait up to this long for the Job to end, printing its progress")
	reports := fs.StringArray("report", nil, "write a report: FORMAT=FILE with FORMAT json (a line per target), junit or html (the class board); repeatable")
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
	results, job, code := collectJob(ctx, c, *namespace, *name, *wait, names, stdout, stderr)
	if results == nil {
		return code
	}
	writeTable(stdout, results, 0)
	about := board.About{Version: thisVersion(), Playbook: job.Playbook, Source: fmt.Sprintf("Job %s/%s (fleet collect)", *namespace, *name), Started: job.Started}
	if !job.Started.IsZero() && !job.Ended.IsZero() {
		about.Seconds = job.Ended.Sub(job.Started).Seconds()
	}
	for _, rq := range reqs {
		if err := report.WriteFleet(rq.format, rq.path, results, about); err != nil {
			fmt.Fprintf(stderr, "labrun fleet collect: cannot write %s report: %v\n", rq.format, err)
			return exitFailed
		}
	}
	return fleetExit(ctx, results)
}

// collectJob reads the Job (waiting up to wait for it to end) and its
// pods, and merges their results; job is the Job's state. On failure,
// results is nil and code the exit code.
func collectJob(ctx context.Context, c cluster.Cluster, namespace, name string, wait time.Duration, names []string, stdout, stderr io.Writer) (results []fleet.Result, job fleet.JobState, code int) {
	q := cluster.ObjectQuery{APIVersion: "batch/v1", Kind: "Job", Namespace: namespace, Name: name}
	var jobs []map[string]any
	var err error
	if wait > 0 {
		wctx, cancel := context.WithTimeout(ctx, wait)
		defer cancel()
		last := "no job of that name yet"
		jobs, err = c.Wait(wctx, q, func(objs []map[string]any) (bool, error) {
			return len(objs) > 0 && fleet.State(objs[0]).Finished != "", nil
		}, func(objs []map[string]any) {
			if len(objs) == 0 {
				return
			}
			s := fleet.State(objs[0])
			if line := fmt.Sprintf("job %s/%s: %d of %d indexes succeeded, %d failed", namespace, name, s.Succeeded, s.Completions, len(indexList(s.FailedIndexes))); line != last {
				fmt.Fprintln(stdout, line)
				last = line
			}
		})
		if err != nil && wctx.Err() != nil && ctx.Err() == nil {
			fmt.Fprintf(stderr, "labrun fleet collect: job %s/%s did not end within %s; last seen: %s\n", namespace, name, wait, last)
			return nil, job, exitTimeout
		}
	} else {
		jobs, err = c.List(ctx, q)
	}
	if err == nil && len(jobs) == 0 {
		err = fmt.Errorf("no job %s in namespace %s", name, namespace)
	}
	var pods []map[string]any
	if err == nil {
		pods, err = c.List(ctx, cluster.ObjectQuery{APIVersion: "v1", Kind: "Pod", Namespace: namespace, Selector: fleet.LabelJobName + "=" + name})
	}
	if err != nil {
		fmt.Fprintf(stderr, "labrun fleet collect: %s\n", eval.FirstLine(err.Error()))
		return nil, job, collectErrorExit(err)
	}
	s := fleet.State(jobs[0])
	fmt.Fprint(stdout, visible.Text(fmt.Sprintf("job %s/%s: %s; failed indexes: %s\n", namespace, name, orText(s.Finished, "running"), orText(s.FailedIndexes, "none"))))
	return fleet.Collect(s.Completions, pods, names), s, exitOK
}

// collectErrorExit is the exit code of a failed read of the Job: as for a
// step's failure of its class.
func collectErrorExit(err error) int {
	var tr *cluster.TransientError
	if errors.As(err, &tr) {
		return exitTransport
	}
	return exitInvalid
}

// indexList is the indexes of a Job's list of them, "1,3-5".
func indexList(s string) []int {
	var out []int
	for part := range strings.SplitSeq(s, ",") {
		from, to, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(from)
		if err != nil {
			continue
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(to); err != nil {
				continue
			}
		}
		for i := a; i <= b; i++ {
			out = append(out, i)
		}
	}
	return out
}

func orText(s, empty string) string {
	if s == "" {
		return empty
	}
	return s
}
