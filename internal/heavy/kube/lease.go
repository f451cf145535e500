package kube

import (
	"bytes"
	"context"
	"errors"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"
	"k8s.io/client-go/tools/leaderelection/resourcelock"

	"github.com/labrun/labrun/internal/boundary/cluster"
)

// Client takes a run's Lease.
var _ cluster.Locker = (*Client)(nil)

// Lock takes the Lease req names, waiting while another run holds it
// (see cluster.LockRequest), and renews it until it is released. It
// returns a *cluster.LeaseBusyError when req.Timeout passes first, and
// ctx's error when ctx ends the wait.
func (c *Client) Lock(ctx context.Context, req cluster.LockRequest) (*cluster.HeldLease, error) {
	// A connection of its own: renewals must not queue behind a step's
	// long exec or watch.
	leases, err := coordinationv1client.NewForConfig(c.Config())
	if err != nil {
		return nil, c.wrap(err, "lock", "lease "+req.Namespace+"/"+req.Name)
	}
	l := newLeaser(leases, req, time.Now, c.wrap)
	if err := l.acquire(ctx, req); err != nil {
		return nil, err
	}
	return l.hold(req), nil
}

// leaser makes one run's attempts on one Lease through resourcelock's
// LeaseLock, the record client-go's leader election keeps: it updates the
// Lease it read last, with that read's resourceVersion, so an update
// racing another run's is refused (a conflict) instead of overwriting it.
type leaser struct {
	lock     *resourcelock.LeaseLock
	duration time.Duration
	now      func() time.Time
	wrap     func(err error, op, target string) error
	// The record last seen and when this process saw it change: a holder
	// whose record did not change for its lease duration by our clock is
	// gone. Other machines' clocks (the record's times) are never
	// compared with ours.
	seen   []byte
	seenAt time.Time
}

func newLeaser(client coordinationv1client.LeasesGetter, req cluster.LockRequest, now func() time.Time, wrap func(error, string, string) error) *leaser {
	return &leaser{
		lock: &resourcelock.LeaseLock{
			LeaseMeta:  metav1.ObjectMeta{Namespace: req.Namespace, Name: req.Name},
			Client:     client,
			LockConfig: resourcelock.ResourceLockConfig{Identity: req.Identity},
		},
		duration: req.Duration,
		now:      now,
		wrap:     wrap,
	}
}

func (l *leaser) target() string {
	return "lease " + l.lock.LeaseMeta.Namespace + "/" + l.lock.LeaseMeta.Name
}

// try makes one attempt to take the Lease, or to renew it when it is
// ours. ok says it is ours now; otherwise holder is who holds it (empty
// when another run took or created it between our read and our write:
// ask again).
func (l *leaser) try(ctx context.Context) (ok bool, holder cluster.LeaseHolder, err error) {
	rec, raw, err := l.lock.Get(ctx)
	now := l.now()
	switch {
	case apierrors.IsNotFound(err):
		err = l.lock.Create(ctx, l.record(now, nil))
		if apierrors.IsAlreadyExists(err) {
			return false, holder, nil
		}
		return err == nil, holder, l.wrap(err, "create", l.target())
	case err != nil:
		return false, holder, l.wrap(err, "get", l.target())
	}
	if !bytes.Equal(raw, l.seen) {
		l.seen, l.seenAt = raw, now
	}
	holder = holderOf(rec)
	ttl := time.Duration(rec.LeaseDurationSeconds) * time.Second
	if rec.HolderIdentity != "" && rec.HolderIdentity != l.lock.Identity() && now.Before(l.seenAt.Add(ttl)) {
		return false, holder, nil
	}
	err = l.lock.Update(ctx, l.record(now, rec))
	if apierrors.IsConflict(err) {
		return false, cluster.LeaseHolder{}, nil
	}
	return err == nil, holder, l.wrap(err, "update", l.target())
}

// record is the Lease's record with this run holding it since now, or
// since it took it when old is already ours.
func (l *leaser) record(now time.Time, old *resourcelock.LeaderElectionRecord) resourcelock.LeaderElectionRecord {
	r := resourcelock.LeaderElectionRecord{
		HolderIdentity:       l.lock.Identity(),
		LeaseDurationSeconds: int(l.duration.Round(time.Second) / time.Second),
		AcquireTime:          metav1.NewTime(now),
		RenewTime:            metav1.NewTime(now),
	}
	if old != nil {
		r.LeaderTransitions = old.LeaderTransitions
		if old.HolderIdentity == r.HolderIdentity {
			r.AcquireTime = old.AcquireTime
		} else {
			r.LeaderTransitions++
		}
	}
	return r
}

func holderOf(r *resourcelock.LeaderElectionRecord) cluster.LeaseHolder {
	return cluster.LeaseHolder{Identity: r.HolderIdentity, Since: r.AcquireTime.Time, Renewed: r.RenewTime.Time}
}

// acquire tries until the Lease is ours, telling req.Waiting who holds
// it meanwhile. A transient failure before any holder was seen is
// returned at once; after, it is asked again, and when the timeout passes
// during one, that failure is returned, else a LeaseBusyError.
func (l *leaser) acquire(ctx context.Context, req cluster.LockRequest) error {
	retry, progress := cmpOr(req.Retry, time.Second), cmpOr(req.Progress, 10*time.Second)
	start := time.Now()
	timeout := time.NewTimer(req.Timeout)
	defer timeout.Stop()
	var last cluster.LeaseHolder
	var told time.Time
	var lastErr error
	for {
		ok, holder, err := l.try(ctx)
		var outage *cluster.TransientError
		switch {
		case ok:
			return nil
		case err != nil && (!errors.As(err, &outage) || last.Identity == ""):
			// A cluster that does not answer the first question is the
			// steps' to report (as for the preflight); once another
			// run was seen holding the Lease, an outage is waited out.
			return err
		}
		lastErr = err
		if holder.Identity != "" {
			if req.Waiting != nil && (holder.Identity != last.Identity || time.Since(told) >= progress) {
				req.Waiting(holder, time.Since(start))
				told = time.Now()
			}
			last = holder
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-timeout.C:
			if lastErr != nil {
				return lastErr
			}
			return &cluster.LeaseBusyError{Namespace: req.Namespace, Name: req.Name, Holder: last, Waited: time.Since(start)}
		case <-time.After(retry):
		}
	}
}

// hold renews the Lease every third of its duration until it is
// released; if another run took it meanwhile, req.Lost is told.
func (l *leaser) hold(req cluster.LockRequest) *cluster.HeldLease {
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(l.duration / 3)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			ctx, cancel := context.WithTimeout(context.Background(), l.duration/3)
			ok, holder, err := l.try(ctx)
			cancel()
			if err == nil && !ok && holder.Identity != "" {
				if req.Lost != nil {
					req.Lost(holder)
				}
				return
			}
		}
	}()
	var once sync.Once
	var err error
	release := func(ctx context.Context) error {
		once.Do(func() {
			close(stop)
			<-done
			err = l.release(ctx)
		})
		return err
	}
	return &cluster.HeldLease{Namespace: req.Namespace, Name: req.Name, Release: release}
}

// release gives the Lease up when it is still ours: no holder, and a
// duration of a second, as client-go's leader election leaves it, so the
// next run takes it at once.
func (l *leaser) release(ctx context.Context) error {
	rec, _, err := l.lock.Get(ctx)
	if err != nil {
		return l.wrap(err, "get", l.target())
	}
	if rec.HolderIdentity != l.lock.Identity() {
		return nil
	}
	now := metav1.NewTime(l.now())
	err = l.lock.Update(ctx, resourcelock.LeaderElectionRecord{
		LeaseDurationSeconds: 1, AcquireTime: now, RenewTime: now, LeaderTransitions: rec.LeaderTransitions,
	})
	return l.wrap(err, "update", l.target())
}

func cmpOr(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}
