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

	"github.com/labrun/labrun/internal/heavy/kube/kubetest"
)

// A learner's service account that RBAC grants nothing: labrun, run with
// its token, fails a read and a change as forbidden, exit 2, the read at
// once (a refusal is not tried again), and the JSON report says forbidden
// for the step and the run; docs/exit-codes.md.
func TestForbiddenOnTestbed(t *testing.T) {
	c := kubetest.Connect(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ns := kubetest.NamespaceName("e2e-forbidden")
	kubetest.ApplyInNamespace(ctx, t, c, ns, "learner", fmt.Sprintf(`apiVersion: v1
kind: Namespace
metadata: {name: %s}
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: learner, namespace: %s}
`, ns, ns))
	dir := t.TempDir()
	kc := kubetest.ServiceAccountKubeconfig(ctx, t, c, ns, "learner")
	for _, tc := range []struct{ mode, step string }{
		{"check", "get: {kind: Pod}\n    timeout: 2m"},
		{"run", "scale: {kind: Deployment, name: web, replicas: 2}"},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			pb := filepath.Join(dir, tc.mode+".yaml")
			report := filepath.Join(dir, tc.mode+".json")
			os.WriteFile(pb, []byte("name: denied\nsteps:\n  - id: s\n    "+tc.step+"\n"), 0o644)
			var stdout, stderr bytes.Buffer
			start := time.Now()
			code := Main([]string{tc.mode, "--no-progress", "--kubeconfig", kc, "--report", "json=" + report, pb}, &stdout, &stderr)
			out := stdout.String() + stderr.String()
			if code != exitInvalid {
				t.Fatalf("exit %d, want %d (forbidden):\n%s", code, exitInvalid, out)
			}
			if took := time.Since(start); took > 30*time.Second {
				t.Errorf("took %s: the refusal was tried again", took)
			}
			if !strings.Contains(out, "FAIL [1/1]") {
				return // refused before the steps ran (a preflight of labrun's permissions)
			}
			if !strings.Contains(out, "[forbidden]") || !strings.Contains(out, "Forbidden (403)") {
				t.Errorf("the step's failure is not shown forbidden:\n%s", out)
			}
			var doc struct {
				Class string `json:"class"`
				Steps []struct {
					Class    string `json:"class"`
					Attempts int    `json:"attempts"`
				} `json:"steps"`
			}
			b, err := os.ReadFile(report)
			if err != nil || json.Unmarshal(b, &doc) != nil || len(doc.Steps) != 1 {
				t.Fatalf("report: %v\n%s", err, b)
			}
			if doc.Class != "forbidden" || doc.Steps[0].Class != "forbidden" || doc.Steps[0].Attempts != 1 {
				t.Errorf("report: run %q, step %q after %d attempts; want forbidden, forbidden after 1", doc.Class, doc.Steps[0].Class, doc.Steps[0].Attempts)
			}
		})
	}
}
