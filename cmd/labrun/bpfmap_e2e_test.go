//go:build e2e

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/labrun/labrun/internal/boundary/cluster"
	"github.com/labrun/labrun/internal/heavy/kube/kubetest"
)

// The bpfmap action through labrun's command on the testbed: a tiny
// playbook scales a Deployment and polls the services map with until
// until the Service's frontend has one active backend slot per replica.
// labrun runs on the host and reads the testbed's bpffs at the path the
// testbed exposes (vars.yaml key bpffs).

const bpfmapUntilPlaybook = `name: bpfmap-until
vars:
  bpffs: /sys/fs/bpf
  namespace: default
  replicas: 3
  out: /tmp/labrun-bpfmap-until
outputDir: ${{ vars.out }}
steps:
  - id: svc
    get: {kind: Service, namespace: '${{ vars.namespace }}', name: web}
  - id: fe
    compute:
      address: '${{ string(steps.svc.object.spec.clusterIP) + ":80/TCP" }}'
  - id: scale
    scale: {kind: Deployment, namespace: '${{ vars.namespace }}', name: web, replicas: '${{ vars.replicas }}'}
  - id: slots
    bpfmap: {map: services, root: '${{ vars.bpffs }}'}
    until: result.services.Has(steps.fe.address) && len(result.services.Find(steps.fe.address).ActiveBackends()) == vars.replicas
    timeout: 90s
    interval: 100ms
  - id: save
    write:
      path: slots.json
      json:
        frontend: ${{ steps.fe.address }}
        count: ${{ steps.slots.services.Find(steps.fe.address).count }}
        backends: ${{ steps.slots.services.Find(steps.fe.address).ActiveBackends() }}
`

func TestBpfmapActionUntilSlots(t *testing.T) {
	kc := kubetest.Kubeconfig(t)
	vars := kubetest.ReadVars(t)
	c := kubetest.Connect(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	ns := kubetest.NamespaceName("e2e-bpfmap-cli")
	web, err := os.ReadFile("../../testbed/e2e/testdata/web.yaml")
	if err != nil {
		t.Fatal(err)
	}
	kubetest.ApplyInNamespace(ctx, t, c, ns, "bpfmap until", strings.NewReplacer("NS", ns, "IMAGE", vars.PythonImage).Replace(string(web)))
	wctx, wcancel := context.WithTimeout(ctx, 2*time.Minute)
	defer wcancel()
	if _, err := kubetest.WaitServiceEndpoints(wctx, c, ns, "web", 2); err != nil {
		t.Fatalf("waiting for 2 ready endpoints of Service web: %v", err)
	}

	dir := t.TempDir()
	pb := filepath.Join(dir, "bpfmap-until.yaml")
	if err := os.WriteFile(pb, []byte(bpfmapUntilPlaybook), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	rep := filepath.Join(dir, "report.json")
	var stdout, stderr bytes.Buffer
	start := time.Now()
	code := Main([]string{"run", "--no-progress", "--kubeconfig", kc, "--set", "bpffs=" + vars.BPFFS,
		"--set", "namespace=" + ns, "--set", "replicas=3", "--set", "out=" + out, "--report", "json=" + rep, pb}, &stdout, &stderr)
	t.Logf("labrun run took %s", time.Since(start).Round(time.Millisecond))
	if code != 0 {
		t.Fatalf("labrun exited %d\n%s%s", code, stdout.String(), stderr.String())
	}

	// The until step polled: right after the scale the third pod cannot
	// be Ready yet (it has to be scheduled, started and probed), so the
	// first read sees 2 slots and the step has to read again.
	var report struct {
		Steps []struct {
			ID       string  `json:"id"`
			Status   string  `json:"status"`
			Attempts int     `json:"attempts"`
			Seconds  float64 `json:"seconds"`
		} `json:"steps"`
	}
	b, err := os.ReadFile(rep)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &report); err != nil {
		t.Fatal(err)
	}
	polled := false
	for _, s := range report.Steps {
		if s.ID == "slots" {
			polled = true
			t.Logf("step slots: %s after %d reads in %.2fs", s.Status, s.Attempts, s.Seconds)
			if s.Status != "passed" || s.Attempts < 2 {
				t.Errorf("step slots: status %s after %d reads; want passed after more than one read", s.Status, s.Attempts)
			}
		}
	}
	if !polled {
		t.Fatalf("no step slots in the report:\n%s", b)
	}

	// What labrun wrote is what the cluster says: 3 slots, the 3 ready
	// endpoints.
	got := readJSON(t, out, "slots.json")
	svc, err := c.Get(ctx, cluster.ObjectQuery{Kind: "Service", Namespace: ns, Name: "web"})
	if err != nil {
		t.Fatal(err)
	}
	expect(t, "slots.frontend", got["frontend"], svc["spec"].(map[string]any)["clusterIP"].(string)+":80/TCP")
	expect(t, "slots.count", got["count"], 3.0)
	eps, err := kubetest.WaitServiceEndpoints(wctx, c, ns, "web", 3)
	if err != nil {
		t.Fatalf("waiting for 3 ready endpoints of Service web: %v", err)
	}
	var want, backends []string
	for _, ip := range eps {
		want = append(want, ip+":8080")
	}
	for _, b := range got["backends"].([]any) {
		backends = append(backends, b.(string))
	}
	slices.Sort(want)
	slices.Sort(backends)
	if !slices.Equal(backends, want) {
		t.Errorf("slots.backends %v, want the ready endpoints %v", backends, want)
	}
	t.Logf("%s: %v", got["frontend"], backends)
}
