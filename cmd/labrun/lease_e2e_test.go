//go:build e2e

package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/labrun/labrun/internal/heavy/kube/kubetest"
)

// Two labrun processes against one namespace do not interleave, on the
// test cluster's API server. A holds the namespace's Lease while its
// step blocks on a FIFO; B, started then, says it waits for the Lease
// naming A's pid, and has run none of its steps; C, with --lock-timeout
// 1s, fails with exit 4 naming A. Once the test lets A's step end, A
// releases the Lease and B runs. A run interrupted with SIGINT releases
// it too: a run with --lock-timeout 1s right after each takes it at
// once (a Lease left held would make it wait LeaseDuration, 30 s).
// Every wait is on a line the processes print: no sleep.
func TestLeaseBetweenProcesses(t *testing.T) {
	kc := kubetest.Kubeconfig(t)
	ns := kubetest.NamespaceName("e2e-lease")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	kubetest.ApplyInNamespace(ctx, t, kubetest.Connect(t), ns, "the lease's namespace",
		"apiVersion: v1\nkind: Namespace\nmetadata: {name: "+ns+"}\n")
	gate, gated := fifoPlaybook(t, `name: gated
vars: {ns: x, gate: x}
steps:
  - id: look
    get: {kind: ConfigMap, namespace: "${{ vars.ns }}"}
  - id: gate
    run: {argv: [cat, "${{ vars.gate }}"]}
`)
	quick := filepath.Join(t.TempDir(), "quick.yaml")
	if err := os.WriteFile(quick, []byte("name: quick\nvars: {ns: x, gate: x}\nsteps:\n  - id: look\n    get: {kind: ConfigMap, namespace: \"${{ vars.ns }}\"}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	args := func(pb string, extra ...string) []string {
		return append(append([]string{"run", "-v", "--no-progress", "--kubeconfig", kc, "--set", "ns=" + ns, "--set", "gate=" + gate}, extra...), pb)
	}
	open := func(out *lockedBuffer) { // lets the gate step of a run end
		t.Helper()
		if err := os.WriteFile(gate, []byte("go\n"), 0o600); err != nil {
			t.Fatalf("%v\n%s", err, out.String())
		}
	}
	await := func(name string, out *lockedBuffer, text string) {
		t.Helper()
		if !out.waitFor(text, time.Minute) {
			t.Fatalf("%s never printed %q:\n%s", name, text, out.String())
		}
	}
	host, _ := os.Hostname()

	var aOut, bOut, cOut lockedBuffer
	a, aExited := startLabrun(t, &aOut, args(gated)...)
	await("A", &aOut, "[2/2] gate (run) ...")
	holder := fmt.Sprintf("%s/pid %d/run ", host, a.Process.Pid)

	b, bExited := startLabrun(t, &bOut, args(gated)...)
	await("B", &bOut, "labrun run: waiting for lease "+ns+"/labrun held by "+holder)
	if strings.Contains(bOut.String(), "look (get)") {
		t.Errorf("B ran a step while A held the lease:\n%s", bOut.String())
	}

	c, cExited := startLabrun(t, &cOut, args(gated, "--lock-timeout", "1s")...)
	if code := waitExit(t, c, cExited, &cOut); code != exitTimeout ||
		!strings.Contains(cOut.String(), "labrun run: lease "+ns+"/labrun is held by "+holder) || !strings.Contains(cOut.String(), "[timeout]") {
		t.Errorf("C with --lock-timeout 1s exited %d; want 4 naming A (%s) as the holder:\n%s", code, holder, cOut.String())
	}

	open(&aOut)
	if code := waitExit(t, a, aExited, &aOut); code != 0 {
		t.Fatalf("A exited %d:\n%s", code, aOut.String())
	}
	await("B", &bOut, "[2/2] gate (run) ...")
	open(&bOut)
	if code := waitExit(t, b, bExited, &bOut); code != 0 {
		t.Fatalf("B exited %d:\n%s", code, bOut.String())
	}
	takeAtOnce := func(after string) {
		t.Helper()
		var out lockedBuffer
		cmd, exited := startLabrun(t, &out, args(quick, "--lock-timeout", "1s")...)
		if code := waitExit(t, cmd, exited, &out); code != 0 {
			t.Errorf("a run with --lock-timeout 1s after %s exited %d: the lease was not released\n%s", after, code, out.String())
		}
	}
	takeAtOnce("B ended")

	var eOut lockedBuffer
	e, eExited := startLabrun(t, &eOut, args(gated)...)
	await("E", &eOut, "[2/2] gate (run) ...")
	e.Process.Signal(syscall.SIGINT)
	if code := waitExit(t, e, eExited, &eOut); code != exitInterrupted {
		t.Fatalf("E exited %d after SIGINT, want 130:\n%s", code, eOut.String())
	}
	takeAtOnce("E was interrupted")
}
