package helmrelease

import (
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// restGetter hands Helm the run's connection (genericclioptions'
// RESTClientGetter) instead of letting it read a kubeconfig again: the
// same configuration, in-cluster or not, and one discovery of the API,
// kept in memory for the run and shared by every namespace.
type restGetter struct {
	config    *rest.Config
	namespace string
	discovery discovery.CachedDiscoveryInterface

	mu     sync.Mutex
	mapper meta.RESTMapper
}

func newRESTGetter(config *rest.Config, namespace string) (*restGetter, error) {
	dc, err := discovery.NewDiscoveryClientForConfig(config)
	if err != nil {
		return nil, err
	}
	return &restGetter{config: config, namespace: namespace, discovery: memory.NewMemCacheClient(dc)}, nil
}

// inNamespace is the getter for releases in ns: Helm takes the namespace
// of objects that name none from the kubeconfig loader.
func (g *restGetter) inNamespace(ns string) *namespacedGetter {
	return &namespacedGetter{restGetter: g, namespace: ns}
}

func (g *restGetter) ToRESTConfig() (*rest.Config, error) { return rest.CopyConfig(g.config), nil }

func (g *restGetter) ToDiscoveryClient() (discovery.CachedDiscoveryInterface, error) {
	return g.discovery, nil
}

func (g *restGetter) ToRESTMapper() (meta.RESTMapper, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.mapper == nil {
		g.mapper = restmapper.NewDeferredDiscoveryRESTMapper(g.discovery)
	}
	return g.mapper, nil
}

// namespacedGetter is restGetter with the namespace of one release.
type namespacedGetter struct {
	*restGetter
	namespace string
}

func (g *namespacedGetter) ToRawKubeConfigLoader() clientcmd.ClientConfig {
	return kubeconfigLoader{config: g.config, namespace: g.namespace}
}

// kubeconfigLoader is the kubeconfig loader Helm asks for the namespace: it
// answers from the run's connection and has no file behind it.
type kubeconfigLoader struct {
	config    *rest.Config
	namespace string
}

func (l kubeconfigLoader) RawConfig() (clientcmdapi.Config, error) { return clientcmdapi.Config{}, nil }
func (l kubeconfigLoader) ClientConfig() (*rest.Config, error)     { return rest.CopyConfig(l.config), nil }
func (l kubeconfigLoader) Namespace() (string, bool, error)        { return l.namespace, true, nil }
func (l kubeconfigLoader) ConfigAccess() clientcmd.ConfigAccess {
	return clientcmd.NewDefaultPathOptions()
}
