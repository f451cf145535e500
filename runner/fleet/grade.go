package fleet

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/labrun/labrun/internal/boundary/cluster"
	"github.com/labrun/labrun/internal/lang/diag"
	"github.com/labrun/labrun/internal/leaf/secret"
	"github.com/labrun/labrun/runner"
)

// DefaultParallel is how many targets labrun check --targets checks at
// once unless told, and how many each pod of the Job checks at once: a
// check makes a handful of reads, so a few in flight keep one connection
// busy without queueing behind one another.
const DefaultParallel = 4

// Connection is what the checks of one kubeconfig context share: the
// cluster's connection and labrun-helm's, each made on its first call.
type Connection struct {
	Cluster  func() (cluster.Cluster, error)
	Releases func() (cluster.Releases, error)
}

// Grader grades the targets of a targets file, Parallel at a time: labrun
// check --targets, and each pod of labrun fleet render's Job, which
// grades its shard of them. Both go through GradeTarget, so the two
// cannot grade a learner differently. The command gives the grader its
// connections and the runner of each check, and prints what it is told;
// nothing of the grading goes back up but the results (as
// runner/labtest's Test owns labrun test's flow).
type Grader struct {
	// Playbook is the playbook's file; Targets the targets file read.
	Playbook string
	Targets  *Targets
	// Options are every target's run options before its own variables
	// (--set, --vars); Tasks and Upto select the tasks graded (--task,
	// --upto).
	Options runner.Options
	Tasks   []string
	Upto    string
	// Parallel is how many targets are checked at once (at least 1).
	Parallel int
	// Connect makes the connections of a kubeconfig context ("" for its
	// current one, or in-cluster); the grader asks once per context, and
	// the targets in it share them.
	Connect func(context string) Connection
	// NewRunner makes the runner of one target's check of plan in check
	// mode, its progress written to progress and everything it keeps
	// redacted through secrets. The grader sets its connections and the
	// tasks it grades.
	NewRunner func(plan *runner.Plan, progress io.Writer, secrets *secret.Redactor) *runner.Runner
	// Preflight, when set, asks the cluster for the permissions r's steps
	// need before the first one, writing what it refuses to w; !ok ends
	// the target's check with code as its exit code.
	Preflight func(ctx context.Context, r *runner.Runner, w io.Writer) (code int, ok bool)
	// ExitCode is the exit code labrun check of one target gives for the
	// outcome (a result's Exit).
	ExitCode func(*runner.Outcome) int
	// Progress is where the check of a single target writes its
	// progress, as labrun check does; nil for nowhere. Several targets
	// are told only by OnResult.
	Progress io.Writer
	// OnResult, when set, is told each result as its target ends, with
	// how many have ended of how many; one call at a time.
	OnResult func(done, total int, r Result)

	mu    sync.Mutex
	conns map[string]Connection
}

// GradeAll grades the targets at indexes, Parallel at a time, and
// returns their results in the order of indexes.
func (g *Grader) GradeAll(ctx context.Context, indexes []int) []Result {
	results := make([]Result, len(indexes))
	var mu sync.Mutex
	done := 0
	work := make(chan int)
	var wg sync.WaitGroup
	for range min(max(g.Parallel, 1), len(indexes)) {
		wg.Go(func() {
			for k := range work {
				progress := io.Discard
				if len(indexes) == 1 && g.Progress != nil {
					progress = g.Progress
				}
				results[k] = g.GradeTarget(ctx, indexes[k], progress)
				mu.Lock()
				done++
				if g.OnResult != nil {
					g.OnResult(done, len(indexes), results[k])
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

// GradeTarget checks the target at index i: the one path by which labrun
// check --targets and a pod of labrun fleet render's Job grade a target.
// The playbook is loaded with the target's variables, the permissions
// asked, the steps run in check mode against the target's cluster; its
// progress goes to progress. Whatever happens, the target has a result:
// a playbook its variables break, or a refused permission, is a result
// not graded, class config or forbidden.
func (g *Grader) GradeTarget(ctx context.Context, i int, progress io.Writer) Result {
	t := g.Targets.List[i]
	plan, err := runner.Load(g.Playbook, g.Targets.Options(t, g.Options))
	if err != nil {
		var b bytes.Buffer
		diag.Render(&b, loadErrors(g.Playbook, err), nil)
		fmt.Fprint(progress, b.String())
		return Refused(i, t, fmt.Errorf("%s", strings.TrimSpace(b.String())), exitConfig)
	}
	only, err := plan.SelectTasks(g.Tasks, g.Upto)
	if err != nil {
		return Refused(i, t, err, exitConfig)
	}
	secrets := &secret.Redactor{}
	r := g.NewRunner(plan, secrets.Writer(progress), secrets)
	cc := g.Connection(t.Context)
	r.Runtime.Cluster, r.Runtime.Releases = cc.Cluster, cc.Releases
	r.Only = only
	if g.Preflight != nil {
		var refused bytes.Buffer
		if code, ok := g.Preflight(ctx, r, io.MultiWriter(&refused, secrets.Writer(progress))); !ok {
			res := Refused(i, t, fmt.Errorf("%s", secrets.String(refused.String())), code)
			res.Class = runner.ClassForbidden
			return res
		}
	}
	out, err := r.Run(ctx)
	defer r.Runtime.Out.Close()
	if err != nil {
		return Refused(i, t, fmt.Errorf("%s", secrets.String(err.Error())), exitConfig)
	}
	res := FromOutcome(i, t, out, g.ExitCode(out))
	res.FirstFailure = secrets.String(res.FirstFailure)
	for k := range res.Cases {
		res.Cases[k].Message = secrets.String(res.Cases[k].Message)
	}
	return res
}

// Connection is the connections of a kubeconfig context ("" for its
// current one), made once: the checks of its targets share them, and so
// may the caller (a pod stores its results on the connection it graded
// with).
func (g *Grader) Connection(context string) Connection {
	g.mu.Lock()
	defer g.mu.Unlock()
	if cc, ok := g.conns[context]; ok {
		return cc
	}
	if g.conns == nil {
		g.conns = map[string]Connection{}
	}
	cc := g.Connect(context)
	g.conns[context] = cc
	return cc
}

// loadErrors are the positioned errors of a playbook that did not load;
// an error without any is placed on the playbook's file.
func loadErrors(playbook string, err error) []*diag.Error {
	var list diag.List
	if errors.As(err, &list) {
		return list
	}
	if one, ok := err.(*diag.Error); ok {
		return []*diag.Error{one}
	}
	return []*diag.Error{{Pos: diag.Pos{File: playbook}, Msg: err.Error()}}
}
