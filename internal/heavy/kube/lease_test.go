package kube

import (
	"context"
	"errors"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes/fake"

	"github.com/labrun/labrun/internal/boundary/cluster"
)

// clock is a test's clock: it moves only when the test says.
type clock struct{ t time.Time }

func (c *clock) now() time.Time          { return c.t }
func (c *clock) advance(d time.Duration) { c.t = c.t.Add(d) }

func noWrap(err error, _, _ string) error { return err }

// Two runs' leasers on one Lease, through an in-memory API server (the
// logic; TestLeaseBetweenProcesses proves it on the test cluster).
func newLeasers(t *testing.T) (a, b *leaser, clk *clock) {
	t.Helper()
	cs := fake.NewSimpleClientset()
	clk = &clock{t: time.Date(2026, 12, 5, 13, 0, 0, 0, time.UTC)}
	req := cluster.LockRequest{Namespace: "student-07", Name: cluster.LeaseName, Duration: 30 * time.Second}
	req.Identity = "host-a/pid 10/run 1"
	a = newLeaser(cs.CoordinationV1(), req, clk.now, noWrap)
	req.Identity = "host-b/pid 20/run 2"
	b = newLeaser(cs.CoordinationV1(), req, clk.now, noWrap)
	return a, b, clk
}

func mustTry(t *testing.T, l *leaser) (bool, cluster.LeaseHolder) {
	t.Helper()
	ok, h, err := l.try(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return ok, h
}

func TestLeaseTakenWhenFree(t *testing.T) {
	a, b, clk := newLeasers(t)
	if ok, _ := mustTry(t, a); !ok {
		t.Fatal("the first run did not take a Lease that was not there")
	}
	start := clk.t
	clk.advance(5 * time.Second)
	ok, h := mustTry(t, b)
	if ok || h.Identity != "host-a/pid 10/run 1" || !h.Since.Equal(start) {
		t.Fatalf("the second run: ok %v, holder %+v; want to wait for host-a since %s", ok, h, start)
	}
	// The holder renews: its acquire time stays, its renew time moves.
	if ok, _ := mustTry(t, a); !ok {
		t.Fatal("the holder could not renew")
	}
	if _, h := mustTry(t, b); !h.Since.Equal(start) || !h.Renewed.Equal(clk.t) {
		t.Errorf("after a renewal: %+v; want since %s, renewed %s", h, start, clk.t)
	}
}

func TestLeaseReleasedIsTakenAtOnce(t *testing.T) {
	a, b, _ := newLeasers(t)
	mustTry(t, a)
	if ok, _ := mustTry(t, b); ok {
		t.Fatal("the second run took a held Lease")
	}
	if err := a.release(context.Background()); err != nil {
		t.Fatal(err)
	}
	if ok, _ := mustTry(t, b); !ok {
		t.Fatal("the second run did not take the released Lease")
	}
	// A release by a run that no longer holds it leaves the new holder.
	if err := a.release(context.Background()); err != nil {
		t.Fatal(err)
	}
	if ok, h := mustTry(t, a); ok || h.Identity != "host-b/pid 20/run 2" {
		t.Errorf("after the old holder's late release: ok %v, holder %+v; want host-b to keep it", ok, h)
	}
}

// A holder that stops renewing is gone once its record has not changed
// for the lease's duration by the waiter's clock, not before.
func TestLeaseStaleIsTakenOver(t *testing.T) {
	a, b, clk := newLeasers(t)
	mustTry(t, a)
	mustTry(t, b) // b sees the record now
	clk.advance(29 * time.Second)
	if ok, _ := mustTry(t, b); ok {
		t.Fatal("taken over before the holder's duration passed")
	}
	clk.advance(2 * time.Second)
	if ok, _ := mustTry(t, b); !ok {
		t.Fatal("a holder silent for longer than its duration was not taken over")
	}
	// The old holder, back, finds it lost.
	if ok, h := mustTry(t, a); ok || h.Identity != "host-b/pid 20/run 2" {
		t.Errorf("the old holder: ok %v, holder %+v; want it lost to host-b", ok, h)
	}
}

// A waiter that only starts watching sees a record as new: it waits a
// whole duration from then, whatever the holder's clock wrote.
func TestLeaseStaleCountsFromFirstSight(t *testing.T) {
	a, b, clk := newLeasers(t)
	mustTry(t, a)
	clk.advance(time.Hour)
	if ok, _ := mustTry(t, b); ok {
		t.Fatal("taken over on first sight: the holder's renew time was compared with this clock")
	}
}

func TestLeaseWaitTimesOutNamingHolder(t *testing.T) {
	a, b, _ := newLeasers(t)
	mustTry(t, a)
	var told []cluster.LeaseHolder
	req := cluster.LockRequest{Namespace: "student-07", Name: cluster.LeaseName, Timeout: 50 * time.Millisecond, Retry: time.Millisecond,
		Waiting: func(h cluster.LeaseHolder, _ time.Duration) { told = append(told, h) }}
	err := b.acquire(context.Background(), req)
	var busy *cluster.LeaseBusyError
	if !errors.As(err, &busy) || busy.Holder.Identity != "host-a/pid 10/run 1" {
		t.Fatalf("acquire: %v; want a LeaseBusyError naming host-a", err)
	}
	if len(told) == 0 || told[0].Identity != "host-a/pid 10/run 1" {
		t.Errorf("Waiting was told %v; want host-a first", told)
	}
	want := "lease student-07/labrun is held by host-a/pid 10/run 1 since 2026-12-05T13:00:00Z: gave up after 0s (--lock-timeout)"
	if err.Error() != want {
		t.Errorf("error:\n%s\nwant\n%s", err, want)
	}
}

func TestLeaseWaitEndsWithContext(t *testing.T) {
	a, b, _ := newLeasers(t)
	mustTry(t, a)
	ctx, cancel := context.WithCancel(context.Background())
	req := cluster.LockRequest{Timeout: time.Hour, Retry: time.Millisecond,
		Waiting: func(cluster.LeaseHolder, time.Duration) { cancel() }}
	if err := b.acquire(ctx, req); !errors.Is(err, context.Canceled) {
		t.Fatalf("acquire after Ctrl-C: %v; want context.Canceled", err)
	}
}
