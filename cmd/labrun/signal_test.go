package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestMain lets a test run this very binary as labrun: with
// LABRUN_TEST_AS_MAIN set, the test binary is the command.
func TestMain(m *testing.M) {
	if os.Getenv("LABRUN_TEST_AS_MAIN") == "1" {
		if n, err := strconv.ParseUint(os.Getenv("LABRUN_TEST_FSIZE"), 10, 64); err == nil {
			// the largest file this labrun may write, as a full disk
			// would stop it
			if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &syscall.Rlimit{Cur: n, Max: n}); err != nil {
				panic(err)
			}
		}
		os.Exit(Main(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// Ctrl-C: a real SIGINT stops the running step within a second, the
// finally steps run, the journal stays readable, and the exit code is 130.
func TestInterruptWithSignal(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	pb := filepath.Join(dir, "p.yaml")
	os.WriteFile(pb, []byte(`name: interrupt
vars: {out: x}
outputDir: ${{ vars.out }}
steps:
  - id: first
    run: {argv: ["true"]}
  - id: long
    run: {argv: [sleep, "60"]}
finally:
  - id: cleanup
    write: {path: cleanup.txt, text: ran}
`), 0o644)
	cmd := exec.Command(os.Args[0], "run", "--no-progress", "-v", "--set", "out="+out, pb)
	cmd.Env = append(os.Environ(), "LABRUN_TEST_AS_MAIN=1")
	var stdout lockedBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// wait for the long step to start: its line appears in verbose output
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(stdout.String(), "long (run) ...") {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("the long step never started:\n%s", stdout.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	sent := time.Now()
	cmd.Process.Signal(syscall.SIGINT)
	err := cmd.Wait()
	took := time.Since(sent)
	if took > time.Second {
		t.Errorf("labrun took %s to stop after SIGINT, want under a second", took)
	}
	var exitErr *exec.ExitError
	if !errors.As(err, &exitErr) || exitErr.ExitCode() != 130 {
		t.Fatalf("exit %v, want 130\n%s", err, stdout.String())
	}
	if b, err := os.ReadFile(filepath.Join(out, "cleanup.txt")); err != nil || string(b) != "ran\n" {
		t.Errorf("finally step did not run: %v\n%s", err, stdout.String())
	}
	journal, err := os.ReadFile(filepath.Join(out, ".labrun", "journal.jsonl"))
	if err != nil || !strings.Contains(string(journal), `"id":"first"`) || strings.Contains(string(journal), `"id":"long"`) {
		t.Errorf("journal %q, %v: want first and not long", journal, err)
	}
	if !strings.Contains(stdout.String(), "INT  [2/2] long (run)") {
		t.Errorf("the interrupted step is not reported:\n%s", stdout.String())
	}
}

// lockedBuffer is written by the child's output copier while the test
// reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
