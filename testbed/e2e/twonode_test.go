//go:build e2e

package e2e

// The two-node profiles of the test cluster (testbed/up --profile tunnel or
// native), proven with real traffic: a pod on node 1 reaches a pod on node 2
// through a Service; node 1's ipcache knows node 2's pods and node 2 itself;
// a NodePort request from outside the cluster (the host) through node 1 to a
// backend on node 2 is SNATed, with externalTrafficPolicy Local it is
// answered only through node 2 and keeps the client's address; and on the
// native profile a `helm upgrade` to DSR and back keeps both agents healthy,
// with the client's own address seen by the backend under DSR. Each test
// skips on the profiles it is not about; `make e2e` runs it on each.

import (
	"context"
	"fmt"
	"net/netip"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/labrun/labrun/internal/boundary/cluster"
	"github.com/labrun/labrun/internal/heavy/bpfmaps"
	"github.com/labrun/labrun/internal/heavy/kube"
	"github.com/labrun/labrun/internal/heavy/kube/kubetest"
)

const outsideExec = "/var/lib/labrun-testbed/bin/outside-exec"

// identityRemoteNode is Cilium's reserved identity of the other nodes'
// addresses (pkg/identity: ReservedIdentityRemoteNode).
const identityRemoteNode = 6

// twoNodes skips the test unless the running profile is one of profiles and
// returns the testbed's variables.
func twoNodes(t *testing.T, profiles ...string) kubetest.Vars {
	t.Helper()
	v := kubetest.ReadVars(t)
	if !slices.Contains(profiles, v.Profile) {
		t.Skipf("test cluster runs profile %q; this test is for %v (testbed/up --profile ...)", v.Profile, profiles)
	}
	if v.Node2Name == "" || v.Node2IP == "" || v.Node2BPFFS == "" || v.OutsideIP == "" {
		t.Fatalf("profile %s but vars.yaml has no node2_name/node2_ip/node2_bpffs/outside_ip: %+v", v.Profile, v)
	}
	return v
}

// crossNodeManifest: backend pod "web" (python http.server, which logs each
// request's client address) on node 2, client pod on node 1, and three
// Services on web: a ClusterIP, a NodePort, and a NodePort with
// externalTrafficPolicy Local.
const crossNodeManifest = `
apiVersion: v1
kind: Namespace
metadata: {name: NS}
---
apiVersion: v1
kind: Pod
metadata: {name: web, namespace: NS, labels: {app: web}}
spec:
  nodeName: NODE2
  terminationGracePeriodSeconds: 1
  containers:
  - name: web
    image: PYTHON
    imagePullPolicy: IfNotPresent
    command: [python3, -m, http.server, "8080"]
    readinessProbe: {tcpSocket: {port: 8080}, periodSeconds: 1}
---
apiVersion: v1
kind: Pod
metadata: {name: client, namespace: NS}
spec:
  nodeName: NODE1
  terminationGracePeriodSeconds: 1
  containers:
  - name: curl
    image: CURL
    imagePullPolicy: IfNotPresent
    command: [sleep, "3600"]
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: NS}
spec:
  selector: {app: web}
  ports: [{port: 80, targetPort: 8080}]
---
apiVersion: v1
kind: Service
metadata: {name: web-np, namespace: NS}
spec:
  type: NodePort
  selector: {app: web}
  ports: [{port: 80, targetPort: 8080}]
---
apiVersion: v1
kind: Service
metadata: {name: web-local, namespace: NS}
spec:
  type: NodePort
  externalTrafficPolicy: Local
  selector: {app: web}
  ports: [{port: 80, targetPort: 8080}]
`

// crossNode is the deployed scenario.
type crossNode struct {
	c        *kube.Client
	v        kubetest.Vars
	ns       string
	webIP    string // the backend pod's IP (on node 2)
	clientIP string // the client pod's IP (on node 1)
	cluster  string // ClusterIP of web
	np       int64  // NodePort of web-np
	npLocal  int64  // NodePort of web-local
}

func deployCrossNode(ctx context.Context, t *testing.T, v kubetest.Vars, prefix string) *crossNode {
	t.Helper()
	c := kubetest.Connect(t)
	ns := kubetest.NamespaceName(prefix)
	m := strings.NewReplacer("NS", ns, "NODE1", v.NodeName, "NODE2", v.Node2Name,
		"PYTHON", v.PythonImage, "CURL", v.CurlImage).Replace(crossNodeManifest)
	kubetest.ApplyInNamespace(ctx, t, c, ns, "two-node e2e", m)
	if _, err := kubetest.WaitPodsReady(ctx, c, ns, "app=web", 1); err != nil {
		t.Fatal(err)
	}
	for _, svc := range []string{"web", "web-np", "web-local"} {
		if _, err := kubetest.WaitServiceEndpoints(ctx, c, ns, svc, 1); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.Wait(ctx, cluster.ObjectQuery{Kind: "Pod", Namespace: ns, Name: "client"}, kubetest.AllPodsReady(1), nil); err != nil {
		t.Fatal(err)
	}
	x := &crossNode{c: c, v: v, ns: ns}
	x.webIP = podIP(ctx, t, c, ns, "web")
	x.clientIP = podIP(ctx, t, c, ns, "client")
	x.cluster = str(t, get(ctx, t, c, "Service", ns, "web"), "spec", "clusterIP")
	x.np = nodePort(ctx, t, c, ns, "web-np")
	x.npLocal = nodePort(ctx, t, c, ns, "web-local")
	return x
}

func get(ctx context.Context, t *testing.T, c *kube.Client, kind, ns, name string) map[string]any {
	t.Helper()
	o, err := c.Get(ctx, cluster.ObjectQuery{Kind: kind, Namespace: ns, Name: name})
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// str reads a string field of an object, failing the test when absent.
func str(t *testing.T, o map[string]any, path ...string) string {
	t.Helper()
	var cur any = o
	for _, p := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			t.Fatalf("no %v in object", path)
		}
		cur = m[p]
	}
	s, ok := cur.(string)
	if !ok || s == "" {
		t.Fatalf("no string at %v in object", path)
	}
	return s
}

func podIP(ctx context.Context, t *testing.T, c *kube.Client, ns, name string) string {
	t.Helper()
	return str(t, get(ctx, t, c, "Pod", ns, name), "status", "podIP")
}

func nodePort(ctx context.Context, t *testing.T, c *kube.Client, ns, name string) int64 {
	t.Helper()
	ports := get(ctx, t, c, "Service", ns, name)["spec"].(map[string]any)["ports"].([]any)
	np, ok := ports[0].(map[string]any)["nodePort"].(int64)
	if !ok || np == 0 {
		t.Fatalf("service %s/%s has no nodePort: %v", ns, name, ports)
	}
	return np
}

// outsideGet requests url from outside the cluster (the host) until it
// answers 200 or timeout passes, and returns the last HTTP code and curl's
// exit code. Each request carries id in its query, so the backend's log
// line of exactly this request can be found.
func outsideGet(t *testing.T, url string, timeout time.Duration) (code string, exit int) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		out, err := exec.Command(outsideExec, "curl", "-s", "-o", "/dev/null", "-m", "3", "-w", "%{http_code}", url).Output()
		code, exit = string(out), 0
		if ee, ok := err.(*exec.ExitError); ok {
			exit = ee.ExitCode()
		} else if err != nil {
			t.Fatalf("outside-exec curl %s: %v", url, err)
		}
		if code == "200" || time.Now().After(deadline) {
			return code, exit
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// seenFrom returns the client address web's http.server logged for the
// request whose path holds id ("10.250.42.2 - - [...] "GET /?id=... HTTP/1.1" 200 -").
func (x *crossNode) seenFrom(ctx context.Context, t *testing.T, id string) string {
	t.Helper()
	var line string
	poll(t, "web's log line of request "+id, 30*time.Second, func() (bool, string, error) {
		res, err := x.c.Logs(ctx, cluster.PodTarget{Namespace: x.ns, Pod: "web"}, cluster.LogRequest{})
		if err != nil {
			return false, "", err
		}
		out := res.Text
		for l := range strings.SplitSeq(out, "\n") {
			if strings.Contains(l, id) {
				line = l
				return true, l, nil
			}
		}
		return false, fmt.Sprintf("%d bytes of log without %s", len(out), id), nil
	})
	addr, _, _ := strings.Cut(line, " ")
	if _, err := netip.ParseAddr(addr); err != nil {
		t.Fatalf("web's log line %q does not start with a client address", line)
	}
	return addr
}

// requestID makes a query id unique to this test run.
func requestID(what string) string {
	return fmt.Sprintf("%s-%d", what, time.Now().UnixNano())
}

func TestTwoNodeServiceAcrossNodes(t *testing.T) {
	v := twoNodes(t, "tunnel", "native")
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	x := deployCrossNode(ctx, t, v, "e2e-2n-svc")
	id := requestID("pod-to-pod")
	poll(t, "client on node 1 gets 200 from web on node 2 through ClusterIP "+x.cluster, time.Minute, func() (bool, string, error) {
		last, err := x.c.Exec(ctx, cluster.PodTarget{Namespace: x.ns, Pod: "client"},
			cluster.ExecRequest{Argv: []string{"curl", "-s", "-o", "/dev/null", "-m", "3", "-w", "%{http_code}", "http://" + x.cluster + "/?id=" + id}})
		if err != nil {
			return false, "", err
		}
		return last.Stdout == "200", fmt.Sprintf("code %q exit %d %s", last.Stdout, last.ExitCode, last.Stderr), nil
	})
	// Pod to pod across nodes is not masqueraded: the backend sees the
	// client pod's own IP.
	if got := x.seenFrom(ctx, t, id); got != x.clientIP {
		t.Errorf("web on %s saw the request from %s, want the client pod's IP %s", v.Node2Name, got, x.clientIP)
	}
}

func TestTunnelIPCacheOfRemoteNode(t *testing.T) {
	v := twoNodes(t, "tunnel")
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	x := deployCrossNode(ctx, t, v, "e2e-2n-ipc")
	// The identity node 2's agent gave the web pod (its CiliumEndpoint).
	var webIdentity int64
	poll(t, "CiliumEndpoint of web with an identity", time.Minute, func() (bool, string, error) {
		cep, err := x.c.Get(ctx, cluster.ObjectQuery{APIVersion: "cilium.io/v2", Kind: "CiliumEndpoint", Namespace: x.ns, Name: "web"})
		if err != nil {
			return false, err.Error(), nil
		}
		id, _ := cep["status"].(map[string]any)["identity"].(map[string]any)["id"].(int64)
		webIdentity = id
		return id > 0, fmt.Sprintf("identity %d", id), nil
	})
	r, err := bpfmaps.Open(v.BPFFS)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	// Node 1's ipcache: web's IP with its identity, tunnelled to node 2.
	poll(t, fmt.Sprintf("node 1's ipcache entry of web %s (identity %d, tunnel endpoint %s)", x.webIP, webIdentity, v.Node2IP), time.Minute, func() (bool, string, error) {
		e, err := r.LookupIPCache(x.webIP)
		if err != nil {
			return false, err.Error(), nil
		}
		if e == nil {
			return false, "no entry", nil
		}
		ok := int64(e.Identity) == webIdentity && e.TunnelEndpoint == v.Node2IP && slices.Contains(e.FlagNames, "hastunnel")
		return ok, fmt.Sprintf("%+v", *e), nil
	})
	// Node 2's InternalIP: remote-node identity, as seen from node 1.
	e, err := r.LookupIPCache(v.Node2IP)
	if err != nil || e == nil {
		t.Fatalf("node 1's ipcache has no entry for node 2's InternalIP %s: %v", v.Node2IP, err)
	}
	if e.Identity != identityRemoteNode {
		t.Errorf("node 1's ipcache entry of %s = %+v, want identity %d (remote-node)", v.Node2IP, *e, identityRemoteNode)
	}
	// What the lab's learner reads, from node 1's agent: the same entry in
	// cilium-dbg's listing.
	a := agentOn(ctx, t, x.c, v.NodeName)
	out, err := a.run(ctx, false, "bpf", "ipcache", "list")
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("identity=%d encryptkey=0 tunnelendpoint=%s", webIdentity, v.Node2IP)
	if !hasLine(out, x.webIP+"/32", want) {
		t.Errorf("cilium-dbg bpf ipcache list on %s has no line %s/32 ... %s:\n%s", v.NodeName, x.webIP, want, out)
	}
	// And node 2's bpffs, read from the host, has web as a local endpoint
	// (no tunnel endpoint on its own node).
	r2, err := bpfmaps.Open(v.Node2BPFFS)
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	e2, err := r2.LookupIPCache(x.webIP)
	if err != nil || e2 == nil {
		t.Fatalf("node 2's ipcache has no entry for web %s: %v", x.webIP, err)
	}
	if int64(e2.Identity) != webIdentity || e2.TunnelEndpoint != "0.0.0.0" {
		t.Errorf("node 2's ipcache entry of web = %+v, want identity %d and no tunnel endpoint", *e2, webIdentity)
	}
}

// hasLine reports whether some line of text starts with prefix (after
// leading blanks) and contains want.
func hasLine(text, prefix, want string) bool {
	for l := range strings.SplitSeq(text, "\n") {
		l = strings.TrimSpace(l)
		if strings.HasPrefix(l, prefix) && strings.Contains(l, want) {
			return true
		}
	}
	return false
}

// agentOn is the Cilium agent pod on node.
func agentOn(ctx context.Context, t *testing.T, c *kube.Client, node string) *agent {
	t.Helper()
	pod, err := c.ResolvePod(ctx, cluster.PodTarget{Namespace: "kube-system", Pod: "ds/cilium", Node: node})
	if err != nil {
		t.Fatal(err)
	}
	if pod.Node != node {
		t.Fatalf("the cilium agent pod found for node %s, %s, is on %q", node, pod.Name, pod.Node)
	}
	return &agent{c: c, pod: pod}
}

func TestTwoNodeNodePortFromOutside(t *testing.T) {
	v := twoNodes(t, "tunnel", "native")
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	x := deployCrossNode(ctx, t, v, "e2e-2n-np")

	// Through node 1, whose agent forwards to the backend on node 2 and
	// SNATs: the backend sees node 1, not the client. Which of node 1's
	// addresses depends on the routing: with a tunnel, the request goes
	// through cilium_vxlan from node 1's router IP (CiliumInternalIP);
	// natively, from its InternalIP.
	id := requestID("snat")
	url := fmt.Sprintf("http://%s:%d/?id=%s", v.NodeIP, x.np, id)
	if code, exit := outsideGet(t, url, time.Minute); code != "200" {
		t.Fatalf("outside-exec curl %s: code %q exit %d", url, code, exit)
	}
	want := v.NodeIP
	if v.Profile == "tunnel" {
		want = ciliumInternalIP(ctx, t, x.c, v.NodeName)
	}
	if got := x.seenFrom(ctx, t, id); got != want {
		t.Errorf("NodePort via %s (%s): web on %s saw the request from %s, want node 1's address %s (SNAT)", v.NodeName, v.Profile, v.Node2Name, got, want)
	}

	// externalTrafficPolicy Local: node 2 has the backend and answers,
	// keeping the client's address...
	id = requestID("local")
	url = fmt.Sprintf("http://%s:%d/?id=%s", v.Node2IP, x.npLocal, id)
	if code, exit := outsideGet(t, url, time.Minute); code != "200" {
		t.Fatalf("outside-exec curl %s: code %q exit %d", url, code, exit)
	}
	if got := x.seenFrom(ctx, t, id); got != v.OutsideIP {
		t.Errorf("eTP=Local NodePort via %s: web saw the request from %s, want the client's own address %s", v.Node2Name, got, v.OutsideIP)
	}
	// ...and node 1, which has none, does not.
	url = fmt.Sprintf("http://%s:%d/", v.NodeIP, x.npLocal)
	out, err := exec.Command(outsideExec, "curl", "-s", "-o", "/dev/null", "-m", "3", "-w", "%{http_code}", url).Output()
	if err == nil || string(out) == "200" {
		t.Errorf("eTP=Local NodePort via %s (no local backend) answered: code %q, err %v; want no answer", v.NodeName, out, err)
	}
}

// ciliumInternalIP is the router IP (cilium_host) of node, from its
// CiliumNode.
func ciliumInternalIP(ctx context.Context, t *testing.T, c *kube.Client, node string) string {
	t.Helper()
	cn := get(ctx, t, c, "CiliumNode", "", node)
	addrs, _ := cn["spec"].(map[string]any)["addresses"].([]any)
	for _, a := range addrs {
		if m, _ := a.(map[string]any); m["type"] == "CiliumInternalIP" {
			if ip, _ := m["ip"].(string); ip != "" {
				return ip
			}
		}
	}
	t.Fatalf("CiliumNode %s has no CiliumInternalIP: %v", node, addrs)
	return ""
}

// helmOnNode runs helm in node 1's shell, as a playbook's run step with via
// node_exec does.
func helmOnNode(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command(nodeExec, append([]string{"helm"}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("node-exec helm %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// waitAgentsHealthy waits until the cilium DaemonSet has rolled out on both
// nodes and each agent reports OK, and returns `cilium-dbg status` of node
// 1's agent.
func waitAgentsHealthy(ctx context.Context, t *testing.T, c *kube.Client, v kubetest.Vars) string {
	t.Helper()
	if _, err := kubetest.WaitRollout(ctx, c, cluster.ObjectQuery{APIVersion: "apps/v1", Kind: "DaemonSet", Namespace: "kube-system", Name: "cilium"}); err != nil {
		t.Fatal(err)
	}
	var status string
	for _, node := range []string{v.NodeName, v.Node2Name} {
		poll(t, "cilium-dbg status --brief OK on "+node, 3*time.Minute, func() (bool, string, error) {
			a := agentOn(ctx, t, c, node)
			out, err := a.run(ctx, false, "status", "--brief")
			if err != nil {
				return false, err.Error(), nil
			}
			if node == v.NodeName {
				status, err = a.run(ctx, false, "status", "--verbose")
				if err != nil {
					return false, err.Error(), nil
				}
			}
			return strings.TrimSpace(out) == "OK", out, nil
		})
	}
	return status
}

func TestNativeHelmUpgradeToDSRAndBack(t *testing.T) {
	v := twoNodes(t, "native")
	ctx, cancel := context.WithTimeout(context.Background(), 12*time.Minute)
	defer cancel()
	c := kubetest.Connect(t)
	upgrade := func(mode string) {
		helmOnNode(t, "upgrade", "cilium", v.CiliumChart, "-n", "kube-system", "--reuse-values",
			"--set", "loadBalancer.mode="+mode)
	}
	// Whatever happens below, leave the release as the profile has it
	// (testbed/up would also notice and upgrade it back).
	t.Cleanup(func() {
		if out, err := exec.Command(nodeExec, "helm", "upgrade", "cilium", v.CiliumChart, "-n", "kube-system",
			"--reuse-values", "--set", "loadBalancer.mode=snat").CombinedOutput(); err != nil {
			t.Errorf("restoring loadBalancer.mode=snat: %v\n%s", err, out)
		}
	})

	upgrade("dsr")
	status := waitAgentsHealthy(ctx, t, c, v)
	// (KubeProxyReplacement Details, "  Mode:   DSR")
	if !hasLine(status, "Mode:", "DSR") {
		t.Fatalf("cilium-dbg status --verbose after the upgrade to DSR has no line Mode: DSR:\n%s", status)
	}
	x := deployCrossNode(ctx, t, v, "e2e-2n-dsr")
	id := requestID("dsr")
	url := fmt.Sprintf("http://%s:%d/?id=%s", v.NodeIP, x.np, id)
	if code, exit := outsideGet(t, url, time.Minute); code != "200" {
		t.Fatalf("DSR: outside-exec curl %s: code %q exit %d", url, code, exit)
	}
	// DSR: node 1 forwards without SNAT, the backend answers the client
	// directly, and sees the client's own address.
	if got := x.seenFrom(ctx, t, id); got != v.OutsideIP {
		t.Errorf("DSR NodePort via %s: web on %s saw the request from %s, want the client's own address %s", v.NodeName, v.Node2Name, got, v.OutsideIP)
	}

	upgrade("snat")
	status = waitAgentsHealthy(ctx, t, c, v)
	if !hasLine(status, "Mode:", "SNAT") {
		t.Errorf("cilium-dbg status --verbose after the upgrade back has no line Mode: SNAT:\n%s", status)
	}
	// A Service made after the upgrade back is SNATed again. (In one run
	// here the Service made under DSR still answered by DSR after the agents
	// restarted in SNAT mode; that is not asserted.)
	y := deployCrossNode(ctx, t, v, "e2e-2n-snat")
	id = requestID("snat-again")
	url = fmt.Sprintf("http://%s:%d/?id=%s", v.NodeIP, y.np, id)
	if code, exit := outsideGet(t, url, time.Minute); code != "200" {
		t.Fatalf("SNAT again: outside-exec curl %s: code %q exit %d", url, code, exit)
	}
	if got := y.seenFrom(ctx, t, id); got != v.NodeIP {
		t.Errorf("SNAT again: web saw the request from %s, want node 1's InternalIP %s", got, v.NodeIP)
	}
}

// A DaemonSet named without a node resolves to its pod on the first node
// by name, on a real two-node cluster: a lab's `cilium` step without node
// reads node 1's agent whichever agent has been ready longest, also once
// node 1's agent was replaced and node 2's is the longest ready, as after
// a rollout; node picks the other.
func TestTwoNodeDaemonSetWithoutNode(t *testing.T) {
	v := twoNodes(t, "tunnel", "native")
	c := kubetest.Connect(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	names := []string{v.NodeName, v.Node2Name}
	slices.Sort(names)
	pod, err := c.ResolvePod(ctx, cluster.PodTarget{Namespace: "kube-system", Pod: "ds/cilium"})
	if err != nil {
		t.Fatal(err)
	}
	if pod.Node != names[0] {
		t.Errorf("ds/cilium without node gave %s on %s, want the agent on %s (nodes %v)", pod.Name, pod.Node, names[0], names)
	}
	if other := agentOn(ctx, t, c, names[1]); other.pod.Name == pod.Name {
		t.Errorf("node %s gave the same agent %s as no node", names[1], pod.Name)
	}

	// replace node 1's agent: node 2's is now the one ready longest
	if _, err := c.Delete(ctx, cluster.ObjectQuery{Kind: "Pod", Namespace: "kube-system", Name: pod.Name}, cluster.DeleteRequest{Wait: true}); err != nil {
		t.Fatal(err)
	}
	waitAgentsHealthy(ctx, t, c, v)
	again, err := c.ResolvePod(ctx, cluster.PodTarget{Namespace: "kube-system", Pod: "ds/cilium"})
	if err != nil {
		t.Fatal(err)
	}
	if again.Node != names[0] || again.Name == pod.Name {
		t.Errorf("after node %s's agent %s was replaced, ds/cilium without node gave %s on %s, want the new agent on %s", names[0], pod.Name, again.Name, again.Node, names[0])
	}
}
