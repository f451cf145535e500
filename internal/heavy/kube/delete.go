package kube

import (
	"context"

	"github.com/labrun/labrun/internal/boundary/cluster"
	"github.com/labrun/labrun/internal/leaf/k8sobj"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Delete deletes the object q names, or every object q selects (e.g. all
// pods with a label, to watch them come back), one result per object. With
// req.Wait it returns once they are gone (a replacement with the same name,
// such as a StatefulSet pod, does not count).
func (c *Client) Delete(ctx context.Context, q cluster.ObjectQuery, req cluster.DeleteRequest) ([]cluster.DeletedObject, error) {
	if q.Name != "" {
		r, err := c.deleteOne(ctx, q, req)
		if err != nil {
			return nil, err
		}
		return []cluster.DeletedObject{r}, nil
	}
	objs, err := c.List(ctx, q)
	if err != nil {
		return nil, err
	}
	req.IgnoreNotFound = true // an object that went away meanwhile is fine
	var out []cluster.DeletedObject
	for _, o := range objs {
		ref := cluster.ObjectQuery{APIVersion: k8sobj.String(o, "apiVersion"), Kind: k8sobj.String(o, "kind"), Namespace: k8sobj.String(o, "metadata", "namespace"), Name: k8sobj.String(o, "metadata", "name")}
		r, err := c.deleteOne(ctx, ref, req)
		if err != nil {
			return out, err
		}
		out = append(out, r)
	}
	return out, nil
}

// deleteOne deletes the object ref names, in the background: dependents
// are deleted by the garbage collector afterwards, as kubectl does.
func (c *Client) deleteOne(ctx context.Context, ref cluster.ObjectQuery, opts cluster.DeleteRequest) (cluster.DeletedObject, error) {
	t, err := c.resource(ctx, ref.APIVersion, ref.Kind, ref.Namespace, false)
	if err != nil {
		return cluster.DeletedObject{}, err
	}
	res := cluster.DeletedObject{Kind: t.kind(), Namespace: t.namespace, Name: ref.Name}
	what := describe(t.kind(), t.namespace, ref.Name)
	background := metav1.DeletePropagationBackground
	do := metav1.DeleteOptions{PropagationPolicy: &background}
	// Wait needs the UID to tell the deleted object from a replacement.
	var uid string
	if opts.Wait {
		cur, err := t.ri.Get(ctx, ref.Name, metav1.GetOptions{})
		if err != nil {
			if apierrors.IsNotFound(err) && opts.IgnoreNotFound {
				return res, nil
			}
			return res, c.wrap(err, "delete", what)
		}
		curUID := cur.GetUID()
		uid = string(curUID)
		do.Preconditions = &metav1.Preconditions{UID: &curUID}
	}
	if err := t.ri.Delete(ctx, ref.Name, do); err != nil {
		if apierrors.IsNotFound(err) && opts.IgnoreNotFound {
			return res, nil
		}
		if apierrors.IsConflict(err) && uid != "" {
			// The UID precondition failed: the object we read was replaced
			// in between, so it is gone already.
			return res, nil
		}
		return res, c.wrap(err, "delete", what)
	}
	res.Deleted = true
	if opts.Wait {
		ref.APIVersion = t.mapping.GroupVersionKind.GroupVersion().String()
		ref.Kind = t.kind()
		ref.Namespace = t.namespace
		if err := c.waitDeleted(ctx, ref, uid); err != nil {
			return res, err
		}
	}
	return res, nil
}
