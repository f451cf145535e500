//go:build e2e

package main

import (
	"bytes"
	"testing"

	"github.com/labrun/labrun/internal/heavy/kube/kubetest"
)

// cca-datapath graded under exactly the Roles labrun rbac --mode check
// prints, as a ServiceAccount and not as the cluster's admin: the check
// of the solved lab passes; without any one of the permissions the
// preflight refuses at once naming it, and the check without the
// preflight fails (kubetest.CheckUnderDerivedRoles).
func TestCheckUnderDerivedRoles(t *testing.T) {
	if v := kubetest.ReadVars(t); v.Profile != "single" {
		t.Skipf("test cluster runs profile %q; cca-datapath is the single profile's lab", v.Profile)
	}
	kc := kubetest.Kubeconfig(t)
	out := t.TempDir()
	solve(t, kc, out)
	kubetest.CheckUnderDerivedRoles(t, mainOutput, "../../playbooks/cca-datapath.yaml",
		"--vars", "../../playbooks/cca-datapath.testbed.yaml", "--set", "out="+out)
}

// mainOutput runs labrun in this process (a kubetest.Labrun): a
// successful rbac's output is its stdout alone (the Roles), any other
// run's is stdout and stderr.
func mainOutput(args ...string) (int, string) {
	var stdout, stderr bytes.Buffer
	code := Main(args, &stdout, &stderr)
	if code == 0 && args[0] == "rbac" {
		return code, stdout.String()
	}
	return code, stdout.String() + stderr.String()
}
