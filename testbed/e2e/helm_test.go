//go:build e2e

package e2e

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/labrun/labrun/internal/boundary/cluster"
	"github.com/labrun/labrun/internal/heavy/kube/kubetest"
)

const helmPlaybook = "testdata/helm/release.yaml"

// The helm action against the test cluster's API server, with Helm's
// library and a local chart (testdata/helm/greeter): an install, a read,
// an upgrade with --set and a rollback, each asserted by the playbook on
// the release Helm stored and on the ConfigMap the chart made, with
// HELM_MAX_HISTORY=2 (each change, a rollback too, keeps two revisions).
// Then two
// upgrades Helm cannot make fail the run as a broken lab (exit 2, class
// config), not as a wrong answer: one the chart's values schema refuses,
// one whose object the API server refuses. Neither leaves a field
// manager other than helm on the chart's object, nor changes it.
func TestHelmAction(t *testing.T) {
	bin := buildLabrun(t)
	kc := kubetest.Kubeconfig(t)
	c := kubetest.Connect(t)
	// each run installs revision 1 of a release in a namespace of its own
	var namespaces []string
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		for _, ns := range namespaces {
			if _, err := c.Delete(ctx, cluster.ObjectQuery{APIVersion: "v1", Kind: "Namespace", Name: ns}, cluster.DeleteRequest{Wait: true, IgnoreNotFound: true}); err != nil {
				t.Errorf("delete namespace %s: %v", ns, err)
			}
		}
	})
	run := func(ns string, extra ...string) (int, string) {
		args := append([]string{"run", "--no-progress", "--kubeconfig", kc, "--set", "ns=" + ns, "--set", "max_history=2"}, extra...)
		cmd := exec.Command(bin, append(args, helmPlaybook)...)
		// Helm's own setting, which the action follows as the helm
		// command does: a rollback keeps no more revisions than it says
		cmd.Env = append(os.Environ(), "HELM_MAX_HISTORY=2")
		out, err := cmd.CombinedOutput()
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode(), string(out)
		} else if err != nil {
			t.Fatalf("labrun: %v", err)
		}
		return 0, string(out)
	}
	newNamespace := func() string {
		ns := kubetest.NamespaceName("labrun-helm")
		namespaces = append(namespaces, ns)
		return ns
	}
	if code, out := run(newNamespace()); code != 0 {
		t.Fatalf("install, upgrade, read and rollback exited %d:\n%s", code, out)
	}
	for _, tc := range []struct{ name, set, says string }{
		{"values schema", "bad_set=[replicas=many]", "replicas"},
		{"object refused", "bad_set=[tier=not valid!]", "Invalid (422)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ns := newNamespace()
			code, out := run(ns, "--set", tc.set)
			if code != 2 || !strings.Contains(out, "FAIL [10/10] refused (helm)") || !strings.Contains(out, "[config]") || !strings.Contains(out, tc.says) {
				t.Fatalf("an upgrade Helm cannot make exited %d; want 2 with step refused failing as [config], saying %q:\n%s", code, tc.says, out)
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			cm, err := c.Get(ctx, cluster.ObjectQuery{APIVersion: "v1", Kind: "ConfigMap", Namespace: ns, Name: "demo-greeting"})
			if err != nil {
				t.Fatal(err)
			}
			checkOnlyHelmManages(t, cm)
			if data, _ := cm["data"].(map[string]any); data["greeting"] != "hi" {
				t.Errorf("the refused upgrade changed the ConfigMap: data %v", data)
			}
		})
	}
}

// checkOnlyHelmManages fails unless every field manager of obj is helm.
func checkOnlyHelmManages(t *testing.T, obj map[string]any) {
	t.Helper()
	mf, _ := obj["metadata"].(map[string]any)["managedFields"].([]any)
	if len(mf) == 0 {
		t.Fatalf("no managedFields on %v", obj["metadata"])
	}
	for _, m := range mf {
		if mgr := m.(map[string]any)["manager"]; mgr != "helm" {
			t.Errorf("field manager %v on the chart's object; want helm only", mgr)
		}
	}
}
