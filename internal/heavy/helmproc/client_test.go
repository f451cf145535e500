package helmproc

import (
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/labrun/labrun/internal/boundary/cluster"
)

// The real labrun-helm, built, without a cluster: a request is answered
// across the pipe, and a connection it cannot make comes back as a
// *cluster.HelmConnectError naming the kubeconfig.
func TestClientWithLabrunHelm(t *testing.T) {
	bin := filepath.Join(t.TempDir(), Binary)
	if out, err := exec.Command("go", "build", "-o", bin, "../../../cmd/labrun-helm").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	missing := filepath.Join(t.TempDir(), "no-kubeconfig")
	c, err := Start(bin, Options{Kubeconfig: missing})
	if err != nil {
		t.Fatal(err)
	}
	for range 2 { // the same process answers again
		_, err = c.Release(context.Background(), cluster.HelmRequest{Release: "cilium", Namespace: "kube-system"})
		var ce *cluster.HelmConnectError
		if !errors.As(err, &ce) || !strings.Contains(err.Error(), missing) {
			t.Fatalf("got %v (%T); want a HelmConnectError naming %s", err, err, missing)
		}
	}
}

// A labrun-helm that stops fails the requests waiting on it, and every
// later one, saying so.
func TestClientProcessStopped(t *testing.T) {
	c, err := Start("/bin/false", Options{})
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := c.Release(context.Background(), cluster.HelmRequest{Release: "r"}); err == nil || !strings.Contains(err.Error(), Binary+" stopped") {
			t.Fatalf("got %v; want labrun-helm stopped", err)
		}
	}
}
