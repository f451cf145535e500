// Package k8sobj reads Kubernetes objects held as plain maps (what the
// dynamic client and watches return): whether a pod is Ready, whether a
// workload has rolled out, the ready addresses of EndpointSlices, a
// one-line summary of an object's state for messages, and whether a pod
// will not become ready by itself and why (failure.go, workload.go).
//
// The rules are kubectl's (kubectl wait --for=condition=Ready, kubectl
// rollout status), so "ready" means what it means to a person at a
// terminal. The package depends on no Kubernetes library: the actions use
// it when counting ready objects, and they must not link client-go.
package k8sobj

import (
	"fmt"
	"strings"
)

// field follows path through nested maps.
func field(obj map[string]any, path ...string) (any, bool) {
	var cur any = obj
	for _, p := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[p]; !ok {
			return nil, false
		}
	}
	return cur, true
}

// Has tells whether the field at path exists.
func Has(obj map[string]any, path ...string) bool {
	_, ok := field(obj, path...)
	return ok
}

// String is the string at path ("" when absent or not a string).
func String(obj map[string]any, path ...string) string {
	v, _ := field(obj, path...)
	s, _ := v.(string)
	return s
}

// StringMap is the map of strings at path (labels, annotations), never
// nil; values that are not strings are left out.
func StringMap(obj map[string]any, path ...string) map[string]string {
	out := map[string]string{}
	v, _ := field(obj, path...)
	m, _ := v.(map[string]any)
	for k, v := range m {
		if s, ok := v.(string); ok {
			out[k] = s
		}
	}
	return out
}

// Int is the integer at path (0 when absent); JSON numbers arrive as
// int64 or float64.
func Int(obj map[string]any, path ...string) int64 {
	v, _ := field(obj, path...)
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

func list(obj map[string]any, path ...string) []any {
	v, _ := field(obj, path...)
	l, _ := v.([]any)
	return l
}

// Condition is one entry of .status.conditions.
type Condition struct {
	Type, Status, Reason, Message string
}

// Conditions lists .status.conditions.
func Conditions(obj map[string]any) []Condition {
	var out []Condition
	for _, r := range list(obj, "status", "conditions") {
		if m, ok := r.(map[string]any); ok {
			out = append(out, Condition{Type: String(m, "type"), Status: String(m, "status"), Reason: String(m, "reason"), Message: String(m, "message")})
		}
	}
	return out
}

// ConditionTrue tells whether the condition typ has status True.
func ConditionTrue(obj map[string]any, typ string) bool {
	for _, c := range Conditions(obj) {
		if c.Type == typ {
			return c.Status == "True"
		}
	}
	return false
}

// replicas is spec.replicas, 1 when absent (the API's default).
func replicas(obj map[string]any) int64 {
	if Has(obj, "spec", "replicas") {
		return Int(obj, "spec", "replicas")
	}
	return 1
}

// PodReady tells whether a pod is Ready and not being deleted.
func PodReady(pod map[string]any) bool {
	if Has(pod, "metadata", "deletionTimestamp") {
		return false
	}
	return ConditionTrue(pod, "Ready")
}

// RolloutComplete tells whether a Deployment, DaemonSet or StatefulSet has
// finished rolling out, with kubectl rollout status's rules. A Deployment
// past its progress deadline is an error: waiting longer will not help.
func RolloutComplete(obj map[string]any) (bool, error) {
	kind := String(obj, "kind")
	gen := Int(obj, "metadata", "generation")
	observed := Int(obj, "status", "observedGeneration")
	if observed < gen {
		return false, nil
	}
	switch kind {
	case "Deployment":
		for _, c := range Conditions(obj) {
			if c.Type == "Progressing" && c.Reason == "ProgressDeadlineExceeded" {
				return false, fmt.Errorf("deployment %q exceeded its progress deadline: %s", String(obj, "metadata", "name"), c.Message)
			}
		}
		want := replicas(obj)
		updated := Int(obj, "status", "updatedReplicas")
		return updated >= want &&
			Int(obj, "status", "replicas") <= updated &&
			Int(obj, "status", "availableReplicas") >= updated, nil
	case "DaemonSet":
		if String(obj, "spec", "updateStrategy", "type") == "OnDelete" {
			return true, nil
		}
		desired := Int(obj, "status", "desiredNumberScheduled")
		return Int(obj, "status", "updatedNumberScheduled") >= desired &&
			Int(obj, "status", "numberAvailable") >= desired, nil
	case "StatefulSet":
		if observed == 0 {
			return false, nil
		}
		want := replicas(obj)
		if Int(obj, "status", "readyReplicas") < want {
			return false, nil
		}
		if String(obj, "spec", "updateStrategy", "type") == "OnDelete" {
			return true, nil
		}
		if Has(obj, "spec", "updateStrategy", "rollingUpdate", "partition") {
			if p := Int(obj, "spec", "updateStrategy", "rollingUpdate", "partition"); p > 0 {
				return Int(obj, "status", "updatedReplicas") >= want-p, nil
			}
		}
		return String(obj, "status", "updateRevision") == String(obj, "status", "currentRevision"), nil
	}
	return false, fmt.Errorf("rollout status is not defined for kind %q", kind)
}

// Ready is what the get and wait actions count as ready: a pod that is
// Ready (PodReady), a Deployment, DaemonSet or StatefulSet that has rolled
// out (RolloutComplete), a ReplicaSet whose current generation has all its
// replicas ready. Other kinds are never ready.
func Ready(obj map[string]any) bool {
	switch String(obj, "kind") {
	case "Pod":
		return PodReady(obj)
	case "Deployment", "DaemonSet", "StatefulSet":
		ok, err := RolloutComplete(obj)
		return ok && err == nil
	case "ReplicaSet":
		want := replicas(obj)
		return Int(obj, "status", "observedGeneration") >= Int(obj, "metadata", "generation") &&
			Int(obj, "status", "replicas") == want && Int(obj, "status", "readyReplicas") >= want
	}
	return false
}

// ReadyAddresses returns the ready endpoint addresses of EndpointSlices (of
// one Service), deduplicated, in order. An endpoint whose ready condition is
// absent counts as ready, as the EndpointSlice API specifies.
func ReadyAddresses(slices []map[string]any) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range slices {
		for _, e := range list(s, "endpoints") {
			em, ok := e.(map[string]any)
			if !ok {
				continue
			}
			if ready, found := field(em, "conditions", "ready"); found && ready == false {
				continue
			}
			for _, a := range list(em, "addresses") {
				if a, ok := a.(string); ok && !seen[a] {
					seen[a] = true
					out = append(out, a)
				}
			}
		}
	}
	return out
}

// maxSummarized bounds how many objects a summary lists, so that a wait on
// hundreds of pods does not produce a page-long error.
const maxSummarized = 10

// Summarize describes a set of objects in one line for messages: kind,
// name and the status fields a person would look at first (phase,
// readiness, replica counts, waiting reasons, false conditions).
func Summarize(objs []map[string]any) string {
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
	kind := String(o, "kind")
	name := String(o, "metadata", "name")
	if ns := String(o, "metadata", "namespace"); ns != "" {
		name = ns + "/" + name
	}
	var facts []string
	if Has(o, "metadata", "deletionTimestamp") {
		facts = append(facts, "terminating")
	}
	if phase := String(o, "status", "phase"); phase != "" {
		facts = append(facts, "phase="+phase)
	}
	switch kind {
	case "Pod":
		facts = append(facts, fmt.Sprintf("ready=%t", PodReady(o)))
		facts = append(facts, containerProblems(o)...)
	case "Deployment", "StatefulSet", "ReplicaSet":
		facts = append(facts, fmt.Sprintf("replicas=%d ready=%d updated=%d available=%d",
			replicas(o), Int(o, "status", "readyReplicas"), Int(o, "status", "updatedReplicas"), Int(o, "status", "availableReplicas")))
	case "DaemonSet":
		facts = append(facts, fmt.Sprintf("desired=%d ready=%d updated=%d available=%d",
			Int(o, "status", "desiredNumberScheduled"), Int(o, "status", "numberReady"),
			Int(o, "status", "updatedNumberScheduled"), Int(o, "status", "numberAvailable")))
	case "EndpointSlice":
		facts = append(facts, fmt.Sprintf("readyAddresses=%v", ReadyAddresses([]map[string]any{o})))
	}
	for _, c := range Conditions(o) {
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
	for _, f := range []string{"initContainerStatuses", "containerStatuses"} {
		for _, s := range list(pod, "status", f) {
			m, ok := s.(map[string]any)
			if !ok {
				continue
			}
			name := String(m, "name")
			if r := String(m, "state", "waiting", "reason"); r != "" {
				out = append(out, name+":"+r)
			} else if r := String(m, "state", "terminated", "reason"); r != "" && f == "containerStatuses" {
				out = append(out, name+":"+r)
			}
		}
	}
	return out
}
