// Package kubecluster hands a client-go connection (package kube) to the
// playbook actions, which only know the actions.Cluster interface. It
// converts between the two packages' types and connects lazily, on the
// first step that needs the cluster, so a playbook without Kubernetes
// steps never looks for a kubeconfig.
package kubecluster

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/labrun/labrun/actions"
	"github.com/labrun/labrun/kube"
)

// Lazy returns a function that connects with opts on its first call and
// returns the same connection (or error) afterwards.
func Lazy(opts kube.ConnectOptions) func() (actions.Cluster, error) {
	var once sync.Once
	var c actions.Cluster
	var err error
	return func() (actions.Cluster, error) {
		once.Do(func() {
			var client *kube.Client
			client, err = kube.Connect(opts)
			if err == nil {
				c = &Cluster{Client: client}
			}
		})
		return c, err
	}
}

// Cluster implements actions.Cluster over a kube.Client.
type Cluster struct {
	Client *kube.Client
}

var _ actions.Cluster = (*Cluster)(nil)

func listOptions(q actions.ObjectQuery) kube.ListOptions {
	return kube.ListOptions{
		APIVersion:    q.APIVersion,
		Kind:          q.Kind,
		Namespace:     q.Namespace,
		AllNamespaces: q.AllNamespaces,
		Name:          q.Name,
		LabelSelector: q.Selector,
		FieldSelector: q.FieldSelector,
	}
}

// Apply decodes every source, then applies the objects in order.
func (c *Cluster) Apply(ctx context.Context, sources []actions.ManifestSource, req actions.ApplyRequest) ([]actions.AppliedObject, error) {
	var manifests []kube.Manifest
	for _, s := range sources {
		var ms []kube.Manifest
		var err error
		if s.Path != "" {
			ms, err = kube.DecodeFiles(s.Path)
		} else {
			ms, err = kube.DecodeText(s.Label, []byte(s.Text))
		}
		if err != nil {
			return nil, err
		}
		manifests = append(manifests, ms...)
	}
	if len(manifests) == 0 {
		return nil, errors.New("no objects to apply: the manifests are empty")
	}
	res, err := c.Client.Apply(ctx, manifests, kube.ApplyOptions{Namespace: req.Namespace, Force: req.Force, FieldManager: req.FieldManager})
	out := make([]actions.AppliedObject, 0, len(res))
	for _, r := range res {
		out = append(out, actions.AppliedObject{APIVersion: r.APIVersion, Kind: r.Kind, Namespace: r.Namespace, Name: r.Name, Action: r.Action, Object: r.Object})
	}
	return out, err
}

// List returns the objects q selects.
func (c *Cluster) List(ctx context.Context, q actions.ObjectQuery) ([]map[string]any, error) {
	return c.Client.List(ctx, listOptions(q))
}

// Wait watches q until cond holds.
func (c *Cluster) Wait(ctx context.Context, q actions.ObjectQuery, cond func([]map[string]any) (bool, error), progress func([]map[string]any)) ([]map[string]any, error) {
	return c.Client.Wait(ctx, listOptions(q), kube.CondFunc(cond), progress)
}

// Scale sets the replicas of the named workload.
func (c *Cluster) Scale(ctx context.Context, q actions.ObjectQuery, replicas int) (*actions.ScaleResult, error) {
	r, err := c.Client.Scale(ctx, kube.ObjectRef{APIVersion: q.APIVersion, Kind: q.Kind, Namespace: q.Namespace, Name: q.Name}, int64(replicas))
	if err != nil {
		return nil, err
	}
	return &actions.ScaleResult{Kind: r.Kind, Namespace: r.Namespace, Name: r.Name, OldReplicas: int(r.OldReplicas), NewReplicas: int(r.NewReplicas)}, nil
}

// Delete deletes one object by name or every object a selector picks.
func (c *Cluster) Delete(ctx context.Context, q actions.ObjectQuery, req actions.DeleteRequest) ([]actions.DeletedObject, error) {
	opts := kube.DeleteOptions{Wait: req.Wait, IgnoreNotFound: req.IgnoreNotFound}
	var res []kube.DeleteResult
	var err error
	if q.Name != "" {
		var r kube.DeleteResult
		r, err = c.Client.Delete(ctx, kube.ObjectRef{APIVersion: q.APIVersion, Kind: q.Kind, Namespace: q.Namespace, Name: q.Name}, opts)
		if err == nil {
			res = append(res, r)
		}
	} else {
		res, err = c.Client.DeleteSelected(ctx, listOptions(q), opts)
	}
	out := make([]actions.DeletedObject, 0, len(res))
	for _, r := range res {
		out = append(out, actions.DeletedObject{Kind: r.Kind, Namespace: r.Namespace, Name: r.Name, Deleted: r.Deleted})
	}
	return out, err
}

func (c *Cluster) resolve(ctx context.Context, t actions.PodTarget) (kube.Pod, error) {
	return c.Client.ResolvePod(ctx, kube.PodQuery{Namespace: t.Namespace, Target: t.Pod, LabelSelector: t.Selector, Node: t.Node})
}

// Logs reads the log of the target pod's container.
func (c *Cluster) Logs(ctx context.Context, t actions.PodTarget, req actions.LogRequest) (*actions.LogsResult, error) {
	pod, err := c.resolve(ctx, t)
	if err != nil {
		return nil, err
	}
	opts := kube.LogOptions{Container: t.Container, Previous: req.Previous, Since: time.Duration(req.SinceSeconds * float64(time.Second))}
	if req.TailLines > 0 {
		n := int64(req.TailLines)
		opts.TailLines = &n
	}
	text, err := c.Client.Logs(ctx, pod.Namespace, pod.Name, opts)
	if err != nil {
		return nil, err
	}
	container := t.Container
	if container == "" {
		container = pod.DefaultContainer
	}
	return &actions.LogsResult{Namespace: pod.Namespace, Pod: pod.Name, Container: container, Text: text}, nil
}

// Exec runs a command in the target pod's container.
func (c *Cluster) Exec(ctx context.Context, t actions.PodTarget, req actions.ExecRequest) (*actions.ExecResult, error) {
	pod, err := c.resolve(ctx, t)
	if err != nil {
		return nil, err
	}
	opts := kube.ExecOptions{Namespace: pod.Namespace, Pod: pod.Name, Container: t.Container, Command: req.Argv, Reuse: req.Reuse}
	if req.Stdin != nil {
		opts.Stdin = []byte(*req.Stdin)
	}
	r, err := c.Client.Exec(ctx, opts)
	res := &actions.ExecResult{
		Namespace: r.Namespace, Pod: r.Pod, Container: r.Container, Argv: req.Argv,
		Stdout: r.Stdout, Stderr: r.Stderr, ExitCode: r.ExitCode, Seconds: r.Duration.Seconds(),
	}
	if res.Pod == "" {
		res.Namespace, res.Pod = pod.Namespace, pod.Name
	}
	return res, err
}
