package clustertest

import (
	"context"

	"github.com/labrun/labrun/internal/boundary/cluster"
)

// Denied asks AllowFunc about each permission of want and returns those
// it refuses, in want's order; the first error AllowFunc returns ends it.
func (c *Cluster) Denied(ctx context.Context, want []cluster.Access) ([]cluster.Access, error) {
	if c.AllowFunc == nil {
		return nil, nil
	}
	var denied []cluster.Access
	for _, a := range want {
		ok, err := c.AllowFunc(a)
		if err != nil {
			return nil, err
		}
		if !ok {
			denied = append(denied, a)
		}
	}
	return denied, nil
}

// DefaultNamespace is Namespace, "default" when empty.
func (c *Cluster) DefaultNamespace() string { return c.namespace("") }
