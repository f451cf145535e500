//go:build e2e

package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/labrun/labrun/internal/heavy/kube/kubetest"
)

// capturePlaybook deploys an api pod behind a CiliumNetworkPolicy that
// lets only app=frontend reach it on 8080, then listens to the agent's
// monitor while each client asks: the intruder's SYNs are dropped by
// policy (a drop to api:8080 from the intruder's identity, seen as it
// happens, the capture ending at its until), the frontend's request
// passes with no drop (the capture listens its settle time and sees
// none), and the policy map's entry for the frontend counts the packets
// of that request.
const capturePlaybook = `name: capture-e2e
vars:
  ns: labrun-capture
  http_image: labrun.local/python:3.11.2
  curl_image: labrun.local/curl:7.88.1
steps:
  - id: objects
    apply:
      objects:
        - {apiVersion: v1, kind: Namespace, metadata: {name: "${{ vars.ns }}"}}
        - apiVersion: v1
          kind: Pod
          metadata: {name: api, namespace: "${{ vars.ns }}", labels: {app: api}}
          spec:
            terminationGracePeriodSeconds: 0
            containers:
              - {name: api, image: "${{ vars.http_image }}", command: [python3, -m, http.server, "8080"], readinessProbe: {tcpSocket: {port: 8080}, periodSeconds: 1}}
        - apiVersion: v1
          kind: Pod
          metadata: {name: frontend, namespace: "${{ vars.ns }}", labels: {app: frontend}}
          spec: {terminationGracePeriodSeconds: 0, containers: [{name: c, image: "${{ vars.curl_image }}", command: [sleep, "3600"]}]}
        - apiVersion: v1
          kind: Pod
          metadata: {name: intruder, namespace: "${{ vars.ns }}", labels: {app: intruder}}
          spec: {terminationGracePeriodSeconds: 0, containers: [{name: c, image: "${{ vars.curl_image }}", command: [sleep, "3600"]}]}
        - apiVersion: cilium.io/v2
          kind: CiliumNetworkPolicy
          metadata: {name: api-ingress, namespace: "${{ vars.ns }}"}
          spec:
            endpointSelector: {matchLabels: {app: api}}
            ingress:
              - fromEndpoints: [{matchLabels: {app: frontend}}]
                toPorts: [{ports: [{port: "8080", protocol: TCP}]}]
  - id: ready
    wait: {kind: Pod, namespace: "${{ vars.ns }}"}
    until: result.ready == 3
    timeout: 3m
  - id: ceps
    get: {apiVersion: cilium.io/v2, kind: CiliumEndpoint, namespace: "${{ vars.ns }}"}
    until: result.count == 3 && all(result.items, .status?.identity?.id != nil)
    timeout: 2m
  - id: who
    compute:
      api: ${{ filter(steps.ceps.items, .metadata.name == "api")[0] }}
      frontend: ${{ int(filter(steps.ceps.items, .metadata.name == "frontend")[0].status.identity.id) }}
      intruder: ${{ int(filter(steps.ceps.items, .metadata.name == "intruder")[0].status.identity.id) }}
      api_ip: ${{ filter(steps.ceps.items, .metadata.name == "api")[0].status.networking.addressing[0].ipv4 }}
  - id: realized
    name: the api endpoint's policy map allows the frontend on 8080/TCP
    cilium: {args: [bpf, policy, get, -n, "${{ string(steps.who.api.status.id) }}"]}
    until: parseCiliumBPFPolicyGet(result.stdout).Find("ingress", steps.who.frontend, "8080/TCP") != nil
    timeout: 1m

  - id: intruder_dropped
    capture:
      monitor: {types: [drop]}
    during:
      - id: intruder_curl
        exec: {namespace: "${{ vars.ns }}", pod: intruder, argv: [curl, -sS, -m, "3", "http://${{ steps.who.api_ip }}:8080/"], allowFailure: true}
        assert: ['result.exitCode == 28']
    until: len(filter(result.DropsTo(steps.who.api_ip, 8080), .srcIdentity == steps.who.intruder)) > 0
    timeout: 30s
    assert:
      - that: all(result.DropsTo(steps.who.api_ip, 8080), .reason == "Policy denied" && .protocol == "tcp")
      - that: result.stopped == "until" && !result.truncated

  - id: before_frontend
    cilium: {args: [bpf, policy, get, -n, "${{ string(steps.who.api.status.id) }}"]}
  - id: frontend_allowed
    capture:
      monitor: {types: [drop]}
      settle: 2s
    during:
      - id: frontend_curl
        exec: {namespace: "${{ vars.ns }}", pod: frontend, argv: [curl, -sS, -m, "5", -o, /dev/null, -w, "%{http_code}", "http://${{ steps.who.api_ip }}:8080/"]}
        assert: ['result.stdout == "200"']
    assert:
      - that: len(result.DropsTo(steps.who.api_ip, 8080)) == 0
        message: nothing to api:8080 is dropped while the frontend asks
      - that: result.stopped == "settle" && result.seconds >= 2
  - id: after_frontend
    cilium: {args: [bpf, policy, get, -n, "${{ string(steps.who.api.status.id) }}"]}
    assert:
      - that: parseCiliumBPFPolicyGet(result.stdout).PacketsOf("ingress", steps.who.frontend, "8080/TCP") > parseCiliumBPFPolicyGet(steps.before_frontend.stdout).PacketsOf("ingress", steps.who.frontend, "8080/TCP")
        message: the allow rule's entry counted the frontend's request
      - that: parseCiliumBPFPolicyGet(result.stdout).Find("ingress", steps.who.intruder, "8080/TCP") == nil
finally:
  - id: cleanup
    delete: {kind: Namespace, name: "${{ vars.ns }}", ignoreNotFound: true}
`

// A capture on the test cluster sees the drop a policy makes while the
// intruder asks, and none while the frontend (which the policy allows)
// asks; the policy map's counters move for the allowed request. The JSON
// report holds the drop as the monitor printed it.
func TestCaptureSeesPolicyDrops(t *testing.T) {
	kc := kubetest.Kubeconfig(t)
	dir := t.TempDir()
	pb := filepath.Join(dir, "capture.yaml")
	if err := os.WriteFile(pb, []byte(capturePlaybook), 0o644); err != nil {
		t.Fatal(err)
	}
	report := filepath.Join(dir, "report.json")
	var stdout, stderr bytes.Buffer
	if code := Main([]string{"run", "--no-progress", "--kubeconfig", kc, "--report", "json=" + report, pb}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d\n%s%s", code, stdout.String(), stderr.String())
	}
	b, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		Steps []struct {
			ID     string          `json:"id"`
			Result json.RawMessage `json:"result"`
		} `json:"steps"`
	}
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	for _, s := range r.Steps {
		if s.ID != "intruder_dropped" {
			continue
		}
		var res struct {
			Drops []struct {
				Reason  string `json:"reason"`
				DstPort *int   `json:"dstPort"`
			} `json:"drops"`
			Argv []string `json:"argv"`
		}
		if err := json.Unmarshal(s.Result, &res); err != nil {
			t.Fatal(err)
		}
		found := false
		for _, d := range res.Drops {
			found = found || d.Reason == "Policy denied" && d.DstPort != nil && *d.DstPort == 8080
		}
		if !found {
			t.Errorf("the report's capture holds no policy drop to 8080: %s", s.Result)
		}
		if !strings.Contains(strings.Join(res.Argv, " "), "cilium-dbg monitor -j -n --type drop") {
			t.Errorf("argv %q", res.Argv)
		}
		return
	}
	t.Errorf("no intruder_dropped step in the report:\n%s", b)
}
