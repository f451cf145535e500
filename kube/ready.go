package kube

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Readiness helpers for the waits labs do most. They read unstructured
// objects (as Wait passes them) and follow kubectl's rules, so "ready"
// means here what it means to a person running kubectl.

// condition is one entry of .status.conditions.
type condition struct {
	Type, Status, Reason, Message string
}

func conditions(obj map[string]any) []condition {
	raw, _, _ := unstructured.NestedSlice(obj, "status", "conditions")
	var out []condition
	for _, r := range raw {
		m, ok := r.(map[string]any)
		if !ok {
			continue
		}
		var c condition
		c.Type, _, _ = unstructured.NestedString(m, "type")
		c.Status, _, _ = unstructured.NestedString(m, "status")
		c.Reason, _, _ = unstructured.NestedString(m, "reason")
		c.Message, _, _ = unstructured.NestedString(m, "message")
		out = append(out, c)
	}
	return out
}

func conditionTrue(obj map[string]any, typ string) bool {
	for _, c := range conditions(obj) {
		if c.Type == typ {
			return c.Status == "True"
		}
	}
	return false
}

// num reads an integer field; JSON numbers may arrive as int64 or float64.
func num(obj map[string]any, path ...string) int64 {
	v, ok, _ := unstructured.NestedFieldNoCopy(obj, path...)
	if !ok {
		return 0
	}
	switch n := v.(type) {
	case int64:
		return n
	case int:
		return int64(n)
	case int32:
		return int64(n)
	case float64:
		return int64(n)
	}
	return 0
}

func has(obj map[string]any, path ...string) bool {
	_, ok, _ := unstructured.NestedFieldNoCopy(obj, path...)
	return ok
}

func str(obj map[string]any, path ...string) string {
	s, _, _ := unstructured.NestedString(obj, path...)
	return s
}

// PodReady tells whether a pod is Ready and not being deleted.
func PodReady(pod map[string]any) bool {
	if has(pod, "metadata", "deletionTimestamp") {
		return false
	}
	return conditionTrue(pod, "Ready")
}

// AllPodsReady is a CondFunc: at least min pods exist and all are Ready.
// min below 1 is taken as 1, since "all of no pods" is never what a lab
// means.
func AllPodsReady(min int) CondFunc {
	min = max(min, 1)
	return func(objs []map[string]any) (bool, error) {
		if len(objs) < min {
			return false, nil
		}
		for _, p := range objs {
			if !PodReady(p) {
				return false, nil
			}
		}
		return true, nil
	}
}

// RolloutComplete tells whether a Deployment, DaemonSet or StatefulSet has
// finished rolling out, with kubectl rollout status's rules. A Deployment
// past its progress deadline is an error: waiting longer will not help.
func RolloutComplete(obj map[string]any) (bool, error) {
	kind := str(obj, "kind")
	gen := num(obj, "metadata", "generation")
	observed := num(obj, "status", "observedGeneration")
	if observed < gen {
		return false, nil
	}
	switch kind {
	case "Deployment":
		for _, c := range conditions(obj) {
			if c.Type == "Progressing" && c.Reason == "ProgressDeadlineExceeded" {
				return false, fmt.Errorf("deployment %q exceeded its progress deadline: %s", str(obj, "metadata", "name"), c.Message)
			}
		}
		want := int64(1)
		if has(obj, "spec", "replicas") {
			want = num(obj, "spec", "replicas")
		}
		updated := num(obj, "status", "updatedReplicas")
		return updated >= want &&
			num(obj, "status", "replicas") <= updated &&
			num(obj, "status", "availableReplicas") >= updated, nil
	case "DaemonSet":
		if str(obj, "spec", "updateStrategy", "type") == "OnDelete" {
			return true, nil
		}
		desired := num(obj, "status", "desiredNumberScheduled")
		return num(obj, "status", "updatedNumberScheduled") >= desired &&
			num(obj, "status", "numberAvailable") >= desired, nil
	case "StatefulSet":
		if observed == 0 {
			return false, nil
		}
		want := int64(1)
		if has(obj, "spec", "replicas") {
			want = num(obj, "spec", "replicas")
		}
		if num(obj, "status", "readyReplicas") < want {
			return false, nil
		}
		if str(obj, "spec", "updateStrategy", "type") == "OnDelete" {
			return true, nil
		}
		if has(obj, "spec", "updateStrategy", "rollingUpdate", "partition") {
			if p := num(obj, "spec", "updateStrategy", "rollingUpdate", "partition"); p > 0 {
				return num(obj, "status", "updatedReplicas") >= want-p, nil
			}
		}
		return str(obj, "status", "updateRevision") == str(obj, "status", "currentRevision"), nil
	}
	return false, fmt.Errorf("rollout status is not defined for kind %q", kind)
}

// AllRolledOut is a CondFunc: at least one object exists and every one has
// completed its rollout (see RolloutComplete).
func AllRolledOut(objs []map[string]any) (bool, error) {
	if len(objs) == 0 {
		return false, nil
	}
	for _, o := range objs {
		ok, err := RolloutComplete(o)
		if err != nil || !ok {
			return false, err
		}
	}
	return true, nil
}

// ReadyAddresses returns the ready endpoint addresses of EndpointSlices (of
// one Service), deduplicated, in order. An endpoint whose ready condition is
// absent counts as ready, as the EndpointSlice API specifies.
func ReadyAddresses(slices []map[string]any) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range slices {
		eps, _, _ := unstructured.NestedSlice(s, "endpoints")
		for _, e := range eps {
			em, ok := e.(map[string]any)
			if !ok {
				continue
			}
			if ready, found, _ := unstructured.NestedBool(em, "conditions", "ready"); found && !ready {
				continue
			}
			addrs, _, _ := unstructured.NestedStringSlice(em, "addresses")
			for _, a := range addrs {
				if !seen[a] {
					seen[a] = true
					out = append(out, a)
				}
			}
		}
	}
	return out
}

// EndpointsReady is a CondFunc over a Service's EndpointSlices: at least
// min ready addresses (min below 1 is taken as 1).
func EndpointsReady(min int) CondFunc {
	min = max(min, 1)
	return func(objs []map[string]any) (bool, error) {
		return len(ReadyAddresses(objs)) >= min, nil
	}
}

// WaitPodsReady waits until at least min pods match selector in namespace
// and all of them are Ready.
func (c *Client) WaitPodsReady(ctx context.Context, namespace, selector string, min int) ([]map[string]any, error) {
	return c.Wait(ctx, ListOptions{APIVersion: "v1", Kind: "Pod", Namespace: namespace, LabelSelector: selector}, AllPodsReady(min), nil)
}

// WaitRollout waits until a Deployment, DaemonSet or StatefulSet has rolled
// out (see RolloutComplete); it may not exist yet when the wait starts.
func (c *Client) WaitRollout(ctx context.Context, ref ObjectRef) (map[string]any, error) {
	objs, err := c.Wait(ctx, ListOptions{APIVersion: ref.APIVersion, Kind: ref.Kind, Namespace: ref.Namespace, Name: ref.Name}, AllRolledOut, nil)
	if err != nil {
		return nil, err
	}
	return objs[0], nil
}

// WaitServiceEndpoints waits until a Service has at least min ready
// endpoint addresses and returns them.
func (c *Client) WaitServiceEndpoints(ctx context.Context, namespace, service string, min int) ([]string, error) {
	objs, err := c.Wait(ctx, ListOptions{
		APIVersion: "discovery.k8s.io/v1", Kind: "EndpointSlice", Namespace: namespace,
		LabelSelector: "kubernetes.io/service-name=" + service,
	}, EndpointsReady(min), nil)
	if err != nil {
		return nil, err
	}
	return ReadyAddresses(objs), nil
}

// maxSummarized bounds how many objects a summary lists, so that a wait on
// hundreds of pods does not produce a page-long error.
const maxSummarized = 10

// SummarizeObjects describes a set of objects in one line for messages:
// kind, name and the status fields a person would look at first (phase,
// readiness, replica counts, waiting reasons, false conditions).
func SummarizeObjects(objs []map[string]any) string {
	if len(objs) == 0 {
		return "no matching objects exist"
	}
	var parts []string
	for i, o := range objs {
		if i == maxSummarized {
			parts = append(parts, fmt.Sprintf("and %d more", len(objs)-maxSummarized))
			break
		}
		parts = append(parts, SummarizeObject(o))
	}
	return fmt.Sprintf("%d object(s): %s", len(objs), strings.Join(parts, "; "))
}

// SummarizeObject describes one object's state in a few words.
func SummarizeObject(o map[string]any) string {
	kind := str(o, "kind")
	name := str(o, "metadata", "name")
	if ns := str(o, "metadata", "namespace"); ns != "" {
		name = ns + "/" + name
	}
	var facts []string
	if has(o, "metadata", "deletionTimestamp") {
		facts = append(facts, "terminating")
	}
	if phase := str(o, "status", "phase"); phase != "" {
		facts = append(facts, "phase="+phase)
	}
	switch kind {
	case "Pod":
		facts = append(facts, fmt.Sprintf("ready=%t", PodReady(o)))
		facts = append(facts, containerProblems(o)...)
	case "Deployment", "StatefulSet", "ReplicaSet":
		want := int64(1)
		if has(o, "spec", "replicas") {
			want = num(o, "spec", "replicas")
		}
		facts = append(facts, fmt.Sprintf("replicas=%d ready=%d updated=%d available=%d",
			want, num(o, "status", "readyReplicas"), num(o, "status", "updatedReplicas"), num(o, "status", "availableReplicas")))
	case "DaemonSet":
		facts = append(facts, fmt.Sprintf("desired=%d ready=%d updated=%d available=%d",
			num(o, "status", "desiredNumberScheduled"), num(o, "status", "numberReady"),
			num(o, "status", "updatedNumberScheduled"), num(o, "status", "numberAvailable")))
	case "EndpointSlice":
		facts = append(facts, fmt.Sprintf("readyAddresses=%v", ReadyAddresses([]map[string]any{o})))
	}
	for _, c := range conditions(o) {
		if kind == "Pod" && c.Status == "True" {
			continue
		}
		s := c.Type + "=" + c.Status
		if c.Status != "True" && c.Reason != "" {
			s += "(" + c.Reason + ")"
		}
		facts = append(facts, s)
	}
	if len(facts) == 0 {
		return kind + " " + name
	}
	return kind + " " + name + " [" + strings.Join(facts, " ") + "]"
}

// containerProblems lists containers that are waiting or terminated with a
// reason (ImagePullBackOff, CrashLoopBackOff, ...), the usual answer to
// "why is my pod not ready".
func containerProblems(pod map[string]any) []string {
	var out []string
	for _, field := range []string{"initContainerStatuses", "containerStatuses"} {
		sts, _, _ := unstructured.NestedSlice(pod, "status", field)
		for _, s := range sts {
			m, ok := s.(map[string]any)
			if !ok {
				continue
			}
			name := str(m, "name")
			if r := str(m, "state", "waiting", "reason"); r != "" {
				out = append(out, name+":"+r)
			} else if r := str(m, "state", "terminated", "reason"); r != "" && field == "containerStatuses" {
				out = append(out, name+":"+r)
			}
		}
	}
	return out
}
