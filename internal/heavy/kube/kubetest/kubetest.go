// Package kubetest holds what the tests against the test cluster share:
// where its kubeconfig and variables are, the connection, namespaces a
// test creates from a manifest and deletes when it ends, waits for the
// states a test needs before it starts (pods ready, a rollout done, a
// Service's endpoints), and the Cilium agent's API socket. It is imported
// by tests and the benchmark only.
package kubetest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/labrun/labrun/internal/boundary/cluster"
	"github.com/labrun/labrun/internal/heavy/kube"
	"github.com/labrun/labrun/internal/leaf/k8sobj"
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
	// Profile is the running profile: single, tunnel or native
	// (testbed/README.md); empty from a testbed older than profiles.
	Profile string `yaml:"profile"`
	// BPFFS is node 1's bpffs as this host sees it (read-only).
	BPFFS string `yaml:"bpffs"`
	// NodeName and NodeIP are node 1's name and InternalIP.
	NodeName string `yaml:"node_name"`
	NodeIP   string `yaml:"node_ip"`
	// Node2* are node 2's, on the two-node profiles (empty otherwise).
	Node2Name  string `yaml:"node2_name"`
	Node2IP    string `yaml:"node2_ip"`
	Node2BPFFS string `yaml:"node2_bpffs"`
	// OutsideIP is the address of the host, the client outside the
	// cluster (outside-exec), on the underlay.
	OutsideIP string `yaml:"outside_ip"`
	// CiliumChart is the path of Cilium's Helm chart (release "cilium").
	CiliumChart string `yaml:"cilium_chart"`
	// PythonImage and CurlImage are local images for test pods.
	PythonImage string `yaml:"python_image"`
	CurlImage   string `yaml:"curl_image"`
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
	if v.CurlImage == "" {
		v.CurlImage = "labrun.local/curl:7.88.1"
	}
	if v.Profile == "" {
		v.Profile = "single"
	}
	return v
}

// NamespaceName is a name for a test's throwaway namespace: prefix and a
// number that differs between runs, so a namespace still terminating from
// an earlier run is never reused.
func NamespaceName(prefix string) string {
	return fmt.Sprintf("%s-%d", prefix, time.Now().UnixNano()%100000)
}

// ApplyInNamespace applies the objects of manifest, in order, and deletes
// namespace ns, which the manifest creates, when the test ends. what names
// the manifest in errors.
func ApplyInNamespace(ctx context.Context, tb testing.TB, c *kube.Client, ns, what, manifest string) {
	tb.Helper()
	tb.Cleanup(func() {
		c.Delete(context.Background(), cluster.ObjectQuery{Kind: "Namespace", Name: ns}, cluster.DeleteRequest{IgnoreNotFound: true})
	})
	if _, err := c.Apply(ctx, []cluster.ManifestSource{{Text: manifest, Label: what}}, cluster.ApplyRequest{}); err != nil {
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

// Conditions for the waits tests do most, over the objects kube.Client.Wait
// passes them, with kubectl's rules (package k8sobj).

// AllPodsReady holds when at least min pods exist and all are Ready. min
// below 1 is taken as 1, since "all of no pods" is never what a test means.
func AllPodsReady(min int) func([]map[string]any) (bool, error) {
	min = max(min, 1)
	return func(objs []map[string]any) (bool, error) {
		if len(objs) < min {
			return false, nil
		}
		for _, p := range objs {
			if !k8sobj.PodReady(p) {
				return false, nil
			}
		}
		return true, nil
	}
}

// AllRolledOut holds when at least one object exists and every one has
// completed its rollout (see k8sobj.RolloutComplete).
func AllRolledOut(objs []map[string]any) (bool, error) {
	if len(objs) == 0 {
		return false, nil
	}
	for _, o := range objs {
		ok, err := k8sobj.RolloutComplete(o)
		if err != nil || !ok {
			return false, err
		}
	}
	return true, nil
}

// WaitPodsReady waits until at least min pods match selector in namespace
// and all of them are Ready.
func WaitPodsReady(ctx context.Context, c *kube.Client, namespace, selector string, min int) ([]map[string]any, error) {
	return c.Wait(ctx, cluster.ObjectQuery{APIVersion: "v1", Kind: "Pod", Namespace: namespace, Selector: selector}, AllPodsReady(min), nil)
}

// WaitRollout waits until a Deployment, DaemonSet or StatefulSet has rolled
// out; it may not exist yet when the wait starts.
func WaitRollout(ctx context.Context, c *kube.Client, q cluster.ObjectQuery) (map[string]any, error) {
	objs, err := c.Wait(ctx, q, AllRolledOut, nil)
	if err != nil {
		return nil, err
	}
	return objs[0], nil
}

// WaitServiceEndpoints waits until a Service has at least min ready
// endpoint addresses and returns them.
func WaitServiceEndpoints(ctx context.Context, c *kube.Client, namespace, service string, min int) ([]string, error) {
	min = max(min, 1)
	objs, err := c.Wait(ctx, cluster.ObjectQuery{
		APIVersion: "discovery.k8s.io/v1", Kind: "EndpointSlice", Namespace: namespace,
		Selector: "kubernetes.io/service-name=" + service,
	}, func(objs []map[string]any) (bool, error) {
		return len(k8sobj.ReadyAddresses(objs)) >= min, nil
	}, nil)
	if err != nil {
		return nil, err
	}
	return k8sobj.ReadyAddresses(objs), nil
}
