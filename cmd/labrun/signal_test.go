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

// Ctrl-C: a real SIGINT stops the running step (its program is killed),
// the finally steps run, the journal stays readable, and the exit code is
// 130. The signal is sent once the program has started: it writes its pid
// into a FIFO the test reads. That the program is gone when labrun exits
// is what proves it was stopped rather than waited for; no duration is
// asserted, and a deadline far below the program's own 60 s only stops a
// hang.
func TestInterruptWithSignal(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	fifo := filepath.Join(dir, "started")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	pb := filepath.Join(dir, "p.yaml")
	os.WriteFile(pb, []byte(`name: interrupt
vars: {out: x, fifo: x}
outputDir: ${{ vars.out }}
steps:
  - id: first
    run: {argv: ["true"]}
  - id: long
    run: {argv: [sh, -c, 'echo $$ > "$1"; exec sleep 60', sh, "${{ vars.fifo }}"]}
finally:
  - id: cleanup
    write: {path: cleanup.txt, text: ran}
`), 0o644)
	cmd := exec.Command(os.Args[0], "run", "--no-progress", "-v", "--set", "out="+out, "--set", "fifo="+fifo, pb)
	cmd.Env = append(os.Environ(), "LABRUN_TEST_AS_MAIN=1")
	var stdout lockedBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	started := make(chan int, 1)
	go func() {
		b, _ := os.ReadFile(fifo) // blocks until the program opens it
		n, _ := strconv.Atoi(strings.TrimSpace(string(b)))
		started <- n
	}()
	var pid int
	select {
	case pid = <-started:
	case err := <-exited:
		t.Fatalf("labrun exited (%v) before the long step started:\n%s", err, stdout.String())
	}
	if pid == 0 {
		t.Fatalf("the long step's program sent no pid:\n%s", stdout.String())
	}
	cmd.Process.Signal(syscall.SIGINT)
	var err error
	select {
	case err = <-exited:
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("labrun still running 30 s after SIGINT:\n%s", stdout.String())
	}
	var exitErr *exec.ExitError
	if !errors.As(err, &exitErr) || exitErr.ExitCode() != 130 {
		t.Fatalf("exit %v, want 130\n%s", err, stdout.String())
	}
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("the interrupted program (pid %d) outlived labrun: kill -0 says %v", pid, err)
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
