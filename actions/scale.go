package actions

import (
	"context"

	"github.com/labrun/labrun/internal/boundary/cluster"
	"github.com/labrun/labrun/internal/lang/diag"
	"github.com/labrun/labrun/internal/lang/eval"
)

// ScaleSpec changes a workload's replica count through the scale
// subresource.
type ScaleSpec struct {
	cluster.ObjectQuery `yaml:",inline"`
	Replicas            int `yaml:"replicas" required:"true" doc:"The new replica count."`
}

func init() {
	Register(Def[ScaleSpec, cluster.ScaleResult]{
		Name:    "scale",
		Cost:    RoundTrip,
		Doc:     "Set the replicas of a Deployment, StatefulSet or ReplicaSet through the scale subresource.",
		Mutates: true,
		Changes: "the cluster: a workload's replicas",
		Run: func(ctx context.Context, rt *Runtime, spec *ScaleSpec) (*cluster.ScaleResult, error) {
			c, err := rt.cluster()
			if err != nil {
				return nil, err
			}
			return c.Scale(ctx, spec.ObjectQuery, spec.Replicas)
		},
		Access: func(spec *ScaleSpec, ac *AccessContext) ([]cluster.Access, error) {
			r, ns, err := ac.Objects(spec.ObjectQuery)
			if err != nil {
				return nil, err
			}
			return cluster.ScaleAccess(r, ns), nil
		},
		Check: func(spec *eval.Value, sc *StaticContext) diag.List {
			var errs diag.List
			if spec.Lookup("name") == nil {
				errs.Add(spec.Pos, "scale needs the name of the workload")
			}
			return errs
		},
	})
}
