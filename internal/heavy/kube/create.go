package kube

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/labrun/labrun/internal/boundary/cluster"
	"github.com/labrun/labrun/internal/leaf/k8sobj"
)

// Client creates objects that must not exist yet.
var _ cluster.Creator = (*Client)(nil)

// Create creates obj with a plain create (POST): the API server refuses a
// name already taken, which is a *cluster.ExistsError, and nothing else
// is asked of it, so create is the one permission it needs (not patch, as
// a server-side apply would).
func (c *Client) Create(ctx context.Context, obj map[string]any) error {
	ns, name := k8sobj.String(obj, "metadata", "namespace"), k8sobj.String(obj, "metadata", "name")
	t, err := c.resource(ctx, k8sobj.String(obj, "apiVersion"), k8sobj.String(obj, "kind"), ns, false)
	if err != nil {
		return err
	}
	_, err = t.ri.Create(ctx, &unstructured.Unstructured{Object: obj}, metav1.CreateOptions{FieldManager: "labrun"})
	if apierrors.IsAlreadyExists(err) {
		return &cluster.ExistsError{Kind: t.kind(), Namespace: t.namespace, Name: name}
	}
	if err != nil {
		return c.wrap(err, "create", describe(t.kind(), t.namespace, name))
	}
	return nil
}
