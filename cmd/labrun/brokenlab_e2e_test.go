//go:build e2e

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/labrun/labrun/internal/boundary/cluster"
	"github.com/labrun/labrun/internal/heavy/kube/kubetest"
)

// A lab whose manifest does not fit its kind's schema is a broken lab:
// labrun run exits 2 with the step failed as config, at the value in the
// playbook, not 3 ("the cluster did not answer") for the API server's
// 500 "failed to create typed patch object". Both ways to it, on the
// test cluster's API server: a lone ${{ vars.port }} in a Deployment's
// container command, which validate refuses before anything is sent
// (Kubernetes' schema is labrun's), and the same for an object of a CRD
// the cluster has and labrun does not (installed beside the lab), which
// the API server refuses: issue 41, item 4.
func TestBrokenManifestIsConfigOnTestbed(t *testing.T) {
	c := kubetest.Connect(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	v := kubetest.ReadVars(t)
	ns := kubetest.NamespaceName("e2e-broken")
	group := fmt.Sprintf("%s.e2e.labrun.io", ns)
	t.Cleanup(func() {
		c.Delete(context.Background(), cluster.ObjectQuery{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition", Name: "gadgets." + group}, cluster.DeleteRequest{IgnoreNotFound: true})
	})
	kubetest.ApplyInNamespace(ctx, t, c, ns, "broken lab", fmt.Sprintf(`apiVersion: v1
kind: Namespace
metadata: {name: %[1]s}
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gadgets.%[2]s}
spec:
  group: %[2]s
  scope: Namespaced
  names: {plural: gadgets, singular: gadget, kind: Gadget}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              command: {type: array, items: {type: string}}
`, ns, group))
	dir := t.TempDir()
	for _, tc := range []struct {
		name, object, at string
		sent             bool // the object reached the API server, which refused it
	}{
		{"deployment", `apiVersion: apps/v1
          kind: Deployment
          metadata: {name: web}
          spec:
            selector: {matchLabels: {app: web}}
            template:
              metadata: {labels: {app: web}}
              spec:
                containers:
                  - name: web
                    image: ` + v.PythonImage + `
                    command: [python3, -m, http.server, "${{ vars.port }}"]`,
			`p.yaml:21:62: Deployment web: spec.template.spec.containers[0].command[3]: expected string, got int (${{ vars.port }})`, false},
		{"crd", `apiVersion: ` + group + `/v1
          kind: Gadget
          metadata: {name: g}
          spec:
            command: [serve, "${{ vars.port }}"]`,
			`p.yaml:14:30: the API server refused Gadget g for its shape: spec.command[1]: expected string, got 8080`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pb := filepath.Join(dir, tc.name, "p.yaml")
			report := filepath.Join(dir, tc.name, "report.json")
			os.MkdirAll(filepath.Dir(pb), 0o755)
			os.WriteFile(pb, []byte(`name: broken
vars:
  port: 8080
  ns: `+ns+`
steps:
  - id: apply
    apply:
      namespace: "${{ vars.ns }}"
      objects:
        - `+tc.object+"\n"), 0o644)
			var stdout, stderr bytes.Buffer
			code := Main([]string{"run", "--no-progress", "--kubeconfig", kubetest.Kubeconfig(t), "--report", "json=" + report, pb}, &stdout, &stderr)
			out := stdout.String() + stderr.String()
			t.Logf("exit %d:\n%s", code, out)
			if code != exitInvalid {
				t.Fatalf("exit %d, want %d (a broken lab)", code, exitInvalid)
			}
			if !strings.Contains(out, tc.at) {
				t.Errorf("the failure is not at the value in the playbook: want %q", tc.at)
			}
			if strings.Contains(out, "transport") || strings.Contains(out, "did not answer") {
				t.Errorf("the failure is taken for the cluster's")
			}
			if !tc.sent {
				return // refused before the run, as by validate: no report
			}
			var r struct {
				Class string `json:"class"`
				Steps []struct {
					Class string `json:"class"`
				} `json:"steps"`
			}
			data, err := os.ReadFile(report)
			if err == nil {
				err = json.Unmarshal(data, &r)
			}
			if err != nil || r.Class != "config" || len(r.Steps) != 1 || r.Steps[0].Class != "config" {
				t.Errorf("report %s: %v; want the step and the run config", data, err)
			}
		})
	}
}
