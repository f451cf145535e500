package k8sobj

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// readCapture reads a capture of the test cluster: "# " header lines, then
// the command's JSON output (a List).
func readCapture(t *testing.T, name string) []map[string]any {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "..", "testbed", "captures", name))
	if err != nil {
		t.Fatal(err)
	}
	var body []string
	for _, l := range strings.Split(string(data), "\n") {
		if !strings.HasPrefix(l, "# ") {
			body = append(body, l)
		}
	}
	var list struct {
		Items []map[string]any `json:"items"`
	}
	if err := json.Unmarshal([]byte(strings.Join(body, "\n")), &list); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return list.Items
}

func obj(t *testing.T, src string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(src), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestReadyAddressesOfRealSlices(t *testing.T) {
	slicesOfWeb := readCapture(t, "kubectl_get_endpointslices_web_json.txt")
	got := ReadyAddresses(slicesOfWeb)
	want := []string{"10.42.0.147", "10.42.0.187", "10.42.0.21", "10.42.0.208"}
	if !slices.Equal(got, want) {
		t.Errorf("ReadyAddresses = %v, want %v", got, want)
	}
	if s := SummarizeObject(slicesOfWeb[0]); !strings.Contains(s, "readyAddresses=[10.42.0.147 10.42.0.187 10.42.0.21 10.42.0.208]") {
		t.Errorf("summary %q", s)
	}
	// an endpoint marked not ready is left out; one without the condition counts
	m := obj(t, `{"endpoints": [{"addresses": ["10.0.0.1"], "conditions": {"ready": false}}, {"addresses": ["10.0.0.2"]}, {"addresses": ["10.0.0.2"]}]}`)
	if got := ReadyAddresses([]map[string]any{m}); !slices.Equal(got, []string{"10.0.0.2"}) {
		t.Errorf("ReadyAddresses = %v", got)
	}
}

// The rules of kubectl rollout status and of the Ready condition, one case
// per rule.
func TestReadiness(t *testing.T) {
	cases := []struct {
		name   string
		obj    string
		ready  bool   // Ready
		rolled string // RolloutComplete: "true", "false", or an error's text
	}{
		{"pod ready", `{"kind":"Pod","status":{"conditions":[{"type":"Ready","status":"True"}]}}`, true, "rollout status is not defined"},
		{"pod not ready", `{"kind":"Pod","status":{"conditions":[{"type":"Ready","status":"False"}]}}`, false, "rollout status is not defined"},
		{"pod terminating", `{"kind":"Pod","metadata":{"deletionTimestamp":"2026-12-02T10:00:00Z"},"status":{"conditions":[{"type":"Ready","status":"True"}]}}`, false, "rollout status is not defined"},
		{"pod without conditions", `{"kind":"Pod","status":{"phase":"Pending"}}`, false, "rollout status is not defined"},
		{"deployment rolled out", `{"kind":"Deployment","metadata":{"generation":3},"spec":{"replicas":4},"status":{"observedGeneration":3,"replicas":4,"updatedReplicas":4,"availableReplicas":4,"readyReplicas":4}}`, true, "true"},
		{"deployment generation not observed", `{"kind":"Deployment","metadata":{"generation":4},"spec":{"replicas":4},"status":{"observedGeneration":3,"replicas":4,"updatedReplicas":4,"availableReplicas":4}}`, false, "false"},
		{"deployment scaling up", `{"kind":"Deployment","metadata":{"generation":2},"spec":{"replicas":4},"status":{"observedGeneration":2,"replicas":4,"updatedReplicas":4,"availableReplicas":2}}`, false, "false"},
		{"deployment old pods left", `{"kind":"Deployment","metadata":{"generation":2},"spec":{"replicas":2},"status":{"observedGeneration":2,"replicas":3,"updatedReplicas":2,"availableReplicas":3}}`, false, "false"},
		{"deployment default replicas", `{"kind":"Deployment","metadata":{"generation":1},"spec":{},"status":{"observedGeneration":1,"replicas":1,"updatedReplicas":1,"availableReplicas":1}}`, true, "true"},
		{"deployment past deadline", `{"kind":"Deployment","metadata":{"name":"web","generation":1},"spec":{"replicas":1},"status":{"observedGeneration":1,"conditions":[{"type":"Progressing","status":"False","reason":"ProgressDeadlineExceeded","message":"ReplicaSet web-1 has timed out progressing."}]}}`, false, `deployment "web" exceeded its progress deadline: ReplicaSet web-1 has timed out progressing.`},
		{"daemonset rolled out", `{"kind":"DaemonSet","metadata":{"generation":1},"status":{"observedGeneration":1,"desiredNumberScheduled":1,"updatedNumberScheduled":1,"numberAvailable":1}}`, true, "true"},
		{"daemonset updating", `{"kind":"DaemonSet","metadata":{"generation":2},"status":{"observedGeneration":2,"desiredNumberScheduled":2,"updatedNumberScheduled":1,"numberAvailable":2}}`, false, "false"},
		{"daemonset OnDelete", `{"kind":"DaemonSet","metadata":{"generation":2},"spec":{"updateStrategy":{"type":"OnDelete"}},"status":{"observedGeneration":2,"desiredNumberScheduled":2}}`, true, "true"},
		{"statefulset same revision", `{"kind":"StatefulSet","metadata":{"generation":1},"spec":{"replicas":2},"status":{"observedGeneration":1,"readyReplicas":2,"updateRevision":"r1","currentRevision":"r1"}}`, true, "true"},
		{"statefulset new revision", `{"kind":"StatefulSet","metadata":{"generation":1},"spec":{"replicas":2},"status":{"observedGeneration":1,"readyReplicas":2,"updateRevision":"r2","currentRevision":"r1"}}`, false, "false"},
		{"statefulset partition", `{"kind":"StatefulSet","metadata":{"generation":1},"spec":{"replicas":3,"updateStrategy":{"rollingUpdate":{"partition":2}}},"status":{"observedGeneration":1,"readyReplicas":3,"updatedReplicas":1,"updateRevision":"r2","currentRevision":"r1"}}`, true, "true"},
		{"replicaset ready", `{"kind":"ReplicaSet","metadata":{"generation":1},"spec":{"replicas":2},"status":{"observedGeneration":1,"replicas":2,"readyReplicas":2}}`, true, "rollout status is not defined"},
		{"replicaset scaling down", `{"kind":"ReplicaSet","metadata":{"generation":2},"spec":{"replicas":2},"status":{"observedGeneration":2,"replicas":4,"readyReplicas":4}}`, false, "rollout status is not defined"},
		{"service", `{"kind":"Service"}`, false, "rollout status is not defined"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := obj(t, c.obj)
			if got := Ready(o); got != c.ready {
				t.Errorf("Ready = %t, want %t", got, c.ready)
			}
			ok, err := RolloutComplete(o)
			got := "false"
			switch {
			case err != nil:
				got = err.Error()
			case ok:
				got = "true"
			}
			if !strings.HasPrefix(got, c.rolled) {
				t.Errorf("RolloutComplete = %s, want %s", got, c.rolled)
			}
		})
	}
}

func TestSummarize(t *testing.T) {
	pod := obj(t, `{"kind":"Pod","metadata":{"name":"probe","namespace":"cca-dp"},"status":{"phase":"Pending",
		"conditions":[{"type":"PodScheduled","status":"True"},{"type":"Ready","status":"False","reason":"ContainersNotReady"}],
		"containerStatuses":[{"name":"probe","state":{"waiting":{"reason":"ImagePullBackOff"}}}]}}`)
	want := "Pod cca-dp/probe [phase=Pending ready=false probe:ImagePullBackOff Ready=False(ContainersNotReady)]"
	if got := SummarizeObject(pod); got != want {
		t.Errorf("SummarizeObject = %q, want %q", got, want)
	}
	var many []map[string]any
	for range 12 {
		many = append(many, pod)
	}
	if got := Summarize(many); !strings.HasPrefix(got, "12 object(s): ") || !strings.HasSuffix(got, "; and 2 more") {
		t.Errorf("Summarize of 12 = %q", got)
	}
	if got := Summarize(nil); got != "no matching objects exist" {
		t.Errorf("Summarize(nil) = %q", got)
	}
}

// readList reads a `kubectl get -o json` capture under testdata: a List's
// items, or the one object.
func readList(t *testing.T, name string) []map[string]any {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	var o map[string]any
	if err := json.Unmarshal(data, &o); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	items, ok := o["items"].([]any)
	if !ok {
		return []map[string]any{o}
	}
	var out []map[string]any
	for _, it := range items {
		out = append(out, it.(map[string]any))
	}
	return out
}

// Objects captured from the test cluster while web was scaled from 4 to 2
// and back to 4 (testdata/*.json, kubectl 1.36 -o json): terminating pods
// still have condition Ready=True but are not ready; a Deployment scaled
// down counts as rolled out while its old pods still terminate, as kubectl
// rollout status says; the EndpointSlice marks terminating endpoints not
// ready.
func TestRealObjects(t *testing.T) {
	ready := func(objs []map[string]any) int {
		n := 0
		for _, o := range objs {
			if Ready(o) {
				n++
			}
		}
		return n
	}
	down := readList(t, "pods_web_scaling_down.json")
	if len(down) != 4 || ready(down) != 2 {
		t.Errorf("scaling down: %d pods, %d ready; want 4 and 2", len(down), ready(down))
	}
	if s := Summarize(down); strings.Count(s, "terminating") != 2 || strings.Count(s, "ready=true") != 2 {
		t.Errorf("summary of the pods scaling down: %s", s)
	}
	up := readList(t, "pods_web_scaling_up.json")
	if len(up) != 6 || ready(up) != 2 {
		t.Errorf("scaling up: %d pods, %d ready; want 6 and 2", len(up), ready(up))
	}
	for _, c := range []struct {
		file string
		want bool
	}{
		{"deployment_web_scaling_down.json", true},
		{"deployment_web_scaling_up.json", false},
		{"deployment_web_rolled_out.json", true},
		{"daemonset_cilium.json", true},
	} {
		o := readList(t, c.file)[0]
		ok, err := RolloutComplete(o)
		if err != nil || ok != c.want || Ready(o) != c.want {
			t.Errorf("%s: RolloutComplete = %t, %v; Ready = %t; want %t", c.file, ok, err, Ready(o), c.want)
		}
	}
	eps := readList(t, "endpointslices_web_scaling_down.json")
	if got := ReadyAddresses(eps); len(got) != 2 {
		t.Errorf("ready addresses while scaling down: %v, want 2", got)
	}
}
