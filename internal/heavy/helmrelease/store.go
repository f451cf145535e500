package helmrelease

import (
	"context"
	"fmt"
	"maps"
	"sync"

	ri "helm.sh/helm/v4/pkg/release"
	release "helm.sh/helm/v4/pkg/release/v1"
	"helm.sh/helm/v4/pkg/storage/driver"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/metadata"
)

// store is Helm's Secrets storage driver with the revisions it decoded
// kept for the run. Helm keeps each revision in a Secret as a gzipped
// copy of the whole release, chart included, and its upgrade and
// rollback read the release's history two or three times (the last
// revision, the deployed one, the oldest to prune), each time listing
// every Secret with its data and decoding every revision: for Cilium's
// chart with the ten revisions Helm keeps, about a third of a second a
// pass on this machine. store lists only the Secrets' metadata and
// decodes a revision again only when its Secret changed (a new
// resourceVersion); writes go to Helm's driver unchanged.
type store struct {
	*driver.Secrets // Create, Update, Delete, List (every release of the namespace) and Name
	meta            metadata.ResourceInterface

	mu      sync.Mutex
	decoded map[string]decodedRevision // by Secret name
}

type decodedRevision struct {
	resourceVersion string
	release         *release.Release
}

func newStore(secrets *driver.Secrets, meta metadata.ResourceInterface) *store {
	return &store{Secrets: secrets, meta: meta, decoded: map[string]decodedRevision{}}
}

// Get is the driver's Get: the revision in Secret key.
func (s *store) Get(key string) (ri.Releaser, error) {
	m, err := s.meta.Get(context.Background(), key, metav1.GetOptions{})
	if err != nil {
		// the driver's own error for this key (not found included)
		return s.Secrets.Get(key)
	}
	rel, err := s.revision(key, m.ResourceVersion)
	if err != nil {
		return nil, err
	}
	return rel, nil
}

// Query is the driver's Query: the revisions whose Secrets carry the
// labels, each decoded at most once per version of its Secret.
func (s *store) Query(l map[string]string) ([]ri.Releaser, error) {
	items, err := s.list(context.Background(), l)
	if err != nil {
		return nil, err
	}
	if len(items) == 0 {
		return nil, driver.ErrReleaseNotFound
	}
	out := make([]ri.Releaser, 0, len(items))
	for _, m := range items {
		rel, err := s.revision(m.Name, m.ResourceVersion)
		if err != nil {
			return nil, err
		}
		// as the driver's Query: the Secret's labels, all of them
		rel.Labels = m.Labels
		out = append(out, rel)
	}
	return out, nil
}

// list lists the metadata of the Secrets carrying the labels.
func (s *store) list(ctx context.Context, l map[string]string) ([]metav1.PartialObjectMetadata, error) {
	sel, err := labels.ValidatedSelectorFromSet(l)
	if err != nil {
		return nil, fmt.Errorf("query: %w", err)
	}
	list, err := s.meta.List(ctx, metav1.ListOptions{LabelSelector: sel.String()})
	if err != nil {
		return nil, fmt.Errorf("query: failed to query with labels: %w", err)
	}
	return list.Items, nil
}

// revision is the revision in Secret key at resourceVersion rv: the one
// decoded before when the Secret has not changed since, else the
// driver's Get, kept. (A Secret that changed between the list and the
// Get is kept under the listed version with newer content, and decoded
// again on the next list, which sees its new version.)
func (s *store) revision(key, rv string) (*release.Release, error) {
	s.mu.Lock()
	d, ok := s.decoded[key]
	s.mu.Unlock()
	if ok && d.resourceVersion == rv {
		return copyRelease(d.release), nil
	}
	r, err := s.Secrets.Get(key)
	if err != nil {
		return nil, err
	}
	rel, err := asV1(r)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.decoded[key] = decodedRevision{resourceVersion: rv, release: copyRelease(rel)}
	s.mu.Unlock()
	return rel, nil
}

// copyRelease copies what Helm writes into a release it read: its
// status (Info), labels and hooks' last runs. The chart, values and
// manifest are shared; Helm reads them and builds new ones.
func copyRelease(r *release.Release) *release.Release {
	cp := *r
	if r.Info != nil {
		info := *r.Info
		cp.Info = &info
	}
	cp.Labels = maps.Clone(r.Labels)
	cp.Hooks = make([]*release.Hook, len(r.Hooks))
	for i, h := range r.Hooks {
		hook := *h
		cp.Hooks[i] = &hook
	}
	return &cp
}

// asV1 is a stored release as Helm's v1 type, the only one Helm 4 stores.
func asV1(r ri.Releaser) (*release.Release, error) {
	switch rel := r.(type) {
	case *release.Release:
		return rel, nil
	case release.Release:
		return &rel, nil
	}
	return nil, fmt.Errorf("a stored release of type %T, which this Helm does not read", r)
}
