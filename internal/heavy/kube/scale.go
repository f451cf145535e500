package kube

import (
	"context"
	"fmt"

	"github.com/labrun/labrun/internal/boundary/cluster"
	"github.com/labrun/labrun/internal/leaf/k8sobj"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Scale sets the replica count through the scale subresource, the way
// kubectl scale does, so it works for Deployments, StatefulSets,
// ReplicaSets and any custom resource that has a scale subresource, and
// does not touch (or conflict on) the rest of the spec.
func (c *Client) Scale(ctx context.Context, ref cluster.ObjectQuery, replicas int) (*cluster.ScaleResult, error) {
	if replicas < 0 {
		return nil, fmt.Errorf("scale: replicas must not be negative, got %d", replicas)
	}
	t, err := c.resource(ctx, ref.APIVersion, ref.Kind, ref.Namespace, false)
	if err != nil {
		return nil, err
	}
	what := describe(t.kind(), t.namespace, ref.Name)
	cur, err := t.ri.Get(ctx, ref.Name, metav1.GetOptions{}, "scale")
	if err != nil {
		return nil, c.wrap(err, "scale (read)", what)
	}
	patch := fmt.Appendf(nil, `{"spec":{"replicas":%d}}`, replicas)
	out, err := t.ri.Patch(ctx, ref.Name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: FieldManager}, "scale")
	if err != nil {
		return nil, c.wrap(err, "scale", what)
	}
	return &cluster.ScaleResult{
		Kind:        t.kind(),
		Namespace:   t.namespace,
		Name:        ref.Name,
		OldReplicas: int(k8sobj.Int(cur.Object, "spec", "replicas")),
		NewReplicas: int(k8sobj.Int(out.Object, "spec", "replicas")),
	}, nil
}
