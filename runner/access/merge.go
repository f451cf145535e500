package access

import (
	"slices"

	"github.com/labrun/labrun/internal/boundary/cluster"
)

// Merge joins the permissions of several derivations (the same playbook
// for each target of a class, in its own namespace) into one list, as
// Derive orders it: a permission two of them need once, with the steps of
// both; a namespace's need that a cluster-wide one grants folded into it.
func Merge(lists ...[]Need) []Need {
	var out []Need
	at := map[cluster.Access]int{}
	for _, needs := range lists {
		for _, n := range needs {
			i, ok := at[n.Access]
			if !ok {
				at[n.Access] = len(out)
				out = append(out, Need{Access: n.Access, Steps: slices.Clone(n.Steps)})
				continue
			}
			for _, s := range n.Steps {
				if !slices.Contains(out[i].Steps, s) {
					out[i].Steps = append(out[i].Steps, s)
				}
			}
		}
	}
	out = foldIntoClusterWide(out)
	slices.SortStableFunc(out, func(a, b Need) int { return compareAccess(a.Access, b.Access) })
	return out
}
