package kube

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/restmapper"
)

// restMapper resolves kinds to resources through discovery. Discovery is
// fetched once and cached for the whole run (a lab resolves many kinds, and
// aggregated discovery is one request). When a kind is unknown the cache is
// reset and the lookup retried once, so that a CRD installed since the cache
// was filled (by this apply, an earlier step, or an operator such as Cilium)
// is found.
//
// CRDs that labrun itself applied and saw Established are also remembered
// directly from their spec: the API server publishes a new group in
// discovery a moment after the CRD is Established, and the remembered
// mapping closes that gap deterministically instead of retrying on a timer.
type restMapper struct {
	deferred *restmapper.DeferredDiscoveryRESTMapper
	mapper   meta.RESTMapper // deferred, with short names (deploy, ds, ...) expanded

	mu   sync.Mutex
	crds map[schema.GroupKind]crdMapping
}

type crdMapping struct {
	resource   string // plural
	versions   []string
	namespaced bool
}

func newRESTMapper(disc discovery.DiscoveryInterface, deferred *restmapper.DeferredDiscoveryRESTMapper) *restMapper {
	return &restMapper{
		deferred: deferred,
		mapper:   restmapper.NewShortcutExpander(deferred, disc, func(string) {}),
		crds:     map[schema.GroupKind]crdMapping{},
	}
}

// Reset drops the cached discovery information.
func (m *restMapper) Reset() { m.deferred.Reset() }

// mapping resolves a group/version/kind. Version may be empty (the
// preferred version is used).
func (m *restMapper) mapping(gvk schema.GroupVersionKind) (*meta.RESTMapping, error) {
	var versions []string
	if gvk.Version != "" {
		versions = []string{gvk.Version}
	}
	gk := gvk.GroupKind()
	rm, err := m.mapper.RESTMapping(gk, versions...)
	if err == nil {
		return rm, nil
	}
	if !meta.IsNoMatchError(err) {
		return nil, err
	}
	if rm, ok := m.fromCRD(gvk); ok {
		return rm, nil
	}
	m.Reset()
	return m.mapper.RESTMapping(gk, versions...)
}

// resolve turns what a playbook says into a mapping. apiVersion may be
// empty; kind may then be a kind ("Deployment"), a resource ("deployments"),
// a short name ("deploy") or resource.group ("deployments.apps").
func (m *restMapper) resolve(apiVersion, kind string) (*meta.RESTMapping, error) {
	if kind == "" {
		return nil, fmt.Errorf("no kind given")
	}
	if apiVersion != "" {
		gv, err := schema.ParseGroupVersion(apiVersion)
		if err != nil {
			return nil, fmt.Errorf("bad apiVersion %q: %w", apiVersion, err)
		}
		return m.mapping(gv.WithKind(kind))
	}
	gvk, err := m.kindFor(kind)
	if err != nil && meta.IsNoMatchError(err) {
		m.Reset()
		gvk, err = m.kindFor(kind)
	}
	if err != nil {
		return nil, err
	}
	return m.mapping(gvk)
}

func (m *restMapper) kindFor(kind string) (schema.GroupVersionKind, error) {
	gr := schema.ParseGroupResource(strings.ToLower(kind))
	return m.mapper.KindFor(gr.WithVersion(""))
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
	scope := meta.RESTScopeRoot
	if c.namespaced {
		scope = meta.RESTScopeNamespace
	}
	return &meta.RESTMapping{
		Resource:         schema.GroupVersionResource{Group: gvk.Group, Version: version, Resource: c.resource},
		GroupVersionKind: schema.GroupVersionKind{Group: gvk.Group, Version: version, Kind: gvk.Kind},
		Scope:            scope,
	}, true
}
