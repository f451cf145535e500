// Package kubetest holds what the tests against the test cluster share:
// where its kubeconfig and variables are, the connection, and namespaces
// a test creates from a manifest and deletes when it ends, and the Cilium
// agent's API socket. It is imported by tests and the benchmark only.
package kubetest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/labrun/labrun/kube"
)

// Where testbed/up leaves the cluster's kubeconfig and the variables a
// playbook needs to run on it.
const (
	DefaultKubeconfig = "/var/lib/labrun-testbed/kubeconfig"
	VarsFile          = "/var/lib/labrun-testbed/vars.yaml"
)

// Kubeconfig returns the test cluster's kubeconfig: $LABRUN_KUBECONFIG, or
// the testbed's. The test fails when the file is missing.
func Kubeconfig(tb testing.TB) string {
	tb.Helper()
	kc := os.Getenv("LABRUN_KUBECONFIG")
	if kc == "" {
		kc = DefaultKubeconfig
	}
	if _, err := os.Stat(kc); err != nil {
		tb.Fatalf("no test cluster kubeconfig at %s (%v): run make testbed-up (or set LABRUN_KUBECONFIG)", kc, err)
	}
	return kc
}

// Connect connects to the test cluster.
func Connect(tb testing.TB) *kube.Client {
	tb.Helper()
	c, err := kube.Connect(kube.ConnectOptions{Kubeconfig: Kubeconfig(tb)})
	if err != nil {
		tb.Fatalf("%v (run make testbed-up)", err)
	}
	tb.Cleanup(c.Close)
	return c
}

// Vars is the part of the testbed's vars.yaml that tests read.
type Vars struct {
	// BPFFS is the cluster's bpffs as this host sees it (read-only).
	BPFFS string `yaml:"bpffs"`
	// PythonImage is the local image the lab's pods run.
	PythonImage string `yaml:"python_image"`
}

// ReadVars reads the testbed's vars.yaml.
func ReadVars(tb testing.TB) Vars {
	tb.Helper()
	data, err := os.ReadFile(VarsFile)
	if err != nil {
		tb.Fatalf("%v (run make testbed-up)", err)
	}
	var v Vars
	if err := yaml.Unmarshal(data, &v); err != nil {
		tb.Fatalf("%s: %v", VarsFile, err)
	}
	if v.BPFFS == "" {
		tb.Fatalf("%s has no bpffs key: the testbed was started before it exposed its bpffs; run testbed/down && testbed/up", VarsFile)
	}
	if v.PythonImage == "" {
		v.PythonImage = "labrun.local/python:3.11.2"
	}
	return v
}

// ApplyInNamespace applies the objects of manifest, in order, and deletes
// namespace ns, which the manifest creates, when the test ends. what names
// the manifest in errors.
func ApplyInNamespace(ctx context.Context, tb testing.TB, c *kube.Client, ns, what, manifest string) {
	tb.Helper()
	ms, err := kube.DecodeText(what, []byte(manifest))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		c.Delete(context.Background(), kube.ObjectRef{Kind: "Namespace", Name: ns}, kube.DeleteOptions{IgnoreNotFound: true})
	})
	if _, err := c.Apply(ctx, ms, kube.ApplyOptions{}); err != nil {
		tb.Fatal(err)
	}
}

// AgentSocket is the test cluster's Cilium agent API socket as this host
// reaches it. A lab's node has it at /var/run/cilium/cilium.sock; the test
// cluster's is in the agent container's mount namespace, so the path goes
// through the root of the agent process, the only cilium-agent on this
// machine.
func AgentSocket() (string, error) {
	procs, _ := filepath.Glob("/proc/[0-9]*/comm")
	var found []string
	for _, p := range procs {
		if b, err := os.ReadFile(p); err == nil && strings.TrimSpace(string(b)) == "cilium-agent" {
			found = append(found, filepath.Dir(p))
		}
	}
	if len(found) != 1 {
		return "", fmt.Errorf("found %d cilium-agent processes (%v), want the test cluster's one", len(found), found)
	}
	return filepath.Join(found[0], "root/var/run/cilium/cilium.sock"), nil
}
