//go:build e2e

package e2e

// The cca-policy lab on the single-node profile: labrun test --protocol
// from a cluster where the lab was never solved (every task fails there,
// then the lab solves, its files pass check and every change to a value
// fails the check but the counters it declares loose); every file's
// values are checked against the cluster read here with client-go (the
// identities of the CiliumEndpoints) and against the lab's own
// relations; a second solve starts from what the first left; and check
// names the wrong value of files with one wrong value each, task by task
// as well.

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/labrun/labrun/internal/boundary/cluster"
	"github.com/labrun/labrun/internal/heavy/kube/kubetest"
	"github.com/labrun/labrun/internal/leaf/k8sobj"
)

var policyFiles = []string{"identities.json", "policy.json", "ipcache.json", "traffic.json", "counters.json"}

func TestSingleCCAPolicyLab(t *testing.T) {
	if v := kubetest.ReadVars(t); v.Profile != "single" {
		t.Skipf("test cluster runs profile %q; cca-policy is the single profile's lab", v.Profile)
	}
	kc := kubetest.Kubeconfig(t)
	bin := buildLabrun(t)
	c := kubetest.Connect(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	if _, err := c.Delete(ctx, cluster.ObjectQuery{Kind: "Namespace", Name: "cca-policy"}, cluster.DeleteRequest{Wait: true, IgnoreNotFound: true}); err != nil {
		t.Fatalf("deleting namespace cca-policy: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		c.Delete(ctx, cluster.ObjectQuery{Kind: "Namespace", Name: "cca-policy"}, cluster.DeleteRequest{IgnoreNotFound: true})
	})
	out := filepath.Join(t.TempDir(), "out")
	run := func(cmd, dir string, extra ...string) (int, string) {
		args := append([]string{cmd, "--no-progress", "--kubeconfig", kc, "--vars", "../../playbooks/cca-policy.testbed.yaml", "--set", "out=" + dir}, extra...)
		return labrun(t, bin, kc, append(args, "../../playbooks/cca-policy.yaml")...)
	}

	// 1. labrun test --protocol: the untouched lab fails every task; the
	// solved one passes; every change fails but the loose counters.
	code, text := run("test", out, "--protocol")
	if code != 0 {
		t.Fatalf("labrun test --protocol exited %d:\n%s", code, text)
	}
	if !strings.Contains(text, "labrun test: protocol: 5 tasks failed on the untouched lab and passed once solved") {
		t.Errorf("not every task failed on the untouched lab:\n%s", text)
	}
	summary := regexp.MustCompile(`labrun test: (\d+) changes to (\d+) graded files: (\d+) rejected naming the value, 2 declared loose, 0 survived, 0 rejected naming another value`).FindStringSubmatch(text)
	if summary == nil {
		t.Errorf("no summary with the 2 loose counters and no survivor:\n%s", text)
	}

	// 2. The files against the cluster.
	list := func(q cluster.ObjectQuery) []map[string]any {
		objs, err := c.List(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		return objs
	}
	ident := map[string]int64{}
	ips := map[string]string{}
	var apiEndpoint int64
	for _, o := range list(cluster.ObjectQuery{APIVersion: "cilium.io/v2", Kind: "CiliumEndpoint", Namespace: "cca-policy"}) {
		name := k8sobj.String(o, "metadata", "name")
		if strings.HasPrefix(name, "api-") {
			name, apiEndpoint = "api", k8sobj.Int(o, "status", "id")
		}
		ident[name] = k8sobj.Int(o, "status", "identity", "id")
		addrs, _ := o["status"].(map[string]any)["networking"].(map[string]any)["addressing"].([]any)
		if len(addrs) > 0 {
			ips[name], _ = addrs[0].(map[string]any)["ipv4"].(string)
		}
	}
	if len(ident) != 3 || ident["api"] == 0 || ident["frontend"] == 0 || ident["intruder"] == 0 {
		t.Fatalf("CiliumEndpoints of cca-policy: %v", ident)
	}
	ids := readLabJSON(t, out, "identities.json")
	wantSame(t, ids, "identities.json", "api_endpoint", apiEndpoint)
	for _, who := range []string{"api", "frontend", "intruder"} {
		wantSame(t, ids, "identities.json", who+"_identity", ident[who])
	}
	pol := readLabJSON(t, out, "policy.json")
	if got := strs(pol["ingress_allowed"]); !slices.Equal(got, []string{itoa(ident["frontend"]) + " 8080/TCP"}) {
		t.Errorf("policy.json: ingress_allowed %v, want only the frontend's identity on 8080/TCP", got)
	}
	wantSame(t, pol, "policy.json", "intruder_allowed", false)
	ipc := readLabJSON(t, out, "ipcache.json")
	for _, who := range []string{"api", "frontend", "intruder"} {
		m, _ := ipc[who].(map[string]any)
		wantSame(t, m, "ipcache.json "+who, "ip", ips[who])
		wantSame(t, m, "ipcache.json "+who, "identity", ident[who])
	}
	tr := readLabJSON(t, out, "traffic.json")
	wantSame(t, tr, "traffic.json", "frontend_http_code", 200)
	wantSame(t, tr, "traffic.json", "intruder_curl_exit", 28)
	wantSame(t, tr, "traffic.json", "intruder_dropped", true)
	wantSame(t, tr, "traffic.json", "frontend_dropped", false)
	wantSame(t, tr, "traffic.json", "drop_reason", "Policy denied")
	wantSame(t, tr, "traffic.json", "drop_src_identity", ident["intruder"])
	wantSame(t, tr, "traffic.json", "drop_dst", ips["api"]+":8080")
	cnt := readLabJSON(t, out, "counters.json")
	wantSame(t, cnt, "counters.json", "entry", "Allow Ingress "+itoa(ident["frontend"])+" 8080/TCP")
	if cnt["packets_after"].(float64) <= cnt["packets_before"].(float64) || cnt["counted"] != true {
		t.Errorf("counters.json: %v", cnt)
	}

	// 3. A second solve starts from what the first left.
	if code, text := run("run", out); code != 0 {
		t.Fatalf("second solve exited %d:\n%s", code, text)
	}

	// 4. One wrong value per file: check names each, task by task too.
	learner := filepath.Join(t.TempDir(), "learner")
	os.Mkdir(learner, 0o700)
	for _, name := range policyFiles {
		os.WriteFile(filepath.Join(learner, name), mustRead(t, filepath.Join(out, name)), 0o600)
	}
	edit := func(name string, f func(m map[string]any)) {
		m := readLabJSON(t, learner, name)
		f(m)
		b, _ := json.Marshal(m)
		os.WriteFile(filepath.Join(learner, name), b, 0o600)
	}
	edit("identities.json", func(m map[string]any) { m["intruder_identity"] = m["frontend_identity"] })
	edit("policy.json", func(m map[string]any) { m["intruder_allowed"] = true })
	edit("ipcache.json", func(m map[string]any) {
		m["api"].(map[string]any)["identity"] = m["frontend"].(map[string]any)["identity"]
	})
	edit("traffic.json", func(m map[string]any) { m["drop_reason"] = "Stale or unroutable IP" })
	edit("counters.json", func(m map[string]any) { m["counted"] = false })
	wrong := map[string]string{
		"identities.json": "identities.json: intruder_identity is ",
		"policy.json":     "policy.json: intruder_allowed is true, expected false",
		"ipcache.json":    "ipcache.json: api.identity is ",
		"traffic.json":    `traffic.json: drop_reason is "Stale or unroutable IP", expected "Policy denied"`,
		"counters.json":   "counters.json: counted is false, expected true",
	}
	code, text = run("check", learner)
	if code != 1 {
		t.Fatalf("check of edited files exited %d, want 1:\n%s", code, text)
	}
	for _, w := range wrong {
		if !strings.Contains(text, w) {
			t.Errorf("check output lacks %q:\n%s", w, text)
		}
	}
	gradeByTask(t, run, out, learner, wrong)
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
