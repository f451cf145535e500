package access

import (
	"slices"
	"strings"

	"github.com/labrun/labrun/internal/boundary/cluster"
)

// kind is one entry of labrun's table of kinds: a resource with the
// versions its group serves (preferred first) and the names a step may
// write it by.
type kind struct {
	cluster.Resource
	Versions   []string
	Singular   string
	ShortNames []string
}

// builtinKinds are the kinds of Kubernetes and Cilium that labs use, as
// the API server serves them (Kubernetes 1.36, Cilium 1.20), in the
// order kubectl prefers them: the core group, then the groups in the
// order the server lists them, so that "events" is core's and not
// events.k8s.io's. kinds_test.go holds them against the test cluster's
// discovery (internal/heavy/kube/testdata/discovery).
var builtinKinds = []kind{
	{res("", "pods", "Pod", true), v1, "pod", []string{"po"}},
	{res("", "services", "Service", true), v1, "service", []string{"svc"}},
	{res("", "endpoints", "Endpoints", true), v1, "endpoints", []string{"ep"}},
	{res("", "nodes", "Node", false), v1, "node", []string{"no"}},
	{res("", "namespaces", "Namespace", false), v1, "namespace", []string{"ns"}},
	{res("", "configmaps", "ConfigMap", true), v1, "configmap", []string{"cm"}},
	{res("", "secrets", "Secret", true), v1, "secret", nil},
	{res("", "serviceaccounts", "ServiceAccount", true), v1, "serviceaccount", []string{"sa"}},
	{res("", "events", "Event", true), v1, "event", []string{"ev"}},
	{res("", "persistentvolumeclaims", "PersistentVolumeClaim", true), v1, "persistentvolumeclaim", []string{"pvc"}},
	{res("", "persistentvolumes", "PersistentVolume", false), v1, "persistentvolume", []string{"pv"}},
	{res("", "replicationcontrollers", "ReplicationController", true), v1, "replicationcontroller", []string{"rc"}},
	{res("", "resourcequotas", "ResourceQuota", true), v1, "resourcequota", []string{"quota"}},
	{res("", "limitranges", "LimitRange", true), v1, "limitrange", []string{"limits"}},
	{res("apps", "controllerrevisions", "ControllerRevision", true), v1, "controllerrevision", nil},
	{res("apps", "daemonsets", "DaemonSet", true), v1, "daemonset", []string{"ds"}},
	{res("apps", "deployments", "Deployment", true), v1, "deployment", []string{"deploy"}},
	{res("apps", "replicasets", "ReplicaSet", true), v1, "replicaset", []string{"rs"}},
	{res("apps", "statefulsets", "StatefulSet", true), v1, "statefulset", []string{"sts"}},
	{res("events.k8s.io", "events", "Event", true), v1, "event", []string{"ev"}},
	{res("autoscaling", "horizontalpodautoscalers", "HorizontalPodAutoscaler", true), []string{"v2", "v1"}, "horizontalpodautoscaler", []string{"hpa"}},
	{res("batch", "cronjobs", "CronJob", true), v1, "cronjob", []string{"cj"}},
	{res("batch", "jobs", "Job", true), v1, "job", nil},
	{res("networking.k8s.io", "ingressclasses", "IngressClass", false), v1, "ingressclass", nil},
	{res("networking.k8s.io", "ingresses", "Ingress", true), v1, "ingress", []string{"ing"}},
	{res("networking.k8s.io", "networkpolicies", "NetworkPolicy", true), v1, "networkpolicy", []string{"netpol"}},
	{res("policy", "poddisruptionbudgets", "PodDisruptionBudget", true), v1, "poddisruptionbudget", []string{"pdb"}},
	{res("rbac.authorization.k8s.io", "clusterrolebindings", "ClusterRoleBinding", false), v1, "clusterrolebinding", nil},
	{res("rbac.authorization.k8s.io", "clusterroles", "ClusterRole", false), v1, "clusterrole", nil},
	{res("rbac.authorization.k8s.io", "rolebindings", "RoleBinding", true), v1, "rolebinding", nil},
	{res("rbac.authorization.k8s.io", "roles", "Role", true), v1, "role", nil},
	{res("storage.k8s.io", "storageclasses", "StorageClass", false), v1, "storageclass", []string{"sc"}},
	{res("apiextensions.k8s.io", "customresourcedefinitions", "CustomResourceDefinition", false), v1, "customresourcedefinition", []string{"crd", "crds"}},
	{res("coordination.k8s.io", "leases", "Lease", true), v1, "lease", nil},
	{res("discovery.k8s.io", "endpointslices", "EndpointSlice", true), v1, "endpointslice", nil},
	{res("cilium.io", "ciliumcidrgroups", "CiliumCIDRGroup", false), []string{"v2", "v2alpha1"}, "ciliumcidrgroup", []string{"ccg"}},
	{res("cilium.io", "ciliumclusterwidenetworkpolicies", "CiliumClusterwideNetworkPolicy", false), v2, "ciliumclusterwidenetworkpolicy", []string{"ccnp"}},
	{res("cilium.io", "ciliumendpoints", "CiliumEndpoint", true), v2, "ciliumendpoint", []string{"cep", "ciliumep"}},
	{res("cilium.io", "ciliumidentities", "CiliumIdentity", false), v2, "ciliumidentity", []string{"ciliumid"}},
	{res("cilium.io", "ciliumloadbalancerippools", "CiliumLoadBalancerIPPool", false), []string{"v2", "v2alpha1"}, "ciliumloadbalancerippool", []string{"ippools", "ippool", "lbippool", "lbippools"}},
	{res("cilium.io", "ciliumnetworkpolicies", "CiliumNetworkPolicy", true), v2, "ciliumnetworkpolicy", []string{"cnp", "ciliumnp"}},
	{res("cilium.io", "ciliumnodeconfigs", "CiliumNodeConfig", true), v2, "ciliumnodeconfig", nil},
	{res("cilium.io", "ciliumnodes", "CiliumNode", false), v2, "ciliumnode", []string{"cn", "ciliumn"}},
	{res("cilium.io", "ciliuml2announcementpolicies", "CiliumL2AnnouncementPolicy", false), []string{"v2alpha1"}, "ciliuml2announcementpolicy", []string{"l2announcement"}},
	{res("cilium.io", "ciliumpodippools", "CiliumPodIPPool", false), []string{"v2alpha1"}, "ciliumpodippool", []string{"cpip"}},
}

var (
	v1 = []string{"v1"}
	v2 = []string{"v2"}
)

func res(group, resource, kind string, namespaced bool) cluster.Resource {
	return cluster.Resource{Group: group, Resource: resource, Kind: kind, Namespaced: namespaced}
}

// kinds resolves what steps write as kinds, as kube's RESTMapper resolves
// it from discovery (internal/heavy/kube/mapper.go) but from a table: the
// built-in kinds, then those of the CRDs the playbook applies.
type kinds struct {
	list []kind
}

func newKinds() *kinds { return &kinds{list: slices.Clone(builtinKinds)} }

// add learns a kind a CustomResourceDefinition defines, for the steps
// after the one that applies it.
func (ks *kinds) add(k kind) {
	for _, have := range ks.list {
		if have.Group == k.Group && have.Kind == k.Kind {
			return
		}
	}
	ks.list = append(ks.list, k)
}

// resolve finds the resource of apiVersion and kind: with an apiVersion,
// the kind of that group which that version serves; without one, kind is
// a resource name, singular, short name or lowercase kind, possibly with
// its group after a dot (deployments.apps), short names first.
func (ks *kinds) resolve(apiVersion, name string) (cluster.Resource, bool) {
	if apiVersion != "" {
		group, version, found := strings.Cut(apiVersion, "/")
		if !found {
			group, version = "", apiVersion
		}
		for _, k := range ks.list {
			if k.Group == group && k.Kind == name && slices.Contains(k.Versions, version) {
				return k.Resource, true
			}
		}
		return cluster.Resource{}, false
	}
	n, group, _ := strings.Cut(strings.ToLower(name), ".")
	for _, short := range []bool{true, false} {
		for _, k := range ks.list {
			if (group == "" || group == k.Group) && k.named(n, short) {
				return k.Resource, true
			}
		}
	}
	return cluster.Resource{}, false
}

// named reports whether k goes by n: among its short names, or else its
// resource, singular and lowercase kind.
func (k kind) named(n string, short bool) bool {
	if short {
		return slices.Contains(k.ShortNames, n)
	}
	return n == k.Resource.Resource || n == k.Singular || n == strings.ToLower(k.Kind)
}
