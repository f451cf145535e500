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

// hubblePlaybook puts api, frontend and intruder on node 1, with the same
// policy, and reads Hubble's flows in node 1's agent: the intruder's SYNs
// dropped by policy (typed: verdict, drop reason, identities, pods,
// direction, is_reply), nothing dropped while the frontend asks, and the
// frontend's request and api's replies forwarded.
const hubblePlaybook = `name: capture-hubble-e2e
vars:
  ns: labrun-capture-hubble
  node: NODE1
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
            nodeName: "${{ vars.node }}"
            terminationGracePeriodSeconds: 0
            containers:
              - {name: api, image: "${{ vars.http_image }}", command: [python3, -m, http.server, "8080"], readinessProbe: {tcpSocket: {port: 8080}, periodSeconds: 1}}
        - apiVersion: v1
          kind: Pod
          metadata: {name: frontend, namespace: "${{ vars.ns }}", labels: {app: frontend}}
          spec: {nodeName: "${{ vars.node }}", terminationGracePeriodSeconds: 0, containers: [{name: c, image: "${{ vars.curl_image }}", command: [sleep, "3600"]}]}
        - apiVersion: v1
          kind: Pod
          metadata: {name: intruder, namespace: "${{ vars.ns }}", labels: {app: intruder}}
          spec: {nodeName: "${{ vars.node }}", terminationGracePeriodSeconds: 0, containers: [{name: c, image: "${{ vars.curl_image }}", command: [sleep, "3600"]}]}
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
      api_ident: ${{ int(filter(steps.ceps.items, .metadata.name == "api")[0].status.identity.id) }}
      frontend: ${{ int(filter(steps.ceps.items, .metadata.name == "frontend")[0].status.identity.id) }}
      intruder: ${{ int(filter(steps.ceps.items, .metadata.name == "intruder")[0].status.identity.id) }}
      api_ip: ${{ filter(steps.ceps.items, .metadata.name == "api")[0].status.networking.addressing[0].ipv4 }}
  - id: realized
    cilium: {args: [bpf, policy, get, -n, "${{ string(steps.who.api.status.id) }}"], node: "${{ vars.node }}"}
    until: parseCiliumBPFPolicyGet(result.stdout).Find("ingress", steps.who.frontend, "8080/TCP") != nil
    timeout: 1m

  - id: intruder_dropped
    capture:
      hubble: {node: "${{ vars.node }}", filter: {verdict: [DROPPED], namespace: ["${{ vars.ns }}"]}}
    during:
      - id: intruder_curl
        exec: {namespace: "${{ vars.ns }}", pod: intruder, argv: [curl, -sS, -m, "3", "http://${{ steps.who.api_ip }}:8080/"], allowFailure: true}
        assert: ['result.exitCode == 28']
    until: len(filter(result.FlowsTo(steps.who.api_ip, 8080), .srcIdentity == steps.who.intruder)) > 0
    timeout: 30s
    assert:
      - that: all(result.FlowsTo(steps.who.api_ip, 8080), .verdict == "DROPPED" && .dropReason == "POLICY_DENIED" && .protocol == "tcp")
      - that: all(result.FlowsTo(steps.who.api_ip, 8080), .srcPod == "intruder" && .srcNamespace == steps.who.api.metadata.namespace && .dstPod == "api" && .dstIdentity == steps.who.api_ident)
      - that: all(result.FlowsTo(steps.who.api_ip, 8080), .trafficDirection == "INGRESS" && .tcpFlags == "SYN" && .isReply == nil)
        message: a dropped packet's flow does not say whether it is a reply (Cilium 1.20 leaves is_reply out)
      - that: result.source == "hubble" && result.stopped == "until" && !result.truncated && len(result.drops) == 0
  - id: frontend_not_dropped
    capture:
      hubble: {node: "${{ vars.node }}", filter: {verdict: [DROPPED], namespace: ["${{ vars.ns }}"]}}
      settle: 2s
    during:
      - id: frontend_curl
        exec: {namespace: "${{ vars.ns }}", pod: frontend, argv: [curl, -sS, -m, "5", -o, /dev/null, -w, "%{http_code}", "http://${{ steps.who.api_ip }}:8080/"]}
        assert: ['result.stdout == "200"']
    assert:
      - that: len(result.FlowsTo(steps.who.api_ip, 8080)) == 0
        message: nothing to api:8080 is dropped while the frontend asks (and no drop from before the capture is read)
      - that: result.stopped == "settle"
  - id: frontend_forwarded
    capture:
      hubble: {node: "${{ vars.node }}", filter: {verdict: [FORWARDED], pod: ["${{ vars.ns }}/api"], port: [8080]}}
    during:
      - id: frontend_again
        exec: {namespace: "${{ vars.ns }}", pod: frontend, argv: [curl, -sS, -m, "5", -o, /dev/null, "http://${{ steps.who.api_ip }}:8080/"]}
    until: len(filter(result.FlowsTo(steps.who.api_ip, 8080), .isReply == false)) > 0 && len(filter(result.FlowsFrom(steps.who.api_ip), .isReply == true)) > 0
    timeout: 30s
    assert:
      - that: all(result.flows, .verdict == "FORWARDED")
      - that: any(result.FlowsTo(steps.who.api_ip, 8080), .srcIdentity == steps.who.frontend && .srcPod == "frontend")
finally:
  - id: cleanup
    delete: {kind: Namespace, name: "${{ vars.ns }}", ignoreNotFound: true}
`

// A capture of Hubble's flows on the test cluster sees the drop a policy
// makes while the intruder asks, typed as Hubble gives it; none while the
// frontend asks; and the frontend's request and its replies forwarded.
func TestCaptureHubbleSeesPolicyDrops(t *testing.T) {
	kc := kubetest.Kubeconfig(t)
	v := kubetest.ReadVars(t)
	runCapturePlaybook(t, kc, strings.ReplaceAll(hubblePlaybook, "NODE1", v.NodeName))
}

// tcpdumpPlaybook: web on node 2, client on node 1; tcpdump on node 1,
// through its node shell, while the client asks web: on cilium_vxlan the
// pods' own packets, on eth0 the VXLAN packets between the nodes with the
// pods' packets inside, and on every interface the client's lxc device
// too, each packet with its interface.
const tcpdumpPlaybook = `name: capture-tcpdump-e2e
vars:
  ns: labrun-capture-tcpdump
  node_exec: [/var/lib/labrun-testbed/bin/node-exec]
  node1: NODE1
  node2: NODE2
  node2_ip: NODE2IP
  http_image: labrun.local/python:3.11.2
  curl_image: labrun.local/curl:7.88.1
steps:
  - id: objects
    apply:
      objects:
        - {apiVersion: v1, kind: Namespace, metadata: {name: "${{ vars.ns }}"}}
        - apiVersion: v1
          kind: Pod
          metadata: {name: web, namespace: "${{ vars.ns }}"}
          spec:
            nodeName: "${{ vars.node2 }}"
            terminationGracePeriodSeconds: 0
            containers:
              - {name: web, image: "${{ vars.http_image }}", command: [python3, -m, http.server, "8080"], readinessProbe: {tcpSocket: {port: 8080}, periodSeconds: 1}}
        - apiVersion: v1
          kind: Pod
          metadata: {name: client, namespace: "${{ vars.ns }}"}
          spec: {nodeName: "${{ vars.node1 }}", terminationGracePeriodSeconds: 0, containers: [{name: c, image: "${{ vars.curl_image }}", command: [sleep, "3600"]}]}
  - id: ready
    wait: {kind: Pod, namespace: "${{ vars.ns }}"}
    until: result.ready == 2
    timeout: 3m
  - id: pods
    get: {kind: Pod, namespace: "${{ vars.ns }}"}
  - id: ip
    compute:
      web: ${{ filter(steps.pods.items, .metadata.name == "web")[0].status.podIP }}
      client: ${{ filter(steps.pods.items, .metadata.name == "client")[0].status.podIP }}

  - id: on_vxlan
    capture:
      tcpdump: {via: "${{ vars.node_exec }}", interface: cilium_vxlan, filter: tcp port 8080}
    during:
      - id: ask_vxlan
        exec: {namespace: "${{ vars.ns }}", pod: client, argv: [curl, -sS, -m, "5", -o, /dev/null, -w, "%{http_code}", "http://${{ steps.ip.web }}:8080/"]}
        assert: ['result.stdout == "200"']
    until: len(filter(result.PacketsFrom(steps.ip.web), .tcpFlags == "F.")) > 0
    timeout: 30s
    assert:
      - that: any(result.PacketsTo(steps.ip.web, 8080), .srcIP == steps.ip.client && .tcpFlags == "S" && .protocol == "tcp" && .length == 0)
      - that: any(result.PacketsFrom(steps.ip.web), .dstIP == steps.ip.client && .tcpFlags == "S.")
      - that: all(result.packets, .interface == nil && .network == "IP" && len(.inner) == 0)
      - that: result.source == "tcpdump" && result.stopped == "until" && result.namespace == nil && result.lost == 0
  - id: on_eth0
    capture:
      tcpdump: {via: "${{ vars.node_exec }}", interface: eth0, filter: udp port 8472}
      settle: 1s
    during:
      - id: ask_eth0
        exec: {namespace: "${{ vars.ns }}", pod: client, argv: [curl, -sS, -m, "5", -o, /dev/null, "http://${{ steps.ip.web }}:8080/"]}
    assert:
      - that: any(result.PacketsTo(steps.ip.web, 8080), .dstIP == vars.node2_ip && .dstPort == 8472 && .protocol == "udp" && .inner[0].srcIP == steps.ip.client && .inner[0].tcpFlags == "S")
        message: the client's SYN crosses to node 2 inside a VXLAN packet to its port 8472
      - that: result.stopped == "settle"
  - id: on_any
    capture:
      tcpdump: {via: "${{ vars.node_exec }}", filter: "host ${{ steps.ip.web }} and tcp port 8080"}
      settle: 1s
    during:
      - id: ask_any
        exec: {namespace: "${{ vars.ns }}", pod: client, argv: [curl, -sS, -m, "5", -o, /dev/null, "http://${{ steps.ip.web }}:8080/"]}
    assert:
      - that: any(result.PacketsTo(steps.ip.web, 8080), .interface startsWith "lxc" && .direction == "In" && .tcpFlags == "S")
        message: the SYN comes in from the client's lxc device
      - that: any(result.PacketsTo(steps.ip.web, 8080), .interface == "cilium_vxlan" && .direction == "Out" && .tcpFlags == "S")
        message: and leaves through cilium_vxlan
finally:
  - id: cleanup
    delete: {kind: Namespace, name: "${{ vars.ns }}", ignoreNotFound: true}
`

// tcpdump on a node of the test cluster, where labrun runs node commands,
// sees a request across the nodes on cilium_vxlan, inside the VXLAN
// packets on eth0, and on the client's lxc device. Two nodes: the tunnel
// profile.
func TestTunnelCaptureTcpdumpAcrossNodes(t *testing.T) {
	kc := kubetest.Kubeconfig(t)
	v := kubetest.ReadVars(t)
	if v.Profile != "tunnel" {
		t.Skipf("test cluster runs profile %q; this test needs the tunnel profile's two nodes and cilium_vxlan", v.Profile)
	}
	src := strings.NewReplacer("NODE1", v.NodeName, "NODE2IP", v.Node2IP, "NODE2", v.Node2Name).Replace(tcpdumpPlaybook)
	runCapturePlaybook(t, kc, src)
}

// runCapturePlaybook runs src and fails with what labrun printed unless it
// passed.
func runCapturePlaybook(t *testing.T, kc, src string) {
	t.Helper()
	pb := filepath.Join(t.TempDir(), "capture.yaml")
	if err := os.WriteFile(pb, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if code := Main([]string{"run", "--no-progress", "--kubeconfig", kc, pb}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d\n%s%s", code, stdout.String(), stderr.String())
	}
}
