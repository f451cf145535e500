package access

import (
	"slices"

	"github.com/labrun/labrun/actions"
	"github.com/labrun/labrun/runner"
)

// systemNamespaces are a cluster's own: a lab may apply one (to label
// it), but deleting it would break the cluster, not reset the lab.
var systemNamespaces = []string{"default", "kube-system", "kube-public", "kube-node-lease"}

// Namespaces lists the Namespaces a solve of p makes: the Namespace
// objects its apply steps apply, from their manifests and inline
// objects, whose names are known before the run, in the order the steps
// apply them; never a cluster's own namespaces (default, kube-system,
// kube-public, kube-node-lease). labrun test --repeat deletes them to
// give each run a fresh lab: what the lab made in them goes with them.
func Namespaces(p *runner.Plan, opts Options) ([]string, error) {
	opts.Mode = actions.Solve
	var names []string
	applied := func(o actions.ManifestObject) {
		if o.Kind == "Namespace" && (o.APIVersion == "" || o.APIVersion == "v1") && o.Name != "" &&
			!slices.Contains(names, o.Name) && !slices.Contains(systemNamespaces, o.Name) {
			names = append(names, o.Name)
		}
	}
	if _, err := deriveWith(p, opts, applied); err != nil {
		return nil, err
	}
	return names, nil
}
