package kube

import (
	"context"
	"fmt"
	"time"

	"github.com/labrun/labrun/internal/k8sobj"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// DeleteOptions tune Delete.
type DeleteOptions struct {
	// Propagation is "Background" (the default: dependents are deleted by
	// the garbage collector afterwards), "Foreground" (the object stays,
	// with a deletionTimestamp, until its dependents are gone) or "Orphan".
	Propagation string `json:"propagation" expr:"propagation"`
	// IgnoreNotFound makes a missing object a result (Deleted=false)
	// instead of an error.
	IgnoreNotFound bool `json:"ignoreNotFound" expr:"ignoreNotFound"`
	// Wait waits (watching) until the object is gone, including its
	// finalizers and, with Foreground, its dependents.
	Wait bool `json:"wait" expr:"wait"`
	// GracePeriodSeconds overrides the object's grace period when not nil
	// (0 deletes pods immediately).
	GracePeriodSeconds *int64 `json:"gracePeriodSeconds" expr:"gracePeriodSeconds"`
}

// DeleteResult is the outcome of deleting one object.
type DeleteResult struct {
	Kind      string `json:"kind" expr:"kind"`
	Namespace string `json:"namespace" expr:"namespace"`
	Name      string `json:"name" expr:"name"`
	// Deleted is false when the object did not exist (and IgnoreNotFound).
	Deleted bool `json:"deleted" expr:"deleted"`
	// Waited is how long the wait for disappearance took (zero without Wait).
	Waited time.Duration `json:"waited" expr:"waited"`
}

// Delete deletes one object. With opts.Wait it returns once the object is
// gone (a replacement with the same name, such as a StatefulSet pod, does
// not count).
func (c *Client) Delete(ctx context.Context, ref ObjectRef, opts DeleteOptions) (DeleteResult, error) {
	t, err := c.resource(ctx, ref.APIVersion, ref.Kind, ref.Namespace, false)
	if err != nil {
		return DeleteResult{}, err
	}
	res := DeleteResult{Kind: t.kind(), Namespace: t.namespace, Name: ref.Name}
	what := describe(t.kind(), t.namespace, ref.Name)
	do, err := deleteOptions(opts)
	if err != nil {
		return res, err
	}
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
		start := time.Now()
		ref.APIVersion = t.mapping.GroupVersionKind.GroupVersion().String()
		ref.Kind = t.kind()
		ref.Namespace = t.namespace
		if err := c.WaitDeleted(ctx, ref, uid); err != nil {
			return res, err
		}
		res.Waited = time.Since(start)
	}
	return res, nil
}

// DeleteSelected deletes every object that sel selects (e.g. all pods with
// a label, to watch them come back) and returns one result per object.
func (c *Client) DeleteSelected(ctx context.Context, sel ListOptions, opts DeleteOptions) ([]DeleteResult, error) {
	objs, err := c.List(ctx, sel)
	if err != nil {
		return nil, err
	}
	opts.IgnoreNotFound = true // an object that went away meanwhile is fine
	var out []DeleteResult
	for _, o := range objs {
		ref := ObjectRef{APIVersion: k8sobj.String(o, "apiVersion"), Kind: k8sobj.String(o, "kind"), Namespace: k8sobj.String(o, "metadata", "namespace"), Name: k8sobj.String(o, "metadata", "name")}
		r, err := c.Delete(ctx, ref, opts)
		if err != nil {
			return out, err
		}
		out = append(out, r)
	}
	return out, nil
}

func deleteOptions(opts DeleteOptions) (metav1.DeleteOptions, error) {
	do := metav1.DeleteOptions{GracePeriodSeconds: opts.GracePeriodSeconds}
	var p metav1.DeletionPropagation
	switch opts.Propagation {
	case "", "Background", "background":
		p = metav1.DeletePropagationBackground
	case "Foreground", "foreground":
		p = metav1.DeletePropagationForeground
	case "Orphan", "orphan":
		p = metav1.DeletePropagationOrphan
	default:
		return do, fmt.Errorf("delete: unknown propagation %q (want Background, Foreground or Orphan)", opts.Propagation)
	}
	do.PropagationPolicy = &p
	return do, nil
}
