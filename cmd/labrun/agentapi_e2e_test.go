//go:build e2e

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/labrun/labrun/internal/heavy/kube/kubetest"
)

// The agent action on the Cilium agent's own API socket, as a lab run on
// the node reads it (/var/run/cilium/cilium.sock), agrees with cilium-dbg
// in the same agent on every fact cca-datapath now takes from the API
// instead of a cilium-dbg start: the testbed echo Service's entry in the
// service list, the kube-proxy replacement mode, attach mode and socket-LB
// coverage of status --verbose, ServiceNoBackendResponse of config -a, the
// echo pod's endpoint (its host interface and index), and that endpoint's
// policy map and the load-balancing and conntrack maps in map list. Only
// what stays put while other tests run is compared (health can flicker
// while endpoints come and go, other tests' endpoints and services come
// and go). The socket is reached through the agent process's root, as the
// testbed's own view of it may not be there on an older testbed.
func TestAgentAPISocket(t *testing.T) {
	kc := kubetest.Kubeconfig(t)
	sock, err := kubetest.AgentSocket()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	pb := filepath.Join(dir, "agent-api.yaml")
	os.WriteFile(pb, []byte(`name: agent-api
vars: {sock: /var/run/cilium/cilium.sock, ns: labrun-testbed}
steps:
  - id: api
    agent: {path: "/v1/healthz", socket: "${{ vars.sock }}"}
    assert:
      - result.json.cilium != nil
  - id: dbg
    cilium: {args: [status, --verbose]}
  - id: agree
    assert:
      - that: 'string(steps.api.json["kube-proxy-replacement"].mode) == parseCiliumStatus(steps.dbg.stdout).kubeProxyReplacement'
      - that: 'upper(string(steps.api.json["attach-mode"])) == parseCiliumStatus(steps.dbg.stdout).attachMode'
      - that: parseCiliumStatus(steps.api.body).kubeProxyReplacement == parseCiliumStatus(steps.dbg.stdout).kubeProxyReplacement
      - that: parseCiliumStatus(steps.api.body).kubeProxyReplacementDetails.socketLBCoverage == parseCiliumStatus(steps.dbg.stdout).kubeProxyReplacementDetails.socketLBCoverage
      - that: parseCiliumStatus(steps.api.body).attachMode == parseCiliumStatus(steps.dbg.stdout).attachMode

  - id: services_api
    agent: {path: "/v1/service", socket: "${{ vars.sock }}"}
  - id: services_dbg
    cilium: {args: [service, list, -o, json]}
  - id: echo
    compute:
      api: '${{ map(filter(parseCiliumServiceList(steps.services_api.body), .namespace == vars.ns), ({"id": .id, "fe": .frontend.String(), "type": .type, "be": sort(.BackendAddrs())})) }}'
      dbg: '${{ map(filter(parseCiliumServiceList(steps.services_dbg.stdout), .namespace == vars.ns), ({"id": .id, "fe": .frontend.String(), "type": .type, "be": sort(.BackendAddrs())})) }}'
    assert:
      - that: len(result.api) >= 1
        message: the testbed's echo Service should be in the agent's service list
      - that: toJSON(sortBy(result.api, .fe)) == toJSON(sortBy(result.dbg, .fe))

  - id: config_api
    agent: {path: "/v1/config", socket: "${{ vars.sock }}"}
  - id: config_dbg
    cilium: {args: [config, -a]}
  - id: config_agree
    assert:
      - that: string(steps.config_api.json.status.daemonConfigurationMap.ServiceNoBackendResponse) == parseCiliumConfig(steps.config_dbg.stdout).Get("ServiceNoBackendResponse")

  - id: cep
    get: {apiVersion: cilium.io/v2, kind: CiliumEndpoint, namespace: "${{ vars.ns }}"}
    assert:
      - result.count >= 1
  - id: endpoint_api
    agent: {path: "/v1/endpoint/${{ string(steps.cep.items[0].status.id) }}", socket: "${{ vars.sock }}"}
  - id: endpoint_dbg
    cilium: {args: [endpoint, get, "${{ string(steps.cep.items[0].status.id) }}", -o, json]}
  - id: maps_api
    agent: {path: "/v1/map", socket: "${{ vars.sock }}"}
  - id: maps_dbg
    cilium: {args: [map, list]}
  - id: endpoint_agree
    compute:
      id: ${{ int(steps.cep.items[0].status.id) }}
      api: ${{ parseCiliumEndpointGet(steps.endpoint_api.body)[0] }}
      dbg: ${{ parseCiliumEndpointGet(steps.endpoint_dbg.stdout)[0] }}
    assert:
      - that: result.api.networking.interfaceName == result.dbg.networking.interfaceName && result.api.networking.interfaceName startsWith "lxc"
      - that: result.api.networking.interfaceIndex == result.dbg.networking.interfaceIndex
      - that: result.api.identity == result.dbg.identity
      - that: parseCiliumMapList(steps.maps_api.body).PolicyMap(result.id) == parseCiliumMapList(steps.maps_dbg.stdout).PolicyMap(result.id) && parseCiliumMapList(steps.maps_api.body).PolicyMap(result.id) != ""
      - that: sort(parseCiliumMapList(steps.maps_api.body).Names("cilium_lb4_")) == sort(parseCiliumMapList(steps.maps_dbg.stdout).Names("cilium_lb4_"))
      - that: sort(parseCiliumMapList(steps.maps_api.body).Names("cilium_ct")) == sort(parseCiliumMapList(steps.maps_dbg.stdout).Names("cilium_ct"))
`), 0o644)
	var stdout, stderr bytes.Buffer
	if code := Main([]string{"run", "--no-progress", "--kubeconfig", kc, "--set", "sock=" + sock, pb}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d\n%s%s", code, stdout.String(), stderr.String())
	}
	if !strings.Contains(stdout.String(), "PASSED") {
		t.Errorf("no PASSED line:\n%s", stdout.String())
	}
}

// The agent action fails a step on an answer other than 2xx, with the
// agent's status: here the live agent's answer for an endpoint it does not
// have. 65535 is a valid endpoint id (pkg/endpoint/id reads up to 16 bits)
// that no endpoint has: the agent hands out ids from 1 to 4095
// (pkg/endpointmanager's ID allocator).
func TestAgentAPIRefusal(t *testing.T) {
	kc := kubetest.Kubeconfig(t)
	sock, err := kubetest.AgentSocket()
	if err != nil {
		t.Fatal(err)
	}
	pb := filepath.Join(t.TempDir(), "agent-missing.yaml")
	os.WriteFile(pb, []byte(`name: agent-missing
vars: {sock: /var/run/cilium/cilium.sock}
steps:
  - id: missing
    agent: {path: /v1/endpoint/65535, socket: "${{ vars.sock }}"}
`), 0o644)
	var stdout, stderr bytes.Buffer
	code := Main([]string{"run", "--no-progress", "--kubeconfig", kc, "--set", "sock=" + sock, pb}, &stdout, &stderr)
	out := stdout.String() + stderr.String()
	if code != exitFailed || !strings.Contains(out, "answered GET /v1/endpoint/65535 with 404") {
		t.Fatalf("exit %d, want %d and the agent's 404:\n%s", code, exitFailed, out)
	}
}
