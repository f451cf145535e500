package cluster

import (
	"context"
	"fmt"
	"time"
)

// Two runs of labrun against one target must not interleave: a check
// that reads while a solve rewrites, or two graders of one learner, see
// each other's half-done state. So a run holds a coordination.k8s.io/v1
// Lease on its target while it runs (one per namespace for a lab that
// stays in one, one for the cluster otherwise); a second run waits until
// the first releases it, or until the holder is gone (it stopped
// renewing), or gives up after its timeout naming the holder.

// LeaseName is the name of the Lease a run holds on its target.
const LeaseName = "labrun"

// ClusterLeaseNamespace is where the Lease of a lab that is not confined
// to one namespace lives: a namespace every cluster has, which the labs
// that read the Cilium agent already have a Role in, and whose Lease
// needs no permission to create a namespace.
const ClusterLeaseNamespace = "kube-system"

// Leases is the resource of the run's Lease.
var Leases = Resource{Group: "coordination.k8s.io", Resource: "leases", Kind: "Lease", Namespaced: true}

// LeaseAccess is what holding the Lease in ns asks: get (who holds it),
// create (the first run on the target), update (take, renew, release).
func LeaseAccess(ns string) []Access { return Leases.Access(ns, "get", "create", "update") }

// Locker takes a run's Lease; *kube.Client implements it.
type Locker interface {
	Lock(ctx context.Context, req LockRequest) (*HeldLease, error)
}

// LockRequest says which Lease to take, as whom, and how long to wait.
type LockRequest struct {
	Namespace, Name string
	// Identity names this run to the others: host (a pod's name in a
	// pod), pid and run id.
	Identity string
	// Duration is how long the Lease stays ours without a renewal; it is
	// renewed every third of it. A holder not seen to renew for Duration
	// is gone, and its Lease is taken over.
	Duration time.Duration
	// Timeout bounds the wait for another holder; then Lock returns a
	// *LeaseBusyError.
	Timeout time.Duration
	// Retry is how often a waiter asks again (default 1 s).
	Retry time.Duration
	// Waiting is told who holds the Lease when the wait starts, when the
	// holder changes, and every Progress while it lasts.
	Waiting  func(LeaseHolder, time.Duration)
	Progress time.Duration
	// Lost is told, once, that the Lease went to another holder while
	// this run held it (its renewals failed for Duration).
	Lost func(LeaseHolder)
}

// LeaseHolder is who holds a Lease, as its record says.
type LeaseHolder struct {
	Identity string
	// Since is when the holder took it (acquireTime), Renewed when it last
	// renewed it (renewTime), as the holder's clock wrote them.
	Since, Renewed time.Time
}

func (h LeaseHolder) String() string {
	return fmt.Sprintf("%s since %s", h.Identity, h.Since.UTC().Format(time.RFC3339))
}

// HeldLease is a Lease this run holds; Release gives it back.
type HeldLease struct {
	Namespace, Name string
	// Release stops renewing it and gives it up, so the next run need not
	// wait for it to go stale.
	Release func(context.Context) error
}

// LeaseBusyError is a wait for a Lease that ran out: another run held it
// all along.
type LeaseBusyError struct {
	Namespace, Name string
	Holder          LeaseHolder
	Waited          time.Duration
}

func (e *LeaseBusyError) Error() string {
	return fmt.Sprintf("lease %s/%s is held by %s: gave up after %s (--lock-timeout)",
		e.Namespace, e.Name, e.Holder, e.Waited.Round(time.Second))
}
