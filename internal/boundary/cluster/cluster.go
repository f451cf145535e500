// Package cluster is the boundary between labrun and a Kubernetes cluster:
// the Cluster interface the actions call, and the requests and results that
// cross it. It is a leaf: it imports nothing but the standard library, so
// the actions, their specs and results, and with them `labrun validate`,
// never link client-go. Package kube implements Cluster with client-go;
// package cluster/clustertest holds an in-memory one for unit tests.
//
// A new kind of cluster read or change is a method here, its request and
// result types beside it, its implementation in kube and its fake in
// clustertest.
package cluster

import (
	"context"
	"fmt"
	"io"
	"time"
)

// Cluster is what the Kubernetes actions need from a cluster connection.
// Objects are maps (an unstructured object's content) so that expressions
// can read any path, e.g. items[0].spec.clusterIP.
type Cluster interface {
	Apply(ctx context.Context, sources []ManifestSource, opts ApplyRequest) ([]AppliedObject, error)
	List(ctx context.Context, q ObjectQuery) ([]map[string]any, error)
	// Wait lists q, then watches it, calling cond with the current objects
	// after every change until cond holds; progress sees the same objects.
	Wait(ctx context.Context, q ObjectQuery, cond func([]map[string]any) (bool, error), progress func([]map[string]any)) ([]map[string]any, error)
	Scale(ctx context.Context, q ObjectQuery, replicas int) (*ScaleResult, error)
	// Label sets and removes labels of the object q names, or of every
	// object q selects, in place (as kubectl label --overwrite does).
	Label(ctx context.Context, q ObjectQuery, req LabelRequest) ([]LabeledObject, error)
	Delete(ctx context.Context, q ObjectQuery, opts DeleteRequest) ([]DeletedObject, error)
	Logs(ctx context.Context, target PodTarget, opts LogRequest) (*LogsResult, error)
	Exec(ctx context.Context, target PodTarget, req ExecRequest) (*ExecResult, error)
	// Stream runs a command in a container and hands its output to req's
	// writers as it comes, until the command ends or ctx ends; then the
	// stream is closed and the result says it was stopped. It asks what
	// Exec asks (ExecAccess).
	Stream(ctx context.Context, target PodTarget, req StreamRequest) (*StreamResult, error)
	// Denied asks the API server which of want the connection's user may
	// not do (one SelfSubjectAccessReview each, at the same time) and
	// returns those, in want's order; labrun asks it for every permission
	// a playbook's steps need before the first step (access.go).
	Denied(ctx context.Context, want []Access) ([]Access, error)
	// DefaultNamespace is the namespace of requests that name none: the
	// kubeconfig context's.
	DefaultNamespace() string
}

// ObjectQuery names Kubernetes objects: one by name, or a set by selector.
// It is embedded in the specs of get, wait, scale and delete, so its keys
// are the step's own.
type ObjectQuery struct {
	APIVersion    string `yaml:"apiVersion" json:"apiVersion" doc:"API group/version, e.g. v1, apps/v1, cilium.io/v2 (default: found from kind)."`
	Kind          string `yaml:"kind" json:"kind" required:"true" doc:"Kind or resource name: Pod, pods, Deployment, deploy, CiliumEndpoint, cep, ..."`
	Namespace     string `yaml:"namespace" json:"namespace" doc:"Namespace (default: the kubeconfig context's)."`
	AllNamespaces bool   `yaml:"allNamespaces" json:"allNamespaces" doc:"Every namespace."`
	Name          string `yaml:"name" json:"name" doc:"One object by name (it may not exist yet when waiting)."`
	Selector      string `yaml:"selector" json:"selector" doc:"Label selector, e.g. app=web."`
	FieldSelector string `yaml:"fieldSelector" json:"fieldSelector" doc:"Field selector, e.g. status.phase=Running."`
}

// Describe names the objects q selects for messages, e.g. `pods with
// labels app=web in namespace "lab"`: what is the kind or resource as the
// caller knows it, namespace the one the objects are in ("" when q is over
// all namespaces or the kind has none).
func (q ObjectQuery) Describe(what, namespace string) string {
	s := what
	if q.Name != "" {
		s += fmt.Sprintf(" named %q", q.Name)
	}
	if q.Selector != "" {
		s += " with labels " + q.Selector
	}
	if q.FieldSelector != "" {
		s += " with fields " + q.FieldSelector
	}
	switch {
	case namespace != "":
		s += fmt.Sprintf(" in namespace %q", namespace)
	case q.AllNamespaces:
		s += " in all namespaces"
	}
	return s
}

// PodTarget picks the pod a command or log comes from, the way kubectl
// does: by name, by label selector, or by workload (ds/cilium).
type PodTarget struct {
	Namespace string `yaml:"namespace" json:"namespace" doc:"Namespace of the pod (default: the kubeconfig context's)."`
	Pod       string `yaml:"pod" json:"pod" doc:"Pod name, or a workload reference as kubectl takes it: ds/cilium, deploy/web, sts/db."`
	Selector  string `yaml:"selector" json:"selector" doc:"Label selector; the first Running and Ready pod is used."`
	Node      string `yaml:"node" json:"node" doc:"Use the pod on this node (e.g. the Cilium agent of one node). Without it, a DaemonSet's pod on the first node by name, so that the same node answers before and after a rollout."`
	Container string `yaml:"container" json:"container" doc:"Container (default: the pod's default container)."`
}

// ManifestSource is one place manifests come from.
type ManifestSource struct {
	Path  string // a file or directory
	Text  string // inline YAML or JSON
	Label string // how inline text is named in errors
}

// ApplyRequest tunes server-side apply.
type ApplyRequest struct {
	Namespace    string
	Force        bool
	FieldManager string // empty: labrun
}

// AppliedObject is one object after server-side apply.
type AppliedObject struct {
	// APIVersion and Kind are the object's, as the API server returned
	// it ("apps/v1", "Deployment").
	APIVersion string `json:"apiVersion" expr:"apiVersion"`
	Kind       string `json:"kind" expr:"kind"`
	// Namespace is the object's namespace; "" for a cluster-scoped kind.
	Namespace string `json:"namespace" expr:"namespace"`
	// Name is the object's name.
	Name string `json:"name" expr:"name"`
	// Action is created (it did not exist), configured (the apply
	// changed it) or unchanged.
	Action string `json:"action" expr:"action"`
	// Object is the whole object as the API server returned it after
	// the apply (metadata, spec and status); for a CRD, once it is
	// established.
	Object map[string]any `json:"object" expr:"object"`
}

// ScaleResult is a changed replica count.
type ScaleResult struct {
	// Kind, Namespace and Name are the scaled object's.
	Kind      string `json:"kind" expr:"kind"`
	Namespace string `json:"namespace" expr:"namespace"`
	Name      string `json:"name" expr:"name"`
	// OldReplicas is spec.replicas of its scale subresource before the
	// step, NewReplicas after it (the pods follow later: wait for them
	// with get or wait).
	OldReplicas int `json:"oldReplicas" expr:"oldReplicas"`
	NewReplicas int `json:"newReplicas" expr:"newReplicas"`
}

// LabelRequest says which labels to set (their values overwritten) and
// which to remove.
type LabelRequest struct {
	Set    map[string]string
	Remove []string
}

// LabeledObject is one object after its labels changed: the labels it had
// and the labels it has now.
type LabeledObject struct {
	// Kind, Namespace and Name are the object's ("" namespace for a
	// cluster-scoped kind).
	Kind      string `json:"kind" expr:"kind"`
	Namespace string `json:"namespace" expr:"namespace"`
	Name      string `json:"name" expr:"name"`
	// UID is the object's metadata.uid, which tells it from a later
	// object of the same name.
	UID string `json:"uid" expr:"uid"`
	// Before is the object's labels before the step, Labels after it;
	// empty maps when it has none.
	Before map[string]string `json:"before" expr:"before"`
	Labels map[string]string `json:"labels" expr:"labels"`
	// Changed is false when the object already had the labels asked for
	// (and none of those to remove).
	Changed bool `json:"changed" expr:"changed"`
}

// DeleteRequest tunes deletion.
type DeleteRequest struct {
	Wait           bool
	IgnoreNotFound bool
}

// DeletedObject is one deleted (or already absent) object.
type DeletedObject struct {
	// Kind, Namespace and Name are the object's ("" namespace for a
	// cluster-scoped kind).
	Kind      string `json:"kind" expr:"kind"`
	Namespace string `json:"namespace" expr:"namespace"`
	Name      string `json:"name" expr:"name"`
	// Deleted is true when this step deleted it, false when it was
	// already gone (ignoreNotFound).
	Deleted bool `json:"deleted" expr:"deleted"`
}

// LogRequest selects log lines.
type LogRequest struct {
	TailLines int           // 0: all
	Since     time.Duration // 0: from the start; else lines newer than this
	Previous  bool          // the previous, crashed instance's log
}

// LogsResult is a container's log.
type LogsResult struct {
	// Namespace and Pod are the pod whose log was read (the one the
	// selector or workload picked).
	Namespace string `json:"namespace" expr:"namespace"`
	Pod       string `json:"pod" expr:"pod"`
	// Container is the container read: the spec's, or the pod's
	// default one (as kubectl picks it).
	Container string `json:"container" expr:"container"`
	// Text is the log as the kubelet returned it (the tail or since the
	// time the spec asks), lines ending in newlines; "" when empty.
	Text string `json:"text" expr:"text"`
}

// ExecRequest is a command to run in a container.
type ExecRequest struct {
	Argv  []string
	Stdin *string
	// Reuse lets the connection run successive commands through one
	// long-lived session in the container.
	Reuse bool
}

// StreamRequest is a command whose output is read while it runs (a
// capture's cilium-dbg monitor). Stdout and Stderr receive the output as
// the container sends it, from one goroutine, in pieces that need not
// end at a line's end. Stdin, when set, is the command's standard input,
// closed after its last byte: a reader that ends when the caller wants
// the command to stop lets a command that waits for end of input stop
// by itself.
type StreamRequest struct {
	Argv   []string
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
}

// StreamResult is how a streamed command ended: by itself, with its exit
// code, or Stopped when the caller's context ended first.
type StreamResult struct {
	Namespace string
	Pod       string
	Container string
	ExitCode  int
	Stopped   bool
}

// ExecResult is a finished command in a container. A non-zero exit code
// is a result, not an error.
type ExecResult struct {
	// Namespace and Pod are the pod the command ran in (the one the
	// selector or workload picked: ds/cilium's agent on the node).
	Namespace string `json:"namespace" expr:"namespace"`
	Pod       string `json:"pod" expr:"pod"`
	// Container is the container it ran in: the spec's, or the pod's
	// default one.
	Container string `json:"container" expr:"container"`
	// Argv is the command as sent (for the cilium action, cilium-dbg
	// and its arguments).
	Argv []string `json:"argv" expr:"argv"`
	// Stdout and Stderr are what the command wrote to each, as text.
	Stdout string `json:"stdout" expr:"stdout"`
	Stderr string `json:"stderr" expr:"stderr"`
	// ExitCode is the command's exit status: 0 on success, what it
	// exited with otherwise (a step fails on non-zero unless it has
	// allowFailure).
	ExitCode int `json:"exitCode" expr:"exitCode"`
	// Seconds is the wall time of the exec, connection retries
	// included.
	Seconds float64 `json:"seconds" expr:"seconds"`
}
