package cluster

import (
	"fmt"
	"strings"
)

// The permissions the methods of Cluster need: what each call asks of the
// API server, as package kube makes its requests, named the way RBAC and
// a SelfSubjectAccessReview name them. `labrun rbac` prints the Role a
// playbook needs from these, and run and check ask the API server for
// them before the first step. Each function below says which requests
// its method makes; a change to a method in kube changes its function
// here (kube's access_test.go records the requests each method makes and
// compares them with these functions).

// Access is one permission: a verb on a resource, or on one of its
// subresources, of an API group, in a namespace or cluster-wide.
type Access struct {
	Verb        string `json:"verb"`
	Group       string `json:"group"` // "" for the core group
	Resource    string `json:"resource"`
	Subresource string `json:"subresource,omitempty"`
	// Namespace is where the request is made; "" for a cluster-scoped
	// resource, or a namespaced one over all namespaces.
	Namespace string `json:"namespace,omitempty"`
}

// String names the permission as `verb resource (namespace)`, the
// resource as kubectl writes it: `create pods/exec (namespace lab)`,
// `list ciliumendpoints.cilium.io (cluster-wide)`.
func (a Access) String() string {
	where := "cluster-wide"
	if a.Namespace != "" {
		where = "namespace " + a.Namespace
	}
	return fmt.Sprintf("%s %s (%s)", a.Verb, a.ResourceName(), where)
}

// ResourceName is the resource as kubectl writes it: plural, its group
// after a dot, its subresource after a slash (deployments.apps/scale).
func (a Access) ResourceName() string {
	s := a.Resource
	if a.Group != "" {
		s += "." + a.Group
	}
	if a.Subresource != "" {
		s += "/" + a.Subresource
	}
	return s
}

// Resource is a kind as the API server serves it.
type Resource struct {
	Group    string // "" for the core group
	Resource string // plural, lowercase: deployments
	Kind     string // Deployment
	// Namespaced: its objects live in namespaces.
	Namespaced bool
}

// The resources the methods read or watch themselves, whatever kind a
// step names: pods and the workloads a pod reference names, the events
// and replica sets a failing rollout's cause is read from, the service
// accounts and CRDs an apply waits for.
var (
	Pods                      = Resource{Resource: "pods", Kind: "Pod", Namespaced: true}
	Services                  = Resource{Resource: "services", Kind: "Service", Namespaced: true}
	Events                    = Resource{Resource: "events", Kind: "Event", Namespaced: true}
	ServiceAccounts           = Resource{Resource: "serviceaccounts", Kind: "ServiceAccount", Namespaced: true}
	Deployments               = Resource{Group: "apps", Resource: "deployments", Kind: "Deployment", Namespaced: true}
	DaemonSets                = Resource{Group: "apps", Resource: "daemonsets", Kind: "DaemonSet", Namespaced: true}
	StatefulSets              = Resource{Group: "apps", Resource: "statefulsets", Kind: "StatefulSet", Namespaced: true}
	ReplicaSets               = Resource{Group: "apps", Resource: "replicasets", Kind: "ReplicaSet", Namespaced: true}
	Jobs                      = Resource{Group: "batch", Resource: "jobs", Kind: "Job", Namespaced: true}
	CustomResourceDefinitions = Resource{Group: "apiextensions.k8s.io", Resource: "customresourcedefinitions", Kind: "CustomResourceDefinition"}
)

// Access returns the permissions of verbs on r in namespace ns ("" for
// all namespaces); a cluster-scoped resource has none.
func (r Resource) Access(ns string, verbs ...string) []Access {
	return r.SubAccess("", ns, verbs...)
}

// SubAccess returns the permissions of verbs on a subresource of r.
func (r Resource) SubAccess(sub, ns string, verbs ...string) []Access {
	if !r.Namespaced {
		ns = ""
	}
	out := make([]Access, len(verbs))
	for i, v := range verbs {
		out[i] = Access{Verb: v, Group: r.Group, Resource: r.Resource, Subresource: sub, Namespace: ns}
	}
	return out
}

// ListAccess is what List asks: list (a name is a field selector of the
// list, not a get).
func ListAccess(r Resource, ns string) []Access { return r.Access(ns, "list") }

// WaitAccess is what Wait asks: list, then watch from the list's version.
func WaitAccess(r Resource, ns string) []Access { return r.Access(ns, "list", "watch") }

// ApplyAccess is what Apply asks for one object of r in ns: get (the
// state before, to tell created from configured) and the server-side
// apply, a patch that creates the object when it is not there (create).
// A CustomResourceDefinition is then waited for until it is Established;
// a Pod refused because its namespace's service account is not there
// yet waits for the account.
func ApplyAccess(r Resource, ns string) []Access {
	out := r.Access(ns, "get", "create", "patch")
	switch r {
	case CustomResourceDefinitions:
		out = append(out, WaitAccess(r, "")...)
	case Pods:
		out = append(out, WaitAccess(ServiceAccounts, ns)...)
	}
	return out
}

// ScaleAccess is what Scale asks: get and patch of the scale subresource.
func ScaleAccess(r Resource, ns string) []Access { return r.SubAccess("scale", ns, "get", "patch") }

// LabelAccess is what Label asks: the object by name (get) or the objects
// a selector picks (list), then a merge patch of each.
func LabelAccess(r Resource, ns string, byName bool) []Access {
	read := "list"
	if byName {
		read = "get"
	}
	return r.Access(ns, read, "patch")
}

// DeleteAccess is what Delete asks: the objects a selector picks (list),
// then delete of each; with wait, each object is read first (get, for its
// UID) and watched until it is gone (list, watch).
func DeleteAccess(r Resource, ns string, byName, wait bool) []Access {
	var out []Access
	if !byName {
		out = append(out, ListAccess(r, ns)...)
	}
	if wait {
		out = append(out, r.Access(ns, "get")...)
	}
	out = append(out, r.Access(ns, "delete")...)
	if wait {
		out = append(out, WaitAccess(r, ns)...)
	}
	return out
}

// ResolvePodAccess is what finding the pod of t asks, in namespace ns: a
// pod by name is read (get pods); a workload reference reads the workload
// for its selector (get deployments, daemonsets, ...) and lists the pods
// it selects (list pods), as a label selector lists them. A target kube
// refuses before any request (a pod and a selector, an unknown kind)
// asks nothing.
func ResolvePodAccess(t PodTarget, ns string) []Access {
	switch {
	case t.Pod != "" && t.Selector != "":
		return nil
	case t.Pod != "":
		kind, _, isRef := strings.Cut(t.Pod, "/")
		if !isRef {
			return Pods.Access(ns, "get")
		}
		w, ok := WorkloadResource(kind)
		if !ok {
			return nil
		}
		if w == Pods {
			return Pods.Access(ns, "get")
		}
		return append(w.Access(ns, "get"), Pods.Access(ns, "list")...)
	case t.Selector != "":
		return Pods.Access(ns, "list")
	}
	return nil
}

// LogsAccess is what Logs asks: the pod (ResolvePodAccess), then its
// container's log (get pods/log).
func LogsAccess(t PodTarget, ns string) []Access {
	return append(ResolvePodAccess(t, ns), Pods.SubAccess("log", ns, "get")...)
}

// ExecAccess is what Exec asks: the pod (ResolvePodAccess); the pod read
// again for its default container when t names none (get pods); then the
// exec itself. It goes over a WebSocket, an HTTP GET (get pods/exec) that
// API servers since Kubernetes 1.35 also authorize as create
// (AuthorizePodWebsocketUpgradeCreatePermission), the verb of the SPDY
// exec older servers fall back to.
func ExecAccess(t PodTarget, ns string) []Access {
	out := ResolvePodAccess(t, ns)
	if t.Container == "" {
		out = append(out, Pods.Access(ns, "get")...)
	}
	return append(out, Pods.SubAccess("exec", ns, "get", "create")...)
}

// WorkloadResource names the resource the kind part of a pod reference
// means, as kubectl exec and logs take it: ds/NAME is a DaemonSet,
// deployments.apps/NAME a Deployment, pod/NAME a Pod; ok is false for a
// kind kube refuses.
func WorkloadResource(kind string) (Resource, bool) {
	k := strings.ToLower(kind)
	if i := strings.IndexByte(k, '.'); i >= 0 { // deployments.apps, jobs.batch
		k = k[:i]
	}
	switch k {
	case "po", "pod", "pods":
		return Pods, true
	case "deploy", "deployment", "deployments":
		return Deployments, true
	case "ds", "daemonset", "daemonsets":
		return DaemonSets, true
	case "sts", "statefulset", "statefulsets":
		return StatefulSets, true
	case "rs", "replicaset", "replicasets":
		return ReplicaSets, true
	case "job", "jobs":
		return Jobs, true
	case "svc", "service", "services":
		return Services, true
	}
	return Resource{}, false
}
