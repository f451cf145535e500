//go:build e2e

// Package e2e proves the test cluster behaves like the lab's node: Service
// traffic through socket LB, NodePort from the node's shell, kube-proxy
// replacement on, and no kube-proxy rules. It talks to the cluster with
// client-go and the testbed's node-exec, not through labrun's engine, so a
// bug in the engine cannot hide a broken cluster.
package e2e

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/labrun/labrun/internal/boundary/cluster"
	"github.com/labrun/labrun/internal/heavy/kube/kubetest"
	"github.com/labrun/labrun/internal/parse"
)

const nodeExec = "/var/lib/labrun-testbed/bin/node-exec"

func onNode(t *testing.T, argv ...string) string {
	t.Helper()
	out, err := exec.Command(nodeExec, argv...).Output()
	if err != nil {
		t.Fatalf("node-exec %v: %v", argv, err)
	}
	return string(out)
}

func TestStatusScript(t *testing.T) {
	out, err := exec.Command("../../testbed/status").CombinedOutput()
	if err != nil {
		t.Fatalf("testbed/status: %v\n%s", err, out)
	}
	for _, want := range []string{"Ready", "KubeProxyReplacement"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("testbed/status does not mention %s:\n%s", want, out)
		}
	}
}

func TestServiceThroughSocketLBAndNodePort(t *testing.T) {
	c := kubetest.Connect(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	ns := kubetest.NamespaceName("e2e-testbed")
	manifest := strings.ReplaceAll(`
apiVersion: v1
kind: Namespace
metadata: {name: NS}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: echo, namespace: NS}
spec:
  replicas: 2
  selector: {matchLabels: {app: echo}}
  template:
    metadata: {labels: {app: echo}}
    spec:
      terminationGracePeriodSeconds: 1
      containers:
      - name: web
        image: labrun.local/python:3.11.2
        imagePullPolicy: IfNotPresent
        command: [python3, -m, http.server, "8080"]
        readinessProbe: {tcpSocket: {port: 8080}, periodSeconds: 1}
---
apiVersion: v1
kind: Service
metadata: {name: echo, namespace: NS}
spec:
  type: NodePort
  selector: {app: echo}
  ports: [{port: 80, targetPort: 8080}]
---
apiVersion: v1
kind: Pod
metadata: {name: client, namespace: NS}
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - name: curl
    image: labrun.local/curl:7.88.1
    imagePullPolicy: IfNotPresent
    command: [sleep, "3600"]
`, "NS", ns)
	kubetest.ApplyInNamespace(ctx, t, c, ns, "testbed e2e", manifest)
	if _, err := kubetest.WaitPodsReady(ctx, c, ns, "app=echo", 2); err != nil {
		t.Fatal(err)
	}
	if _, err := kubetest.WaitServiceEndpoints(ctx, c, ns, "echo", 2); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Wait(ctx, cluster.ObjectQuery{Kind: "Pod", Namespace: ns, Name: "client"}, kubetest.AllPodsReady(1), nil); err != nil {
		t.Fatal(err)
	}
	svc, err := c.Get(ctx, cluster.ObjectQuery{Kind: "Service", Namespace: ns, Name: "echo"})
	if err != nil {
		t.Fatal(err)
	}
	spec := svc["spec"].(map[string]any)
	clusterIP := spec["clusterIP"].(string)
	nodePort := spec["ports"].([]any)[0].(map[string]any)["nodePort"]

	// From a pod: connect() to the ClusterIP is rewritten by socket LB.
	// The agent programs the backends a moment after the endpoints exist,
	// so retry on "couldn't connect" for a bounded time.
	deadline := time.Now().Add(time.Minute)
	var last *cluster.ExecResult
	for {
		last, err = c.Exec(ctx, cluster.PodTarget{Namespace: ns, Pod: "client"}, cluster.ExecRequest{Argv: []string{"curl", "-s", "-o", "/dev/null", "-m", "5", "-w", "%{http_code}", "http://" + clusterIP + "/"}})
		if err != nil {
			t.Fatal(err)
		}
		if last.Stdout == "200" || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if last.Stdout != "200" {
		t.Fatalf("curl to the ClusterIP from a pod: code %q exit %d %s", last.Stdout, last.ExitCode, last.Stderr)
	}

	// That answer came through socket LB, not a per-packet NAT: connect()
	// to ClusterIP:80 gives a socket whose kernel peer (/proc/net/tcp) is a
	// backend pod's IP:8080 while getpeername() still shows the ClusterIP
	// (Cilium's getpeername hook). With per-packet NAT the socket's peer
	// would stay the ClusterIP.
	echoPods, err := c.List(ctx, cluster.ObjectQuery{Kind: "Pod", Namespace: ns, Selector: "app=echo"})
	if err != nil {
		t.Fatal(err)
	}
	backends := map[string]bool{}
	for _, p := range echoPods {
		backends[p["status"].(map[string]any)["podIP"].(string)+":8080"] = true
	}
	probe := `import socket, sys
s = socket.create_connection((sys.argv[1], 80), timeout=5)
port = s.getsockname()[1]
for line in open("/proc/net/tcp").readlines()[1:]:
    f = line.split()
    lip, lport = f[1].split(":")
    if int(lport, 16) == port and f[3] == "01":
        rip, rport = f[2].split(":")
        ip = ".".join(str(b) for b in bytes.fromhex(rip)[::-1])
        print("getpeername=%s:%d kernel=%s:%d" % (s.getpeername()[0], s.getpeername()[1], ip, int(rport, 16)))
`
	sock, err := c.Exec(ctx, cluster.PodTarget{Namespace: ns, Pod: echoPods[0]["metadata"].(map[string]any)["name"].(string)},
		cluster.ExecRequest{Argv: []string{"python3", "-c", probe, clusterIP}})
	if err != nil || sock.ExitCode != 0 {
		t.Fatalf("socket probe: %v exit %d %s", err, sock.ExitCode, sock.Stderr)
	}
	var peer, kernel string
	if _, err := fmt.Sscanf(strings.TrimSpace(sock.Stdout), "getpeername=%s kernel=%s", &peer, &kernel); err != nil {
		t.Fatalf("socket probe printed %q: %v", sock.Stdout, err)
	}
	if peer != clusterIP+":80" || !backends[kernel] {
		t.Errorf("connect() to %s:80: getpeername %s, kernel peer %s; want the ClusterIP and one of the backends %v (socket LB)", clusterIP, peer, kernel, backends)
	}

	// From the node's shell: the NodePort answers with no listening socket.
	node, err := c.List(ctx, cluster.ObjectQuery{Kind: "Node"})
	if err != nil || len(node) != 1 {
		t.Fatalf("nodes: %v %v", len(node), err)
	}
	var nodeIP string
	for _, a := range node[0]["status"].(map[string]any)["addresses"].([]any) {
		if a.(map[string]any)["type"] == "InternalIP" {
			nodeIP = a.(map[string]any)["address"].(string)
		}
	}
	url := fmt.Sprintf("http://%s:%v/", nodeIP, nodePort)
	var code string
	for deadline := time.Now().Add(time.Minute); ; {
		out, _ := exec.Command(nodeExec, "curl", "-s", "-o", "/dev/null", "-m", "5", "-w", "%{http_code}", url).Output()
		code = string(out)
		if code == "200" || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if code != "200" {
		t.Fatalf("node-exec curl %s: %q", url, code)
	}
	if ss := onNode(t, "ss", "-Htln", fmt.Sprintf("sport = :%v", nodePort)); strings.TrimSpace(ss) != "" {
		t.Errorf("something listens on the NodePort: %q", ss)
	}
}

func TestKubeProxyReplacementAndNoKubeProxyRules(t *testing.T) {
	c := kubetest.Connect(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := c.Exec(ctx, cluster.PodTarget{Namespace: "kube-system", Pod: "ds/cilium", Container: "cilium-agent"}, cluster.ExecRequest{Argv: []string{"cilium-dbg", "status", "--verbose"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 0 {
		t.Fatalf("cilium-dbg status: %v exit %d %s", err, res.ExitCode, res.Stderr)
	}
	st, err := parse.ParseStatus(res.Stdout)
	if err != nil {
		t.Fatal(err)
	}
	coverage, attach := st.KubeProxyReplacementDetails.SocketLBCoverage, st.AttachMode
	if st.KubeProxyReplacement != "True" || coverage == nil || *coverage != "Full" || attach == nil || *attach != "TCX" {
		t.Errorf("KubeProxyReplacement %q, Socket LB Coverage %v, Attach Mode %v; want True, Full, TCX",
			st.KubeProxyReplacement, printedp(coverage), printedp(attach))
	}
	ipt, err := parse.ParseIPTablesSave(onNode(t, "iptables-save"))
	if err != nil {
		t.Fatal(err)
	}
	if n := len(ipt.Chains("CILIUM_")); n < 10 {
		t.Errorf("%d CILIUM_ chains in the node's iptables, want the 10 Cilium installs", n)
	}
	if n := ipt.CountContaining("KUBE-SVC"); n != 0 {
		t.Errorf("%d KUBE-SVC lines in the node's iptables, want 0 (no kube-proxy)", n)
	}
}

// printedp is what a nullable field of a parser's result holds: its
// value, or nil when the tool did not print it.
func printedp[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}
