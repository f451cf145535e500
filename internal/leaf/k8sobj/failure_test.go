package k8sobj

import (
	"testing"
)

// Pods captured from the test cluster (kubectl 1.36 -o json, containerd
// 1.6, testdata/pod_*.json) in each state that waiting cannot fix, and one
// on its way to Ready: the failure names the pod, container and reason and
// quotes what the kubelet or the container said.
func TestPodFailedOnRealPods(t *testing.T) {
	const ns = "labrun-capture-failfast"
	cases := []struct {
		file string
		want string // PodFailure.Error(), "" for no failure
	}{
		{"pod_crashloop.json", "pod " + ns + "/crash container main is in CrashLoopBackOff: exit code 3: boom; mkdir: can't create directory '/proc/x': No such file or directory"},
		{"pod_nopull.json", "pod " + ns + `/nopull container main is in ErrImageNeverPull: Container image "labrun.local/does-not-exist:1" is not present with pull policy of Never`},
		{"pod_configerr.json", "pod " + ns + `/configerr container main is in CreateContainerConfigError: secret "missing" not found`},
		{"pod_badname.json", "pod " + ns + `/badname container main is in InvalidImageName: Failed to apply default image tag "labrun.local/Bad Name:1": couldn't parse image name "labrun.local/Bad Name:1": invalid reference format: repository name (Bad Name) must be lowercase`},
		{"pod_failed.json", "pod " + ns + "/failed container main failed: exit code 1: cannot start"},
		{"pods_pullfail.json", "pod " + ns + `/pullfail-769455d567-tf8kf container main is in ImagePullBackOff: Back-off pulling image "labrun.local/does-not-exist:2": ErrImagePull: failed to pull and unpack image "labrun.local/does-not-exist:2": failed to resolve reference "labrun.local/does-not-exist:2": failed to do request: Head "https://labrun.local/v2/does-not-exist/manifests/2": dial tcp: lookup labrun.local: Temporary failure in name resolution`},
		{"pods_web_scaling_up.json", ""},   // ContainerCreating and Running pods
		{"pods_web_scaling_down.json", ""}, // terminating pods
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			f, ok := FirstPodFailure(readList(t, c.file))
			got := ""
			if ok {
				got = f.Error()
			}
			if got != c.want {
				t.Errorf("got  %q\nwant %q", got, c.want)
			}
		})
	}
}

// The rules no capture shows: the pod's own reason when it failed as a
// whole, an init container, a crash without a message, a long log cut
// from its start, a pod being deleted.
func TestPodFailedRules(t *testing.T) {
	long := ""
	for range 60 {
		long += "0123456789"
	}
	cases := []struct {
		name, pod, want string
	}{
		{"evicted", `{"kind":"Pod","metadata":{"name":"p"},"status":{"phase":"Failed","reason":"Evicted","message":"The node was low on resource: memory.","containerStatuses":[{"name":"c","state":{"terminated":{"exitCode":137,"reason":"Error"}}}]}}`,
			"pod p failed: Evicted: The node was low on resource: memory."},
		{"init container", `{"kind":"Pod","metadata":{"name":"p"},"status":{"phase":"Pending","initContainerStatuses":[{"name":"setup","state":{"waiting":{"reason":"CrashLoopBackOff"}},"lastState":{"terminated":{"exitCode":137,"reason":"OOMKilled"}}}],"containerStatuses":[{"name":"c","state":{"waiting":{"reason":"PodInitializing"}}}]}}`,
			"pod p container setup is in CrashLoopBackOff: exit code 137 (OOMKilled)"},
		{"no last state", `{"kind":"Pod","metadata":{"name":"p"},"status":{"containerStatuses":[{"name":"c","state":{"waiting":{"reason":"CrashLoopBackOff"}}}]}}`,
			"pod p container c is in CrashLoopBackOff"},
		{"long message", `{"kind":"Pod","metadata":{"name":"p"},"status":{"containerStatuses":[{"name":"c","state":{"waiting":{"reason":"CreateContainerError","message":"` + long + `end"}}}]}}`,
			"pod p container c is in CreateContainerError: ..." + long[103:] + "end"},
		{"failed without a reason or exit code", `{"kind":"Pod","metadata":{"name":"p"},"status":{"phase":"Failed"}}`, "pod p failed"},
		{"creating", `{"kind":"Pod","metadata":{"name":"p"},"status":{"containerStatuses":[{"name":"c","state":{"waiting":{"reason":"ContainerCreating"}}}]}}`, ""},
		{"first pull error is not yet judged", `{"kind":"Pod","metadata":{"name":"p"},"status":{"containerStatuses":[{"name":"c","state":{"waiting":{"reason":"ErrImagePull","message":"m"}}}]}}`, "pod p container c is in ErrImagePull: m"},
		{"deleted", `{"kind":"Pod","metadata":{"name":"p","deletionTimestamp":"2026-12-03T10:00:00Z"},"status":{"phase":"Failed"}}`, ""},
		{"succeeded", `{"kind":"Pod","metadata":{"name":"p"},"status":{"phase":"Succeeded","containerStatuses":[{"name":"c","state":{"terminated":{"exitCode":0,"reason":"Completed"}}}]}}`, ""},
		{"not a pod", `{"kind":"Deployment","metadata":{"name":"p"},"status":{"phase":"Failed"}}`, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f, ok := FirstPodFailure([]map[string]any{obj(t, c.pod)})
			got := ""
			if ok {
				got = f.Error()
			}
			if got != c.want {
				t.Errorf("got  %q\nwant %q", got, c.want)
			}
		})
	}
}

// LatestWarning on the events of the captured pods: the container's own
// warning over the pod-level MissingClusterDNS this cluster emits for every
// pod, never the kubelet's "Error: <reason>" echo; the pod-level one when
// the pod has nothing else; nothing for a pod without warnings.
func TestLatestWarningOnRealEvents(t *testing.T) {
	events := readList(t, "events_failing_pods.json")
	cases := []struct {
		f    PodFailure
		want string
	}{
		{PodFailure{Pod: "nopull", Container: "main", Reason: "ErrImageNeverPull"}, `ErrImageNeverPull: Container image "labrun.local/does-not-exist:1" is not present with pull policy of Never`},
		{PodFailure{Pod: "configerr", Container: "main", Reason: "CreateContainerConfigError"}, `Failed: Error: secret "missing" not found`},
		{PodFailure{Pod: "badname", Container: "main", Reason: "InvalidImageName"}, `InspectFailed: Failed to apply default image tag "labrun.local/Bad Name:1": couldn't parse image name "labrun.local/Bad Name:1": invalid reference format: repository name (Bad Name) must be lowercase`},
		{PodFailure{Pod: "crash", Container: "main", Reason: "CrashLoopBackOff"}, "BackOff: Back-off restarting failed container main in pod crash_labrun-capture-failfast(04e27092-faa1-4a2d-8de2-0ab5940c8a3e)"},
		{PodFailure{Pod: "failed", Reason: "Failed"}, `MissingClusterDNS: pod: "failed_labrun-capture-failfast(d1d6ce16-d839-4db9-b7af-d0ae437d3978)". kubelet does not have ClusterDNS IP configured and cannot create Pod using "ClusterFirst" policy. Falling back to "Default" policy.`},
		{PodFailure{Pod: "absent", Reason: "Failed"}, ""},
	}
	for _, c := range cases {
		if got := LatestWarning(events, &c.f); got != c.want {
			t.Errorf("%s: got  %q\nwant %q", c.f.Pod, got, c.want)
		}
	}
}

// The Deployment pullfail, its ReplicaSet and its pod captured from the
// test cluster, and the cilium DaemonSet with one of its pods: each selects
// its pods, which are of the revision being rolled out; an older revision,
// another namespace or labels that do not match are passed over.
func TestRolloutPodsOnRealObjects(t *testing.T) {
	deploy := readList(t, "deployment_pullfail.json")[0]
	rs := readList(t, "replicasets_pullfail.json")[0]
	pod := readList(t, "pods_pullfail.json")[0]
	if !Selects(deploy, pod) || OwnerName(pod, "ReplicaSet") != String(rs, "metadata", "name") || !RolloutRevision(deploy, pod, rs) {
		t.Errorf("the Deployment's pod: selects %t, owner %q, current revision %t", Selects(deploy, pod), OwnerName(pod, "ReplicaSet"), RolloutRevision(deploy, pod, rs))
	}
	older := obj(t, `{"metadata":{"annotations":{"deployment.kubernetes.io/revision":"0"},"ownerReferences":[{"kind":"Deployment","name":"pullfail","controller":true}]}}`)
	another := obj(t, `{"metadata":{"annotations":{"deployment.kubernetes.io/revision":"1"},"ownerReferences":[{"kind":"Deployment","name":"other","controller":true}]}}`)
	if RolloutRevision(deploy, pod, older) || RolloutRevision(deploy, pod, another) || RolloutRevision(deploy, pod, nil) {
		t.Error("a pod of an older, another Deployment's or an unknown ReplicaSet counts as rolled out")
	}
	other := obj(t, `{"metadata":{"namespace":"elsewhere","labels":{"app":"pullfail"}}}`)
	unlabeled := obj(t, `{"metadata":{"namespace":"labrun-capture-failfast","labels":{"app":"web"}}}`)
	if Selects(deploy, other) || Selects(deploy, unlabeled) {
		t.Error("selects a pod of another namespace or labels")
	}

	ds := readList(t, "daemonset_cilium.json")[0]
	agent := obj(t, `{"metadata":{"namespace":"kube-system","labels":{"k8s-app":"cilium","controller-revision-hash":"5ff8cdc486","pod-template-generation":"1"}}}`)
	if !Selects(ds, agent) || !RolloutRevision(ds, agent, nil) {
		t.Errorf("the DaemonSet's pod: selects %t, current %t", Selects(ds, agent), RolloutRevision(ds, agent, nil))
	}
	agent["metadata"].(map[string]any)["labels"].(map[string]any)["pod-template-generation"] = "0"
	if RolloutRevision(ds, agent, nil) {
		t.Error("a DaemonSet pod of an older template generation counts")
	}
}

// Selector terms and the StatefulSet's revision, one case per rule.
func TestSelectsRules(t *testing.T) {
	pod := obj(t, `{"metadata":{"namespace":"n","labels":{"app":"db","tier":"a","controller-revision-hash":"db-1"}}}`)
	cases := []struct {
		selector string
		want     bool
	}{
		{`{"matchLabels":{"app":"db"}}`, true},
		{`{"matchLabels":{"app":"web"}}`, false},
		{`{"matchExpressions":[{"key":"tier","operator":"In","values":["a","b"]}]}`, true},
		{`{"matchExpressions":[{"key":"tier","operator":"In","values":["b"]}]}`, false},
		{`{"matchExpressions":[{"key":"tier","operator":"NotIn","values":["a"]}]}`, false},
		{`{"matchExpressions":[{"key":"zone","operator":"NotIn","values":["a"]}]}`, true},
		{`{"matchExpressions":[{"key":"tier","operator":"Exists"}]}`, true},
		{`{"matchExpressions":[{"key":"tier","operator":"DoesNotExist"}]}`, false},
		{`{"matchExpressions":[{"key":"tier","operator":"Gt","values":["1"]}]}`, false},
		{`{}`, false},
	}
	for _, c := range cases {
		w := obj(t, `{"kind":"StatefulSet","metadata":{"namespace":"n"},"spec":{"selector":`+c.selector+`},"status":{"updateRevision":"db-1"}}`)
		if got := Selects(w, pod); got != c.want {
			t.Errorf("selector %s: got %t", c.selector, got)
		}
	}
	sts := obj(t, `{"kind":"StatefulSet","status":{"updateRevision":"db-2"}}`)
	if RolloutRevision(sts, pod, nil) {
		t.Error("a StatefulSet pod of the current revision db-1 counts for update revision db-2")
	}
	sts = obj(t, `{"kind":"StatefulSet","status":{"updateRevision":"db-1"}}`)
	if !RolloutRevision(sts, pod, nil) {
		t.Error("a StatefulSet pod of the update revision does not count")
	}
	sts = obj(t, `{"kind":"StatefulSet","metadata":{"generation":3},"status":{"observedGeneration":2,"updateRevision":"db-1"}}`)
	if RolloutRevision(sts, pod, nil) {
		t.Error("a pod counts while the controller has not observed the workload's latest generation")
	}
}

// A container that ended without a termination message is marked Exited,
// so that the caller quotes its log: the previous instance's for a
// restarted container, the current one's for a failed pod; QuoteLog adds
// the log's last lines to the cause.
func TestPodFailedExitedWithoutMessage(t *testing.T) {
	cases := []struct {
		name, pod        string
		exited, previous bool
	}{
		{"crash loop with message", `{"kind":"Pod","metadata":{"name":"p"},"status":{"containerStatuses":[{"name":"c","state":{"waiting":{"reason":"CrashLoopBackOff"}},"lastState":{"terminated":{"exitCode":1,"message":"no"}}}]}}`, false, false},
		{"crash loop without", `{"kind":"Pod","metadata":{"name":"p"},"status":{"containerStatuses":[{"name":"c","state":{"waiting":{"reason":"CrashLoopBackOff"}},"lastState":{"terminated":{"exitCode":1,"reason":"Error"}}}]}}`, true, true},
		{"failed without", `{"kind":"Pod","metadata":{"name":"p"},"status":{"phase":"Failed","containerStatuses":[{"name":"c","state":{"terminated":{"exitCode":2}}}]}}`, true, false},
		{"image", `{"kind":"Pod","metadata":{"name":"p"},"status":{"containerStatuses":[{"name":"c","state":{"waiting":{"reason":"ErrImageNeverPull"}}}]}}`, false, false},
	}
	for _, c := range cases {
		f, ok := FirstPodFailure([]map[string]any{obj(t, c.pod)})
		if !ok || f.Exited != c.exited || f.Previous != c.previous {
			t.Errorf("%s: failure %t, exited %t previous %t; want exited %t previous %t", c.name, ok, f != nil && f.Exited, f != nil && f.Previous, c.exited, c.previous)
		}
	}
	f := &PodFailure{Pod: "p", Container: "c", Reason: "CrashLoopBackOff", Cause: "exit code 1 (Error)", Exited: true}
	f.QuoteLog("starting\nmkdir: can't create directory '/srv/www': Read-only file system\n")
	if want := "pod p container c is in CrashLoopBackOff: exit code 1 (Error); its log ends: starting; mkdir: can't create directory '/srv/www': Read-only file system"; f.Error() != want {
		t.Errorf("got  %q\nwant %q", f.Error(), want)
	}
}
