// Package clustertest is an in-memory cluster.Cluster for unit tests of
// the logic around the cluster: what an action makes of the objects it
// reads, the defaults it fills in, the errors it reports. It holds objects
// as maps and selects them by kind, namespace, name, labels and simple
// field paths; it does not pretend to be Kubernetes (no admission, no
// controllers, no server-side apply merge). What the cluster does is
// proven by kube's e2e tests against a real API server.
package clustertest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"sync"

	"gopkg.in/yaml.v3"

	"github.com/labrun/labrun/internal/boundary/cluster"
)

// ErrNotFound is returned for an object that is not there.
var ErrNotFound = errors.New("not found")

// Cluster is an in-memory cluster. The zero value is empty and ready; Exec
// and Logs answer through ExecFunc and LogsFunc.
type Cluster struct {
	// Namespace is used where a query names none ("default" when empty).
	Namespace string
	// ExecFunc answers Exec; nil makes Exec an error.
	ExecFunc func(t cluster.PodTarget, req cluster.ExecRequest) (*cluster.ExecResult, error)
	// StreamFunc answers Stream: it writes to req's writers what the
	// command would print, and returns when the command would end or ctx
	// ends; nil makes Stream an error.
	StreamFunc func(ctx context.Context, t cluster.PodTarget, req cluster.StreamRequest) (*cluster.StreamResult, error)
	// LogsFunc answers Logs; nil makes Logs an error.
	LogsFunc func(t cluster.PodTarget, req cluster.LogRequest) (*cluster.LogsResult, error)
	// AllowFunc answers Denied, one permission at a time; nil allows
	// everything.
	AllowFunc func(a cluster.Access) (bool, error)

	mu      sync.Mutex
	objects []map[string]any
	changed chan struct{} // closed and replaced on every change
}

var _ cluster.Cluster = (*Cluster)(nil)

// Put adds obj, or replaces the object of the same kind, namespace and
// name, and wakes every Wait.
func (c *Cluster) Put(obj map[string]any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.put(obj)
}

func (c *Cluster) put(obj map[string]any) (action string) {
	for i, o := range c.objects {
		if key(o) == key(obj) {
			action = "unchanged"
			if !reflect.DeepEqual(o, obj) {
				action = "configured"
			}
			c.objects[i] = obj
			c.notify()
			return action
		}
	}
	c.objects = append(c.objects, obj)
	c.notify()
	return "created"
}

// notify wakes the Waits; the caller holds mu.
func (c *Cluster) notify() {
	if c.changed != nil {
		close(c.changed)
	}
	c.changed = make(chan struct{})
}

// Objects returns every object held.
func (c *Cluster) Objects() []map[string]any {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]map[string]any(nil), c.objects...)
}

func key(o map[string]any) string {
	return strings.ToLower(str(o, "kind")) + "/" + str(o, "metadata", "namespace") + "/" + str(o, "metadata", "name")
}

func str(o map[string]any, path ...string) string {
	var v any = o
	for _, p := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return ""
		}
		v = m[p]
	}
	if v == nil {
		return ""
	}
	return fmt.Sprint(v)
}

// Apply decodes the sources (YAML or JSON, several documents each) and
// stores their objects, in the request's namespace when they name none.
func (c *Cluster) Apply(ctx context.Context, sources []cluster.ManifestSource, req cluster.ApplyRequest) ([]cluster.AppliedObject, error) {
	var objs []map[string]any
	for _, s := range sources {
		text := []byte(s.Text)
		if s.Path != "" {
			b, err := cluster.ReadManifest(s.Path)
			if err != nil {
				return nil, err
			}
			text = b
		}
		dec := yaml.NewDecoder(bytes.NewReader(text))
		for {
			var o map[string]any
			err := dec.Decode(&o)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return nil, fmt.Errorf("%s%s: %w", s.Path, s.Label, err)
			}
			if o != nil {
				objs = append(objs, o)
			}
		}
	}
	if len(objs) == 0 {
		return nil, errors.New("no objects to apply: the manifests are empty")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []cluster.AppliedObject
	for _, o := range objs {
		md, _ := o["metadata"].(map[string]any)
		if md == nil {
			return out, fmt.Errorf("%s has no metadata", str(o, "kind"))
		}
		if md["namespace"] == nil {
			md["namespace"] = c.namespace(req.Namespace)
		}
		action := c.put(o)
		out = append(out, cluster.AppliedObject{APIVersion: str(o, "apiVersion"), Kind: str(o, "kind"),
			Namespace: str(o, "metadata", "namespace"), Name: str(o, "metadata", "name"), Action: action, Object: o})
	}
	return out, nil
}

func (c *Cluster) namespace(ns string) string {
	switch {
	case ns != "":
		return ns
	case c.Namespace != "":
		return c.Namespace
	}
	return "default"
}

// List returns the objects q selects, in the order they were put.
func (c *Cluster) List(ctx context.Context, q cluster.ObjectQuery) ([]map[string]any, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.list(q)
}

func (c *Cluster) list(q cluster.ObjectQuery) ([]map[string]any, error) {
	labels, err := pairs(q.Selector)
	if err != nil {
		return nil, err
	}
	fields, err := pairs(q.FieldSelector)
	if err != nil {
		return nil, err
	}
	out := []map[string]any{}
	for _, o := range c.objects {
		if !strings.EqualFold(str(o, "kind"), q.Kind) ||
			(!q.AllNamespaces && str(o, "metadata", "namespace") != c.namespace(q.Namespace)) ||
			(q.Name != "" && str(o, "metadata", "name") != q.Name) {
			continue
		}
		ok := true
		for k, v := range labels {
			ok = ok && str(o, "metadata", "labels", k) == v
		}
		for k, v := range fields {
			ok = ok && str(o, strings.Split(k, ".")...) == v
		}
		if ok {
			out = append(out, o)
		}
	}
	return out, nil
}

// pairs reads a selector of k=v terms joined by commas.
func pairs(sel string) (map[string]string, error) {
	out := map[string]string{}
	if sel == "" {
		return out, nil
	}
	for _, term := range strings.Split(sel, ",") {
		k, v, ok := strings.Cut(term, "=")
		if !ok {
			return nil, fmt.Errorf("selector %q: this fake takes only k=v terms", sel)
		}
		out[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	return out, nil
}

// Wait evaluates cond on what q selects now and after every change, until
// cond holds, fails, or ctx ends.
func (c *Cluster) Wait(ctx context.Context, q cluster.ObjectQuery, cond func([]map[string]any) (bool, error), progress func([]map[string]any)) ([]map[string]any, error) {
	for {
		c.mu.Lock()
		if c.changed == nil {
			c.changed = make(chan struct{})
		}
		changed := c.changed
		objs, err := c.list(q)
		c.mu.Unlock()
		if err != nil {
			return nil, err
		}
		if progress != nil {
			progress(objs)
		}
		ok, err := cond(objs)
		if err != nil || ok {
			return objs, err
		}
		select {
		case <-ctx.Done():
			return objs, fmt.Errorf("waiting for %s: %w", q.Kind, ctx.Err())
		case <-changed:
		}
	}
}

// Scale sets spec.replicas of the named object.
func (c *Cluster) Scale(ctx context.Context, q cluster.ObjectQuery, replicas int) (*cluster.ScaleResult, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	objs, err := c.list(cluster.ObjectQuery{Kind: q.Kind, Namespace: q.Namespace, Name: q.Name})
	if err != nil {
		return nil, err
	}
	if q.Name == "" || len(objs) == 0 {
		return nil, fmt.Errorf("scale %s %q: %w", q.Kind, q.Name, ErrNotFound)
	}
	o := objs[0]
	spec, _ := o["spec"].(map[string]any)
	if spec == nil {
		spec = map[string]any{}
		o["spec"] = spec
	}
	old, _ := spec["replicas"].(int)
	spec["replicas"] = replicas
	c.notify()
	return &cluster.ScaleResult{Kind: str(o, "kind"), Namespace: str(o, "metadata", "namespace"), Name: q.Name, OldReplicas: old, NewReplicas: replicas}, nil
}

// Delete removes what q selects.
func (c *Cluster) Delete(ctx context.Context, q cluster.ObjectQuery, req cluster.DeleteRequest) ([]cluster.DeletedObject, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	objs, err := c.list(q)
	if err != nil {
		return nil, err
	}
	if q.Name != "" && len(objs) == 0 {
		if req.IgnoreNotFound {
			return []cluster.DeletedObject{{Kind: q.Kind, Namespace: c.namespace(q.Namespace), Name: q.Name}}, nil
		}
		return nil, fmt.Errorf("delete %s %q: %w", q.Kind, q.Name, ErrNotFound)
	}
	var out []cluster.DeletedObject
	for _, o := range objs {
		for i, have := range c.objects {
			if key(have) == key(o) {
				c.objects = append(c.objects[:i], c.objects[i+1:]...)
				break
			}
		}
		out = append(out, cluster.DeletedObject{Kind: str(o, "kind"), Namespace: str(o, "metadata", "namespace"), Name: str(o, "metadata", "name"), Deleted: true})
	}
	c.notify()
	return out, nil
}

// Logs answers through LogsFunc: the test says what the container logged.
func (c *Cluster) Logs(ctx context.Context, t cluster.PodTarget, req cluster.LogRequest) (*cluster.LogsResult, error) {
	if c.LogsFunc == nil {
		return nil, errors.New("clustertest: no LogsFunc set")
	}
	return c.LogsFunc(t, req)
}

// Exec answers through ExecFunc: the test says what the command did.
func (c *Cluster) Exec(ctx context.Context, t cluster.PodTarget, req cluster.ExecRequest) (*cluster.ExecResult, error) {
	if c.ExecFunc == nil {
		return nil, errors.New("clustertest: no ExecFunc set")
	}
	return c.ExecFunc(t, req)
}

// Stream answers through StreamFunc.
func (c *Cluster) Stream(ctx context.Context, t cluster.PodTarget, req cluster.StreamRequest) (*cluster.StreamResult, error) {
	if c.StreamFunc == nil {
		return nil, errors.New("clustertest: no StreamFunc set")
	}
	return c.StreamFunc(ctx, t, req)
}

// Label sets and removes labels of what q selects, in place.
func (c *Cluster) Label(ctx context.Context, q cluster.ObjectQuery, req cluster.LabelRequest) ([]cluster.LabeledObject, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	objs, err := c.list(q)
	if err != nil {
		return nil, err
	}
	if q.Name != "" && len(objs) == 0 {
		return nil, fmt.Errorf("label %s %q: %w", q.Kind, q.Name, ErrNotFound)
	}
	out := []cluster.LabeledObject{}
	for _, o := range objs {
		md, _ := o["metadata"].(map[string]any)
		if md == nil {
			md = map[string]any{}
			o["metadata"] = md
		}
		labels, _ := md["labels"].(map[string]any)
		before := map[string]string{}
		for k, v := range labels {
			before[k] = fmt.Sprint(v)
		}
		if labels == nil {
			labels = map[string]any{}
			md["labels"] = labels
		}
		for _, k := range req.Remove {
			delete(labels, k)
		}
		for k, v := range req.Set {
			labels[k] = v
		}
		now := map[string]string{}
		for k, v := range labels {
			now[k] = fmt.Sprint(v)
		}
		out = append(out, cluster.LabeledObject{Kind: str(o, "kind"), Namespace: str(o, "metadata", "namespace"), Name: str(o, "metadata", "name"),
			UID: str(o, "metadata", "uid"), Before: before, Labels: now, Changed: !reflect.DeepEqual(before, now)})
	}
	c.notify()
	return out, nil
}
