package kube

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"time"

	"github.com/labrun/labrun/internal/boundary/cluster"
	"github.com/labrun/labrun/internal/leaf/k8sobj"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Actions reported by Apply, as kubectl words them.
const (
	ActionCreated    = "created"
	ActionConfigured = "configured"
	ActionUnchanged  = "unchanged"
)

// CRDTimeout bounds the wait for an applied CRD to become Established. It
// is normally a fraction of a second.
const CRDTimeout = time.Minute

// Apply decodes the sources (files, directories or inline text) and
// server-side-applies their objects in order, with field manager
// "labrun" unless req names another. It stops at the first failure and
// returns the results so far with an error that names the manifest's file
// and document.
//
// A CustomResourceDefinition is waited for until it is Established before
// the next manifest is applied, so that a manifest later in the same apply
// (or a later step) can create objects of the new kind.
func (c *Client) Apply(ctx context.Context, sources []cluster.ManifestSource, req cluster.ApplyRequest) ([]cluster.AppliedObject, error) {
	var manifests []Manifest
	for i, s := range sources {
		var ms []Manifest
		var err error
		if s.Path != "" {
			ms, err = DecodeFiles(s.Path)
		} else {
			ms, err = DecodeText(s.Label, []byte(s.Text))
		}
		if err != nil {
			return nil, err
		}
		for j := range ms {
			ms[j].source, ms[j].fromFile = i, s.Path != ""
		}
		manifests = append(manifests, ms...)
	}
	if len(manifests) == 0 {
		return nil, errors.New("no objects to apply: the manifests are empty")
	}
	return c.applyManifests(ctx, manifests, req)
}

// applyManifests applies decoded manifests in order (see Apply).
func (c *Client) applyManifests(ctx context.Context, manifests []Manifest, req cluster.ApplyRequest) ([]cluster.AppliedObject, error) {
	var results []cluster.AppliedObject
	for _, m := range manifests {
		r, err := c.applyOne(ctx, m, req)
		var invalid *cluster.InvalidObjectError
		if errors.As(err, &invalid) {
			invalid.Source, invalid.Line = m.source, m.Line
			if m.fromFile {
				invalid.File = m.Source
			}
		}
		if err != nil {
			return results, fmt.Errorf("%s: %w", m.Where(), err)
		}
		results = append(results, r)
	}
	return results, nil
}

func (c *Client) applyOne(ctx context.Context, m Manifest, opts cluster.ApplyRequest) (cluster.AppliedObject, error) {
	obj := m.Object.DeepCopy()
	gvk := obj.GroupVersionKind()
	ns := opts.Namespace
	if obj.GetNamespace() != "" {
		ns = obj.GetNamespace()
	}
	t, err := c.resource(ctx, obj.GetAPIVersion(), gvk.Kind, ns, false)
	if err != nil {
		return cluster.AppliedObject{}, err
	}
	// Cluster-scoped objects have no namespace; drop one a manifest may
	// carry (kubectl ignores it too) instead of failing on it.
	obj.SetNamespace(t.namespace)
	name := obj.GetName()
	what := describe(gvk.Kind, t.namespace, name)

	// The state before the apply tells created from configured from
	// unchanged; server-side apply's answer alone does not.
	before, err := t.ri.Get(ctx, name, metav1.GetOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return cluster.AppliedObject{}, c.wrap(err, "apply (read current state of)", what)
	}
	if err != nil {
		before = nil
	}

	manager := opts.FieldManager
	if manager == "" {
		manager = FieldManager
	}
	applyOpts := metav1.ApplyOptions{FieldManager: manager, Force: opts.Force}
	after, err := t.ri.Apply(ctx, name, obj, applyOpts)
	if sa, ok := missingServiceAccount(err); ok {
		// A pod applied right after its namespace: the service account
		// controller has not created the namespace's service account yet
		// (a few milliseconds). Wait for it (watching) and try once more.
		if werr := c.waitServiceAccount(ctx, sa); werr == nil {
			after, err = t.ri.Apply(ctx, name, obj, applyOpts)
		}
	}
	if field, reason, ok := typedPatchRefusal(err); ok {
		return cluster.AppliedObject{}, &cluster.InvalidObjectError{Field: field, Reason: reason, Err: c.wrap(err, "apply", what)}
	}
	if err != nil {
		return cluster.AppliedObject{}, c.wrap(err, "apply", what)
	}

	r := cluster.AppliedObject{
		APIVersion: after.GetAPIVersion(),
		Kind:       after.GetKind(),
		Namespace:  after.GetNamespace(),
		Name:       after.GetName(),
		Action:     applyAction(before, after),
		Object:     after.Object,
	}
	if isCRD(after) {
		established, err := c.waitCRDEstablished(ctx, after)
		if err != nil {
			return r, err
		}
		r.Object = established
	}
	return r, nil
}

// applyAction compares the object before and after the apply, ignoring
// what changes without the apply's doing (status, resourceVersion,
// managedFields): a controller updating a Deployment's status between the
// two reads must not turn "unchanged" into "configured".
func applyAction(before, after *unstructured.Unstructured) string {
	if before == nil {
		return ActionCreated
	}
	if before.GetResourceVersion() == after.GetResourceVersion() {
		return ActionUnchanged
	}
	if reflect.DeepEqual(withoutVolatile(before.Object), withoutVolatile(after.Object)) {
		return ActionUnchanged
	}
	return ActionConfigured
}

func withoutVolatile(obj map[string]any) map[string]any {
	c := make(map[string]any, len(obj))
	for k, v := range obj {
		if k != "status" {
			c[k] = v
		}
	}
	if md, ok := obj["metadata"].(map[string]any); ok {
		m := make(map[string]any, len(md))
		for k, v := range md {
			switch k {
			case "resourceVersion", "managedFields", "generation":
			default:
				m[k] = v
			}
		}
		c["metadata"] = m
	}
	return c
}

func isCRD(u *unstructured.Unstructured) bool {
	gvk := u.GroupVersionKind()
	return gvk.Group == "apiextensions.k8s.io" && gvk.Kind == "CustomResourceDefinition"
}

// waitCRDEstablished waits (watching, not polling) until the CRD's
// Established condition is True, then makes its kinds resolvable at once:
// the RESTMapper remembers them from the CRD spec and forgets its cached
// discovery.
func (c *Client) waitCRDEstablished(ctx context.Context, crd *unstructured.Unstructured) (map[string]any, error) {
	obj := crd.Object
	if established, err := crdEstablished(obj); err != nil {
		return nil, err
	} else if !established {
		wctx, cancel := context.WithTimeout(ctx, CRDTimeout)
		defer cancel()
		objs, err := c.Wait(wctx, cluster.ObjectQuery{APIVersion: crd.GetAPIVersion(), Kind: crd.GetKind(), Name: crd.GetName()},
			func(objs []map[string]any) (bool, error) {
				if len(objs) == 0 {
					return false, nil
				}
				return crdEstablished(objs[0])
			}, nil)
		if err != nil {
			var we *WaitError
			if errors.As(err, &we) {
				we.What = fmt.Sprintf("CustomResourceDefinition %q to be Established", crd.GetName())
			}
			return nil, err
		}
		obj = objs[0]
	}
	c.rememberCRD(obj)
	return obj, nil
}

// crdEstablished reads the CRD's conditions. NamesAccepted=False is final
// (e.g. the plural name is taken), so it is an error rather than a wait.
func crdEstablished(obj map[string]any) (bool, error) {
	for _, cond := range k8sobj.Conditions(obj) {
		if cond.Type == "NamesAccepted" && cond.Status == "False" {
			return false, fmt.Errorf("CustomResourceDefinition names not accepted: %s: %s", cond.Reason, cond.Message)
		}
	}
	return k8sobj.ConditionTrue(obj, "Established"), nil
}

func (c *Client) rememberCRD(obj map[string]any) {
	group, _, _ := unstructured.NestedString(obj, "spec", "group")
	kind, _, _ := unstructured.NestedString(obj, "spec", "names", "kind")
	plural, _, _ := unstructured.NestedString(obj, "spec", "names", "plural")
	scope, _, _ := unstructured.NestedString(obj, "spec", "scope")
	versions, _, _ := unstructured.NestedSlice(obj, "spec", "versions")
	var served []string
	for _, v := range versions {
		vm, _ := v.(map[string]any)
		name, _, _ := unstructured.NestedString(vm, "name")
		ok, _, _ := unstructured.NestedBool(vm, "served")
		if name != "" && ok {
			served = append(served, name)
		}
	}
	if group != "" && kind != "" && plural != "" {
		c.mapper.rememberCRD(group, kind, plural, served, scope == "Namespaced")
	}
	c.mapper.Reset()
}

// noMatch reports whether err says a kind is unknown to the server.
func noMatch(err error) bool { return meta.IsNoMatchError(err) }

// serviceAccountLookup matches the admission error for a pod whose service
// account does not exist (yet): "error looking up service account NS/NAME".
var serviceAccountLookup = regexp.MustCompile(`error looking up service account ([a-z0-9.-]+)/([a-z0-9.-]+): serviceaccount "[^"]*" not found`)

// missingServiceAccount recognizes that error and names the account.
func missingServiceAccount(err error) (cluster.ObjectQuery, bool) {
	if err == nil || !apierrors.IsForbidden(err) {
		return cluster.ObjectQuery{}, false
	}
	m := serviceAccountLookup.FindStringSubmatch(err.Error())
	if m == nil {
		return cluster.ObjectQuery{}, false
	}
	return cluster.ObjectQuery{APIVersion: "v1", Kind: "ServiceAccount", Namespace: m[1], Name: m[2]}, true
}

// serviceAccountTimeout bounds the wait for a new namespace's service
// account; the controller normally creates it within milliseconds.
const serviceAccountTimeout = 30 * time.Second

func (c *Client) waitServiceAccount(ctx context.Context, sa cluster.ObjectQuery) error {
	ctx, cancel := context.WithTimeout(ctx, serviceAccountTimeout)
	defer cancel()
	_, err := c.Wait(ctx, sa,
		func(objs []map[string]any) (bool, error) { return len(objs) > 0, nil }, nil)
	return err
}
