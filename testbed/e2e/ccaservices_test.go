//go:build e2e

package e2e

// The cca-services lab on the two-node test cluster: labrun solves it twice
// in a row (the second run starts from what the first left, DSR switched on
// and back each time), every file's keys are checked against the live
// cluster here, independently of the playbook's own assertions, `labrun
// check` passes on the files and fails on copies with one wrong value each,
// naming that key, and task by task (check --task, labrun test); and a run
// whose Helm upgrade breaks the agents restores the release in `finally`,
// after which the agents and NodePort SNAT work.

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/labrun/labrun/internal/boundary/bpfentries"
	"github.com/labrun/labrun/internal/boundary/cluster"
	"github.com/labrun/labrun/internal/heavy/bpfmaps"
	"github.com/labrun/labrun/internal/heavy/kube/kubetest"
)

const (
	servicesPlaybook = "../../playbooks/cca-services.yaml"
	servicesVars     = "../../playbooks/cca-services.testbed.yaml"
	servicesNS       = "cca-svc"
)

// servicesFiles are the files the lab leaves.
var servicesFiles = []string{"affinity.json", "dsr.json", "events.json", "kpr.json", "lbmap.json", "local.json", "nodeport.json", "report.txt", "socketlb.json"}

// buildLabrun builds the labrun command into a temporary directory,
// with labrun-helm beside it, where labrun looks for it.
func buildLabrun(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, cmd := range []string{"labrun", "labrun-helm"} {
		if out, err := exec.Command("go", "build", "-o", filepath.Join(dir, cmd), "../../cmd/"+cmd).CombinedOutput(); err != nil {
			t.Fatalf("go build ../../cmd/%s: %v\n%s", cmd, err, out)
		}
	}
	return filepath.Join(dir, "labrun")
}

// labrunServices runs `labrun CMD` on the cca-services playbook with the
// testbed's vars and out=dir, and returns its exit code and output.
func labrunServices(t *testing.T, bin, cmd, dir string, extra ...string) (int, string) {
	t.Helper()
	args := append([]string{cmd, "--no-progress", "--kubeconfig", kubetest.Kubeconfig(t), "--vars", servicesVars, "--set", "out=" + dir}, extra...)
	args = append(args, servicesPlaybook)
	var out bytes.Buffer
	c := exec.Command(bin, args...)
	c.Stdout, c.Stderr = &out, &out
	start := time.Now()
	err := c.Run()
	t.Logf("labrun %s took %s", cmd, time.Since(start).Round(time.Millisecond))
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), out.String()
	} else if err != nil {
		t.Fatalf("labrun %s: %v", cmd, err)
	}
	return 0, out.String()
}

// helmValues is the release's user-supplied values (helm get values).
func helmValues(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(helmOnNode(t, "get", "values", "cilium", "-n", "kube-system", "-o", "json")), &m); err != nil {
		t.Fatalf("helm get values: %v", err)
	}
	return m
}

func readLabJSON(t *testing.T, dir, name string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return m
}

// want compares one key of a file with what the cluster says.
func want(t *testing.T, file string, m map[string]any, key string, expected any) {
	t.Helper()
	got := m[key]
	if n, ok := expected.(int); ok {
		expected = float64(n)
	}
	if l, ok := expected.([]string); ok {
		e := make([]any, len(l))
		for i, s := range l {
			e[i] = s
		}
		expected = e
	}
	if !reflect.DeepEqual(got, expected) {
		t.Errorf("%s: %s = %v, the cluster says %v", file, key, got, expected)
	}
}

func strs(v any) []string {
	l, _ := v.([]any)
	out := make([]string, 0, len(l))
	for _, x := range l {
		out = append(out, fmt.Sprint(x))
	}
	return out
}

func TestTwoNodeCCAServicesLab(t *testing.T) {
	v := twoNodes(t, "tunnel", "native")
	bin := buildLabrun(t)
	before := helmValues(t)
	out := t.TempDir()
	for run := 1; run <= 2; run++ {
		if code, text := labrunServices(t, bin, "run", out); code != 0 {
			t.Fatalf("solve %d exited %d:\n%s", run, code, text)
		}
	}
	if after := helmValues(t); !reflect.DeepEqual(after, before) {
		t.Errorf("the release's values after the lab:\n%v\nbefore:\n%v", after, before)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	c := kubetest.Connect(t)
	r, err := bpfmaps.Open(v.BPFFS)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	a := agentOn(ctx, t, c, v.NodeName)
	status, err := a.run(ctx, false, "status", "--verbose")
	if err != nil {
		t.Fatal(err)
	}

	// kpr.json
	kpr := readLabJSON(t, out, "kpr.json")
	for key, label := range map[string]string{"kube_proxy_replacement": "Status:", "socket_lb": "Socket LB:", "session_affinity": "Session Affinity:"} {
		if !hasLine(status, label, kpr[key].(string)) {
			t.Errorf("kpr.json: %s = %v, but status --verbose has no line %s %v", key, kpr[key], label, kpr[key])
		}
	}
	for key, label := range map[string]string{"nodeport": "- NodePort:", "host_port": "- HostPort:", "external_ips": "- externalIPs:"} {
		if !hasLine(status, label, kpr[key].(string)) {
			t.Errorf("kpr.json: %s = %v, but status --verbose has no line %s %v...", key, kpr[key], label, kpr[key])
		}
	}
	kp, err := c.List(ctx, cluster.ObjectQuery{Kind: "Pod", AllNamespaces: true, Selector: "k8s-app=kube-proxy"})
	if err != nil {
		t.Fatal(err)
	}
	want(t, "kpr.json", kpr, "kube_proxy_pods", len(kp))
	ipt := onNode(t, "iptables-save")
	want(t, "kpr.json", kpr, "kube_svc_lines", strings.Count(ipt, "KUBE-SVC"))
	chains := 0
	for l := range strings.SplitSeq(ipt, "\n") {
		if strings.HasPrefix(l, ":CILIUM_") {
			chains++
		}
	}
	want(t, "kpr.json", kpr, "cilium_chains", chains)

	// lbmap.json: the oldest 3 nginx pods, the map's slots and ids.
	nginxSvc := get(ctx, t, c, "Service", servicesNS, "nginx-service")
	clusterIP := str(t, nginxSvc, "spec", "clusterIP")
	frontend := clusterIP + ":8080"
	fes, err := r.Services()
	if err != nil {
		t.Fatal(err)
	}
	fe := fes.Find(frontend + "/TCP")
	if fe == nil {
		t.Fatalf("the services map has no %s/TCP", frontend)
	}
	pods, err := c.List(ctx, cluster.ObjectQuery{Kind: "Pod", Namespace: servicesNS, Selector: "app=nginx"})
	if err != nil {
		t.Fatal(err)
	}
	sort.Slice(pods, func(i, j int) bool {
		return str(t, pods[i], "metadata", "creationTimestamp") < str(t, pods[j], "metadata", "creationTimestamp")
	})
	if len(pods) != 4 {
		t.Fatalf("%d nginx pods, want 4 after the lab", len(pods))
	}
	var first []string
	for _, p := range pods[:3] {
		first = append(first, str(t, p, "status", "podIP")+":80")
	}
	lb := readLabJSON(t, out, "lbmap.json")
	want(t, "lbmap.json", lb, "frontend", frontend)
	want(t, "lbmap.json", lb, "service_id", int(fe.RevNATID))
	want(t, "lbmap.json", lb, "rev_nat_id", int(fe.RevNATID))
	want(t, "lbmap.json", lb, "rev_nat_address", printedp(fe.RevNAT))
	if !sameStrings(strs(lb["backends"]), first) || !sameStrings(strs(lb["backend_map_addrs"]), first) {
		t.Errorf("lbmap.json: backends %v, backend_map_addrs %v; the 3 oldest nginx pods are %v", lb["backends"], lb["backend_map_addrs"], first)
	}
	var firstIDs []string
	for _, s := range fe.Slots {
		if s.Slot > 0 && s.Backend != nil && slices.Contains(first, *s.Backend) {
			firstIDs = append(firstIDs, fmt.Sprint(*s.BackendID))
		}
	}
	if !sameStrings(strs(lb["backend_ids"]), firstIDs) {
		t.Errorf("lbmap.json: backend_ids %v; the map's slots hold the oldest pods as %v", lb["backend_ids"], firstIDs)
	}
	want(t, "lbmap.json", lb, "master_count", 3)
	want(t, "lbmap.json", lb, "lb_list_rows", 4)
	want(t, "lbmap.json", lb, "nodeport_frontends", []string{"0.0.0.0:32334"})
	want(t, "lbmap.json", lb, "nodeport_shares_backends", true)

	// events.json
	ev := readLabJSON(t, out, "events.json")
	want(t, "events.json", ev, "service_id_before", int(fe.RevNATID))
	want(t, "events.json", ev, "service_id_after", int(fe.RevNATID))
	want(t, "events.json", ev, "slots_before", 3)
	want(t, "events.json", ev, "slots_after", fe.Count)
	if !sameStrings(strs(ev["kept_backend_ids"]), firstIDs) {
		t.Errorf("events.json: kept_backend_ids %v, want %v", ev["kept_backend_ids"], firstIDs)
	}
	want(t, "events.json", ev, "endpointslice_ready", 4)

	// socketlb.json
	sl := readLabJSON(t, out, "socketlb.json")
	cm := get(ctx, t, c, "ConfigMap", "kube-system", "cilium-config")
	root := str(t, cm, "data", "cgroup-root")
	want(t, "socketlb.json", sl, "cgroup_root", root)
	hooks := strs(sl["cgroup_hooks"])
	cg := onNode(t, "bpftool", "cgroup", "show", root)
	for _, h := range hooks {
		if !strings.Contains(cg, h) {
			t.Errorf("socketlb.json: hook %s is not in bpftool cgroup show %s:\n%s", h, root, cg)
		}
	}
	for _, h := range []string{"cgroup_inet4_connect", "cgroup_inet4_getpeername", "cgroup_udp4_sendmsg", "cgroup_udp4_recvmsg"} {
		if !slices.Contains(hooks, h) {
			t.Errorf("socketlb.json: cgroup_hooks %v lack %s", hooks, h)
		}
	}
	clientIP := podIP(ctx, t, c, servicesNS, "client")
	want(t, "socketlb.json", sl, "tcp_getpeername", frontend)
	if !slices.Contains(fe.ActiveBackends(), sl["tcp_kernel_peer"].(string)) {
		t.Errorf("socketlb.json: tcp_kernel_peer %v is not one of the map's backends %v", sl["tcp_kernel_peer"], fe.ActiveBackends())
	}
	want(t, "socketlb.json", sl, "tcp_server_saw", clientIP)
	want(t, "socketlb.json", sl, "udp_server_saw", clientIP)
	want(t, "socketlb.json", sl, "ct_entries_with_cluster_ip", 0)
	udpService := str(t, get(ctx, t, c, "Service", servicesNS, "echo-udp"), "spec", "clusterIP") + ":5353"
	want(t, "socketlb.json", sl, "udp_service", udpService)
	want(t, "socketlb.json", sl, "udp_reply_from", udpService)
	echo, err := c.List(ctx, cluster.ObjectQuery{Kind: "Pod", Namespace: servicesNS, Selector: "app=echo-udp"})
	if err != nil || len(echo) != 1 {
		t.Fatalf("echo-udp pods: %v %v", len(echo), err)
	}
	rsk, err := r.SockRevNAT()
	if err != nil {
		t.Fatal(err)
	}
	if len(rsk.WithFrontend(udpService).WithBackend(str(t, echo[0], "status", "podIP")+":5353")) == 0 {
		t.Errorf("cilium_lb4_reverse_sk has no entry mapping echo-udp's pod back to %s: %+v", udpService, rsk)
	}

	// affinity.json
	af := readLabJSON(t, out, "affinity.json")
	sticky := get(ctx, t, c, "Service", servicesNS, "sticky")
	want(t, "affinity.json", af, "session_affinity", str(t, sticky, "spec", "sessionAffinity"))
	timeout := sticky["spec"].(map[string]any)["sessionAffinityConfig"].(map[string]any)["clientIP"].(map[string]any)["timeoutSeconds"]
	want(t, "affinity.json", af, "timeout_seconds", int(timeout.(int64)))
	sfe := fes.Find(str(t, sticky, "spec", "clusterIP") + ":8081/TCP")
	if sfe == nil {
		t.Fatal("the services map has no sticky frontend")
	}
	var mapTimeout any // null for an L7 service, whose union holds its proxy port
	if sfe.AffinityTimeout != nil {
		mapTimeout = int(*sfe.AffinityTimeout)
	}
	want(t, "affinity.json", af, "map_affinity_timeout", mapTimeout)
	want(t, "affinity.json", af, "requests", 10)
	want(t, "affinity.json", af, "sticky_distinct_backends", 1)
	if n, _ := af["plain_distinct_backends"].(float64); n < 2 {
		t.Errorf("affinity.json: plain_distinct_backends = %v, want more than 1", af["plain_distinct_backends"])
	}
	aff, err := r.Affinity()
	if err != nil {
		t.Fatal(err)
	}
	// The map keeps entries of earlier runs, whose backends are gone, until
	// they expire; the lab's own requests made the most recently used one.
	mine := aff.ForRevNAT(int(sfe.RevNATID))
	if len(mine) == 0 {
		t.Errorf("cilium_lb4_affinity has no entry for sticky (service %d)", sfe.RevNATID)
	} else if last := slices.MaxFunc(mine, func(a, b bpfentries.Affinity) int { return cmp.Compare(a.LastUsed, b.LastUsed) }); !last.NetNSCookie || last.Backend == nil || !sfe.HasBackend(*last.Backend) {
		t.Errorf("cilium_lb4_affinity for sticky (service %d): the most recently used entry is %+v; want a netns-cookie entry with one of sticky's backends (all: %+v)", sfe.RevNATID, last, mine)
	}

	// nodeport.json: SNAT across nodes, to node 1's router address in
	// tunnel mode, its InternalIP in native mode.
	np := readLabJSON(t, out, "nodeport.json")
	want(t, "nodeport.json", np, "node_ip", v.NodeIP)
	want(t, "nodeport.json", np, "node_port", 30880)
	want(t, "nodeport.json", np, "http_code", 200)
	want(t, "nodeport.json", np, "backend_node", v.Node2Name)
	snatFrom := v.NodeIP
	if v.Profile == "tunnel" {
		snatFrom = ciliumInternalIP(ctx, t, c, v.NodeName)
	}
	want(t, "nodeport.json", np, "client_seen_by_backend", snatFrom)
	want(t, "nodeport.json", np, "listen_sockets", len(strings.TrimSpace(onNode(t, "ss", "-Htln", "sport = :30880"))))
	want(t, "nodeport.json", np, "iptables_lines", strings.Count(ipt, "30880"))
	want(t, "nodeport.json", np, "lb_mode", "SNAT")

	// local.json
	lo := readLabJSON(t, out, "local.json")
	want(t, "local.json", lo, "backend_node_http_code", 200)
	want(t, "local.json", lo, "backend_node_client_seen", v.OutsideIP)
	if n, _ := lo["other_node_curl_exit"].(float64); n == 0 {
		t.Errorf("local.json: other_node_curl_exit = 0, want curl's failure through node 1")
	}

	// dsr.json
	dsr := readLabJSON(t, out, "dsr.json")
	want(t, "dsr.json", dsr, "lb_mode", "DSR")
	want(t, "dsr.json", dsr, "http_code", 200)
	want(t, "dsr.json", dsr, "client_seen_by_backend", v.OutsideIP)
	want(t, "dsr.json", dsr, "restored_lb_mode", "SNAT")
	if !hasLine(status, "Mode:", "SNAT") {
		t.Errorf("status --verbose after the lab has no line Mode: SNAT:\n%s", status)
	}

	// report.txt
	rep, err := os.ReadFile(filepath.Join(out, "report.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{fmt.Sprintf("service_id=%d", fe.RevNATID), fmt.Sprintf("backend_count=%d", fe.Count),
		"socket_lb=Enabled", "sticky_distinct_backends=1", "nodeport_client_seen=" + snatFrom, "lb_mode=SNAT"} {
		if !strings.Contains(string(rep), line+"\n") {
			t.Errorf("report.txt lacks %q:\n%s", line, rep)
		}
	}

	// labrun check: the files pass; copies with one wrong value each fail,
	// naming the key.
	if code, text := labrunServices(t, bin, "check", out); code != 0 {
		t.Fatalf("check of labrun's own files exited %d:\n%s", code, text)
	}
	learner := t.TempDir()
	for _, name := range servicesFiles {
		b, err := os.ReadFile(filepath.Join(out, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(learner, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	wrong := map[string]struct {
		key   string
		value any
	}{
		"kpr.json":      {"cilium_chains", float64(chains + 1)},
		"lbmap.json":    {"service_id", float64(fe.RevNATID) + 1000},
		"events.json":   {"slots_after", 5.0},
		"socketlb.json": {"tcp_getpeername", first[0]},
		"affinity.json": {"sticky_distinct_backends", 2.0},
		"nodeport.json": {"backend_node", v.NodeName},
		"local.json":    {"backend_node_client_seen", v.NodeIP},
		"dsr.json":      {"restored_lb_mode", "DSR"},
	}
	for name, w := range wrong {
		m := readLabJSON(t, learner, name)
		m[w.key] = w.value
		b, _ := json.Marshal(m)
		if err := os.WriteFile(filepath.Join(learner, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	rep2 := strings.Replace(string(rep), "lb_mode=SNAT", "lb_mode=DSR", 1)
	if err := os.WriteFile(filepath.Join(learner, "report.txt"), []byte(rep2), 0o644); err != nil {
		t.Fatal(err)
	}
	code, text := labrunServices(t, bin, "check", learner)
	if code != 1 {
		t.Fatalf("check of files with wrong values exited %d, want 1:\n%s", code, text)
	}
	for name, w := range wrong {
		if !strings.Contains(text, name+": "+w.key+" is ") {
			t.Errorf("check output does not name %s's %s:\n%s", name, w.key, text)
		}
	}
	if !strings.Contains(text, "report.txt: lb_mode=DSR, expected SNAT") {
		t.Errorf("check output does not name report.txt's lb_mode:\n%s", text)
	}
	messages := map[string]string{"report.txt": "report.txt: lb_mode=DSR, expected SNAT"}
	for name, w := range wrong {
		messages[name] = name + ": " + w.key + " is "
	}
	gradeByTask(t, func(cmd, dir string, extra ...string) (int, string) {
		return labrunServices(t, bin, cmd, dir, extra...)
	}, out, learner, messages)
}

// A Helm upgrade that breaks the agents fails the run: DSR without the
// switch to native routing, which Cilium 1.20.1 refuses at start ("Node
// Port \"dsr\" mode cannot be used with vxlan tunneling", the agents
// crash-loop and the rollout wait stops at once); finally rolls the release
// back to the values it had, the agents come back with them, and a NodePort
// request across nodes is SNATed again.
func TestTwoNodeCCAServicesRecoversFromFailedUpgrade(t *testing.T) {
	v := twoNodes(t, "tunnel", "native")
	bin := buildLabrun(t)
	before := helmValues(t)
	code, text := labrunServices(t, bin, "run", t.TempDir(),
		"--set", "dsr_set=[loadBalancer.mode=dsr, loadBalancer.dsrDispatch=geneve]")
	if code == 0 {
		t.Fatalf("a run whose upgrade breaks the agents passed:\n%s", text)
	}
	for l := range strings.SplitSeq(text, "\n") {
		if strings.Contains(l, "FAIL") || strings.Contains(l, "cleanup") || strings.Contains(l, "stopped waiting") {
			t.Log(l)
		}
	}
	if !strings.Contains(text, "rescue_restore") || strings.Contains(text, "FAIL [cleanup]") {
		t.Errorf("finally did not restore the release cleanly:\n%s", text)
	}
	if after := helmValues(t); !reflect.DeepEqual(after, before) {
		t.Errorf("the release's values after the failed run:\n%v\nbefore:\n%v", after, before)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	c := kubetest.Connect(t)
	if status := waitAgentsHealthy(ctx, t, c, v); !hasLine(status, "Mode:", "SNAT") {
		t.Errorf("after the rollback, status --verbose has no line Mode: SNAT:\n%s", status)
	}
	snatFrom := v.NodeIP
	if v.Profile == "tunnel" {
		snatFrom = ciliumInternalIP(ctx, t, c, v.NodeName)
	}
	url := fmt.Sprintf("http://%s:30880/", v.NodeIP)
	poll(t, "a NodePort request through node 1 SNATed to "+snatFrom, 3*time.Minute, func() (bool, string, error) {
		out, _ := exec.Command(outsideExec, "curl", "-s", "-m", "3", url).Output()
		return strings.Contains(string(out), "client="+snatFrom+":"), string(out), nil
	})
}

func sameStrings(a, b []string) bool {
	x, y := slices.Clone(a), slices.Clone(b)
	sort.Strings(x)
	sort.Strings(y)
	return slices.Equal(x, y)
}
