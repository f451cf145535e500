//go:build e2e

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/labrun/labrun/internal/boundary/cluster"
	"github.com/labrun/labrun/internal/heavy/kube/kubetest"
)

// The main job, end to end: labrun solves cca-datapath on the testbed
// (make testbed-up), twice in a row, and the files hold what Cilium 1.20
// shows. Values that can be read independently are compared with the
// cluster through client-go.

func readJSON(t *testing.T, dir, name string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return m
}

func solve(t *testing.T, kc, out string, extra ...string) {
	t.Helper()
	args := append([]string{"run", "--no-progress", "--kubeconfig", kc,
		"--vars", "../../playbooks/cca-datapath.testbed.yaml", "--set", "out=" + out}, extra...)
	args = append(args, "../../playbooks/cca-datapath.yaml")
	var stdout, stderr bytes.Buffer
	start := time.Now()
	code := Main(args, &stdout, &stderr)
	t.Logf("labrun run took %s", time.Since(start).Round(time.Millisecond))
	if code != 0 {
		t.Fatalf("labrun exited %d\n%s%s", code, stdout.String(), stderr.String())
	}
}

// checkOverlap checks in a run's JSON report that the playbook's parallel
// steps ran their branches at the same time on the cluster: the NodePort
// and ghost sections started while web's old pods were going, holder's
// while the new ones started.
func checkOverlap(t *testing.T, report string) {
	t.Helper()
	var o struct {
		Steps []struct {
			ID      string    `json:"id"`
			Started time.Time `json:"started"`
			Seconds float64   `json:"seconds"`
		} `json:"steps"`
	}
	data, err := os.ReadFile(report)
	if err == nil {
		err = json.Unmarshal(data, &o)
	}
	if err != nil {
		t.Fatalf("report: %v", err)
	}
	type span struct{ start, end time.Time }
	spans := map[string]span{}
	for _, s := range o.Steps {
		spans[s.ID] = span{s.Started, s.Started.Add(time.Duration(s.Seconds * float64(time.Second)))}
	}
	for _, c := range []struct{ wait, beside string }{
		{"web_ready", "apply_web_np"},
		{"web_ready", "apply_ghost"},
		{"scaled_ready", "apply_holder"},
	} {
		w, b := spans[c.wait], spans[c.beside]
		if w.start.IsZero() || b.start.IsZero() {
			t.Errorf("report lacks %s or %s", c.wait, c.beside)
			continue
		}
		if !b.start.Before(w.end) {
			t.Errorf("%s started at %s, after %s ended (%s): the branches did not run at the same time",
				c.beside, b.start.Format(time.StampMilli), c.wait, w.end.Format(time.StampMilli))
		}
	}
}

func TestCCADatapathOnTestbed(t *testing.T) {
	kc := kubetest.Kubeconfig(t)
	out := t.TempDir()
	reports := t.TempDir()
	solve(t, kc, out, "--report", "junit="+filepath.Join(reports, "junit.xml"))
	// A second run on the same cluster (web now at 4 replicas, holder and
	// probe already there) must work too.
	solve(t, kc, out, "--report", "json="+filepath.Join(reports, "report.json"))
	checkOverlap(t, filepath.Join(reports, "report.json"))

	entries, _ := os.ReadDir(out)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	want := []string{".labrun", "ct.json", "ghost.json", "iptables.json", "nodeport.json", "prog.json", "report.txt", "scale.json", "svc.json"}
	if strings.Join(names, " ") != strings.Join(want, " ") {
		t.Errorf("output directory holds %v, want %v", names, want)
	}

	ipt := readJSON(t, out, "iptables.json")
	svc := readJSON(t, out, "svc.json")
	scale := readJSON(t, out, "scale.json")
	ct := readJSON(t, out, "ct.json")
	prog := readJSON(t, out, "prog.json")
	np := readJSON(t, out, "nodeport.json")
	ghost := readJSON(t, out, "ghost.json")

	// Cilium 1.20 with kube-proxy replacement: no Service rules in iptables.
	expect(t, "iptables.kube_svc_lines", ipt["kube_svc_lines"], 0.0)
	expect(t, "iptables.cluster_ip_lines", ipt["cluster_ip_lines"], 0.0)
	if n, _ := ipt["cilium_lines"].(float64); n <= 0 {
		t.Errorf("iptables.cilium_lines = %v, want > 0", ipt["cilium_lines"])
	}
	expect(t, "iptables.kube_proxy_replacement", ipt["kube_proxy_replacement"], "True")
	expect(t, "svc.frontend", svc["frontend"], ipt["cluster_ip"].(string)+":80")
	if n := len(svc["backends"].([]any)); n != 2 {
		t.Errorf("svc.backends has %d entries, want 2", n)
	}
	if n := len(scale["backends"].([]any)); n != 4 {
		t.Errorf("scale.backends has %d entries, want 4", n)
	}
	if n := len(scale["new_backends"].([]any)); n != 2 {
		t.Errorf("scale.new_backends has %d entries, want 2", n)
	}
	// Socket LB: the application sees the ClusterIP, the socket the backend.
	expect(t, "ct.app_peer", ct["app_peer"], svc["frontend"])
	expect(t, "ct.socket_peer", ct["socket_peer"], ct["backend"])
	expect(t, "ct.svc_entries", ct["svc_entries"], 0.0)
	expect(t, "ct.socket_lb_coverage", ct["socket_lb_coverage"], "Full")
	if !contains(scale["backends"].([]any), ct["backend"]) {
		t.Errorf("ct.backend %v is not one of the web backends %v", ct["backend"], scale["backends"])
	}
	expect(t, "prog.program", prog["program"], "cil_from_container")
	expect(t, "prog.attach", prog["attach"], "tcx/ingress")
	expect(t, "prog.tc_filter_lines", prog["tc_filter_lines"], 0.0)
	if !regexp.MustCompile(`^cilium_policy_v3_\d{5}$`).MatchString(prog["policy_map"].(string)) {
		t.Errorf("prog.policy_map = %v", prog["policy_map"])
	}
	expect(t, "nodeport.http_code", np["http_code"], 200.0)
	expect(t, "nodeport.iptables_lines", np["iptables_lines"], 0.0)
	expect(t, "nodeport.listen_sockets", np["listen_sockets"], 0.0)
	expect(t, "ghost.backends", ghost["backends"], 0.0)
	expect(t, "ghost.no_backend_response", ghost["no_backend_response"], "reject")
	expect(t, "ghost.curl_exit", ghost["curl_exit"], 7.0)
	// Refused (curl exit 7), not timed out (exit 28): so the time curl
	// measured is below its own 5 s limit. How fast the reject is belongs
	// to no test.
	if s, ok := ghost["seconds"].(float64); !ok || s <= 0 || s >= 5 {
		t.Errorf("ghost.seconds = %v, want curl's measured time, below its 5 s limit", ghost["seconds"])
	}
	report, err := os.ReadFile(filepath.Join(out, "report.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{"kube_proxy_replacement=True", "socket_lb_coverage=Full", "web_backends=4",
		"holder_backend=" + ct["backend"].(string), "holder_program=cil_from_container", "nodeport_iptables_lines=0", "ghost_no_backend_response=reject"} {
		if !strings.Contains(string(report), line+"\n") {
			t.Errorf("report.txt lacks %q:\n%s", line, report)
		}
	}

	// The same facts read without labrun's engine.
	c := kubetest.Connect(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	web, err := c.Get(ctx, cluster.ObjectQuery{Kind: "Service", Namespace: "cca-dp", Name: "web"})
	if err != nil {
		t.Fatal(err)
	}
	expect(t, "iptables.cluster_ip vs the Service", ipt["cluster_ip"], web["spec"].(map[string]any)["clusterIP"])
	holder, err := c.Get(ctx, cluster.ObjectQuery{Kind: "Pod", Namespace: "cca-dp", Name: "holder"})
	if err != nil {
		t.Fatal(err)
	}
	expect(t, "ct.client vs holder's IP", ct["client"], holder["status"].(map[string]any)["podIP"].(string)+":40404")
	if b, err := os.ReadFile(filepath.Join(reports, "junit.xml")); err != nil || !bytes.Contains(b, []byte(`failures="0"`)) {
		t.Errorf("junit report: %v\n%s", err, b)
	}
}

// labrun check grades a learner's files against the live cluster: the
// files labrun wrote pass, and copies with a wrong value, a string where a
// number belongs, and a missing key fail with messages that say so.
func TestCheckGradesLabFiles(t *testing.T) {
	kc := kubetest.Kubeconfig(t)
	out := t.TempDir()
	solve(t, kc, out)
	check := func(dir string) (int, string) {
		var stdout, stderr bytes.Buffer
		code := Main([]string{"check", "--no-progress", "--kubeconfig", kc,
			"--vars", "../../playbooks/cca-datapath.testbed.yaml", "--set", "out=" + dir,
			"../../playbooks/cca-datapath.yaml"}, &stdout, &stderr)
		return code, stdout.String() + stderr.String()
	}
	if code, text := check(out); code != 0 {
		t.Fatalf("check of labrun's own files exited %d:\n%s", code, text)
	}

	learner := t.TempDir()
	for _, name := range []string{"iptables.json", "svc.json", "scale.json", "ct.json", "prog.json", "nodeport.json", "ghost.json", "report.txt"} {
		b, err := os.ReadFile(filepath.Join(out, name))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(learner, name), b, 0o644)
	}
	edit := func(name string, f func(m map[string]any)) {
		m := readJSON(t, learner, name)
		f(m)
		b, _ := json.Marshal(m)
		os.WriteFile(filepath.Join(learner, name), b, 0o644)
	}
	edit("svc.json", func(m map[string]any) { m["service_id"] = m["service_id"].(float64) + 1000 })
	edit("iptables.json", func(m map[string]any) { m["cilium_lines"] = "37" })
	edit("ct.json", func(m map[string]any) { delete(m, "backend") })
	code, text := check(learner)
	if code != 1 {
		t.Fatalf("check of edited files exited %d, want 1:\n%s", code, text)
	}
	for _, want := range []string{
		"svc.json: service_id is ",
		`iptables.json: cilium_lines is a string "37", expected a number`,
		`ct.json: key "backend" is missing (hint: the destination of the TCP OUT entry with :40404 in cilium-dbg bpf ct list global)`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("check output lacks %q:\n%s", want, text)
		}
	}
}

// cca-datapath graded task by task: after one solve, a learner's
// directory with the files of tasks 1 to N only, for every N, passes
// check --task N (the tasks after it not started), check --upto N and a
// plain check (tasks 1 to N passed, the rest not started). The checks read
// the cluster as the solve left it, as a learner's would.
func TestCCADatapathCheckByTask(t *testing.T) {
	kc := kubetest.Kubeconfig(t)
	out := t.TempDir()
	flags := []string{"--kubeconfig", kc, "--vars", "../../playbooks/cca-datapath.testbed.yaml"}
	playbook := "../../playbooks/cca-datapath.yaml"
	code, text, rep := labrunReport(t, append(append([]string{"run"}, flags...), "--set", "out="+out, playbook))
	if code != 0 {
		t.Fatalf("solve exited %d:\n%s", code, text)
	}
	if len(rep.Tasks) != 8 {
		t.Fatalf("the solve's report has %d tasks, want the lab's 8", len(rep.Tasks))
	}
	checkEveryPartialSolve(t, rep, out, flags, playbook)
}

// When holder reconnects to another backend (here: its backend pod is
// deleted), a resumed run re-reads the state: ct.json is made again and
// report.txt names the new backend.
func TestHolderReconnectRemakesCT(t *testing.T) {
	kc := kubetest.Kubeconfig(t)
	out := t.TempDir()
	solve(t, kc, out)
	before := readJSON(t, out, "ct.json")
	c := kubetest.Connect(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, err := c.Delete(ctx, cluster.ObjectQuery{Kind: "Pod", Namespace: "cca-dp", Name: before["backend_pod"].(string)}, cluster.DeleteRequest{Wait: true}); err != nil {
		t.Fatal(err)
	}
	solve(t, kc, out, "--from", "reread")
	after := readJSON(t, out, "ct.json")
	if after["backend"] == before["backend"] || after["backend_pod"] == before["backend_pod"] {
		t.Errorf("ct.json still names the deleted backend: before %v, after %v", before, after)
	}
	expect(t, "ct.socket_peer after reconnect", after["socket_peer"], after["backend"])
	report, _ := os.ReadFile(filepath.Join(out, "report.txt"))
	if !strings.Contains(string(report), "holder_backend="+after["backend"].(string)+"\n") {
		t.Errorf("report.txt does not name the new backend %v:\n%s", after["backend"], report)
	}
}

// The cluster examples run on the test cluster with its local image, and
// with examples/cluster/testbed/NAME.yaml as a vars file when there is one.
// Each checks what it saw with its own assertions; each must also write
// its file.
func TestClusterExamplesOnTestbed(t *testing.T) {
	kc := kubetest.Kubeconfig(t)
	files, err := filepath.Glob("../../examples/cluster/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no cluster examples: %v", err)
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".yaml"), func(t *testing.T) {
			out := t.TempDir()
			args := []string{"run", "--no-progress", "--kubeconfig", kc, "--set", "image=labrun.local/python:3.11.2", "--set", "out=" + out}
			if vars := filepath.Join(filepath.Dir(f), "testbed", filepath.Base(f)); fileExists(vars) {
				args = append(args, "--vars", vars)
			}
			var stdout, stderr bytes.Buffer
			if code := Main(append(args, f), &stdout, &stderr); code != 0 {
				t.Fatalf("exit %d\n%s%s", code, stdout.String(), stderr.String())
			}
			if len(labFiles(t, out)) == 0 {
				t.Errorf("wrote nothing into its output directory:\n%s", stdout.String())
			}
		})
	}
}

func expect(t *testing.T, what string, got, want any) {
	t.Helper()
	if got != want {
		t.Errorf("%s = %#v, want %#v", what, got, want)
	}
}

func contains(list []any, x any) bool {
	for _, e := range list {
		if e == x {
			return true
		}
	}
	return false
}
