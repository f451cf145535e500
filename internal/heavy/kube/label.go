package kube

import (
	"context"
	"encoding/json"
	"maps"

	"github.com/labrun/labrun/internal/boundary/cluster"
	"github.com/labrun/labrun/internal/leaf/k8sobj"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// LabelFieldManager is the field manager of label changes: the labels it
// sets are its own in managedFields, apart from what labrun applies, so a
// later apply that sets such a label again needs force (as after kubectl
// label).
const LabelFieldManager = "labrun-label"

// Label sets and removes labels in place with a JSON merge patch on
// metadata.labels, as kubectl label --overwrite does: the object is not
// replaced (a pod keeps its UID and IP), no other field is sent, and labels
// the request does not name stay as they are, whichever field manager set
// them. A selector labels each object it selects now.
func (c *Client) Label(ctx context.Context, q cluster.ObjectQuery, req cluster.LabelRequest) ([]cluster.LabeledObject, error) {
	patch, err := labelPatch(req)
	if err != nil {
		return nil, err
	}
	var objs []map[string]any
	if q.Name != "" {
		o, err := c.Get(ctx, q)
		if err != nil {
			return nil, err
		}
		objs = []map[string]any{o}
	} else if objs, err = c.List(ctx, q); err != nil {
		return nil, err
	}
	out := []cluster.LabeledObject{}
	for _, o := range objs {
		t, err := c.resource(ctx, k8sobj.String(o, "apiVersion"), k8sobj.String(o, "kind"), k8sobj.String(o, "metadata", "namespace"), false)
		if err != nil {
			return out, err
		}
		name := k8sobj.String(o, "metadata", "name")
		after, err := t.ri.Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: LabelFieldManager})
		if err != nil {
			return out, c.wrap(err, "label", describe(t.kind(), t.namespace, name))
		}
		before := k8sobj.StringMap(o, "metadata", "labels")
		now := after.GetLabels()
		if now == nil {
			now = map[string]string{}
		}
		out = append(out, cluster.LabeledObject{Kind: t.kind(), Namespace: t.namespace, Name: name, UID: string(after.GetUID()),
			Before: before, Labels: now, Changed: !maps.Equal(before, now)})
	}
	return out, nil
}

// labelPatch is the merge patch {"metadata":{"labels":{k: v, r: null}}}.
func labelPatch(req cluster.LabelRequest) ([]byte, error) {
	labels := map[string]any{}
	for _, k := range req.Remove {
		labels[k] = nil
	}
	for k, v := range req.Set {
		labels[k] = v
	}
	return json.Marshal(map[string]any{"metadata": map[string]any{"labels": labels}})
}
