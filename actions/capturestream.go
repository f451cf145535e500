package actions

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/labrun/labrun/internal/boundary/cluster"
)

// The capture's stream: the monitor started in the agent, its lines handed
// to the capture as they come, and its stop (capture.go is the action).

// stream is the command running in the agent: its lines as they come,
// when it said it was ready, and how it ended.
type stream struct {
	lines  chan string   // complete stdout lines
	ready  chan struct{} // closed once stderr said monitorReady
	done   chan struct{} // closed when the command or the stream ended
	cancel context.CancelFunc
	// stdin is the command's input: closing it asks the command to end
	// (monitorScript); stopOnce does it once, and closes the stream too
	// if the command has not ended stopGrace later.
	stdin    *io.PipeWriter
	stopOnce sync.Once

	result *cluster.StreamResult // set before done is closed
	err    error
	stderr *stderrTail
}

// startStream starts argv in the container t picks; the stream ends when
// stop is called or ctx ends.
func startStream(ctx context.Context, c cluster.Cluster, t cluster.PodTarget, argv []string) *stream {
	sctx, cancel := context.WithCancel(ctx)
	in, stdin := io.Pipe()
	st := &stream{lines: make(chan string, 256), ready: make(chan struct{}), done: make(chan struct{}), cancel: cancel, stdin: stdin}
	st.stderr = &stderrTail{marker: monitorReady, ready: st.ready}
	out := &lineWriter{ctx: sctx, lines: st.lines}
	go func() {
		defer close(st.done)
		defer cancel()
		st.result, st.err = c.Stream(sctx, t, cluster.StreamRequest{Argv: argv, Stdin: in, Stdout: out, Stderr: st.stderr})
	}()
	return st
}

// stopGrace is how long a command asked to end (its input ended) has
// before its stream is closed.
const stopGrace = 2 * time.Second

// requestStop asks the command to end, without waiting: its input ends,
// and stopGrace later its stream is closed if it is still running.
func (st *stream) requestStop() {
	st.stopOnce.Do(func() {
		st.stdin.Close()
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
	what := "cilium-dbg monitor ended " + when
	switch {
	case st.err != nil:
		what += ": " + st.err.Error()
	case st.result != nil:
		what += fmt.Sprintf(" (exit code %d)", st.result.ExitCode)
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
