package fleet

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/labrun/labrun/actions"
	_ "github.com/labrun/labrun/actions/all"
	"github.com/labrun/labrun/internal/boundary/cluster"
	"github.com/labrun/labrun/internal/leaf/secret"
	"github.com/labrun/labrun/runner"
)

// A lab graded without a cluster: each learner's answer is a variable
// the targets file sets.
const gradeLab = `name: fleet-unit
vars:
  namespace: default
  answer: 42
steps:
  - id: read
    compute: {value: "${{ vars.answer }}"}
    assert:
      - that: result.value == 42
`

const gradeTargets = `targets:
  - namespace: l0
  - {namespace: l1, set: [answer=41]}
  - {namespace: l2, set: [answer=forty-two]}
  - namespace: l3
`

func testGrader(t *testing.T) (*Grader, *[]string) {
	ts, err := ReadTargets(writeFile(t, "targets.yaml", gradeTargets))
	if err != nil {
		t.Fatal(err)
	}
	var told []string
	var connected []string
	var mu sync.Mutex
	g := &Grader{
		Playbook: writeFile(t, "lab.yaml", gradeLab),
		Targets:  ts,
		Parallel: 2,
		Connect: func(context string) Connection {
			mu.Lock()
			defer mu.Unlock()
			connected = append(connected, context)
			return Connection{Cluster: func() (cluster.Cluster, error) { return nil, fmt.Errorf("no cluster here") }}
		},
		NewRunner: func(plan *runner.Plan, progress io.Writer, secrets *secret.Redactor) *runner.Runner {
			return &runner.Runner{Plan: plan, Runtime: &actions.Runtime{Mode: actions.Check}, KeepGoing: true, Secrets: secrets}
		},
		ExitCode: func(o *runner.Outcome) int {
			if o.Verdict() == runner.VerdictPassed {
				return 0
			}
			return 1
		},
		OnResult: func(done, total int, r Result) {
			told = append(told, fmt.Sprintf("%d/%d %s %s", done, total, r.Target, r.Verdict))
		},
	}
	t.Cleanup(func() {
		if len(connected) != 1 {
			t.Errorf("connections made: %q, want one, shared by the targets of one context", connected)
		}
	})
	return g, &told
}

// GradeAll grades each target asked for through GradeTarget, in the
// order asked, telling each result once as it ends.
func TestGradeAll(t *testing.T) {
	g, told := testGrader(t)
	got := g.GradeAll(context.Background(), []int{3, 1, 2, 0})
	want := []struct {
		index   int
		target  string
		verdict runner.Verdict
		class   runner.Class
		failure string
	}{
		{3, "l3", runner.VerdictPassed, "", ""},
		{1, "l1", runner.VerdictWrong, runner.ClassAssertion, "read: assertion failed: result.value == 42"},
		{2, "l2", runner.VerdictNotGraded, runner.ClassConfig, "--set answer: variable answer is a whole number"},
		{0, "l0", runner.VerdictPassed, "", ""},
	}
	for k, w := range want {
		r := got[k]
		if r.Index != w.index || r.Target != w.target || r.Verdict != w.verdict || r.Class != w.class || !strings.Contains(r.FirstFailure, w.failure) {
			t.Errorf("result %d: %+v\nwant index %d %s %s [%s]: %s", k, r, w.index, w.target, w.verdict, w.class, w.failure)
		}
	}
	if len(*told) != 4 || !strings.HasPrefix((*told)[3], "4/4 ") {
		t.Errorf("told %q, want each of 4 once, counted", *told)
	}
}

// One target alone writes its check's progress, as labrun check does;
// a refused preflight is a result not graded, class forbidden, with the
// preflight's own exit code.
func TestGradeTarget(t *testing.T) {
	g, _ := testGrader(t)
	var progress strings.Builder
	g.Progress = &progress
	g.Preflight = func(ctx context.Context, r *runner.Runner, w io.Writer) (int, bool) {
		fmt.Fprintf(w, "labrun check: the cluster refuses: list configmaps\n")
		return 2, false
	}
	got := g.GradeAll(context.Background(), []int{2})
	if got[0].Verdict != runner.VerdictNotGraded || got[0].Class != runner.ClassConfig || !strings.Contains(progress.String(), "variable answer is a whole number") {
		t.Errorf("a target refused before its check: %+v; progress %q", got[0], progress.String())
	}
	r := g.GradeTarget(context.Background(), 0, io.Discard)
	if r.Verdict != runner.VerdictNotGraded || r.Class != runner.ClassForbidden || r.Exit != 2 || !strings.Contains(r.FirstFailure, "the cluster refuses") {
		t.Errorf("a refused preflight: %+v", r)
	}
}
