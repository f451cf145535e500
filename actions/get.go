package actions

import (
	"context"
	"fmt"
	"sort"
	"strings"
)

// GetSpec reads Kubernetes objects. With until on the step, it watches
// them instead of polling, so the step moves on as soon as the condition
// holds.
type GetSpec struct {
	ObjectQuery `yaml:",inline"`
}

// GetResult holds the objects found.
type GetResult struct {
	// Items are the objects as maps (items[0].spec.clusterIP).
	Items []map[string]any `json:"items" expr:"items"`
	// Object is the first item, or nil when there is none.
	Object map[string]any `json:"object" expr:"object"`
	Count  int            `json:"count" expr:"count"`
	// Ready counts the items that are ready: pods with condition Ready,
	// workloads whose rollout is complete, other kinds never.
	Ready int `json:"ready" expr:"ready"`
}

func init() {
	Register(Def[GetSpec, GetResult]{
		Name:  "get",
		Doc:   "Read Kubernetes objects by name or selector; with until, watch them until the condition holds.",
		Run:   getObjects,
		Watch: watchObjects,
	})
	Register(Def[GetSpec, GetResult]{
		Name:       "wait",
		Doc:        "Watch Kubernetes objects until the step's until condition holds (objects that do not exist yet are fine); on timeout the message shows the condition and the last state seen.",
		Run:        getObjects,
		Watch:      watchObjects,
		NeedsUntil: true,
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
	var last *GetResult
	items, err := c.Wait(ctx, spec.ObjectQuery, func(objs []map[string]any) (bool, error) {
		last = newGetResult(objs)
		return cond(last)
	}, nil)
	if err != nil {
		if last == nil {
			last = newGetResult(nil)
		}
		return last, fmt.Errorf("%v (objects: %s)", err, summarize(last.Items))
	}
	return newGetResult(items), nil
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
		if IsReady(o) {
			r.Ready++
		}
	}
	return r
}

// IsReady reports readiness the way kubectl's wait and rollout status do:
// a pod's Ready condition; a Deployment, StatefulSet or DaemonSet whose
// current generation is observed with every replica updated and ready.
func IsReady(o map[string]any) bool {
	kind, _ := o["kind"].(string)
	status, _ := o["status"].(map[string]any)
	meta, _ := o["metadata"].(map[string]any)
	switch kind {
	case "Pod":
		if _, deleting := meta["deletionTimestamp"]; deleting {
			return false
		}
		conds, _ := status["conditions"].([]any)
		for _, c := range conds {
			cm, _ := c.(map[string]any)
			if cm["type"] == "Ready" {
				return cm["status"] == "True"
			}
		}
	case "Deployment", "StatefulSet", "ReplicaSet":
		spec, _ := o["spec"].(map[string]any)
		want := num(spec["replicas"], 1)
		if num(status["observedGeneration"], 0) < num(meta["generation"], 0) {
			return false
		}
		updated := num(status["updatedReplicas"], 0)
		if kind == "ReplicaSet" {
			updated = num(status["replicas"], 0)
		}
		return updated == want && num(status["readyReplicas"], 0) == want && num(status["replicas"], 0) == want
	case "DaemonSet":
		if num(status["observedGeneration"], 0) < num(meta["generation"], 0) {
			return false
		}
		want := num(status["desiredNumberScheduled"], 0)
		return want > 0 && num(status["updatedNumberScheduled"], 0) == want && num(status["numberReady"], 0) == want
	}
	return false
}

func num(v any, def int64) int64 {
	switch n := v.(type) {
	case int64:
		return n
	case int:
		return int64(n)
	case float64:
		return int64(n)
	}
	return def
}

// summarize renders objects for progress lines and timeout messages:
// names with phase and readiness, e.g. "web-1 Running ready, web-2 Pending".
func summarize(objs []map[string]any) string {
	if len(objs) == 0 {
		return "none found"
	}
	var parts []string
	for _, o := range objs {
		meta, _ := o["metadata"].(map[string]any)
		name, _ := meta["name"].(string)
		s := name
		if status, ok := o["status"].(map[string]any); ok {
			if phase, ok := status["phase"].(string); ok {
				s += " " + phase
			}
		}
		if IsReady(o) {
			s += " ready"
		}
		parts = append(parts, s)
	}
	sort.Strings(parts)
	if len(parts) > 6 {
		parts = append(parts[:6], fmt.Sprintf("and %d more", len(parts)-6))
	}
	return fmt.Sprintf("%d: %s", len(objs), strings.Join(parts, ", "))
}
