//go:build e2e

package e2e

// The cca-identity lab on the two-node tunnel profile: labrun solves it
// twice in a row (the second run starts from what the first left: visitor
// relabelled, frontend restarted), every file's keys, types and relations
// are checked against the cluster read here with client-go and the kernel's
// maps (not through labrun's engine), labrun check passes on the files, and
// fails naming the key on files with one wrong value each, task by task as
// well (check --task, labrun test).

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/labrun/labrun/internal/boundary/cluster"
	"github.com/labrun/labrun/internal/heavy/bpfmaps"
	"github.com/labrun/labrun/internal/heavy/kube/kubetest"
	"github.com/labrun/labrun/internal/leaf/k8sobj"
)

// Cilium's reserved identities (pkg/identity/numericidentity.go).
const (
	identityHost  = 1
	identityWorld = 2
)

// labrun runs the binary on the lab with the testbed's vars; it returns the
// exit code and the combined output.
func labrun(t *testing.T, bin, kc string, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("labrun %v: %v", args, err)
	}
	return code, out.String()
}

// wantSame compares a file's key with a value read from the cluster by
// their printed forms, so that an int64 of an object, a number held as a
// string (a container's env) and a JSON number compare.
func wantSame(t *testing.T, file map[string]any, name, key string, v any) {
	t.Helper()
	got := file[key]
	if f, ok := got.(float64); ok {
		got = int64(f)
	}
	if fmt.Sprint(got) != fmt.Sprint(v) {
		t.Errorf("%s: %s = %v (%T), the cluster says %v", name, key, file[key], file[key], v)
	}
}

func TestTunnelCCAIdentityLab(t *testing.T) {
	v := twoNodes(t, "tunnel")
	kc := kubetest.Kubeconfig(t)
	bin := buildLabrun(t)
	out := filepath.Join(t.TempDir(), "out")
	vars := []string{"--kubeconfig", kc, "--vars", "../../playbooks/cca-identity.testbed.yaml", "--set", "out=" + out}
	t.Cleanup(func() {
		if code, text := labrun(t, bin, kc, "run", "--no-progress", "--kubeconfig", kc, "../../playbooks/cca-identity/cleanup.yaml"); code != 0 {
			t.Errorf("cleanup exited %d:\n%s", code, text)
		}
	})
	for i := range 2 {
		code, text := labrun(t, bin, kc, append(append([]string{"run", "--no-progress"}, vars...), "../../playbooks/cca-identity.yaml")...)
		if code != 0 {
			t.Fatalf("solve %d exited %d:\n%s", i+1, code, text)
		}
	}

	c := kubetest.Connect(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	list := func(q cluster.ObjectQuery) []map[string]any {
		objs, err := c.List(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		return objs
	}
	frontend := list(cluster.ObjectQuery{Kind: "Pod", Namespace: "shop", Selector: "app=frontend,pod-template-hash"})
	backend := list(cluster.ObjectQuery{Kind: "Pod", Namespace: "shop", Selector: "app=backend"})
	visitor := get(ctx, t, c, "Pod", "shop", "visitor")
	if len(frontend) != 2 || len(backend) != 1 {
		t.Fatalf("%d frontend and %d backend pods, want 2 and 1", len(frontend), len(backend))
	}
	ceps := map[string]map[string]any{}
	for _, o := range list(cluster.ObjectQuery{APIVersion: "cilium.io/v2", Kind: "CiliumEndpoint", Namespace: "shop"}) {
		ceps[k8sobj.String(o, "metadata", "name")] = o
	}
	cepIdentity := func(pod map[string]any) int64 {
		return k8sobj.Int(ceps[k8sobj.String(pod, "metadata", "name")], "status", "identity", "id")
	}
	frontendID := cepIdentity(frontend[0])
	if frontendID == 0 || cepIdentity(frontend[1]) != frontendID {
		t.Fatalf("frontend pods' identities %d, %d", frontendID, cepIdentity(frontend[1]))
	}

	// 1. nodes.json: the tier labels and where the pods run.
	nodes := readLabJSON(t, out, "nodes.json")
	wantSame(t, nodes, "nodes.json", "front_node", v.NodeName)
	wantSame(t, nodes, "nodes.json", "back_node", v.Node2Name)
	wantSame(t, nodes, "nodes.json", "frontend_nodes", []string{k8sobj.String(frontend[0], "spec", "nodeName")})
	wantSame(t, nodes, "nodes.json", "backend_node", k8sobj.String(backend[0], "spec", "nodeName"))
	for name, tier := range map[string]string{v.NodeName: "front", v.Node2Name: "back"} {
		if got := k8sobj.String(get(ctx, t, c, "Node", "", name), "metadata", "labels", "lab.labrun.io/tier"); got != tier {
			t.Errorf("node %s has lab.labrun.io/tier=%q, want %s", name, got, tier)
		}
	}

	// 2. identity.json: the frontend identity and its labels.
	ident := readLabJSON(t, out, "identity.json")
	wantSame(t, ident, "identity.json", "identity", frontendID)
	labels := strs(ident["identity_labels"])
	var cepLabels []string
	for _, l := range ceps[k8sobj.String(frontend[0], "metadata", "name")]["status"].(map[string]any)["identity"].(map[string]any)["labels"].([]any) {
		cepLabels = append(cepLabels, l.(string))
	}
	slices.Sort(cepLabels)
	if !slices.Equal(labels, cepLabels) || !slices.IsSorted(labels) {
		t.Errorf("identity.json: identity_labels %v, the CiliumEndpoint's %v", labels, cepLabels)
	}
	for _, l := range []string{"k8s:app=frontend", "k8s:team=payments", "k8s:io.kubernetes.pod.namespace=shop"} {
		if !slices.Contains(labels, l) {
			t.Errorf("identity.json: identity_labels %v lack %s", labels, l)
		}
	}
	wantSame(t, ident, "identity.json", "excluded_label_keys", []string{"pod-template-hash"})
	for _, l := range strs(ident["added_labels"]) {
		if !slices.Contains(labels, l) || strings.HasPrefix(l, "k8s:app=") || strings.HasPrefix(l, "k8s:team=") {
			t.Errorf("identity.json: added label %s is the pod's own or not the identity's", l)
		}
	}
	wantSame(t, ident, "identity.json", "replicas_sharing_identity", 2)
	sec := get(ctx, t, c, "CiliumIdentity", "", fmt.Sprint(frontendID))["security-labels"].(map[string]any)
	var crd []string
	for k, val := range sec {
		crd = append(crd, k+"="+val.(string))
	}
	slices.Sort(crd)
	wantSame(t, ident, "identity.json", "crd_labels_match", slices.Equal(crd, labels))

	// 3. rollout.json: new IPs and hash, the same identity.
	roll := readLabJSON(t, out, "rollout.json")
	var ips []string
	for _, p := range frontend {
		ips = append(ips, k8sobj.String(p, "status", "podIP"))
	}
	slices.Sort(ips)
	after := strs(roll["after_ips"])
	slices.Sort(after)
	if !slices.Equal(after, ips) {
		t.Errorf("rollout.json: after_ips %v, frontend's pods have %v", after, ips)
	}
	for _, ip := range strs(roll["before_ips"]) {
		if slices.Contains(ips, ip) {
			t.Errorf("rollout.json: before_ips %v holds a current frontend IP %s", roll["before_ips"], ip)
		}
	}
	wantSame(t, roll, "rollout.json", "after_hash", k8sobj.String(frontend[0], "metadata", "labels", "pod-template-hash"))
	if roll["before_hash"] == roll["after_hash"] || roll["before_hash"] == "" {
		t.Errorf("rollout.json: before_hash %v, after_hash %v", roll["before_hash"], roll["after_hash"])
	}
	wantSame(t, roll, "rollout.json", "before_identity", frontendID)
	wantSame(t, roll, "rollout.json", "after_identity", frontendID)
	for _, k := range []string{"policy_map_unchanged", "ipcache_has_new_ips", "ipcache_dropped_old_ips"} {
		wantSame(t, roll, "rollout.json", k, true)
	}

	// 4. ipcache.json against node 1's kernel map, read here.
	r, err := bpfmaps.Open(v.BPFFS)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ipc := readLabJSON(t, out, "ipcache.json")
	backendIP := k8sobj.String(backend[0], "status", "podIP")
	lookup := func(ip string) (int64, string) {
		e, err := r.LookupIPCache(ip)
		if err != nil || e == nil {
			t.Fatalf("node 1's ipcache has no entry for %s: %v", ip, err)
		}
		return int64(e.Identity), e.TunnelEndpoint
	}
	wantSame(t, ipc, "ipcache.json", "frontend_identity", frontendID)
	for _, ip := range ips {
		if id, _ := lookup(ip); id != frontendID {
			t.Errorf("node 1's ipcache gives frontend %s identity %d, want %d", ip, id, frontendID)
		}
	}
	wantSame(t, ipc, "ipcache.json", "backend_ip", backendIP)
	id, tep := lookup(backendIP)
	wantSame(t, ipc, "ipcache.json", "backend_identity", id)
	wantSame(t, ipc, "ipcache.json", "backend_identity", cepIdentity(backend[0]))
	wantSame(t, ipc, "ipcache.json", "backend_tunnel_endpoint", tep)
	wantSame(t, ipc, "ipcache.json", "backend_tunnel_endpoint", v.Node2IP)
	id, _ = lookup(v.NodeIP)
	wantSame(t, ipc, "ipcache.json", "local_node_identity", id)
	wantSame(t, ipc, "ipcache.json", "local_node_identity", identityHost)
	wantSame(t, ipc, "ipcache.json", "remote_node_ip", v.Node2IP)
	id, _ = lookup(v.Node2IP)
	wantSame(t, ipc, "ipcache.json", "remote_node_identity", id)
	wantSame(t, ipc, "ipcache.json", "remote_node_identity", identityRemoteNode)
	id, _ = lookup("0.0.0.0")
	wantSame(t, ipc, "ipcache.json", "world_identity", id)
	wantSame(t, ipc, "ipcache.json", "world_identity", identityWorld)

	// 5. policy.json against node 2's policy map, read here.
	pol := readLabJSON(t, out, "policy.json")
	epID := k8sobj.Int(ceps[k8sobj.String(backend[0], "metadata", "name")], "status", "id")
	wantSame(t, pol, "policy.json", "backend_endpoint", epID)
	wantSame(t, pol, "policy.json", "policy_map", fmt.Sprintf("cilium_policy_v3_%05d", epID))
	r2, err := bpfmaps.Open(v.Node2BPFFS)
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	entries, err := r2.Policy(uint16(epID))
	if err != nil {
		t.Fatal(err)
	}
	// (an identity no pod of the namespace has may keep an entry for a
	// while after an agent restart: the lab leaves those out)
	live := map[int64]bool{}
	for _, cep := range ceps {
		live[k8sobj.Int(cep, "status", "identity", "id")] = true
	}
	var allow []string
	for _, e := range entries {
		if e.Direction == "Ingress" && e.Verdict == "Allow" && e.PortProto == "8080/TCP" && live[int64(e.Identity)] {
			allow = append(allow, fmt.Sprintf("%d %s", e.Identity, e.PortProto))
		}
	}
	slices.Sort(allow)
	wantSame(t, pol, "policy.json", "ingress_allow", allow)
	wantSame(t, pol, "policy.json", "ingress_allow", []string{fmt.Sprintf("%d 8080/TCP", frontendID)})
	wantSame(t, pol, "policy.json", "frontend_identity", frontendID)
	wantSame(t, pol, "policy.json", "intruder_identity", k8sobj.Int(ceps["intruder"], "status", "identity", "id"))
	wantSame(t, pol, "policy.json", "frontend_http_code", 200)
	if code, _ := pol["intruder_curl_exit"].(float64); code == 0 {
		t.Errorf("policy.json: intruder_curl_exit %v, want non-zero (dropped)", pol["intruder_curl_exit"])
	}

	// 6. relabel.json: visitor, relabelled in place.
	rel := readLabJSON(t, out, "relabel.json")
	visitorIP := k8sobj.String(visitor, "status", "podIP")
	wantSame(t, rel, "relabel.json", "ip", visitorIP)
	if app := k8sobj.String(visitor, "metadata", "labels", "app"); app != "frontend" {
		t.Errorf("visitor has app=%s, want frontend", app)
	}
	wantSame(t, rel, "relabel.json", "pod_uid_unchanged", true)
	wantSame(t, rel, "relabel.json", "after_identity", frontendID)
	id, _ = lookup(visitorIP)
	wantSame(t, rel, "relabel.json", "after_ipcache_identity", id)
	if rel["before_identity"] == rel["after_identity"] {
		t.Errorf("relabel.json: before_identity %v = after_identity", rel["before_identity"])
	}
	if code, _ := rel["before_curl_exit"].(float64); code == 0 {
		t.Errorf("relabel.json: before_curl_exit %v, want non-zero", rel["before_curl_exit"])
	}
	wantSame(t, rel, "relabel.json", "after_http_code", 200)

	// 7. datapath.json.
	dp := readLabJSON(t, out, "datapath.json")
	wantSame(t, dp, "datapath.json", "kube_proxy_replacement", "True")
	wantSame(t, dp, "datapath.json", "routing_network", "Tunnel [vxlan]")
	ds := get(ctx, t, c, "DaemonSet", "kube-system", "cilium")
	env := map[string]string{}
	for _, ctr := range ds["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any) {
		if ctr.(map[string]any)["name"] == "cilium-agent" {
			for _, e := range ctr.(map[string]any)["env"].([]any) {
				env[k8sobj.String(e.(map[string]any), "name")] = k8sobj.String(e.(map[string]any), "value")
			}
		}
	}
	wantSame(t, dp, "datapath.json", "k8s_service_host", env["KUBERNETES_SERVICE_HOST"])
	wantSame(t, dp, "datapath.json", "k8s_service_host", v.NodeIP)
	wantSame(t, dp, "datapath.json", "k8s_service_port", env["KUBERNETES_SERVICE_PORT"])
	wantSame(t, dp, "datapath.json", "kubernetes_cluster_ip", k8sobj.String(get(ctx, t, c, "Service", "default", "kubernetes"), "spec", "clusterIP"))
	wantSame(t, dp, "datapath.json", "kube_svc_lines", strings.Count(onNode(t, "iptables-save"), "KUBE-SVC"))

	// 8. report.txt.
	report, err := os.ReadFile(filepath.Join(out, "report.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{
		fmt.Sprintf("frontend_identity=%d", frontendID), "backend_node=" + v.Node2Name, "backend_tunnel_endpoint=" + v.Node2IP,
		fmt.Sprintf("policy_map=cilium_policy_v3_%05d", epID), fmt.Sprintf("visitor_identity=%d", frontendID), "routing_network=Tunnel [vxlan]",
	} {
		if !strings.Contains(string(report), line+"\n") {
			t.Errorf("report.txt lacks %q:\n%s", line, report)
		}
	}

	// labrun check: the files pass; one wrong value per file fails naming it.
	run := func(cmd, dir string, extra ...string) (int, string) {
		args := append([]string{cmd, "--no-progress", "--kubeconfig", kc, "--vars", "../../playbooks/cca-identity.testbed.yaml", "--set", "out=" + dir}, extra...)
		return labrun(t, bin, kc, append(args, "../../playbooks/cca-identity.yaml")...)
	}
	check := func(dir string) (int, string) { return run("check", dir) }
	if code, text := check(out); code != 0 {
		t.Fatalf("check of labrun's own files exited %d:\n%s", code, text)
	}
	learner := filepath.Join(t.TempDir(), "learner")
	os.Mkdir(learner, 0o700)
	for _, name := range []string{"nodes.json", "identity.json", "rollout.json", "ipcache.json", "policy.json", "relabel.json", "datapath.json", "report.txt"} {
		b, err := os.ReadFile(filepath.Join(out, name))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(learner, name), b, 0o600)
	}
	edit := func(name string, f func(m map[string]any)) {
		m := readLabJSON(t, learner, name)
		f(m)
		b, _ := json.Marshal(m)
		os.WriteFile(filepath.Join(learner, name), b, 0o600)
	}
	edit("nodes.json", func(m map[string]any) { m["backend_node"] = m["front_node"] })
	edit("identity.json", func(m map[string]any) { m["identity"] = m["identity"].(float64) + 1 })
	edit("rollout.json", func(m map[string]any) { m["before_hash"] = m["after_hash"] })
	edit("ipcache.json", func(m map[string]any) { m["backend_tunnel_endpoint"] = "0.0.0.0" })
	edit("policy.json", func(m map[string]any) { m["policy_map"] = "cilium_policy_v3_00001" })
	edit("relabel.json", func(m map[string]any) { m["before_identity"] = m["after_identity"] })
	edit("datapath.json", func(m map[string]any) { m["k8s_service_host"] = m["kubernetes_cluster_ip"] })
	os.WriteFile(filepath.Join(learner, "report.txt"), bytes.Replace(mustRead(t, filepath.Join(out, "report.txt")), []byte("routing_network=Tunnel [vxlan]"), []byte("routing_network=Native"), 1), 0o600)
	code, text := check(learner)
	if code != 1 {
		t.Fatalf("check of edited files exited %d, want 1:\n%s", code, text)
	}
	wrong := map[string]string{
		"nodes.json":    "nodes.json: backend_node is ",
		"identity.json": "identity.json: identity is ",
		"rollout.json":  "result.file.before_hash != result.data.after_hash",
		"ipcache.json":  "ipcache.json: backend_tunnel_endpoint is \"0.0.0.0\"",
		"policy.json":   "policy.json: policy_map is \"cilium_policy_v3_00001\"",
		"relabel.json":  "result.file.before_identity != result.data.after_identity",
		"datapath.json": "datapath.json: k8s_service_host is ",
		"report.txt":    "report.txt: routing_network=Native, expected Tunnel [vxlan]",
	}
	for _, w := range wrong {
		if !strings.Contains(text, w) {
			t.Errorf("check output lacks %q:\n%s", w, text)
		}
	}
	gradeByTask(t, run, out, learner, wrong)
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
