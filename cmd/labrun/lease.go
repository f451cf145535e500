package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/labrun/labrun/actions"
	"github.com/labrun/labrun/internal/boundary/cluster"
	"github.com/labrun/labrun/internal/leaf/outdir"
	"github.com/labrun/labrun/runner"
	"github.com/labrun/labrun/runner/access"
	"github.com/spf13/pflag"
)

// Two runs against one target never interleave: run, check and test hold
// the target's Lease while they run (cluster.LockRequest says how), unless
// --no-lock.

// LeaseDuration is how long a run's Lease outlives its last renewal: a
// run killed outright (SIGKILL, a lost node) holds its target that long.
const LeaseDuration = 30 * time.Second

// DefaultLockTimeout is how long a run waits for another run's Lease.
const DefaultLockTimeout = 10 * time.Minute

// leaseFlags are the Lease's flags of run, check and test.
type leaseFlags struct {
	noLock      bool
	lockTimeout time.Duration
}

func (f *leaseFlags) register(fs *pflag.FlagSet) {
	fs.BoolVar(&f.noLock, "no-lock", false, "do not hold the target's Lease: another labrun may run against the same namespace or cluster at the same time")
	fs.DurationVar(&f.lockTimeout, "lock-timeout", DefaultLockTimeout, "how long to wait while another labrun holds the target's Lease; then fail naming it (exit 4)")
}

// takeLease takes the Lease of plan's target (access.LeaseNamespace),
// waiting while another run holds it and saying so on stderr. release
// gives it back and returns the exit code of a run whose release the
// cluster refused (2, forbidden: every next run would wait for it to go
// stale), else 0. ok false:
// the run must not start, and code is its exit code (4 when the wait
// timed out, 130 when interrupted, 2 when refused, 3 when the cluster
// did not answer). A plan that calls no cluster, or a cluster that cannot
// be connected to, takes none: the steps report the connection.
func (f *leaseFlags) takeLease(ctx context.Context, plan *runner.Plan, connect func() (cluster.Cluster, error), name string, stderr io.Writer) (release func() int, code int, ok bool) {
	release = func() int { return 0 }
	if f.noLock || connect == nil || (!access.CallsCluster(plan, actions.Solve) && !access.CallsCluster(plan, actions.Check)) {
		return release, 0, true
	}
	c, err := connect()
	if err != nil {
		return release, 0, true
	}
	locker, isLocker := c.(cluster.Locker)
	ns, err := access.LeaseNamespace(plan, access.Options{Namespace: c.DefaultNamespace()})
	if !isLocker || err != nil || ns == "" {
		return release, 0, true
	}
	req := cluster.LockRequest{
		Namespace: ns, Name: cluster.LeaseName, Identity: leaseIdentity(),
		Duration: LeaseDuration, Timeout: f.lockTimeout,
		Waiting: func(h cluster.LeaseHolder, waited time.Duration) {
			fmt.Fprintf(stderr, "labrun %s: waiting for lease %s/%s held by %s (%s so far, at most %s)\n",
				name, ns, cluster.LeaseName, h, waited.Round(time.Second), f.lockTimeout)
		},
		Lost: func(h cluster.LeaseHolder) {
			fmt.Fprintf(stderr, "labrun %s: lost lease %s/%s to %s: its renewals failed for %s; another run may now interleave with this one\n",
				name, ns, cluster.LeaseName, h, LeaseDuration)
		},
	}
	held, err := locker.Lock(ctx, req)
	var outage *cluster.TransientError
	if errors.As(err, &outage) && ctx.Err() == nil {
		// As the preflight does: the steps meet the outage, ride it out
		// or report it as the cluster's.
		fmt.Fprintf(stderr, "labrun %s: lease %s/%s not taken, the cluster did not answer (%s); the steps go on\n", name, ns, cluster.LeaseName, outage.Reason)
		return release, 0, true
	}
	if err != nil {
		return release, leaseFailed(ctx, err, name, stderr), false
	}
	return func() int {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		err := held.Release(ctx)
		if err == nil {
			return 0
		}
		var forbidden *cluster.ForbiddenError
		if errors.As(err, &forbidden) {
			fmt.Fprintf(stderr, "labrun %s: could not release lease %s/%s: the next run waits %s for it to go stale: %v [forbidden]\n",
				name, ns, cluster.LeaseName, LeaseDuration, err)
			return exitInvalid
		}
		fmt.Fprintf(stderr, "labrun %s: could not release lease %s/%s (the next run takes it once it is stale, after %s): %v\n",
			name, ns, cluster.LeaseName, LeaseDuration, err)
		return 0
	}, 0, true
}

// leaseFailed says why the Lease was not taken and gives the exit code
// of its class of failure (docs/exit-codes.md).
func leaseFailed(ctx context.Context, err error, name string, stderr io.Writer) int {
	var busy *cluster.LeaseBusyError
	var forbidden *cluster.ForbiddenError
	var outage *cluster.TransientError
	class, code := "config", exitInvalid
	switch {
	case ctx.Err() != nil:
		fmt.Fprintf(stderr, "labrun %s: interrupted while waiting for the lease\n", name)
		return exitInterrupted
	case errors.As(err, &busy):
		class, code = "timeout", exitTimeout
	case errors.As(err, &forbidden):
		class = "forbidden"
	case errors.As(err, &outage):
		class, code = "transport", exitTransport
	}
	fmt.Fprintf(stderr, "labrun %s: %v [%s]\n", name, err, class)
	return code
}

// leaseIdentity names this run to the others: the host (in a pod, the
// pod's name), the process and a run id.
func leaseIdentity() string {
	host, err := os.Hostname()
	if err != nil {
		host = "unknown-host"
	}
	return fmt.Sprintf("%s/pid %d/run %s", host, os.Getpid(), outdir.NewRunID(time.Now()))
}
