//go:build e2e

package e2e

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/labrun/labrun/internal/heavy/kube/kubetest"
)

// The two-node labs graded under exactly the Roles labrun rbac --mode
// check prints, as a ServiceAccount: each solved once as the admin, then
// checked as the account; without any one permission the preflight
// refuses naming it and the check without it fails
// (kubetest.CheckUnderDerivedRoles). cca-datapath's is
// cmd/labrun's TestCheckUnderDerivedRoles.
func TestTunnelLabsUnderDerivedRoles(t *testing.T) {
	twoNodes(t, "tunnel")
	kc := kubetest.Kubeconfig(t)
	bin := buildLabrun(t)
	run := func(args ...string) (int, string) {
		var stdout, stderr bytes.Buffer
		cmd := exec.Command(bin, args...)
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode(), stdout.String() + stderr.String()
		} else if err != nil {
			t.Fatalf("labrun %v: %v", args, err)
		}
		if args[0] == "rbac" {
			return 0, stdout.String()
		}
		return 0, stdout.String() + stderr.String()
	}
	for _, lab := range []string{"cca-identity", "cca-services"} {
		t.Run(lab, func(t *testing.T) {
			playbook := filepath.Join("../../playbooks", lab+".yaml")
			flags := []string{"--vars", filepath.Join("../../playbooks", lab+".testbed.yaml"), "--set", "out=" + t.TempDir()}
			if lab == "cca-identity" {
				t.Cleanup(func() {
					if code, text := run("run", "--no-progress", "--kubeconfig", kc, "../../playbooks/cca-identity/cleanup.yaml"); code != 0 {
						t.Errorf("cleanup exited %d:\n%s", code, text)
					}
				})
			}
			if code, text := run(append(append([]string{"run", "--no-progress", "--kubeconfig", kc}, flags...), playbook)...); code != 0 {
				t.Fatalf("solve exited %d:\n%s", code, text)
			}
			kubetest.CheckUnderDerivedRoles(t, run, playbook, flags...)
		})
	}
}
