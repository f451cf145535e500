package runner

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/labrun/labrun/actions"
	"github.com/labrun/labrun/internal/boundary/cluster"
	"github.com/labrun/labrun/internal/boundary/cluster/clustertest"
)

// A read-only step rides through transient cluster failures (a restarting
// API server, a lost exec status): its call is made again after a
// backoff, within its timeout, with progress saying what it waits for,
// and without spending its retries. A step that changes the system is
// never made again: its call may have taken effect. A failure that is not
// transient ends a read-only step at once, as before.
func TestTransientFailures(t *testing.T) {
	refused := &cluster.TransientError{Err: errors.New("dial tcp 127.0.0.1:6443: connect: connection refused"), Reason: "connection refused"}
	cases := []struct {
		name     string
		step     string
		fails    int   // transient failures before the call works
		err      error // the failure
		status   Status
		attempts int // 0: at least 2, as many as the timeout allows
		errText  string
	}{
		{"read-only rides through", "exec: {pod: web, namespace: lab, argv: [cat, /etc/hostname]}", 2, refused, Passed, 3, ""},
		{"cilium rides through", "cilium: {args: [status]}", 1, refused, Passed, 2, ""},
		{"mutating is not run again", "exec: {pod: web, namespace: lab, argv: [touch, /x], mutates: true}", 2, refused, Failed, 1, "connection refused"},
		{"not transient", "exec: {pod: web, namespace: lab, argv: [cat, /x]}", 2, errors.New("pods \"web\" is forbidden"), Failed, 1, "forbidden"},
		{"until the timeout", "exec: {pod: web, namespace: lab, argv: [cat, /x]}\n    timeout: 600ms", 1000, refused, Failed, 0, "step timed out after 600ms: dial tcp 127.0.0.1:6443: connect: connection refused (still failing after "},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var mu sync.Mutex
			calls := 0
			fake := &clustertest.Cluster{ExecFunc: func(pt cluster.PodTarget, req cluster.ExecRequest) (*cluster.ExecResult, error) {
				mu.Lock()
				defer mu.Unlock()
				calls++
				if calls <= c.fails {
					return nil, c.err
				}
				return &cluster.ExecResult{Argv: req.Argv, Stdout: "web\n"}, nil
			}}
			plan := compile(t, "name: t\nsteps:\n  - id: s\n    "+c.step+"\n")
			rec := &recorder{}
			rt := &actions.Runtime{Cluster: func() (cluster.Cluster, error) { return fake, nil }}
			o, err := (&Runner{Plan: plan, Runtime: rt, Observer: rec}).Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			s := o.Steps[0]
			if s.Status != c.status || (c.attempts > 0 && s.Attempts != c.attempts) || (c.attempts == 0 && s.Attempts < 2) || !strings.Contains(s.Error, c.errText) {
				t.Errorf("%s after %d attempts, error %q; want %s after %d, error holding %q", s.Status, s.Attempts, s.Error, c.status, c.attempts, c.errText)
			}
			// One progress line per wait: after every failed attempt of a
			// read-only step but the last of a step that passed.
			waits := slices.DeleteFunc(slices.Clone(rec.progress), func(p string) bool { return !strings.Contains(p, "cluster not answering") })
			want := s.Attempts - 1
			if c.status == Failed && c.attempts == 0 {
				want = s.Attempts
			}
			if len(waits) != want {
				t.Errorf("progress %q, want %d lines saying the cluster is not answering", rec.progress, want)
			}
			if want > 0 && waits[0] != "cluster not answering (connection refused); trying again in 250ms" {
				t.Errorf("first progress line %q", waits[0])
			}
		})
	}
}

// In a check, the steps that meet a cluster that does not answer stop
// riding it out together, once the check's outage limit has passed since
// the first failure: a learner at a Check button sees the cause within
// the platform's limit, not after each step's timeout. b starts after a
// has given up, so it tries once.
func TestCheckGivesUpOnOutageOnce(t *testing.T) {
	refused := &cluster.TransientError{Err: errors.New("dial tcp 127.0.0.1:6443: connect: connection refused"), Reason: "connection refused"}
	fake := &clustertest.Cluster{ExecFunc: func(cluster.PodTarget, cluster.ExecRequest) (*cluster.ExecResult, error) {
		return nil, refused
	}}
	plan := compile(t, `name: t
steps:
  - id: a
    exec: {pod: web, namespace: lab, argv: [cat, /x]}
    timeout: 1m
  - id: b
    exec: {pod: web, namespace: lab, argv: [cat, "/${{ steps.a.stdout }}"]}
    timeout: 1m
`)
	rt := &actions.Runtime{Mode: actions.Check, Cluster: func() (cluster.Cluster, error) { return fake, nil }}
	o, err := (&Runner{Plan: plan, Runtime: rt, KeepGoing: true, CheckOutage: 300 * time.Millisecond}).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	const why = "the cluster did not answer the check for 300ms"
	a, b := o.Steps[0], o.Steps[1]
	if a.Status != Failed || a.Attempts < 2 || !strings.Contains(a.Error, "connection refused") || !strings.Contains(a.Error, why) {
		t.Errorf("a: %s after %d attempts, error %q; want failed after riding it out, saying %q", a.Status, a.Attempts, a.Error, why)
	}
	if b.Status != Failed || b.Attempts != 1 || !strings.Contains(b.Error, why) {
		t.Errorf("b: %s after %d attempts, error %q; want failed at its first attempt, saying %q", b.Status, b.Attempts, b.Error, why)
	}
}
