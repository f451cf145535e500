//go:build e2e

package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/labrun/labrun/internal/kube/kubetest"
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
	cs, err := kubernetes.NewForConfig(c.Config())
	if err != nil {
		t.Fatal(err)
	}
	exp := int64(600)
	tr, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx, "learner",
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &exp}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cfg := c.Config()
	ca := cfg.CAData
	if len(ca) == 0 && cfg.CAFile != "" {
		if ca, err = os.ReadFile(cfg.CAFile); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	kc := filepath.Join(dir, "learner.kubeconfig")
	os.WriteFile(kc, []byte(fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: %s, certificate-authority-data: %s}}]
users: [{name: learner, user: {token: %s}}]
contexts: [{name: learner, context: {cluster: c, user: learner, namespace: %s}}]
current-context: learner
`, cfg.Host, base64.StdEncoding.EncodeToString(ca), tr.Status.Token, ns)), 0o600)
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
