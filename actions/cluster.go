package actions

import (
	"errors"

	"github.com/labrun/labrun/internal/boundary/cluster"
)

// ErrNoCluster is returned when a playbook needs a cluster and labrun has
// no way to reach one.
var ErrNoCluster = errors.New("no Kubernetes cluster connection")

// ConnectError is a cluster connection that could not be set up. Setting
// one up reads only the kubeconfig, and no request reaches the cluster,
// so the run's configuration is at fault (no usable kubeconfig, a context
// that is not in it), never the cluster: the runner reports the step's
// failure as config.
type ConnectError struct{ Err error }

func (e *ConnectError) Error() string { return e.Err.Error() }
func (e *ConnectError) Unwrap() error { return e.Err }

// cluster returns the connection, connecting on first use.
func (rt *Runtime) cluster() (cluster.Cluster, error) {
	if rt.Cluster == nil {
		return nil, &ConnectError{Err: ErrNoCluster}
	}
	c, err := rt.Cluster()
	if err != nil {
		return nil, &ConnectError{Err: err}
	}
	return c, nil
}
