package main

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/labrun/labrun/actions"
	"github.com/labrun/labrun/cmd/labrun/internal/board"
	"github.com/labrun/labrun/cmd/labrun/internal/report"
	"github.com/labrun/labrun/internal/boundary/cluster"
	"github.com/labrun/labrun/internal/lang/diag"
	"github.com/labrun/labrun/internal/lang/visible"
	"github.com/labrun/labrun/internal/leaf/secret"
	"github.com/labrun/labrun/runner"
	"github.com/labrun/labrun/runner/fleet"
	"github.com/spf13/pflag"
)

// targetFlags are check's flags for grading many targets: a class's
// namespaces or contexts (check --targets), or one of them as an index of
// the Job labrun fleet render prints (--index).
type targetFlags struct {
	file     string
	parallel int
	index    int
	// termLog: --termination-log, the file the one target's result line
	// is written to in place (a pod's termination message).
	termLog string
	// outputs: --outputs VAR=DIR, each target's output directory.
	outputs string
}

func (f *targetFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.file, "targets", "", "grade each target of this file (namespaces or kubeconfig contexts; docs/fleet.md): a line per target, then a table")
	fs.IntVar(&f.parallel, "parallel", 4, "with --targets: how many targets are checked at once")
	fs.IntVar(&f.index, "index", -1, "with --targets: check only the target at this index (from 0), as a pod of labrun fleet render's Job does")
	fs.StringVar(&f.termLog, "termination-log", "", "with --targets --index: write the target's result line into this existing file (a pod's /dev/termination-log)")
	fs.StringVar(&f.outputs, "outputs", "", "with --targets: `VAR=DIR` sets each target's playbook variable VAR to DIR/<target name>, the directory of that learner's files")
}

// conflicts says what is wrong with the flags together, "" when nothing.
func (f *targetFlags) conflicts(a *runArgs) string {
	switch {
	case f.file == "" && (f.index >= 0 || f.termLog != "" || f.outputs != ""):
		return "--index, --termination-log and --outputs are for the targets of a targets file: give --targets"
	case f.file == "":
		return ""
	case f.parallel < 1:
		return fmt.Sprintf("--parallel %d: expected at least 1", f.parallel)
	case f.termLog != "" && f.index < 0:
		return "--termination-log holds one target's result: give --index"
	case a.from != "" || a.dryRun:
		return "--targets grades each target afresh: --from and --dry-run are for one run"
	case a.kubeContext != "":
		return "--targets names each target's context in its file: --context is for one run"
	}
	return ""
}

// checkTargets is labrun check --targets: each target graded by
// gradeTarget, --parallel at a time, a line as each ends, then a table,
// the reports and the exit code: 0 when every target was graded, right
// or wrong (the reports say which), else the code of the most decisive
// class among those that could not be (docs/exit-codes.md).
func (a *runArgs) checkTargets(stdout, stderr io.Writer) int {
	ts, err := fleet.ReadTargets(a.targets.file)
	if err != nil {
		return printLoadError(stderr, err)
	}
	if a.targets.outputs != "" {
		if err := ts.SetOutputs(a.targets.outputs); err != nil {
			fmt.Fprintf(stderr, "labrun check: %v\n", err)
			return exitInvalid
		}
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
	results := a.gradeAll(ctx, ts, indexes, stdout, stderr)
	took := time.Since(started)
	writeTable(stdout, results, took)
	code := fleetExit(ctx, results)
	if a.targets.termLog != "" {
		if err := writeInPlace(a.targets.termLog, results[0]); err != nil {
			fmt.Fprintf(stderr, "labrun check: --termination-log: %v\n", err)
			return cmp.Or(code, exitFailed)
		}
	}
	about := board.About{Version: thisVersion(), Playbook: a.playbook, Source: "check --targets " + a.targets.file, Started: started, Seconds: took.Seconds()}
	for _, rq := range a.reports {
		if err := report.WriteFleet(rq.format, rq.path, results, about); err != nil {
			fmt.Fprintf(stderr, "labrun check: cannot write %s report: %v\n", rq.format, err)
			return cmp.Or(code, exitFailed)
		}
	}
	return code
}

// gradeAll grades the targets at indexes, parallel at a time. One target
// alone prints its check's progress as labrun check does; several print a
// line as each ends.
func (a *runArgs) gradeAll(ctx context.Context, ts *fleet.Targets, indexes []int, stdout, stderr io.Writer) []fleet.Result {
	results := make([]fleet.Result, len(indexes))
	conns := &connections{f: &a.runFlags, byContext: map[string]contextConn{}}
	var mu sync.Mutex
	done := 0
	work := make(chan int)
	var wg sync.WaitGroup
	for range min(a.targets.parallel, len(indexes)) {
		wg.Go(func() {
			for k := range work {
				progress := io.Discard
				if len(indexes) == 1 {
					progress = stdout
				}
				results[k] = a.gradeTarget(ctx, ts, indexes[k], conns, progress)
				mu.Lock()
				done++
				if len(indexes) > 1 {
					fmt.Fprintf(stdout, "[%*d/%d] %s\n", len(fmt.Sprint(len(indexes))), done, len(indexes), resultLine(results[k]))
				}
				mu.Unlock()
			}
		})
	}
	for k := range indexes {
		work <- k
	}
	close(work)
	wg.Wait()
	return results
}

// gradeTarget checks the target at index i of ts: the one path by which
// labrun check --targets and a pod of labrun fleet render's Job grade a
// target, so the two cannot differ. The playbook is loaded with the
// target's variables, the permissions asked, the steps run in check mode
// against the target's cluster; its progress goes to progress.
func (a *runArgs) gradeTarget(ctx context.Context, ts *fleet.Targets, i int, conns *connections, progress io.Writer) fleet.Result {
	t := ts.List[i]
	plan, err := runner.Load(a.playbook, ts.Options(t, a.options()))
	if err != nil {
		var b bytes.Buffer
		diag.Render(&b, diagnostics(a.playbook, err), nil)
		fmt.Fprint(progress, b.String())
		return fleet.Refused(i, t, fmt.Errorf("%s", strings.TrimSpace(b.String())), exitInvalid)
	}
	only, err := plan.SelectTasks(a.tasks, a.upto)
	if err != nil {
		return fleet.Refused(i, t, err, exitInvalid)
	}
	secrets := &secret.Redactor{}
	r := a.runner(plan, actions.Check, secrets.Writer(progress), false, secrets)
	cc := conns.get(cmp.Or(t.Context, a.kubeContext))
	r.Runtime.Cluster, r.Runtime.Releases = cc.cluster, cc.releases
	r.Only = only
	var refused bytes.Buffer
	if code, ok := preflight(ctx, r, a.noPreflight, true, io.MultiWriter(&refused, secrets.Writer(progress))); !ok {
		res := fleet.Refused(i, t, fmt.Errorf("%s", secrets.String(refused.String())), code)
		res.Class = runner.ClassForbidden
		return res
	}
	out, err := r.Run(ctx)
	defer r.Runtime.Out.Close()
	if err != nil {
		return fleet.Refused(i, t, fmt.Errorf("%s", secrets.String(err.Error())), exitInvalid)
	}
	res := fleet.FromOutcome(i, t, out, exitCode(out))
	res.FirstFailure = secrets.String(res.FirstFailure)
	for k := range res.Cases {
		res.Cases[k].Message = secrets.String(res.Cases[k].Message)
		res.Cases[k].Hint = secrets.String(res.Cases[k].Hint)
	}
	return res
}

// connections are the cluster connections of a check of many targets,
// one per kubeconfig context (and one labrun-helm, started on the first
// helm step), shared by the targets in it.
type connections struct {
	f         *runFlags
	mu        sync.Mutex
	byContext map[string]contextConn
}

type contextConn struct {
	cluster  func() (cluster.Cluster, error)
	releases func() (cluster.Releases, error)
}

func (c *connections) get(context string) contextConn {
	c.mu.Lock()
	defer c.mu.Unlock()
	if cc, ok := c.byContext[context]; ok {
		return cc
	}
	cc := contextConn{cluster: c.f.connect(context), releases: c.f.releases(context)}
	c.byContext[context] = cc
	return cc
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
	if r.Class != "" && r.Verdict != fleet.Passed {
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
		if r.Class != "" && r.Verdict != fleet.Passed && r.Verdict != fleet.Wrong {
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

// writeInPlace writes r's line into the existing file path, truncating
// it: a termination message file is mounted by the kubelet, so it cannot
// be replaced by a rename as reports are.
func writeInPlace(path string, r fleet.Result) error {
	line, err := r.Line()
	if err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		return err
	}
	if _, err := f.Write(line); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
