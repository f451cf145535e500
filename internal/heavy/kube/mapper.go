package kube

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// restMapper resolves kinds to resources through discovery (see
// discovery.go). Discovery is fetched once and cached for the whole run (a
// lab resolves many kinds, and aggregated discovery is two requests). When
// a kind is unknown the cache is dropped and the lookup retried once, so
// that a CRD installed since the cache was filled (by this apply, an
// earlier step, or an operator such as Cilium) is found.
//
// CRDs that labrun itself applied and saw Established are also remembered
// directly from their spec: the API server publishes a new group in
// discovery a moment after the CRD is Established, and the remembered
// mapping closes that gap deterministically instead of retrying on a timer.
type restMapper struct {
	discover discoverFunc

	mu    sync.Mutex
	index *resourceIndex // nil until discovered, and after Reset
	crds  map[schema.GroupKind]crdMapping
}

type crdMapping struct {
	resource   string // plural
	versions   []string
	namespaced bool
}

func newRESTMapper(discover discoverFunc) *restMapper {
	return &restMapper{discover: discover, crds: map[schema.GroupKind]crdMapping{}}
}

// Reset drops the cached discovery information.
func (m *restMapper) Reset() {
	m.mu.Lock()
	m.index = nil
	m.mu.Unlock()
}

// resourceIndex answers the two questions a playbook's kinds raise: which
// kind a name means, and which resource serves a kind.
type resourceIndex struct {
	byKind  map[schema.GroupKind][]apiResource // versions from preferred
	byName  map[string][]apiResource           // plural, singular or lowercase kind
	byShort map[string][]apiResource           // short names (deploy, ds, cep)
}

// newResourceIndex indexes resources listed in priority order (see
// discoverFunc), so the first candidate of any list is the one kubectl
// would pick, e.g. core's events before events.k8s.io's.
func newResourceIndex(resources []apiResource) *resourceIndex {
	ix := &resourceIndex{
		byKind:  map[schema.GroupKind][]apiResource{},
		byName:  map[string][]apiResource{},
		byShort: map[string][]apiResource{},
	}
	for _, r := range resources {
		gk := schema.GroupKind{Group: r.gvr.Group, Kind: r.kind}
		ix.byKind[gk] = append(ix.byKind[gk], r)
		names := []string{r.gvr.Resource, r.singular, strings.ToLower(r.kind)}
		for i, n := range names {
			if n != "" && !slices.Contains(names[:i], n) {
				ix.byName[n] = append(ix.byName[n], r)
			}
		}
		for _, n := range r.shortNames {
			ix.byShort[n] = append(ix.byShort[n], r)
		}
	}
	return ix
}

// kindFor resolves a resource name, singular, short name or lowercase kind,
// optionally qualified by its group ("deployments.apps"). Short names win
// over the other names, as in kubectl.
func (ix *resourceIndex) kindFor(gr schema.GroupResource) (schema.GroupVersionKind, bool) {
	for _, cands := range [][]apiResource{ix.byShort[gr.Resource], ix.byName[gr.Resource]} {
		for _, r := range cands {
			if gr.Group == "" || gr.Group == r.gvr.Group {
				return r.gvr.GroupVersion().WithKind(r.kind), true
			}
		}
	}
	return schema.GroupVersionKind{}, false
}

// mapping returns the resource serving gk in the given version, or in its
// preferred version when version is empty.
func (ix *resourceIndex) mapping(gk schema.GroupKind, version string) (*meta.RESTMapping, bool) {
	for _, r := range ix.byKind[gk] {
		if version == "" || r.gvr.Version == version {
			return restMapping(r.gvr, r.kind, r.namespaced), true
		}
	}
	return nil, false
}

func restMapping(gvr schema.GroupVersionResource, kind string, namespaced bool) *meta.RESTMapping {
	scope := meta.RESTScopeRoot
	if namespaced {
		scope = meta.RESTScopeNamespace
	}
	return &meta.RESTMapping{Resource: gvr, GroupVersionKind: gvr.GroupVersion().WithKind(kind), Scope: scope}
}

// current returns the discovered index, discovering first if needed.
func (m *restMapper) current(ctx context.Context) (*resourceIndex, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.index == nil {
		res, err := m.discover(ctx)
		if err != nil {
			return nil, err
		}
		m.index = newResourceIndex(res)
	}
	return m.index, nil
}

// lookup asks the index, and on a miss asks again after discovering anew.
func lookup[T any](ctx context.Context, m *restMapper, find func(*resourceIndex) (T, bool)) (T, bool, error) {
	var zero T
	for attempt := 0; attempt < 2; attempt++ {
		if attempt == 1 {
			m.Reset()
		}
		ix, err := m.current(ctx)
		if err != nil {
			return zero, false, err
		}
		if v, ok := find(ix); ok {
			return v, true, nil
		}
	}
	return zero, false, nil
}

// mapping resolves a group/version/kind. Version may be empty (the
// preferred version is used). Discovery answers first, then the CRDs
// labrun saw Established.
func (m *restMapper) mapping(ctx context.Context, gvk schema.GroupVersionKind) (*meta.RESTMapping, error) {
	gk := gvk.GroupKind()
	rm, ok, err := lookup(ctx, m, func(ix *resourceIndex) (*meta.RESTMapping, bool) {
		if rm, ok := ix.mapping(gk, gvk.Version); ok {
			return rm, true
		}
		return m.fromCRD(gvk)
	})
	if err != nil {
		return nil, err
	}
	if !ok {
		var versions []string
		if gvk.Version != "" {
			versions = []string{gvk.Version}
		}
		return nil, &meta.NoKindMatchError{GroupKind: gk, SearchedVersions: versions}
	}
	return rm, nil
}

// resolve turns what a playbook says into a mapping. apiVersion may be
// empty; kind may then be a kind ("Deployment"), a resource ("deployments"),
// a short name ("deploy") or resource.group ("deployments.apps").
func (m *restMapper) resolve(ctx context.Context, apiVersion, kind string) (*meta.RESTMapping, error) {
	if kind == "" {
		return nil, fmt.Errorf("no kind given")
	}
	if apiVersion != "" {
		gv, err := schema.ParseGroupVersion(apiVersion)
		if err != nil {
			return nil, fmt.Errorf("bad apiVersion %q: %w", apiVersion, err)
		}
		return m.mapping(ctx, gv.WithKind(kind))
	}
	gr := schema.ParseGroupResource(strings.ToLower(kind))
	gvk, ok, err := lookup(ctx, m, func(ix *resourceIndex) (schema.GroupVersionKind, bool) {
		if gvk, ok := ix.kindFor(gr); ok {
			return gvk, true
		}
		return m.crdKindFor(gr)
	})
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, &unknownResourceError{gr: gr}
	}
	return m.mapping(ctx, gvk)
}

// crdKindFor finds a remembered CRD by its plural or lowercase kind.
func (m *restMapper) crdKindFor(gr schema.GroupResource) (schema.GroupVersionKind, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for gk, c := range m.crds {
		if (gr.Group == "" || gr.Group == gk.Group) && (gr.Resource == c.resource || gr.Resource == strings.ToLower(gk.Kind)) {
			return gk.WithVersion(""), true
		}
	}
	return schema.GroupVersionKind{}, false
}

// rememberCRD records the resources a CRD serves (see restMapper).
func (m *restMapper) rememberCRD(group, kind, plural string, versions []string, namespaced bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.crds[schema.GroupKind{Group: group, Kind: kind}] = crdMapping{resource: plural, versions: versions, namespaced: namespaced}
}

func (m *restMapper) fromCRD(gvk schema.GroupVersionKind) (*meta.RESTMapping, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c, ok := m.crds[gvk.GroupKind()]
	if !ok || len(c.versions) == 0 {
		return nil, false
	}
	version := gvk.Version
	if version == "" {
		version = c.versions[0]
	} else if !slices.Contains(c.versions, version) {
		return nil, false
	}
	return restMapping(schema.GroupVersionResource{Group: gvk.Group, Version: version, Resource: c.resource}, gvk.Kind, c.namespaced), true
}

// unknownResourceError says that a name matched no resource the server
// serves, in kubectl's words rather than apimachinery's ("no matches for
// /, Resource=nope"); it still is a no-match error (meta.IsNoMatchError).
type unknownResourceError struct{ gr schema.GroupResource }

func (e *unknownResourceError) Error() string {
	if e.gr.Group != "" {
		return fmt.Sprintf("the server doesn't have a resource type %q in group %q", e.gr.Resource, e.gr.Group)
	}
	return fmt.Sprintf("the server doesn't have a resource type %q", e.gr.Resource)
}

func (e *unknownResourceError) Unwrap() error {
	return &meta.NoResourceMatchError{PartialResource: e.gr.WithVersion("")}
}
