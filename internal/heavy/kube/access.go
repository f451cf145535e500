package kube

import (
	"context"
	"fmt"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/labrun/labrun/internal/boundary/cluster"
)

// selfSubjectAccessReviews is the resource that answers "may I?" for the
// user of the request itself; every authenticated user may create one
// (the system:basic-user role).
var selfSubjectAccessReviews = schema.GroupVersionResource{Group: "authorization.k8s.io", Version: "v1", Resource: "selfsubjectaccessreviews"}

// reviewsAtOnce bounds the reviews in flight: a playbook needs a few
// dozen permissions, which one round of requests over the client's one
// HTTP/2 connection answers.
const reviewsAtOnce = 32

// DefaultNamespace is the kubeconfig context's namespace.
func (c *Client) DefaultNamespace() string { return c.Namespace }

// Denied asks the API server, one SelfSubjectAccessReview per permission
// and all at once, which of want the client's user may not do, and
// returns those in want's order. A review the server does not answer is
// an error: the answer is unknown, not a refusal; a transient one
// (cluster.TransientError) when the server may answer a moment later.
func (c *Client) Denied(ctx context.Context, want []cluster.Access) (_ []cluster.Access, err error) {
	defer transient(&err)
	allowed := make([]bool, len(want))
	errs := make([]error, len(want))
	slots := make(chan struct{}, reviewsAtOnce)
	var wg sync.WaitGroup
	for i, a := range want {
		wg.Add(1)
		slots <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-slots }()
			allowed[i], errs[i] = c.allowed(ctx, a)
		}()
	}
	wg.Wait()
	var denied []cluster.Access
	for i, a := range want {
		if errs[i] != nil {
			return nil, errs[i]
		}
		if !allowed[i] {
			denied = append(denied, a)
		}
	}
	return denied, nil
}

// allowed asks the API server whether the client's user may do a.
func (c *Client) allowed(ctx context.Context, a cluster.Access) (bool, error) {
	attrs := map[string]any{"verb": a.Verb, "group": a.Group, "resource": a.Resource}
	if a.Subresource != "" {
		attrs["subresource"] = a.Subresource
	}
	if a.Namespace != "" {
		attrs["namespace"] = a.Namespace
	}
	review := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "authorization.k8s.io/v1",
		"kind":       "SelfSubjectAccessReview",
		"spec":       map[string]any{"resourceAttributes": attrs},
	}}
	out, err := c.dynamic.Resource(selfSubjectAccessReviews).Create(ctx, review, metav1.CreateOptions{})
	if err != nil {
		return false, c.wrap(err, "ask whether the cluster allows", a.String())
	}
	ok, found, err := unstructured.NestedBool(out.Object, "status", "allowed")
	if err != nil || !found {
		return false, fmt.Errorf("ask whether the cluster allows %s: the answer has no status.allowed", a)
	}
	return ok, nil
}
