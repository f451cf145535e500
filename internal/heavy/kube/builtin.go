package kube

import (
	"context"
	"fmt"
	"net/http"
	"sync"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/rest"
)

// builtinTypes is the scheme of the few built-in types labrun reads typed:
// pods and the workloads and services that select them, and the options of
// exec and logs. client-go's clientset would bring the scheme of every API
// group (see discovery.go for why that matters); these three groups are
// all labrun needs, and they are registered on first use only.
var builtinTypes = sync.OnceValues(func() (*runtime.Scheme, serializer.CodecFactory) {
	s := runtime.NewScheme()
	utilruntime.Must(corev1.AddToScheme(s))
	utilruntime.Must(appsv1.AddToScheme(s))
	utilruntime.Must(batchv1.AddToScheme(s))
	metav1.AddToGroupVersion(s, schema.GroupVersion{Version: "v1"})
	return s, serializer.NewCodecFactory(s)
})

// parameterCodec encodes options such as PodExecOptions as query
// parameters.
func parameterCodec() runtime.ParameterCodec {
	s, _ := builtinTypes()
	return runtime.NewParameterCodec(s)
}

// objectReader reads built-in objects typed: the REST clients below, or a
// fake in tests.
type objectReader interface {
	// get reads one object of a resource listed in builtinResources into
	// into, which must be of the matching type.
	get(ctx context.Context, resource, namespace, name string, into runtime.Object) error
	// listPods lists the pods a label selector matches.
	listPods(ctx context.Context, namespace, selector string) (*corev1.PodList, error)
}

// builtinResources says which group version serves each resource that
// objectReader reads.
var builtinResources = map[string]schema.GroupVersion{
	"pods":         corev1.SchemeGroupVersion,
	"services":     corev1.SchemeGroupVersion,
	"deployments":  appsv1.SchemeGroupVersion,
	"daemonsets":   appsv1.SchemeGroupVersion,
	"statefulsets": appsv1.SchemeGroupVersion,
	"replicasets":  appsv1.SchemeGroupVersion,
	"jobs":         batchv1.SchemeGroupVersion,
}

// builtinClient is one REST client per group version, protobuf on the
// wire: smaller and faster to decode than JSON, which matters for lists of
// pods.
type builtinClient struct {
	clients map[schema.GroupVersion]*rest.RESTClient
}

func newBuiltinClient(config *rest.Config, hc *http.Client) (*builtinClient, error) {
	_, codecs := builtinTypes()
	b := &builtinClient{clients: map[schema.GroupVersion]*rest.RESTClient{}}
	for _, gv := range []schema.GroupVersion{corev1.SchemeGroupVersion, appsv1.SchemeGroupVersion, batchv1.SchemeGroupVersion} {
		cfg := rest.CopyConfig(config)
		cfg.GroupVersion = &gv
		cfg.APIPath = "/apis"
		if gv.Group == "" {
			cfg.APIPath = "/api"
		}
		cfg.ContentType = runtime.ContentTypeProtobuf
		cfg.AcceptContentTypes = runtime.ContentTypeProtobuf + "," + runtime.ContentTypeJSON
		cfg.NegotiatedSerializer = codecs.WithoutConversion()
		rc, err := rest.RESTClientForConfigAndClient(cfg, hc)
		if err != nil {
			return nil, err
		}
		b.clients[gv] = rc
	}
	return b, nil
}

// core is the core/v1 client: pods, their exec and log subresources, and
// the paths outside any group (/version, discovery).
func (b *builtinClient) core() *rest.RESTClient { return b.clients[corev1.SchemeGroupVersion] }

func (b *builtinClient) get(ctx context.Context, resource, namespace, name string, into runtime.Object) error {
	gv, ok := builtinResources[resource]
	if !ok {
		return fmt.Errorf("no typed client for %s", resource)
	}
	return b.clients[gv].Get().Namespace(namespace).Resource(resource).Name(name).Do(ctx).Into(into)
}

func (b *builtinClient) listPods(ctx context.Context, namespace, selector string) (*corev1.PodList, error) {
	list := &corev1.PodList{}
	err := b.core().Get().Namespace(namespace).Resource("pods").
		VersionedParams(&metav1.ListOptions{LabelSelector: selector}, parameterCodec()).
		Do(ctx).Into(list)
	return list, err
}
