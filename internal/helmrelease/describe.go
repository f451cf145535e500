package helmrelease

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"
	"time"

	"helm.sh/helm/v4/pkg/action"
	ri "helm.sh/helm/v4/pkg/release"
	release "helm.sh/helm/v4/pkg/release/v1"
	"helm.sh/helm/v4/pkg/storage/driver"

	"github.com/labrun/labrun/internal/cluster"
)

// errNoRelease is a release Helm has no revision of.
var errNoRelease = driver.ErrReleaseNotFound

// history is every revision of the release Helm keeps, oldest first:
// one list of its Secrets, which is all a read of a release costs.
func history(cfg *action.Configuration, name string) ([]*release.Release, error) {
	all, err := cfg.Releases.History(name)
	if err != nil {
		return nil, err
	}
	if len(all) == 0 {
		return nil, errNoRelease
	}
	out := make([]*release.Release, 0, len(all))
	for _, r := range all {
		rel, err := v1(r)
		if err != nil {
			return nil, err
		}
		out = append(out, rel)
	}
	slices.SortFunc(out, func(a, b *release.Release) int { return a.Version - b.Version })
	return out, nil
}

// v1 is a stored release as Helm's v1 type, the only one Helm 4 stores.
func v1(r ri.Releaser) (*release.Release, error) {
	switch rel := r.(type) {
	case *release.Release:
		return rel, nil
	case release.Release:
		return &rel, nil
	}
	return nil, fmt.Errorf("a stored release of type %T, which this Helm does not read", r)
}

// describe is the result of a step that found the revisions before and
// left those after (the same for a read).
func describe(before, after []*release.Release) *cluster.HelmRelease {
	cur := after[len(after)-1]
	out := &cluster.HelmRelease{
		Name:      cur.Name,
		Namespace: cur.Namespace,
		Revision:  cur.Version,
		Values:    nonNil(cur.Config),
	}
	if cur.Info != nil {
		out.Status, out.Description = cur.Info.Status.String(), cur.Info.Description
	}
	out.Chart, out.ChartVersion, out.AppVersion = chartOf(cur)
	out.PreviousValues = map[string]any{}
	if len(before) > 0 {
		prev := before[len(before)-1]
		out.PreviousRevision, out.PreviousValues = prev.Version, nonNil(prev.Config)
	}
	out.Changed = Diff(out.PreviousValues, out.Values)
	for _, r := range after {
		h := cluster.HelmRevision{Revision: r.Version}
		h.Chart, h.ChartVersion, h.AppVersion = chartOf(r)
		if r.Info != nil {
			h.Status, h.Description = r.Info.Status.String(), r.Info.Description
			if !r.Info.LastDeployed.IsZero() {
				h.Updated = r.Info.LastDeployed.UTC().Format(time.RFC3339Nano)
			}
		}
		out.History = append(out.History, h)
	}
	return out
}

func chartOf(r *release.Release) (name, version, appVersion string) {
	if r.Chart == nil || r.Chart.Metadata == nil {
		return "", "", ""
	}
	m := r.Chart.Metadata
	return m.Name, m.Version, m.AppVersion
}

func nonNil(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}

// Diff lists the values that differ between before and after, by dotted
// path (a key with a dot in it is quoted, as helm's --set writes it:
// a\.b), sorted. A map is compared key by key; anything else, a list
// included, as one value. A value only one side has is nil on the other.
func Diff(before, after map[string]any) []cluster.HelmValueChange {
	changes := []cluster.HelmValueChange{}
	diff("", before, after, &changes)
	sort.Slice(changes, func(i, j int) bool { return changes[i].Path < changes[j].Path })
	return changes
}

func diff(prefix string, before, after map[string]any, out *[]cluster.HelmValueChange) {
	keys := map[string]bool{}
	for k := range before {
		keys[k] = true
	}
	for k := range after {
		keys[k] = true
	}
	for k := range keys {
		path := prefix + strings.ReplaceAll(k, ".", `\.`)
		b, inBefore := before[k]
		a, inAfter := after[k]
		bm, bIsMap := b.(map[string]any)
		am, aIsMap := a.(map[string]any)
		switch {
		case bIsMap && aIsMap, bIsMap && !inAfter, aIsMap && !inBefore:
			// a map only one side has differs in each of its values
			diff(path+".", bm, am, out)
		case inBefore && inAfter && reflect.DeepEqual(a, b):
		default:
			*out = append(*out, cluster.HelmValueChange{Path: path, Before: b, After: a})
		}
	}
}

// IsNotFound reports whether err says that Helm has no such release.
func IsNotFound(err error) bool { return errors.Is(err, errNoRelease) }
