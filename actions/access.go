package actions

import (
	"fmt"
	"strings"

	"github.com/labrun/labrun/internal/boundary/cluster"
	"github.com/labrun/labrun/internal/lang/diag"
	"github.com/labrun/labrun/internal/lang/eval"
)

// What a step asks of the Kubernetes API, for the permissions it needs:
// `labrun rbac` prints them as Roles, and run and check ask the API
// server for them before the first step. An action that calls the
// cluster declares them beside its spec (Def.Access), from the calls it
// makes, in the words of cluster's functions that say what each method
// of cluster.Cluster asks (cluster/access.go). Package runner/access
// hands each step's spec to its action with an AccessContext, before
// the run: no cluster is asked.

// AccessContext is what an action's Access learns of a step besides the
// spec, which holds the values known before the run (a value that reads
// a step's result is not known then, and its field is zero).
type AccessContext struct {
	// Spec is the step's spec as written: where its keys are, and the
	// values the decoded spec cannot hold while a part of them is not
	// known (apply's objects).
	Spec *eval.Value
	// Watch: the step waits for its until with a watch (labrun run);
	// without until, and in labrun check, it reads once.
	Watch bool
	// Namespace is where requests that name no namespace go: the
	// kubeconfig context's.
	Namespace string
	// Unknown reports whether the value of a key of the spec is only
	// known when the step runs.
	Unknown func(key string) bool
	// Eval renders a value of the spec; known is false when it is only
	// known when the step runs.
	Eval func(v *eval.Value) (x any, known bool, err error)
	// Resource resolves an apiVersion ("" when not given) and a kind as
	// a step writes it (Kind, plural or short name) with labrun's table
	// of kinds; ok is false for a kind it does not know.
	Resource func(apiVersion, kind string) (r cluster.Resource, ok bool)
	// Manifests reads the objects of a manifest file (its path as the
	// spec writes it) or text; at is where the spec names it.
	Manifests func(src cluster.ManifestSource, at diag.Pos) ([]ManifestObject, error)
	// Applied, when set, is told each object an apply step applies, as
	// far as the spec and its manifests say before the run (Name empty
	// when it is only known then): runner/access reads from it the
	// Namespaces a lab makes, which labrun test --repeat deletes.
	Applied func(ManifestObject)
}

// ManifestObject is what the permissions of applying an object need of
// it: its apiVersion and kind, its namespace ("" when it names none), and
// where its kind is written; and its name ("" when only known at run
// time), for Applied.
type ManifestObject struct {
	APIVersion, Kind, Namespace, Name string
	Pos                               diag.Pos
}

// CallsCluster reports whether a step of the action may call the
// Kubernetes API.
func (i *Info) CallsCluster() bool { return i.access != nil }

// Access lists the permissions a step with spec (decoded from what is
// known before the run) needs of the Kubernetes API; none for an action
// that does not call the cluster.
func (i *Info) Access(spec any, ac *AccessContext) ([]cluster.Access, error) {
	if i.access == nil {
		return nil, nil
	}
	return i.access(spec, ac)
}

// Objects resolves the objects a query names: the resource of its kind
// and the namespace of its requests ("" for a cluster-scoped kind or all
// namespaces). Its kind and namespace must be known before the run.
func (ac *AccessContext) Objects(q cluster.ObjectQuery) (cluster.Resource, string, error) {
	if err := ac.known("apiVersion", "kind", "namespace", "allNamespaces"); err != nil {
		return cluster.Resource{}, "", err
	}
	r, err := ac.resource(q.APIVersion, q.Kind, ac.Spec.Lookup("kind").Pos)
	if err != nil {
		return cluster.Resource{}, "", err
	}
	ns := q.Namespace
	if ns == "" {
		ns = ac.Namespace
	}
	if q.AllNamespaces || !r.Namespaced {
		ns = ""
	}
	return r, ns, nil
}

// resource resolves a kind written at pos.
func (ac *AccessContext) resource(apiVersion, kind string, pos diag.Pos) (cluster.Resource, error) {
	if r, ok := ac.Resource(apiVersion, kind); ok {
		return r, nil
	}
	what := fmt.Sprintf("kind %q", kind)
	if apiVersion != "" {
		what = fmt.Sprintf("kind %q of %s", kind, apiVersion)
	}
	return cluster.Resource{}, diag.Errorf(pos, "%s is not in labrun's table of kinds, so the permissions it needs are unknown (labrun rbac knows the kinds of Kubernetes and Cilium that labs use, and those of the CRDs a playbook applies)", what)
}

// Pods returns the pod target of a spec as far as it is known, and the
// namespace of its requests; the namespace must be known before the run.
// A pod named by a step's result is a pod's name (a workload reference
// must say its kind, ds/${{ ... }}); a selector known only then is a
// selector all the same.
func (ac *AccessContext) Pods(t cluster.PodTarget) (cluster.PodTarget, string, error) {
	if err := ac.known("namespace"); err != nil {
		return t, "", err
	}
	if ac.Unknown("pod") {
		t.Pod = "pod"
		if kind, _, ref := strings.Cut(ac.Spec.Lookup("pod").Node.Value, "/"); ref && !strings.Contains(kind, "${{") {
			t.Pod = kind + "/name"
		}
	}
	if ac.Unknown("selector") {
		t.Selector = "selected"
	}
	ns := t.Namespace
	if ns == "" {
		ns = ac.Namespace
	}
	return t, ns, nil
}

// known fails for the first of keys whose value is only known when the
// step runs.
func (ac *AccessContext) known(keys ...string) error {
	for _, k := range keys {
		if ac.Unknown(k) {
			return unknownError(ac.Spec.Lookup(k), k)
		}
	}
	return nil
}

// unknownError says that the value of key, at v, decides the
// permissions of a step but is only known when the step runs.
func unknownError(v *eval.Value, key string) error {
	return diag.Errorf(v.Pos, "%s decides which permissions the step needs, but its value is only known when the step runs (it reads a step's result); write it, or take it from vars", key)
}
