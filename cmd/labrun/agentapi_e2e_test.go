//go:build e2e

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/labrun/labrun/kube/kubetest"
)

// The http action over the Cilium agent's own API socket, as a lab run on
// the node reads it (/var/run/cilium/cilium.sock), agrees with cilium-dbg
// status in the same agent on what stays put while other tests run: the
// kube-proxy replacement mode and the datapath's attach mode (health can
// flicker while endpoints come and go). On the test cluster the socket lives in the
// agent container's mount namespace; the host reaches it through the
// agent process's root.
func TestHTTPAgentAPISocket(t *testing.T) {
	kc := kubetest.Kubeconfig(t)
	sock, err := kubetest.AgentSocket()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	pb := filepath.Join(dir, "agent-api.yaml")
	os.WriteFile(pb, []byte(`name: agent-api
vars: {sock: /var/run/cilium/cilium.sock}
steps:
  - id: api
    http: {url: "http://localhost/v1/healthz", unixSocket: "${{ vars.sock }}"}
    assert:
      - result.status == 200
      - result.json.cilium != nil
  - id: dbg
    cilium: {args: [status]}
  - id: agree
    assert:
      - that: 'string(steps.api.json["kube-proxy-replacement"].mode) == parseCiliumStatus(steps.dbg.stdout).kubeProxyReplacement'
      - that: 'upper(string(steps.api.json["attach-mode"])) == parseCiliumStatus(steps.dbg.stdout).attachMode'
`), 0o644)
	var stdout, stderr bytes.Buffer
	if code := Main([]string{"run", "--no-progress", "--kubeconfig", kc, "--set", "sock=" + sock, pb}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d\n%s%s", code, stdout.String(), stderr.String())
	}
	if !strings.Contains(stdout.String(), "PASSED") {
		t.Errorf("no PASSED line:\n%s", stdout.String())
	}
}
