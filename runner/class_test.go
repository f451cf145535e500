package runner

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/labrun/labrun/actions"
	"github.com/labrun/labrun/internal/boundary/cluster"
	"github.com/labrun/labrun/internal/boundary/cluster/clustertest"
)

var refusedErr = &cluster.TransientError{Err: errors.New("dial tcp 127.0.0.1:6443: connect: connection refused"), Reason: "connection refused"}

// The class of a step's error is the most decisive class marked anywhere
// in its chain, assertion when none is.
func TestClassOf(t *testing.T) {
	forbidden := &cluster.ForbiddenError{Err: errors.New(`list pods: Forbidden (403): pods is forbidden: User "u" cannot list resource "pods"`)}
	for _, tc := range []struct {
		name string
		err  error
		want Class
	}{
		{"an action's own failure", errors.New("sh exited with code 3"), ClassAssertion},
		{"failWhen", &FailWhenError{Msg: "failWhen result.phase == \"Failed\""}, ClassAssertion},
		{"transient", fmt.Errorf("get: %w", refusedErr), ClassTransport},
		{"gave up riding it out", &gaveUp{last: refusedErr, tries: 3, ctx: errors.New("the cluster did not answer the check for 15s")}, ClassTransport},
		{"refused socket", fmt.Errorf("the agent's API: %w", &net.OpError{Op: "dial", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}), ClassTransport},
		{"reset socket", &net.OpError{Op: "read", Err: os.NewSyscallError("read", syscall.ECONNRESET)}, ClassTransport},
		{"name not resolved", &net.OpError{Op: "dial", Err: &net.DNSError{Err: "no such host", Name: "api.lab", IsNotFound: true}}, ClassTransport},
		{"forbidden", fmt.Errorf("scale: %w", forbidden), ClassForbidden},
		{"expression", withClass(ClassConfig, errors.New("expression `int(vars.n)`: invalid operation")), ClassConfig},
		{"spec value", &actions.SpecError{Key: "loose", Text: "a.b", Err: errors.New("no a.b")}, ClassConfig},
		{"no kubeconfig", &actions.ConnectError{Err: actions.ErrNoCluster}, ClassConfig},
		{"helm change refused", fmt.Errorf("helm_dsr: %w", &cluster.HelmChangeError{Err: errors.New("values don't meet the specifications of the schema(s)")}), ClassConfig},
		{"object refused for its shape", fmt.Errorf("objects[1] document 1 (line 1): %w", &cluster.InvalidObjectError{Err: errors.New(`apply Deployment "web": InternalError (500): failed to create typed patch object`)}), ClassConfig},
		{"missing manifest", fmt.Errorf("read manifests: %w", &fs.PathError{Op: "stat", Path: "web.yaml", Err: syscall.ENOENT}), ClassConfig},
		{"missing program", fmt.Errorf("cannot run kubectl: %w", &exec.Error{Name: "kubectl", Err: exec.ErrNotFound}), ClassConfig},
		{"unreadable file", &fs.PathError{Op: "open", Path: "x", Err: fs.ErrPermission}, ClassAssertion},
		{"deadline", fmt.Errorf("exec: %w", context.DeadlineExceeded), ClassTimeout},
		{"timed out", timedOut(errors.New("exit 1"), errors.New("step timed out after 1s: exit 1")), ClassTimeout},
		{"timed out on a refusing cluster", timedOut(refusedErr, errors.New("step timed out after 1s")), ClassTransport},
		{"timed out on a bad spec value", timedOut(&actions.SpecError{Err: errors.New("no")}, errors.New("timed out")), ClassConfig},
		{"joined: the most decisive", errors.Join(errors.New("wrong"), withClass(ClassConfig, errors.New("bad")), forbidden), ClassForbidden},
		{"joined: transport first", errors.Join(forbidden, refusedErr), ClassTransport},
	} {
		if got := classOf(tc.err); got != tc.want {
			t.Errorf("%s: classOf(%v) = %s, want %s", tc.name, tc.err, got, tc.want)
		}
	}
}

func TestDecisive(t *testing.T) {
	for i, a := range Classes {
		for j, b := range Classes {
			want := a
			if j < i {
				want = b
			}
			if got := decisive(a, b); got != want {
				t.Errorf("decisive(%s, %s) = %s, want %s", a, b, got, want)
			}
		}
		if decisive("", a) != a || decisive(a, "") != a {
			t.Errorf("an empty class does not give way to %s", a)
		}
	}
}

// scaleFails is an in-memory cluster whose Scale (a change) and List (a
// read) fail with err, counting the calls.
type scaleFails struct {
	clustertest.Cluster
	err          error
	scales, gets atomic.Int32
}

func (c *scaleFails) Scale(ctx context.Context, q cluster.ObjectQuery, n int) (*cluster.ScaleResult, error) {
	c.scales.Add(1)
	return nil, c.err
}

func (c *scaleFails) List(ctx context.Context, q cluster.ObjectQuery) ([]map[string]any, error) {
	c.gets.Add(1)
	return nil, c.err
}

// runWith runs src in mode against c, going on after failures as check
// does when keepGoing.
func runWith(t *testing.T, src string, mode actions.Mode, c cluster.Cluster, keepGoing bool) *Outcome {
	t.Helper()
	rt := &actions.Runtime{Mode: mode, Cluster: func() (cluster.Cluster, error) { return c, nil }}
	o, err := (&Runner{Plan: compile(t, src), Runtime: rt, KeepGoing: keepGoing, CheckOutage: 300 * time.Millisecond}).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// A step that changes the system is never called again after a transport
// failure, however long its timeout: its call may have taken effect. The
// step, and the run, fail as transport after one call.
func TestMutatingTransportFailureIsNotRetried(t *testing.T) {
	c := &scaleFails{err: fmt.Errorf("scale Deployment %q: %w", "web", refusedErr)}
	start := time.Now()
	o := runWith(t, "name: t\nsteps:\n  - id: s\n    scale: {kind: Deployment, name: web, namespace: lab, replicas: 2}\n    timeout: 1m\n", actions.Solve, c, false)
	s := o.Steps[0]
	if n := c.scales.Load(); n != 1 || s.Attempts != 1 || time.Since(start) > 10*time.Second {
		t.Errorf("scale called %d times (%d attempts) in %s; want once", n, s.Attempts, time.Since(start))
	}
	if s.Status != Failed || s.Class != ClassTransport || o.Class != ClassTransport {
		t.Errorf("step %s (%s), run %s; want failed as transport", s.Status, s.Class, o.Class)
	}
}

// A read-only step is called again after a transport failure, and only
// after one: a forbidden read fails at its first call.
func TestOnlyTransportIsRetried(t *testing.T) {
	for _, tc := range []struct {
		err   error
		calls func(n int32) bool
		class Class
	}{
		{refusedErr, func(n int32) bool { return n > 1 }, ClassTransport},
		{&cluster.ForbiddenError{Err: errors.New("Forbidden (403)")}, func(n int32) bool { return n == 1 }, ClassForbidden},
		{errors.New("pods \"web\" not found"), func(n int32) bool { return n == 1 }, ClassAssertion},
	} {
		c := &scaleFails{err: tc.err}
		o := runWith(t, "name: t\nsteps:\n  - id: g\n    get: {kind: Pod, namespace: lab}\n    timeout: 700ms\n", actions.Solve, c, false)
		if s := o.Steps[0]; !tc.calls(c.gets.Load()) || s.Status != Failed || s.Class != tc.class {
			t.Errorf("%v: %d calls, step %s (%s); want %s", tc.err, c.gets.Load(), s.Status, s.Class, tc.class)
		}
	}
}

// Each failure gets its class where it is made; a task takes its step's,
// the run the most decisive of all.
func TestClassesOfARun(t *testing.T) {
	c := &scaleFails{err: refusedErr}
	o := runWith(t, `name: t
vars: {n: three}
tasks:
  answer: the answer
  broken: a broken step
  down: the cluster
  slow: a slow step
steps:
  - id: wrong
    task: answer
    run: {argv: [echo, "2"]}
    assert: [trim(result.stdout) == "3"]
  - id: expr
    task: broken
    when: int(vars.n) > 0
    run: {argv: ["true"]}
  - id: pods
    task: down
    get: {kind: Pod, namespace: lab}
  - id: late
    task: slow
    run: {argv: [sleep, "5"]}
    timeout: 50ms
`, actions.Check, c, true)
	want := map[string]Class{"wrong": ClassAssertion, "expr": ClassConfig, "pods": ClassTransport, "late": ClassTimeout}
	for _, s := range o.Steps {
		if s.Class != want[s.ID] || s.Status != Failed {
			t.Errorf("step %s: %s (%s), want failed (%s): %s", s.ID, s.Status, s.Class, want[s.ID], s.Error)
		}
	}
	for i, want := range []Class{ClassAssertion, ClassConfig, ClassTransport, ClassTimeout} {
		if tr := o.Tasks[i]; tr.Class != want {
			t.Errorf("task %s: %s, want %s", tr.ID, tr.Class, want)
		}
	}
	if o.Class != ClassTransport {
		t.Errorf("run %s, want transport", o.Class)
	}
}

// A step that waits with until and never sees its condition hold times
// out; a failWhen that holds is a wrong state (assertion); a run stopped
// by its time limit is a timeout, the step it stopped included.
func TestClassesOfWaits(t *testing.T) {
	o := runWith(t, "name: t\nsteps:\n  - id: w\n    run: {argv: [echo, \"1\"]}\n    until: trim(result.stdout) == \"2\"\n    interval: 10ms\n    timeout: 100ms\n", actions.Solve, nil, false)
	if s := o.Steps[0]; s.Class != ClassTimeout || o.Class != ClassTimeout {
		t.Errorf("until: step %s, run %s; want timeout: %s", s.Class, o.Class, s.Error)
	}
	o = runWith(t, "name: t\nsteps:\n  - id: w\n    run: {argv: [echo, \"1\"]}\n    until: trim(result.stdout) == \"2\"\n    failWhen: trim(result.stdout) == \"1\"\n    interval: 10ms\n", actions.Solve, nil, false)
	if s := o.Steps[0]; s.Class != ClassAssertion {
		t.Errorf("failWhen: step %s; want assertion: %s", s.Class, s.Error)
	}
	rt := &actions.Runtime{}
	o, err := (&Runner{Plan: compile(t, "name: t\nsteps:\n  - id: w\n    run: {argv: [sleep, \"5\"]}\n  - id: after\n    run: {argv: [\"true\"]}\n"), Runtime: rt, Timeout: 100 * time.Millisecond}).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if s := o.Steps[0]; s.Class != ClassTimeout || o.Class != ClassTimeout || !strings.Contains(s.Error, "time limit") {
		t.Errorf("--timeout: step %s, run %s; want timeout: %s", s.Class, o.Class, s.Error)
	}
	if s := o.Steps[1]; s.Class != "" {
		t.Errorf("a skipped step has class %s", s.Class)
	}
}

// A parallel step that failed has the class of its first failed member;
// the members its failure stopped are skipped, with no class.
func TestClassOfParallelStep(t *testing.T) {
	src := strings.Replace(failingBranch, `["false"]`, `["${{ vars.tool }}"]`, 1)
	src = strings.Replace(src, "name: fail\n", "name: fail\nvars: {tool: /nonexistent/tool}\n", 1)
	src = strings.Replace(src, `[sleep, "20"]`, `["true"]`, 1)
	for _, check := range []bool{false, true} {
		mode := actions.Solve
		if check {
			mode = actions.Check
		}
		o := runWith(t, src, mode, nil, check)
		for _, s := range o.Steps {
			want := Class("")
			switch s.ID {
			case "g", "broken":
				want = ClassConfig // a program the playbook names is not there
			}
			if s.Class != want {
				t.Errorf("check %v: step %s %s with class %q, want %q", check, s.ID, s.Status, s.Class, want)
			}
		}
		if o.Class != ClassConfig {
			t.Errorf("check %v: run %s, want config", check, o.Class)
		}
	}
}

// An expression that cannot be evaluated because it reads a step that
// failed (the Service a learner has not made yet) takes that step's
// class and its failure for message: a lab not done is a wrong answer,
// not a broken lab. One that reads no failed step is the playbook's fault.
func TestExpressionReadingAFailedStep(t *testing.T) {
	src := `name: t
vars: {ns: lab, n: three}
tasks:
  svc: the Service
  probe: a request to it
  typo: a broken step
steps:
  - id: web
    task: svc
    get: {kind: Service, namespace: "${{ vars.ns }}", name: web}
    assert: [result.count == 1]
  - id: probe
    task: probe
    run: {argv: [echo, "${{ steps.web.object.spec.clusterIP }}"]}
  - id: gated
    task: probe
    when: steps.web.object.spec.clusterIP != ""
    run: {argv: ["true"]}
  - id: typo
    task: typo
    when: int(vars.n) > 0
    run: {argv: ["true"]}
`
	for _, tc := range []struct {
		name    string
		cluster cluster.Cluster
		want    Class
	}{
		{"not there", &clustertest.Cluster{}, ClassAssertion},
		{"cluster down", &scaleFails{err: refusedErr}, ClassTransport},
	} {
		o := runWith(t, src, actions.Check, tc.cluster, true)
		want := map[string]Class{"web": tc.want, "probe": tc.want, "gated": tc.want, "typo": ClassConfig}
		cause := "steps.web (line 8) failed: " + o.Steps[0].FirstReason()
		for _, s := range o.Steps {
			if s.Status != Failed || s.Class != want[s.ID] {
				t.Errorf("%s: step %s %s (%s), want failed (%s): %s", tc.name, s.ID, s.Status, s.Class, want[s.ID], s.Error)
			}
			if (s.ID == "probe" || s.ID == "gated") && !strings.HasSuffix(s.Error, cause) {
				t.Errorf("%s: step %s: %s\nwant its cause: %s", tc.name, s.ID, s.Error, cause)
			}
		}
	}
}
