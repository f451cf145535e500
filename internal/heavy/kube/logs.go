package kube

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/labrun/labrun/internal/boundary/cluster"
)

// logOptions select which part of a container's log to read.
type logOptions struct {
	// Container defaults to the pod's default container (the
	// kubectl.kubernetes.io/default-container annotation, else the first).
	Container string
	// Previous reads the log of the previous (crashed) instance.
	Previous bool
	// Since returns only lines newer than this duration; SinceTime only
	// lines after this time. At most one may be set.
	Since     time.Duration
	SinceTime time.Time
	// TailLines, when not nil, returns only the last lines.
	TailLines *int64
	// Timestamps prefixes each line with its RFC3339 timestamp.
	Timestamps bool
	// LimitBytes, when positive, caps the size read.
	LimitBytes int64
}

// Logs reads the log of a container of the pod t picks (see ResolvePod).
func (c *Client) Logs(ctx context.Context, t cluster.PodTarget, req cluster.LogRequest) (_ *cluster.LogsResult, err error) {
	defer transient(&err)
	pod, err := c.ResolvePod(ctx, t)
	if err != nil {
		return nil, err
	}
	opts := logOptions{Container: t.Container, Previous: req.Previous, Since: req.Since}
	if req.TailLines > 0 {
		n := int64(req.TailLines)
		opts.TailLines = &n
	}
	if opts.Container == "" {
		opts.Container = pod.DefaultContainer
	}
	text, err := c.podLogs(ctx, pod.Namespace, pod.Name, opts)
	if err != nil {
		return nil, err
	}
	return &cluster.LogsResult{Namespace: pod.Namespace, Pod: pod.Name, Container: opts.Container, Text: text}, nil
}

// podLogs returns the log of a container of the named pod.
func (c *Client) podLogs(ctx context.Context, namespace, pod string, opts logOptions) (string, error) {
	if namespace == "" {
		namespace = c.Namespace
	}
	if !opts.SinceTime.IsZero() && opts.Since > 0 {
		return "", fmt.Errorf("logs: set Since or SinceTime, not both")
	}
	container := opts.Container
	if container == "" {
		var err error
		if container, err = c.defaultContainer(ctx, namespace, pod); err != nil {
			return "", err
		}
	}
	po := &corev1.PodLogOptions{
		Container:  container,
		Previous:   opts.Previous,
		Timestamps: opts.Timestamps,
		TailLines:  opts.TailLines,
	}
	if opts.Since > 0 {
		s := int64((opts.Since + time.Second - 1) / time.Second)
		po.SinceSeconds = &s
	}
	if !opts.SinceTime.IsZero() {
		t := metav1.NewTime(opts.SinceTime)
		po.SinceTime = &t
	}
	if opts.LimitBytes > 0 {
		po.LimitBytes = &opts.LimitBytes
	}
	// Result.Error decodes the server's Status (Raw alone would report a
	// 400 as "unknown reason").
	res := c.builtin.core().Get().Namespace(namespace).Resource("pods").Name(pod).SubResource("log").
		VersionedParams(po, parameterCodec()).Do(ctx)
	if err := res.Error(); err != nil {
		return "", c.wrap(err, "logs of", fmt.Sprintf("container %q of pod %q in namespace %q", container, pod, namespace))
	}
	body, _ := res.Raw()
	return string(body), nil
}

// defaultContainer picks the container kubectl would pick.
func (c *Client) defaultContainer(ctx context.Context, namespace, pod string) (string, error) {
	p := &corev1.Pod{}
	if err := c.builtin.get(ctx, "pods", namespace, pod, p); err != nil {
		return "", c.wrap(err, "get", describe("Pod", namespace, pod))
	}
	return DefaultContainer(p), nil
}

// DefaultContainerAnnotation names the container kubectl uses when none is
// given.
const DefaultContainerAnnotation = "kubectl.kubernetes.io/default-container"

// DefaultContainer returns the container kubectl would use for logs and
// exec: the one named by the default-container annotation, else the first.
func DefaultContainer(p *corev1.Pod) string {
	if name := p.Annotations[DefaultContainerAnnotation]; name != "" {
		for _, ct := range p.Spec.Containers {
			if ct.Name == name {
				return name
			}
		}
	}
	if len(p.Spec.Containers) > 0 {
		return p.Spec.Containers[0].Name
	}
	return ""
}
