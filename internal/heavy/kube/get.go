package kube

import (
	"context"
	"fmt"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/dynamic"

	"github.com/labrun/labrun/internal/boundary/cluster"
)

// IsNotFound tells whether err means the object (or its kind) does not exist.
func IsNotFound(err error) bool { return apierrors.IsNotFound(err) }

// target is a resolved kind plus the namespace to use with it.
type target struct {
	mapping   *meta.RESTMapping
	namespace string // "" for cluster-scoped kinds or all namespaces
	ri        dynamic.ResourceInterface
}

func (t target) kind() string { return t.mapping.GroupVersionKind.Kind }

// resource resolves apiVersion/kind and picks the namespace.
func (c *Client) resource(ctx context.Context, apiVersion, kind, namespace string, allNamespaces bool) (target, error) {
	m, err := c.mapper.resolve(ctx, apiVersion, kind)
	if err != nil {
		what := kind
		if apiVersion != "" {
			what = apiVersion + " " + kind
		}
		return target{}, c.wrap(err, "resolve kind", what)
	}
	t := target{mapping: m}
	nri := c.dynamic.Resource(m.Resource)
	if m.Scope.Name() != meta.RESTScopeNameNamespace {
		t.ri = nri
		return t, nil
	}
	if allNamespaces {
		t.ri = nri
		return t, nil
	}
	if namespace == "" {
		namespace = c.Namespace
	}
	t.namespace = namespace
	t.ri = nri.Namespace(namespace)
	return t, nil
}

// Get returns one object as its unstructured content (.Object), so that
// expressions can read e.g. .spec.clusterIP.
func (c *Client) Get(ctx context.Context, ref cluster.ObjectQuery) (map[string]any, error) {
	t, err := c.resource(ctx, ref.APIVersion, ref.Kind, ref.Namespace, false)
	if err != nil {
		return nil, err
	}
	u, err := t.ri.Get(ctx, ref.Name, metav1.GetOptions{})
	if err != nil {
		return nil, c.wrap(err, "get", describe(t.kind(), t.namespace, ref.Name))
	}
	return u.Object, nil
}

// List returns the selected objects sorted by namespace and name, so that
// results and "first match" choices are the same on every run.
func (c *Client) List(ctx context.Context, opts cluster.ObjectQuery) (_ []map[string]any, err error) {
	defer transient(&err)
	t, err := c.resource(ctx, opts.APIVersion, opts.Kind, opts.Namespace, opts.AllNamespaces)
	if err != nil {
		return nil, err
	}
	lo, err := listOptions(opts)
	if err != nil {
		return nil, err
	}
	list, err := t.ri.List(ctx, lo)
	if err != nil {
		return nil, c.wrap(err, "list", describeSet(t, opts))
	}
	return sortedObjects(list.Items), nil
}

// listOptions turns selectors into the API's form, folding Name into the
// field selector (metadata.name=...) so that watches of one object work
// before it exists.
func listOptions(opts cluster.ObjectQuery) (metav1.ListOptions, error) {
	var lo metav1.ListOptions
	if opts.Selector != "" {
		sel, err := labels.Parse(opts.Selector)
		if err != nil {
			return lo, fmt.Errorf("bad label selector %q: %w", opts.Selector, err)
		}
		lo.LabelSelector = sel.String()
	}
	var fs []fields.Selector
	if opts.FieldSelector != "" {
		sel, err := fields.ParseSelector(opts.FieldSelector)
		if err != nil {
			return lo, fmt.Errorf("bad field selector %q: %w", opts.FieldSelector, err)
		}
		fs = append(fs, sel)
	}
	if opts.Name != "" {
		fs = append(fs, fields.OneTermEqualSelector("metadata.name", opts.Name))
	}
	if len(fs) > 0 {
		lo.FieldSelector = fields.AndSelectors(fs...).String()
	}
	return lo, nil
}

// describeSet names a selection for messages:
// `pods with labels app=web in namespace "lab"`.
func describeSet(t target, opts cluster.ObjectQuery) string {
	s := strings.ToLower(t.mapping.Resource.Resource)
	if t.mapping.Resource.Group != "" {
		s += "." + t.mapping.Resource.Group
	}
	if t.mapping.Scope.Name() != meta.RESTScopeNameNamespace {
		opts.AllNamespaces = false // a cluster-scoped kind has no namespaces
	}
	return opts.Describe(s, t.namespace)
}

func sortedObjects(items []unstructured.Unstructured) []map[string]any {
	out := make([]map[string]any, 0, len(items))
	for i := range items {
		out = append(out, items[i].Object)
	}
	sortObjects(out)
	return out
}

func sortObjects(objs []map[string]any) {
	slices.SortFunc(objs, func(a, b map[string]any) int {
		return strings.Compare(objectKey(a), objectKey(b))
	})
}

// objectKey is "namespace/name" (or "name" for cluster-scoped objects).
func objectKey(obj map[string]any) string {
	ns, _, _ := unstructured.NestedString(obj, "metadata", "namespace")
	name, _, _ := unstructured.NestedString(obj, "metadata", "name")
	if ns == "" {
		return name
	}
	return ns + "/" + name
}
