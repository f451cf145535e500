package actions

import (
	"errors"

	"github.com/labrun/labrun/internal/cluster"
)

// ErrNoCluster is returned when a playbook needs a cluster and labrun has
// no way to reach one.
var ErrNoCluster = errors.New("no Kubernetes cluster connection")

// cluster returns the connection, connecting on first use.
func (rt *Runtime) cluster() (cluster.Cluster, error) {
	if rt.Cluster == nil {
		return nil, ErrNoCluster
	}
	return rt.Cluster()
}
