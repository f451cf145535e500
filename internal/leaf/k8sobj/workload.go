package k8sobj

// Which pods a Deployment, DaemonSet or StatefulSet is rolling out, so that
// a wait on a rollout can judge the pods that rollout depends on. Pods of
// an earlier revision are passed over: a rollout that replaces crashing
// pods must not fail because the old ones crash.

// Selects tells whether a workload (anything with spec.selector as a
// LabelSelector) in the pod's namespace selects the pod, with the
// LabelSelector rules: every matchLabels pair and every matchExpressions
// term must hold. A workload without a selector selects nothing.
func Selects(workload, pod map[string]any) bool {
	if String(workload, "metadata", "namespace") != String(pod, "metadata", "namespace") {
		return false
	}
	sel, ok := field(workload, "spec", "selector")
	sm, _ := sel.(map[string]any)
	if !ok || sm == nil {
		return false
	}
	lv, _ := field(pod, "metadata", "labels")
	labels, _ := lv.(map[string]any)
	matchLabels, _ := sm["matchLabels"].(map[string]any)
	exprs := list(sm, "matchExpressions")
	if len(matchLabels) == 0 && len(exprs) == 0 {
		return false
	}
	for k, v := range matchLabels {
		if lv, ok := labels[k]; !ok || lv != v {
			return false
		}
	}
	for _, e := range exprs {
		em, _ := e.(map[string]any)
		lv, has := labels[String(em, "key")]
		in := false
		for _, v := range list(em, "values") {
			in = in || (has && lv == v)
		}
		switch String(em, "operator") {
		case "In":
			if !in {
				return false
			}
		case "NotIn":
			if in {
				return false
			}
		case "Exists":
			if !has {
				return false
			}
		case "DoesNotExist":
			if has {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// RolloutRevision tells whether pod belongs to the revision workload is
// rolling out: for a StatefulSet the pod's controller-revision-hash is the
// update revision; for a DaemonSet its pod-template-generation is the
// template generation; for a Deployment, replicaSet (the pod's owner, nil
// when unknown) is the Deployment's own and carries its revision. Until
// the controller has observed the workload's latest generation, no pod is. The workload must
// select the pod (Selects).
func RolloutRevision(workload, pod, replicaSet map[string]any) bool {
	if Int(workload, "status", "observedGeneration") < Int(workload, "metadata", "generation") {
		// the controller has not seen the latest change yet: which
		// revision is being rolled out is not known
		return false
	}
	switch String(workload, "kind") {
	case "StatefulSet":
		rev := String(workload, "status", "updateRevision")
		return rev != "" && String(pod, "metadata", "labels", "controller-revision-hash") == rev
	case "DaemonSet":
		gen := String(workload, "metadata", "annotations", "deprecated.daemonset.template.generation")
		return gen != "" && String(pod, "metadata", "labels", "pod-template-generation") == gen
	case "Deployment":
		const revision = "deployment.kubernetes.io/revision"
		rev := String(workload, "metadata", "annotations", revision)
		return replicaSet != nil && rev != "" && String(replicaSet, "metadata", "annotations", revision) == rev &&
			OwnerName(replicaSet, "Deployment") == String(workload, "metadata", "name")
	}
	return false
}

// OwnerName is the name of the object's controlling owner of the given kind
// ("" when there is none).
func OwnerName(obj map[string]any, kind string) string {
	for _, r := range list(obj, "metadata", "ownerReferences") {
		m, _ := r.(map[string]any)
		if String(m, "kind") == kind && m["controller"] == true {
			return String(m, "name")
		}
	}
	return ""
}
