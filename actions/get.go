package actions

import (
	"context"

	"github.com/labrun/labrun/internal/boundary/cluster"
	"github.com/labrun/labrun/internal/leaf/k8sobj"
)

// GetSpec reads Kubernetes objects. With until on the step, it watches
// them instead of polling, so the step moves on as soon as the condition
// holds.
type GetSpec struct {
	cluster.ObjectQuery `yaml:",inline"`
	AllowFailing        bool `yaml:"allowFailing" doc:"With until: keep waiting when a pod fails (CrashLoopBackOff, an image that cannot be pulled, phase Failed, ...), for labs that make pods fail on purpose. Without it a wait on pods or on a rollout stops at the first such pod, quoting its cause."`
}

// GetResult holds the objects found.
type GetResult struct {
	// Items are the objects as maps (items[0].spec.clusterIP).
	Items []map[string]any `json:"items" expr:"items"`
	// Object is the first item; null when there is none.
	Object map[string]any `json:"object" expr:"object" nullable:"true"`
	// Count is the number of items (len(items)).
	Count int `json:"count" expr:"count"`
	// Ready counts the items that are ready: pods with condition Ready,
	// workloads whose rollout is complete, other kinds never.
	Ready int `json:"ready" expr:"ready"`
}

func init() {
	Register(Def[GetSpec, GetResult]{
		Name:   "get",
		Cost:   RoundTrip,
		Doc:    "Read Kubernetes objects by name or selector; with until, watch them until the condition holds.",
		Run:    getObjects,
		Watch:  watchObjects,
		Access: getAccess,
	})
	Register(Def[GetSpec, GetResult]{
		Name:       "wait",
		Cost:       RoundTrip,
		Doc:        "Watch Kubernetes objects until the step's until condition holds (objects that do not exist yet are fine); on timeout the message shows the condition and the last state seen.",
		Run:        getObjects,
		Watch:      watchObjects,
		NeedsUntil: true,
		Access:     getAccess,
	})
}

func getObjects(ctx context.Context, rt *Runtime, spec *GetSpec) (*GetResult, error) {
	c, err := rt.cluster()
	if err != nil {
		return nil, err
	}
	items, err := c.List(ctx, spec.ObjectQuery)
	if err != nil {
		return nil, err
	}
	return newGetResult(items), nil
}

func watchObjects(ctx context.Context, rt *Runtime, spec *GetSpec, cond Condition) (*GetResult, error) {
	c, err := rt.cluster()
	if err != nil {
		return nil, err
	}
	ff := newFailFast(ctx, c, spec.ObjectQuery)
	var last *GetResult
	items, err := c.Wait(ff.ctx, spec.ObjectQuery, func(objs []map[string]any) (bool, error) {
		last = newGetResult(objs)
		ok, err := cond(last)
		if ok || err != nil || spec.AllowFailing {
			return ok, err
		}
		return false, ff.check(objs)
	}, nil)
	ff.stop()
	if pf, ok := ff.failure(err); ok {
		err = explain(ctx, c, spec.ObjectQuery, pf)
	}
	if err != nil {
		// the cluster's wait error already says the last state it saw
		if last == nil {
			last = newGetResult(nil)
		}
		return last, err
	}
	return newGetResult(items), nil
}

// getAccess is what a read asks (List), or a wait that watches (Wait,
// and, unless it allows failing pods, what following a rollout's pods
// asks: failFastAccess).
func getAccess(spec *GetSpec, ac *AccessContext) ([]cluster.Access, error) {
	r, ns, err := ac.Objects(spec.ObjectQuery)
	if err != nil {
		return nil, err
	}
	if !ac.Watch {
		return cluster.ListAccess(r, ns), nil
	}
	out := cluster.WaitAccess(r, ns)
	if !spec.AllowFailing || ac.Unknown("allowFailing") {
		out = append(out, failFastAccess(r.Kind, ns)...)
	}
	return out, nil
}

func newGetResult(items []map[string]any) *GetResult {
	if items == nil {
		items = []map[string]any{}
	}
	r := &GetResult{Items: items, Count: len(items)}
	if len(items) > 0 {
		r.Object = items[0]
	}
	for _, o := range items {
		if k8sobj.Ready(o) {
			r.Ready++
		}
	}
	return r
}
