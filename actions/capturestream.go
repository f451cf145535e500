package actions

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/labrun/labrun/internal/boundary/cluster"
)

// The capture's stream: the source's command started (in the agent's
// container, or as a local program for tcpdump), its lines handed to the
// capture as they come, and its stop (capture.go is the action).

// stream is the source's command running: its lines as they come, when
// it said it was ready, and how it ended.
type stream struct {
	name   string        // the command, as messages name it
	lines  chan string   // complete stdout lines
	ready  chan struct{} // closed once stderr said the source's marker
	done   chan struct{} // closed when the command or the stream ended
	cancel context.CancelFunc
	// ask asks the command to end: it ends its input (the scripts in the
	// agent stop on that) or interrupts it (tcpdump); stopOnce does it
	// once, and closes the stream too if the command has not ended
	// stopGrace later.
	ask      func()
	stopOnce sync.Once

	// set before done is closed: where the command ran (nil for a local
	// one), its exit code (nil when the stream was cut first), and an
	// error of the stream itself
	where    *cluster.StreamResult
	exitCode *int
	err      error
	stderr   *stderrTail
}

func newStream(name, marker string, cancel context.CancelFunc) *stream {
	st := &stream{name: name, lines: make(chan string, 256), ready: make(chan struct{}), done: make(chan struct{}), cancel: cancel}
	st.stderr = &stderrTail{marker: marker, ready: st.ready}
	return st
}

// startStream starts argv in the container t picks; the stream ends when
// stop is called or ctx ends. The source is ready once its stderr says
// marker.
func startStream(ctx context.Context, c cluster.Cluster, t cluster.PodTarget, name, marker string, argv []string) *stream {
	sctx, cancel := context.WithCancel(ctx)
	in, stdin := io.Pipe()
	st := newStream(name, marker, cancel)
	st.ask = func() { stdin.Close() }
	out := &lineWriter{ctx: sctx, lines: st.lines}
	go func() {
		defer close(st.done)
		defer cancel()
		res, err := c.Stream(sctx, t, cluster.StreamRequest{Argv: argv, Stdin: in, Stdout: out, Stderr: st.stderr})
		st.where, st.err = res, err
		if res != nil && !res.Stopped {
			st.exitCode = &res.ExitCode
		}
	}()
	return st
}

// startLocalStream starts argv as a program of the machine labrun runs
// on (through a via prefix, on a node): in its own process group, asked
// to end with SIGINT as Ctrl-C would (tcpdump then prints its counts),
// killed with its group when the stream is closed or ctx ends, and by
// the kernel if labrun dies first.
func startLocalStream(ctx context.Context, name, marker, dir string, argv []string) *stream {
	sctx, cancel := context.WithCancel(ctx)
	st := newStream(name, marker, cancel)
	cmd := exec.CommandContext(sctx, argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Stdout = &lineWriter{ctx: sctx, lines: st.lines}
	cmd.Stderr = st.stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
	st.ask = func() {
		if cmd.Process != nil {
			syscall.Kill(-cmd.Process.Pid, syscall.SIGINT)
		}
	}
	started := make(chan struct{})
	go func() {
		defer close(st.done)
		defer cancel()
		err := cmd.Start()
		close(started)
		if err != nil {
			st.err = fmt.Errorf("cannot run %s: %w", argv[0], err)
			return
		}
		forget := running.add(cmd.Process.Pid)
		err = cmd.Wait()
		forget()
		var exitErr *exec.ExitError
		switch {
		case err == nil:
			st.exitCode = new(int)
		case sctx.Err() != nil:
		case errors.As(err, &exitErr):
			code := exitErr.ExitCode()
			st.exitCode = &code
		default:
			st.err = err
		}
	}()
	<-started // ask may be called from now on
	return st
}

// stopGrace is how long a command asked to end (its input ended) has
// before its stream is closed.
const stopGrace = 2 * time.Second

// requestStop asks the command to end, without waiting: its input ends,
// and stopGrace later its stream is closed if it is still running.
func (st *stream) requestStop() {
	st.stopOnce.Do(func() {
		st.ask()
		go func() {
			t := time.NewTimer(stopGrace)
			defer t.Stop()
			select {
			case <-st.done:
			case <-t.C:
				st.cancel()
			}
		}()
	})
}

// ended reports whether the command's stream has ended.
func (st *stream) ended() bool {
	select {
	case <-st.done:
		return true
	default:
		return false
	}
}

// stop ends the command and waits for its stream to end, dropping the
// lines it still sends.
func (st *stream) stop() {
	st.requestStop()
	for {
		select {
		case <-st.lines:
		case <-st.done:
			return
		}
	}
}

// endedEarly says that the command ended before the capture did, with
// what it said on stderr.
func (st *stream) endedEarly(when string) error {
	what := st.name + " ended " + when
	switch {
	case st.err != nil:
		what += ": " + st.err.Error()
	case st.exitCode != nil:
		what += fmt.Sprintf(" (exit code %d)", *st.exitCode)
	}
	if tail := strings.TrimSpace(st.stderr.String()); tail != "" {
		what += "; it printed: " + tail
	}
	if st.err != nil {
		return fmt.Errorf("%s: %w", what, st.err)
	}
	return errors.New(what)
}

// lineWriter cuts what the stream writes into lines and hands them over;
// it gives up (and the stream with it) once ctx ends.
type lineWriter struct {
	ctx   context.Context
	lines chan<- string
	buf   []byte
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.buf = append(w.buf, p...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			break
		}
		line := string(w.buf[:i])
		w.buf = w.buf[i+1:]
		select {
		case w.lines <- line:
		case <-w.ctx.Done():
			return 0, w.ctx.Err()
		}
	}
	if len(w.buf) > maxCaptureBytes {
		return 0, errors.New("a line longer than the capture's byte bound")
	}
	return len(p), nil
}

// stderrTail keeps the end of what the command wrote on stderr, and
// closes ready the first time marker appears in it.
type stderrTail struct {
	mu     sync.Mutex
	marker string
	ready  chan struct{}
	seen   bool
	text   []byte
}

const stderrKeep = 4096

func (s *stderrTail) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.text = append(s.text, p...)
	if !s.seen && bytes.Contains(s.text, []byte(s.marker)) {
		s.seen = true
		close(s.ready)
	}
	if len(s.text) > stderrKeep {
		s.text = s.text[len(s.text)-stderrKeep:]
	}
	return len(p), nil
}

func (s *stderrTail) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return string(s.text)
}
