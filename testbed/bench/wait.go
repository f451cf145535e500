package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/labrun/labrun/internal/leaf/k8sobj"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	"github.com/labrun/labrun/internal/boundary/cluster"
	"github.com/labrun/labrun/internal/heavy/kube"
)

// The wait measurement scales its own Deployment of pause pods, in its own
// namespace, between 3 and 4 replicas.
const (
	waitNamespace = "labrun-bench"
	waitSelector  = "app=tick"
	waitFrom      = 3
	waitTo        = 4
)

// benchWait measures how fast labrun notices that a condition became true:
// "4 pods, all Ready" after a scale from 3 to 4. Three observers run at
// once for each scale: labrun's Client.Wait (list, then watch), a 1 s
// kubectl polling loop, and a bare watch opened before the scale. The
// moment the first of them sees the condition is when it became true (to
// within the API server's event fan-out); each one's reaction is its own
// moment minus that one.
func benchWait(ctx context.Context, b *bench) ([]Row, error) {
	c, err := kube.Connect(kube.ConnectOptions{Kubeconfig: b.kubeconfig})
	if err != nil {
		return nil, err
	}
	defer c.Close()

	manifest := fmt.Sprintf(`apiVersion: v1
kind: Namespace
metadata: {name: %[1]s}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: tick, namespace: %[1]s}
spec:
  replicas: %[2]d
  selector: {matchLabels: {app: tick}}
  template:
    metadata: {labels: {app: tick}}
    spec:
      terminationGracePeriodSeconds: 0
      containers:
      - {name: pause, image: %[3]q, imagePullPolicy: IfNotPresent}
`, waitNamespace, waitFrom, b.pauseImage)
	if _, err := c.Apply(ctx, []cluster.ManifestSource{{Text: manifest, Label: "bench wait manifest"}}, cluster.ApplyRequest{Force: true}); err != nil {
		return nil, err
	}
	deploy := cluster.ObjectQuery{Kind: "Deployment", Namespace: waitNamespace, Name: "tick"}
	defer func() {
		// Leave no pods running; the empty namespace stays for the next run.
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_, _ = c.Delete(ctx, deploy, cluster.DeleteRequest{IgnoreNotFound: true})
	}()

	var labrun, poll []time.Duration
	for range b.n {
		if err := settle(ctx, c, waitFrom); err != nil {
			return nil, err
		}
		l, p, err := b.oneScale(ctx, c, deploy)
		if err != nil {
			return nil, err
		}
		labrun, poll = append(labrun, l), append(poll, p)
		if _, err := c.Scale(ctx, deploy, waitFrom); err != nil {
			return nil, err
		}
	}
	first := 0
	for _, d := range labrun {
		if d == 0 {
			first++
		}
	}
	return []Row{
		compare("wait reaction: 4th pod Ready after a scale (time from the condition becoming true to moving on)",
			durations("kube.Client.Wait (watch)", "ms", labrun), durations("kubectl get every 1 s", "ms", poll), 0).withLimit(100).
			withNote("The condition's moment is the first of three observers to see it: labrun's Client.Wait, the polling loop, and a bare watch opened before the scale; "+
				"labrun's watch was that first one in %d of %d runs (a reaction of 0, and no meaningful ratio when that is the median). "+
				"A polling loop's reaction is spread over its interval plus one kubectl run.", first, len(labrun)),
	}, nil
}

// allReady is the condition: exactly n pods, all Ready and none deleting.
func allReady(objs []map[string]any, n int) bool {
	if len(objs) != n {
		return false
	}
	for _, o := range objs {
		if !k8sobj.PodReady(o) {
			return false
		}
	}
	return true
}

func tickPods() cluster.ObjectQuery {
	return cluster.ObjectQuery{Kind: "Pod", Namespace: waitNamespace, Selector: waitSelector}
}

// settle waits until the Deployment's pods are exactly n, all Ready.
func settle(ctx context.Context, c *kube.Client, n int) error {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	_, err := c.Wait(ctx, tickPods(), func(objs []map[string]any) (bool, error) { return allReady(objs, n), nil }, nil)
	return err
}

// oneScale scales to waitTo and returns labrun's and the polling loop's
// reactions.
func (b *bench) oneScale(ctx context.Context, c *kube.Client, deploy cluster.ObjectQuery) (labrun, poll time.Duration, err error) {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()

	ref, err := startReference(ctx, c)
	if err != nil {
		return 0, 0, err
	}
	if _, err := c.Scale(ctx, deploy, waitTo); err != nil {
		return 0, 0, err
	}
	var wg sync.WaitGroup
	var tLabrun, tPoll time.Time
	var errLabrun, errPoll error
	wg.Go(func() {
		_, errLabrun = c.Wait(ctx, tickPods(), func(objs []map[string]any) (bool, error) { return allReady(objs, waitTo), nil }, nil)
		tLabrun = time.Now()
	})
	wg.Go(func() { tPoll, errPoll = b.pollLoop(ctx) })
	wg.Wait()
	tRef, errRef := ref.wait(ctx)
	for _, e := range []error{errLabrun, errPoll, errRef} {
		if e != nil {
			return 0, 0, e
		}
	}
	t0 := tRef
	for _, t := range []time.Time{tLabrun, tPoll} {
		if t.Before(t0) {
			t0 = t
		}
	}
	fmt.Fprintf(os.Stderr, "   scale to %d: labrun +%.1f ms, poll +%.0f ms, watch +%.1f ms\n", waitTo,
		ms(tLabrun.Sub(t0)), ms(tPoll.Sub(t0)), ms(tRef.Sub(t0)))
	return tLabrun.Sub(t0), tPoll.Sub(t0), nil
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// pollLoop is what a lab author writes without a watch: kubectl get, check,
// sleep 1 s, again. It returns when the check first held.
func (b *bench) pollLoop(ctx context.Context) (time.Time, error) {
	argv := []string{b.kubectl, "--kubeconfig", b.kubeconfig, "-n", waitNamespace, "get", "pods", "-l", waitSelector, "-o",
		`jsonpath={range .items[*]}{.status.conditions[?(@.type=="Ready")].status} {.metadata.deletionTimestamp}{"\n"}{end}`}
	for {
		p, err := runProc(ctx, argv, procOpts{timeout: time.Minute})
		if err != nil {
			return time.Time{}, err
		}
		lines := strings.Split(strings.TrimSpace(string(p.stdout)), "\n")
		ready := 0
		for _, l := range lines {
			if strings.TrimSpace(l) == "True" {
				ready++
			}
		}
		if len(lines) == waitTo && ready == waitTo {
			return time.Now(), nil
		}
		select {
		case <-ctx.Done():
			return time.Time{}, fmt.Errorf("polling loop: %w", ctx.Err())
		case <-time.After(time.Second):
		}
	}
}

// reference is a bare watch on the pods, opened before the scale.
type reference struct {
	done chan struct{}
	at   time.Time
	err  error
}

func startReference(ctx context.Context, c *kube.Client) (*reference, error) {
	// client-go's own typed client, as a program without labrun would
	// watch
	cs, err := kubernetes.NewForConfig(c.Config())
	if err != nil {
		return nil, err
	}
	pods := cs.CoreV1().Pods(waitNamespace)
	list, err := pods.List(ctx, metav1.ListOptions{LabelSelector: waitSelector})
	if err != nil {
		return nil, err
	}
	w, err := pods.Watch(ctx, metav1.ListOptions{LabelSelector: waitSelector, ResourceVersion: list.ResourceVersion})
	if err != nil {
		return nil, err
	}
	r := &reference{done: make(chan struct{})}
	state := map[string]map[string]any{}
	for i := range list.Items {
		o, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&list.Items[i])
		if err != nil {
			w.Stop()
			return nil, err
		}
		state[list.Items[i].Name] = o
	}
	go func() {
		defer close(r.done)
		defer w.Stop()
		for ev := range w.ResultChan() {
			switch ev.Type {
			case watch.Added, watch.Modified, watch.Deleted:
			default:
				continue
			}
			o, err := runtime.DefaultUnstructuredConverter.ToUnstructured(ev.Object)
			if err != nil {
				r.err = err
				return
			}
			name := nameOf(o)
			if ev.Type == watch.Deleted {
				delete(state, name)
			} else {
				state[name] = o
			}
			var objs []map[string]any
			for _, o := range state {
				objs = append(objs, o)
			}
			if allReady(objs, waitTo) {
				r.at = time.Now()
				return
			}
		}
		r.err = fmt.Errorf("reference watch ended before the condition held")
	}()
	return r, nil
}

func (r *reference) wait(ctx context.Context) (time.Time, error) {
	select {
	case <-r.done:
		return r.at, r.err
	case <-ctx.Done():
		return time.Time{}, fmt.Errorf("reference watch: %w", ctx.Err())
	}
}

func nameOf(o map[string]any) string {
	md, _ := o["metadata"].(map[string]any)
	name, _ := md["name"].(string)
	return name
}
