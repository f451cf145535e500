package helmrelease

import (
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	release "helm.sh/helm/v4/pkg/release/v1"
	"helm.sh/helm/v4/pkg/storage/driver"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/labrun/labrun/internal/boundary/cluster"
)

// errNoRelease is a release Helm has no revision of.
var errNoRelease = driver.ErrReleaseNotFound

// revisions are the release's revisions, oldest first, from the labels
// of the Secrets Helm keeps them in (owner=helm, name, version, status,
// createdAt/modifiedAt), none of them decoded, and the newest revision's
// Secret.
func revisions(items []metav1.PartialObjectMetadata) ([]cluster.HelmRevision, *metav1.PartialObjectMetadata, error) {
	if len(items) == 0 {
		return nil, nil, errNoRelease
	}
	out := make([]cluster.HelmRevision, 0, len(items))
	newest := 0
	for i, item := range items {
		rev, err := revisionOf(item.Name, item.Labels)
		if err != nil {
			return nil, nil, err
		}
		if i > 0 && rev.Revision > out[newest].Revision {
			newest = i
		}
		out = append(out, rev)
	}
	slices.SortFunc(out, func(a, b cluster.HelmRevision) int { return a.Revision - b.Revision })
	return out, &items[newest], nil
}

// revisionOf reads one revision from its Secret's labels, refusing a
// Secret whose version label is not a number rather than guessing.
func revisionOf(secret string, l map[string]string) (cluster.HelmRevision, error) {
	v, err := strconv.Atoi(l["version"])
	if err != nil || v < 1 {
		return cluster.HelmRevision{}, fmt.Errorf("the release's Secret %s: label version=%q is not a revision number", secret, l["version"])
	}
	rev := cluster.HelmRevision{Revision: v, Status: l["status"]}
	at := l["modifiedAt"]
	if at == "" {
		at = l["createdAt"]
	}
	if at != "" {
		sec, err := strconv.ParseInt(at, 10, 64)
		if err != nil {
			return cluster.HelmRevision{}, fmt.Errorf("the release's Secret %s: label modifiedAt/createdAt=%q is not a Unix time", secret, at)
		}
		rev.Updated = time.Unix(sec, 0).UTC().Format(time.RFC3339)
	}
	return rev, nil
}

// describe is the result of a step that found the release as prev (nil
// when an install made it) and left it as cur, with the revisions after.
func describe(prev, cur *release.Release, history []cluster.HelmRevision) *cluster.HelmRelease {
	out := &cluster.HelmRelease{
		Name:      cur.Name,
		Namespace: cur.Namespace,
		Revision:  cur.Version,
		Values:    nonNil(cur.Config),
		History:   history,
	}
	if cur.Info != nil {
		out.Status, out.Description = cur.Info.Status.String(), cur.Info.Description
	}
	out.Chart, out.ChartVersion, out.AppVersion = chartOf(cur)
	out.PreviousValues = map[string]any{}
	if prev != nil {
		out.PreviousRevision, out.PreviousValues = prev.Version, nonNil(prev.Config)
	}
	out.Changed = Diff(out.PreviousValues, out.Values)
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
