package actions

import (
	"context"

	"github.com/labrun/labrun/internal/boundary/cluster"
)

// DeleteSpec deletes objects, optionally waiting until they are gone.
type DeleteSpec struct {
	cluster.ObjectQuery `yaml:",inline"`
	Wait                bool `yaml:"wait" doc:"Wait (watching) until the objects are gone."`
	IgnoreNotFound      bool `yaml:"ignoreNotFound" doc:"An object that does not exist is not an error (the usual choice in finally)."`
}

// DeleteResult lists what was deleted.
type DeleteResult struct {
	// Objects are the objects named or selected, each with whether this
	// step deleted it; empty when a selector matched nothing.
	Objects []cluster.DeletedObject `json:"objects" expr:"objects"`
	// Deleted counts the objects this step deleted (not those already
	// gone, with ignoreNotFound).
	Deleted int `json:"deleted" expr:"deleted"`
}

func init() {
	Register(Def[DeleteSpec, DeleteResult]{
		Name:    "delete",
		Cost:    RoundTrip,
		Doc:     "Delete Kubernetes objects by name or selector, optionally waiting until they are gone.",
		Mutates: true,
		Changes: "the cluster: deletes objects",
		Run: func(ctx context.Context, rt *Runtime, spec *DeleteSpec) (*DeleteResult, error) {
			c, err := rt.cluster()
			if err != nil {
				return nil, err
			}
			objs, err := c.Delete(ctx, spec.ObjectQuery, cluster.DeleteRequest{Wait: spec.Wait, IgnoreNotFound: spec.IgnoreNotFound})
			res := &DeleteResult{Objects: objs}
			if res.Objects == nil {
				res.Objects = []cluster.DeletedObject{}
			}
			for _, o := range objs {
				if o.Deleted {
					res.Deleted++
				}
			}
			return res, err
		},
		Access: func(spec *DeleteSpec, ac *AccessContext) ([]cluster.Access, error) {
			r, ns, err := ac.Objects(spec.ObjectQuery)
			if err != nil {
				return nil, err
			}
			byName := spec.Name != "" || ac.Unknown("name")
			return cluster.DeleteAccess(r, ns, byName, spec.Wait || ac.Unknown("wait")), nil
		},
	})
}
