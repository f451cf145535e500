package access

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/labrun/labrun/actions"
	"github.com/labrun/labrun/internal/boundary/cluster"
	"github.com/labrun/labrun/runner"
)

// PreflightTimeout bounds the preflight's questions: an API server that
// has not answered them by then leaves the permissions to the steps.
const PreflightTimeout = 15 * time.Second

// Refused is the preflight's finding: the permissions the steps need
// that the cluster refuses.
type Refused struct {
	Missing []Need
}

func (e *Refused) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "the cluster refuses %d of the permissions the steps need:", len(e.Missing))
	for _, n := range e.Missing {
		fmt.Fprintf(&b, "\n  %s, for %s", n.Access, strings.Join(n.Steps, ", "))
	}
	return b.String()
}

// Preflight asks the cluster, before the first step, for every permission
// the steps of p that run in mode need (Derive, in the connection's
// namespace), and returns a *Refused naming those it refuses. A plan
// that calls no cluster asks nothing. A cluster that cannot be connected
// to, or does not answer for now (a cluster.TransientError), is left to
// the steps, which say so and ride it out as they always have: nil. Any
// other error means the preflight could not tell (a kind is not in the
// table, the API server refused the question); the run may go on.
func Preflight(ctx context.Context, p *runner.Plan, mode actions.Mode, connect func() (cluster.Cluster, error)) error {
	return PreflightWith(ctx, p, Options{Mode: mode}, connect)
}

// PreflightWith is Preflight for the run opts say (its Mode, and NoLock
// when it holds no Lease); the namespace is the connection's.
func PreflightWith(ctx context.Context, p *runner.Plan, opts Options, connect func() (cluster.Cluster, error)) error {
	if connect == nil || !CallsCluster(p, opts.Mode) {
		return nil
	}
	c, err := connect()
	if err != nil {
		return nil
	}
	opts.Namespace = c.DefaultNamespace()
	needs, err := Derive(p, opts)
	if err != nil {
		return fmt.Errorf("the permissions the steps need are unknown: %w", err)
	}
	want := make([]cluster.Access, len(needs))
	for i, n := range needs {
		want[i] = n.Access
	}
	ctx, cancel := context.WithTimeout(ctx, PreflightTimeout)
	defer cancel()
	denied, err := c.Denied(ctx, want)
	var outage *cluster.TransientError
	if errors.As(err, &outage) {
		return nil
	}
	if err != nil {
		return err
	}
	if len(denied) == 0 {
		return nil
	}
	refused := &Refused{}
	for _, a := range denied {
		for _, n := range needs {
			if n.Access == a {
				refused.Missing = append(refused.Missing, n)
			}
		}
	}
	return refused
}
