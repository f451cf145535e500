package runner

import (
	"os/exec"
	"strings"
	"testing"
)

// Validation must work with no cluster: the packages it uses may not link
// client-go (nor the BPF library), so `labrun validate` stays fast and
// cannot reach for a cluster by accident.
func TestValidationDoesNotImportClusterClients(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/labrun/labrun/runner", "github.com/labrun/labrun/syntax", "github.com/labrun/labrun/eval", "github.com/labrun/labrun/actions").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.HasPrefix(dep, "k8s.io/client-go") || strings.HasPrefix(dep, "github.com/cilium/ebpf") {
			t.Errorf("validation depends on %s", dep)
		}
	}
}
