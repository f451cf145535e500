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

	"golang.org/x/sys/unix"
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
	if !strings.Contains(stdout.String(), "outputs (incomplete, the run was interrupted): "+out+"\n") {
		t.Errorf("the summary does not say the outputs are incomplete:\n%s", stdout.String())
	}
}

// lockedBuffer is written by the child's output copier while the test
// reads it.
type lockedBuffer struct {
	mu    sync.Mutex
	b     bytes.Buffer
	wrote chan struct{} // closed at the next write, for waitFor
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.wrote != nil {
		close(l.wrote)
		l.wrote = nil
	}
	return l.b.Write(p)
}

// waitFor waits until the output holds text, woken by each write; false
// when it does not within d.
func (l *lockedBuffer) waitFor(text string, d time.Duration) bool {
	deadline := time.After(d)
	for {
		l.mu.Lock()
		if strings.Contains(l.b.String(), text) {
			l.mu.Unlock()
			return true
		}
		if l.wrote == nil {
			l.wrote = make(chan struct{})
		}
		wrote := l.wrote
		l.mu.Unlock()
		select {
		case <-wrote:
		case <-deadline:
			return false
		}
	}
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// fifoPlaybook writes playbook src and makes the FIFO its program writes
// its pids into once started (passed as --set fifo=).
func fifoPlaybook(t *testing.T, src string) (fifo, pb string) {
	t.Helper()
	dir := t.TempDir()
	fifo, pb = filepath.Join(dir, "started"), filepath.Join(dir, "p.yaml")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pb, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return fifo, pb
}

// startLabrun runs this test binary as labrun with args; its output goes
// to out. exited receives what Wait returns.
func startLabrun(t *testing.T, out *lockedBuffer, args ...string) (*exec.Cmd, chan error) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "LABRUN_TEST_AS_MAIN=1")
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() { cmd.Process.Kill() })
	return cmd, exited
}

// watchPids reads pids, one a line, from a FIFO a step's program writes
// once it has started, and opens a pidfd on each at once (the pid cannot
// be reused while the process lives, so the fd names that process). The
// processes are SIGKILLed when the test ends, should one survive.
func watchPids(t *testing.T, fifo string, exited chan error, out *lockedBuffer) []int {
	t.Helper()
	got := make(chan []byte, 1)
	go func() {
		b, _ := os.ReadFile(fifo) // blocks until the program opens it
		got <- b
	}()
	var b []byte
	select {
	case b = <-got:
	case err := <-exited:
		t.Fatalf("labrun exited (%v) before the program started:\n%s", err, out.String())
	}
	var fds []int
	for _, f := range strings.Fields(string(b)) {
		pid, err := strconv.Atoi(f)
		if err != nil {
			t.Fatalf("the program sent %q, not pids", b)
		}
		fd, err := unix.PidfdOpen(pid, 0)
		if err != nil {
			t.Fatalf("pidfd_open %d: %v", pid, err)
		}
		t.Cleanup(func() {
			unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0)
			unix.Close(fd)
		})
		fds = append(fds, fd)
	}
	if len(fds) == 0 {
		t.Fatalf("the program sent no pid:\n%s", out.String())
	}
	return fds
}

// exitedWithin reports whether the process behind pidfd fd has ended
// (its pidfd turns readable), waiting up to d.
func exitedWithin(fd int, d time.Duration) bool {
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	for {
		n, err := unix.Poll(fds, int(d.Milliseconds()))
		if err == unix.EINTR {
			continue
		}
		return err == nil && n == 1
	}
}

// waitExit waits for labrun to exit and returns its exit code.
func waitExit(t *testing.T, cmd *exec.Cmd, exited chan error, out *lockedBuffer) int {
	t.Helper()
	select {
	case err := <-exited:
		var exitErr *exec.ExitError
		if err != nil && !errors.As(err, &exitErr) {
			t.Fatal(err)
		}
		return cmd.ProcessState.ExitCode()
	case <-time.After(30 * time.Second):
		t.Fatalf("labrun still running 30 s after the signal:\n%s", out.String())
	}
	return 0
}

// A first Ctrl-C during finally says the cleanup goes on and leaves it
// running; a second one ends labrun at once and kills the whole process
// group of the cleanup program first: neither the program nor the one it
// started in the background is left behind. Both would run 10 minutes;
// the test waits (at most 30 s) for their end, which only a kill brings.
func TestSecondInterruptLeavesNoProcess(t *testing.T) {
	fifo, pb := fifoPlaybook(t, `name: interrupt-twice
vars: {fifo: x}
steps:
  - id: first
    run: {argv: ["true"]}
finally:
  - id: cleanup
    run: {argv: [sh, -c, 'sleep 600 & echo $$ $! > "$1"; wait', sh, "${{ vars.fifo }}"]}
`)
	var out lockedBuffer
	cmd, exited := startLabrun(t, &out, "run", "--no-progress", "--set", "fifo="+fifo, pb)
	fds := watchPids(t, fifo, exited, &out)
	if len(fds) != 2 {
		t.Fatalf("want the program's pid and its child's, got %d", len(fds))
	}
	cmd.Process.Signal(syscall.SIGINT)
	// The notice is the signal that the first Ctrl-C was handled.
	if !out.waitFor("finishing cleanup (Ctrl-C again to stop", 30*time.Second) {
		t.Fatalf("no notice that the cleanup goes on:\n%s", out.String())
	}
	for _, fd := range fds {
		if exitedWithin(fd, 0) {
			t.Fatalf("the first Ctrl-C stopped the cleanup:\n%s", out.String())
		}
	}
	cmd.Process.Signal(syscall.SIGINT)
	if code := waitExit(t, cmd, exited, &out); code != 130 {
		t.Errorf("exit %d, want 130\n%s", code, out.String())
	}
	for i, fd := range fds {
		if !exitedWithin(fd, 30*time.Second) {
			t.Errorf("process %d of the cleanup program's group outlived labrun:\n%s", i+1, out.String())
		}
	}
}

// A SIGKILLed labrun cannot kill anything itself: the kernel ends the
// program it was running (Pdeathsig).
func TestKilledLabrunLeavesNoProgram(t *testing.T) {
	fifo, pb := fifoPlaybook(t, `name: killed
vars: {fifo: x}
steps:
  - id: long
    run: {argv: [sh, -c, 'echo $$ > "$1"; exec sleep 600', sh, "${{ vars.fifo }}"]}
`)
	var out lockedBuffer
	cmd, exited := startLabrun(t, &out, "run", "--no-progress", "--set", "fifo="+fifo, pb)
	fds := watchPids(t, fifo, exited, &out)
	cmd.Process.Kill()
	<-exited
	if !exitedWithin(fds[0], 30*time.Second) {
		t.Errorf("the program outlived the SIGKILLed labrun:\n%s", out.String())
	}
}
