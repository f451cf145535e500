package actions

import (
	"context"
	"slices"

	"github.com/labrun/labrun/internal/boundary/cluster"
	"github.com/labrun/labrun/internal/lang/diag"
	"github.com/labrun/labrun/internal/lang/eval"
)

// LabelSpec sets and removes labels of objects in place, as kubectl label
// --overwrite does: a node a lab pins workloads to, or a running pod given
// another identity without being replaced.
type LabelSpec struct {
	cluster.ObjectQuery `yaml:",inline"`
	Labels              map[string]string `yaml:"labels" doc:"Labels to set; a value already there is overwritten (kubectl label --overwrite)."`
	Remove              []string          `yaml:"remove" doc:"Label keys to remove (kubectl label KEY-); a key that is not there is fine, so cleaning up twice works."`
}

// LabelResult lists the labelled objects.
type LabelResult struct {
	// Objects are the objects named or selected, with their labels
	// before and after; empty when a selector matched nothing.
	Objects []cluster.LabeledObject `json:"objects" expr:"objects"`
	// Changed counts the objects whose labels changed.
	Changed int `json:"changed" expr:"changed"`
}

func init() {
	Register(Def[LabelSpec, LabelResult]{
		Name:    "label",
		Cost:    RoundTrip,
		Doc:     "Set and remove labels of Kubernetes objects (by name or selector) in place with a merge patch, as kubectl label --overwrite: the object is not replaced, other labels stay.",
		Mutates: true,
		Changes: "the cluster: objects' labels",
		Run: func(ctx context.Context, rt *Runtime, spec *LabelSpec) (*LabelResult, error) {
			c, err := rt.cluster()
			if err != nil {
				return nil, err
			}
			objs, err := c.Label(ctx, spec.ObjectQuery, cluster.LabelRequest{Set: spec.Labels, Remove: spec.Remove})
			res := &LabelResult{Objects: objs}
			if res.Objects == nil {
				res.Objects = []cluster.LabeledObject{}
			}
			for _, o := range objs {
				if o.Changed {
					res.Changed++
				}
			}
			return res, err
		},
		Check: checkLabel,
		Access: func(spec *LabelSpec, ac *AccessContext) ([]cluster.Access, error) {
			r, ns, err := ac.Objects(spec.ObjectQuery)
			if err != nil {
				return nil, err
			}
			return cluster.LabelAccess(r, ns, spec.Name != "" || ac.Unknown("name")), nil
		},
	})
}

func checkLabel(spec *eval.Value, sc *StaticContext) diag.List {
	var errs diag.List
	if spec.Lookup("name") == nil && spec.Lookup("selector") == nil {
		errs.Add(spec.Pos, "label needs name or selector (it does not label every object of a kind)")
	}
	set, remove := spec.Lookup("labels"), spec.Lookup("remove")
	if set == nil && remove == nil {
		errs.Add(spec.Pos, "label needs labels to set or keys to remove")
	}
	if set == nil || remove == nil {
		return errs
	}
	keys := set.Keys()
	for _, item := range remove.Items() {
		if lit, ok := item.Literal(); ok {
			if k, ok := lit.(string); ok && slices.Contains(keys, k) {
				errs.Add(item.Pos, "label %q is both set and removed", k)
			}
		}
	}
	return errs
}
