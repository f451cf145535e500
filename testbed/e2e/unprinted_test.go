//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/labrun/labrun/internal/boundary/cluster"
	"github.com/labrun/labrun/internal/heavy/kube"
	"github.com/labrun/labrun/internal/heavy/kube/kubetest"
	"github.com/labrun/labrun/internal/parse"
	"github.com/labrun/labrun/internal/parse/parsetest"
)

// Every text a labrun parser reads, printed by the live cluster (each
// node's agent and each node's shell), parsed as a lab parses it, holds no
// value the text did not print (parsetest.Unprinted): every string of the
// result is in the text, every number one it prints, and a "", 0 or false
// it did not print is null; the few values a parser computes are
// parsetest.TextDerived's. The JSON outputs are
// TestLiveJSONResultsInventNothing's. A command is skipped only when the
// cluster lacks it (not installed on the node), saying so.
func TestLiveTextResultsInventNothing(t *testing.T) {
	v := kubetest.ReadVars(t)
	c := kubetest.Connect(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	nodes := []string{v.NodeName}
	if v.Node2Name != "" {
		nodes = append(nodes, v.Node2Name)
	}
	// A pod on each node that the kubelet probes every second, under a
	// policy that admits the probes: each probe is a new connection into
	// an endpoint of the node whose ingress policy is enforced, which the
	// agent's monitor reports as a policy verdict (it reports none for an
	// endpoint no policy selects) and tcpdump sees, whatever else the
	// cluster runs.
	ns := kubetest.NamespaceName("e2e-printed")
	manifest := "apiVersion: v1\nkind: Namespace\nmetadata: {name: " + ns + "}\n" + strings.ReplaceAll(probedPolicy, "NS", ns)
	for i, node := range nodes {
		manifest += strings.NewReplacer("NAME", "probed-"+strconv.Itoa(i+1), "NS", ns, "NODE", node, "IMAGE", v.PythonImage).Replace(probedPod)
	}
	kubetest.ApplyInNamespace(ctx, t, c, ns, "probed pods", manifest)
	wctx, wcancel := context.WithTimeout(ctx, 2*time.Minute)
	_, err := kubetest.WaitPodsReady(wctx, c, ns, "app=probed", len(nodes))
	wcancel()
	if err != nil {
		t.Fatalf("waiting for a probed pod Ready on each node: %v", err)
	}
	checked := map[string]int{}
	for i, node := range nodes {
		t.Run(node, func(t *testing.T) {
			ag := cluster.PodTarget{Namespace: "kube-system", Pod: "ds/cilium", Node: node, Container: "cilium-agent"}
			for _, cmd := range agentCommands(ctx, t, c, ag) {
				t.Run(strings.Join(cmd.args, " "), func(t *testing.T) {
					out, err := agentRun(ctx, c, ag, cmd.args...)
					if err != nil {
						t.Fatal(err)
					}
					checkPrinted(t, cmd.kind, out)
					checked[cmd.kind]++
				})
			}
			// The monitor's text forms the parser reads (traces it reads
			// only as -j's JSON): policy verdicts, which the kubelet's
			// probes of the node's probed pod make every second, and
			// drops, of which there may be none.
			t.Run("monitor", func(t *testing.T) {
				for _, args := range [][]string{{"monitor", "--type", "policy-verdict"}, {"monitor", "-n", "--type", "policy-verdict"}, {"monitor", "--type", "drop"}} {
					out := agentMonitor(ctx, t, c, ag, 8*time.Second, args...)
					if !strings.Contains(out, "Policy verdict") && slices.Contains(args, "policy-verdict") {
						t.Errorf("cilium-dbg %s printed no verdict in 8 s (the kubelet probes the node's probed pod every second):\n%s", strings.Join(args, " "), firstLines(out, 10))
						continue
					}
					checkPrinted(t, "cilium-monitor", out)
					checked["cilium-monitor"]++
				}
			})
			for _, cmd := range nodeCommands(t, i+1, v.NodeIP) {
				t.Run(strings.Join(cmd.args, " "), func(t *testing.T) {
					out, errOut, err := onNodeN(i+1, cmd.args...)
					if cmd.stderr {
						out += errOut
					}
					var missing *missingCommand
					if errors.As(err, &missing) {
						t.Skipf("node %s has no %s: %v", node, cmd.args[0], err)
					}
					if err != nil && !cmd.mayFail {
						t.Fatal(err)
					}
					checkPrinted(t, cmd.kind, out)
					checked[cmd.kind]++
				})
			}
		})
	}
	// every text parser ran on the cluster's own output at least once
	for _, p := range parse.All {
		if p.Kind == "cilium-endpoint-get" {
			continue // JSON only: TestLiveJSONResultsInventNothing
		}
		if p.Kind == "hubble-observe" {
			continue // JSON a line only: parsetest.Invented on the real captures, cmd/labrun's capture tests live
		}
		if checked[p.Kind] == 0 {
			t.Errorf("no output of the live cluster was checked with %s", p.Kind)
		}
	}
}

// checkPrinted parses out as kind and fails on each value of the result
// the text does not print.
func checkPrinted(t *testing.T, kind, out string) {
	t.Helper()
	p, ok := parse.Lookup(kind)
	if !ok {
		t.Fatalf("no parser %s", kind)
	}
	v, err := p.Parse(out)
	if err != nil {
		t.Fatalf("%s on the live output: %v\n%s", kind, err, firstLines(out, 20))
	}
	bad, err := parsetest.UnprintedBeyond(kind, out, v)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range bad {
		t.Errorf("%s: %s", kind, b)
	}
	if len(bad) > 0 {
		t.Logf("the output:\n%s", firstLines(out, 40))
	}
}

// textCommand is a command whose output a text parser reads.
type textCommand struct {
	kind    string
	args    []string
	mayFail bool // its output is read whatever its exit code (curl that cannot connect)
	stderr  bool // its standard error is read after its output (curl's "curl: (N)" line)
}

// agentCommands are the cilium-dbg commands of the text parsers, with an
// endpoint of the node's agent for bpf policy get.
func agentCommands(ctx context.Context, t *testing.T, c *kube.Client, ag cluster.PodTarget) []textCommand {
	t.Helper()
	cmds := []textCommand{
		{kind: "cilium-status", args: []string{"status"}},
		{kind: "cilium-status", args: []string{"status", "--verbose"}},
		{kind: "cilium-service-list", args: []string{"service", "list"}},
		{kind: "cilium-bpf-lb-list", args: []string{"bpf", "lb", "list"}},
		{kind: "cilium-bpf-lb-list", args: []string{"bpf", "lb", "list", "--frontends"}},
		{kind: "cilium-bpf-lb-list", args: []string{"bpf", "lb", "list", "--backends"}},
		{kind: "cilium-bpf-lb-list", args: []string{"bpf", "lb", "list", "--revnat"}},
		{kind: "cilium-bpf-ct-list", args: []string{"bpf", "ct", "list", "global"}},
		{kind: "cilium-bpf-ct-list", args: []string{"bpf", "ct", "list", "global", "-d"}},
		{kind: "cilium-endpoint-list", args: []string{"endpoint", "list"}},
		{kind: "cilium-map-list", args: []string{"map", "list"}},
		{kind: "cilium-bpf-ipcache-list", args: []string{"bpf", "ipcache", "list"}},
		{kind: "cilium-bpf-policy-get", args: []string{"bpf", "policy", "get", "--all"}},
		{kind: "cilium-bpf-policy-get", args: []string{"bpf", "policy", "get", "--all", "-n"}},
		{kind: "cilium-config", args: []string{"config"}},
		{kind: "cilium-config", args: []string{"config", "-a"}},
	}
	out, err := agentRun(ctx, c, ag, "endpoint", "list")
	if err != nil {
		t.Fatal(err)
	}
	eps, err := parse.ParseEndpointList(out)
	if err != nil || len(eps) == 0 {
		t.Fatalf("the agent's endpoint list: %d endpoints, %v", len(eps), err)
	}
	// one endpoint of a pod (not the host's, whose policy map differs)
	id := eps[0].ID
	for _, e := range eps {
		if !e.HasLabel("reserved:host") {
			id = e.ID
			break
		}
	}
	for _, args := range [][]string{{"bpf", "policy", "get", strconv.Itoa(id)}, {"bpf", "policy", "get", "-n", strconv.Itoa(id)}} {
		cmds = append(cmds, textCommand{kind: "cilium-bpf-policy-get", args: args})
	}
	return cmds
}

// agentRun runs cilium-dbg in the agent; an exit code other than 0 is an
// error.
func agentRun(ctx context.Context, c *kube.Client, ag cluster.PodTarget, args ...string) (string, error) {
	res, err := c.Exec(ctx, ag, cluster.ExecRequest{Argv: append([]string{"cilium-dbg"}, args...), Reuse: true})
	if err != nil {
		return "", err
	}
	if res.ExitCode != 0 {
		return "", errors.New("cilium-dbg " + strings.Join(args, " ") + ": exit " + strconv.Itoa(res.ExitCode) + ": " + res.Stderr)
	}
	return res.Stdout, nil
}

// monitorUntilInputEnds runs its arguments until they end or the script's
// input does, as the capture action stops cilium-dbg monitor (see
// actions.monitorScript).
const monitorUntilInputEnds = `exec 3<&0; "$@" </dev/null & m=$!; (read -r _ <&3; kill $m) >/dev/null 2>&1 & r=$!; wait $m; s=$?; kill $r 2>/dev/null; wait $r; exit $s`

// agentMonitor runs cilium-dbg monitor with args in the agent for d and
// returns what it printed.
func agentMonitor(ctx context.Context, t *testing.T, c *kube.Client, ag cluster.PodTarget, d time.Duration, args ...string) string {
	t.Helper()
	in, stop := io.Pipe()
	timer := time.AfterFunc(d, func() { stop.Close() })
	defer timer.Stop()
	var out, errOut bytes.Buffer
	argv := append([]string{"sh", "-c", monitorUntilInputEnds, "cilium-dbg", "cilium-dbg"}, args...)
	res, err := c.Stream(ctx, ag, cluster.StreamRequest{Argv: argv, Stdin: in, Stdout: &out, Stderr: &errOut})
	if err != nil {
		t.Fatalf("cilium-dbg %s: %v", strings.Join(args, " "), err)
	}
	if res.Stopped {
		t.Fatalf("cilium-dbg %s did not stop when its input ended", strings.Join(args, " "))
	}
	return out.String()
}

// nodeCommands are the node's commands of the text parsers: bpftool, tc
// on the devices bpftool names, iptables-save, ss, netstat and curl to the
// node's API server (and to a closed port).
func nodeCommands(t *testing.T, node int, nodeIP string) []textCommand {
	t.Helper()
	cmds := []textCommand{
		{kind: "bpftool-net-show", args: []string{"bpftool", "net", "show"}},
		{kind: "bpftool-link-show", args: []string{"bpftool", "link", "show"}},
		{kind: "bpftool-cgroup-tree", args: []string{"bpftool", "cgroup", "tree"}},
		{kind: "iptables-save", args: []string{"iptables-save"}},
		{kind: "iptables-save", args: []string{"iptables-save", "-c"}},
		{kind: "iptables-save", args: []string{"ip6tables-save"}},
		{kind: "ss", args: []string{"ss", "-tn"}},
		{kind: "ss", args: []string{"ss", "-tln"}},
		{kind: "ss", args: []string{"ss", "-Htlnp"}},
		{kind: "ss", args: []string{"ss", "-tuna"}},
		{kind: "ss", args: []string{"ss", "-tln", "state", "listening"}},
		{kind: "netstat", args: []string{"netstat", "-tn"}},
		{kind: "netstat", args: []string{"netstat", "-tlnp"}},
		{kind: "netstat", args: []string{"netstat", "-una"}},
		{kind: "curl-w", args: []string{"curl", "-sk", "-o", "/dev/null", "-w", parse.CurlWriteOut, "https://" + nodeIP + ":6443/"}},
		{kind: "curl-w", args: []string{"curl", "-sk", "-o", "/dev/null", "-w", "%{http_code} %{time_total}", "https://" + nodeIP + ":6443/"}},
		{kind: "curl-w", args: []string{"curl", "-sS", "-o", "/dev/null", "-w", parse.CurlWriteOut, "http://127.0.0.1:1/"}, mayFail: true, stderr: true},
		// the kubelet's probes of the node's probed pod, as the capture's
		// tcpdump source runs it; -c ends it after 10 packets, timeout
		// bounds it (exit 124, a failure, if the probes stopped)
		{kind: "tcpdump", args: []string{"timeout", "20", "tcpdump", "-l", "-n", "--immediate-mode", "-i", "any", "-c", "10", "tcp", "port", "8080"}},
	}
	// tc filters on the devices Cilium attached programs to (none under
	// tcx, whose empty output the parser reads too)
	net, _, err := onNodeN(node, "bpftool", "net", "show")
	if err != nil {
		t.Fatal(err)
	}
	n, err := parse.ParseBpftoolNetShow(net)
	if err != nil {
		t.Fatal(err)
	}
	var devs []string
	for _, a := range n.Attachments {
		if a.Device != nil && *a.Device != "" && !slices.Contains(devs, *a.Device) && len(devs) < 3 {
			devs = append(devs, *a.Device)
		}
	}
	if len(devs) == 0 {
		t.Fatalf("bpftool net show on node %d lists no device with a program:\n%s", node, net)
	}
	for _, d := range devs {
		for _, dir := range []string{"ingress", "egress"} {
			cmds = append(cmds, textCommand{kind: "tc-filter-show", args: []string{"tc", "filter", "show", "dev", d, dir}})
		}
	}
	return cmds
}

// missingCommand is a command the node does not have.
type missingCommand struct{ err error }

func (m *missingCommand) Error() string { return m.err.Error() }

// onNodeN runs argv on node n through node-exec and returns its standard
// output and standard error. A command the node lacks (exit 127) is a
// *missingCommand.
func onNodeN(n int, argv ...string) (stdout, stderr string, err error) {
	cmd := exec.Command(nodeExec, append([]string{"--node", strconv.Itoa(n)}, argv...)...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) && exit.ExitCode() == 127 {
		return "", "", &missingCommand{errors.New(strings.TrimSpace(errOut.String()))}
	}
	if err != nil {
		err = errors.New(strings.Join(argv, " ") + ": " + err.Error() + ": " + errOut.String())
	}
	return out.String(), errOut.String(), err
}

// firstLines is the first n lines of s.
func firstLines(s string, n int) string {
	lines := strings.SplitAfter(s, "\n")
	if len(lines) > n {
		lines = append(lines[:n], "...\n")
	}
	return strings.Join(lines, "")
}

// probedPolicy enforces ingress on the probed pods, admitting the node's
// own traffic (the kubelet's probes) to 8080.
const probedPolicy = `---
apiVersion: cilium.io/v2
kind: CiliumNetworkPolicy
metadata: {name: probed, namespace: NS}
spec:
  endpointSelector: {matchLabels: {app: probed}}
  ingress:
  - fromEntities: [host]
    toPorts: [{ports: [{port: "8080", protocol: TCP}]}]
`

// probedPod is a pod on node NODE serving HTTP on 8080, probed by its
// kubelet every second.
const probedPod = `---
apiVersion: v1
kind: Pod
metadata: {name: NAME, namespace: NS, labels: {app: probed}}
spec:
  nodeName: NODE
  terminationGracePeriodSeconds: 1
  containers:
  - name: web
    image: IMAGE
    imagePullPolicy: IfNotPresent
    command: [python3, -m, http.server, "8080"]
    readinessProbe: {tcpSocket: {port: 8080}, periodSeconds: 1}
`
