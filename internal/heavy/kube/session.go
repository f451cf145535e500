package kube

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/tools/remotecommand"
)

// Sessions: one long-lived shell per container that runs successive
// commands.
//
// Each exec costs a new connection and a new runtime exec (tens of
// milliseconds, mostly in the kubelet and the container runtime). Labs run
// many short commands in the same few containers (cilium status, ip route,
// curl ...), so a shell kept open in the container, fed one command at a
// time on its stdin, answers in about the time the command itself takes.
//
// The result must be exactly what a separate exec gives, so the shell does
// as little as possible:
//   - the argv is passed as separately single-quoted words to a shell
//     function, which runs `( exec "$@" ) </dev/null`: no word of the
//     command is ever interpreted by the shell, built-ins and functions are
//     bypassed, stdin is empty as in an exec without stdin;
//   - the program is the one the runtime would run: the function looks it
//     up in PATH itself and, where the shell has `exec -a` (bash, busybox),
//     executes that path with argv[0] as given. This matters with busybox,
//     whose sh runs its own applet for a bare name (`ip` would be busybox's
//     ip, not iproute2's); a busybox sh without `exec -a` is not used;
//   - after the command, the function prints a random marker and the exit
//     status on stdout, and the marker on stderr, each after a newline, so
//     both streams can be cut exactly where the command's output ends;
//   - if the program is not found (or not executable), nothing is run and
//     the command is re-run as a separate exec, so the error message and
//     exit code are the runtime's own;
//   - the shell's own messages (such as busybox's "Terminated" after a
//     command killed by a signal) go to /dev/null: the command's stderr is
//     the session's stderr through fd 3, the shell's own fd 2 is not;
//   - variables the shell sets in the environment itself (PWD, OLDPWD,
//     SHLVL) are put back as the container's environment had them (or
//     removed), read from /proc/$$/environ when tr and grep are there to
//     read it.
//
// The differences that remain: the shell process is visible in the
// container (ps); the order of the environment variables is the shell's
// (same variables and values); bash as sh also exports "_". Commands with stdin, commands
// arriving while the session is busy, and containers without sh always use
// a separate exec. A command interrupted by its context leaves the session
// closed (its shell's state is unknown); the next command opens a new one.

// errUseSeparateExec means a session cannot run this command (no shell, no
// such program, busy); the caller runs a separate exec instead.
var errUseSeparateExec = errors.New("use a separate exec")

// errNoShell means the container cannot run a session shell.
var errNoShell = errors.New("no usable sh in the container")

// errSessionLost means a session's stream ended while a command ran: the
// command may or may not have run, as with ErrExitStatusLost.
var errSessionLost = errors.New("exec session ended while the command ran (outcome unknown)")

// sessionOpenTimeout bounds how long opening a session may take before
// labrun gives up on it and uses separate execs.
const sessionOpenTimeout = 10 * time.Second

// sessionInit defines the shell functions; see the comment above. Names
// start with __labrun_ to stay out of the way of anything in the container.
const sessionInit = `set -f
exec 3>&2 2>/dev/null
__labrun_envok=
if tr '\000' '\n' </proc/$$/environ >/dev/null 2>&1 && echo x | grep -q x; then
	__labrun_envok=1
	__labrun_PWD=$(tr '\000' '\n' </proc/$$/environ | grep '^PWD=')
	__labrun_OLDPWD=$(tr '\000' '\n' </proc/$$/environ | grep '^OLDPWD=')
	__labrun_SHLVL=$(tr '\000' '\n' </proc/$$/environ | grep '^SHLVL=')
fi
__labrun_fixenv() {
	[ -n "$__labrun_envok" ] || return 0
	if [ -n "$__labrun_PWD" ]; then export "$__labrun_PWD"; else unset PWD; fi
	if [ -n "$__labrun_OLDPWD" ]; then export "$__labrun_OLDPWD"; else unset OLDPWD; fi
	if [ -n "$__labrun_SHLVL" ]; then export "$__labrun_SHLVL"; else unset SHLVL; fi
}
__labrun_execa=
( exec -a sh /proc/$$/exe -c 'exit 7' ) </dev/null
[ $? = 7 ] && __labrun_execa=1
__labrun_ok=ok
if [ -z "$__labrun_execa" ]; then
	case $(readlink /proc/$$/exe 2>/dev/null) in
	*busybox*) __labrun_ok=unusable ;;
	esac
fi
__labrun_has() {
	case $1 in
	*/*) __labrun_p=$1; [ -f "$1" ] && [ -x "$1" ]; return ;;
	esac
	__labrun_ifs=$IFS
	IFS=:
	for __labrun_d in $PATH; do
		__labrun_p=${__labrun_d:-.}/$1
		if [ -f "$__labrun_p" ] && [ -x "$__labrun_p" ]; then
			IFS=$__labrun_ifs
			return 0
		fi
	done
	IFS=$__labrun_ifs
	return 1
}
__labrun_run() {
	__labrun_m=$1
	shift
	if ! __labrun_has "$1"; then
		__labrun_rc=notfound
	elif [ -n "$__labrun_execa" ]; then
		( __labrun_fixenv; __labrun_a0=$1; shift; exec -a "$__labrun_a0" "$__labrun_p" "$@" ) </dev/null 2>&3 3>&-
		__labrun_rc=$?
	else
		( __labrun_fixenv; exec "$@" ) </dev/null 2>&3 3>&-
		__labrun_rc=$?
	fi
	printf '\n%s %s\n' "$__labrun_m" "$__labrun_rc"
	printf '\n%s\n' "$__labrun_m" >&3
}
`

type sessionKey struct {
	namespace, pod, container string
}

// shellSession is a shell kept open in one container (see execOptions.Reuse).
type shellSession struct {
	key    sessionKey
	stdin  io.WriteCloser
	out    *streamBuf
	errOut *streamBuf
	notify chan struct{} // a byte arrived on stdout or stderr
	done   chan struct{} // the exec stream ended
	err    error         // why it ended; read after done is closed
	cancel context.CancelFunc
	busy   sync.Mutex // one command at a time
}

// streamBuf collects one output stream of a session and wakes the reader.
type streamBuf struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	notify chan struct{}
}

func (b *streamBuf) Write(p []byte) (int, error) {
	b.mu.Lock()
	b.buf.Write(p)
	b.mu.Unlock()
	select {
	case b.notify <- struct{}{}:
	default:
	}
	return len(p), nil
}

// cut looks for the marker line that ends a command's output. stdout has
// "\n<marker> <status>\n", stderr "\n<marker>\n". It returns the output
// before the marker, the text between marker and newline, and whether the
// line is complete; a complete marker line is removed from the buffer.
func (b *streamBuf) cut(marker string) (output []byte, rest string, ok bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	data := b.buf.Bytes()
	i := bytes.Index(data, []byte("\n"+marker))
	if i < 0 {
		return nil, "", false
	}
	after := data[i+1+len(marker):]
	nl := bytes.IndexByte(after, '\n')
	if nl < 0 {
		return nil, "", false
	}
	output = bytes.Clone(data[:i])
	rest = strings.TrimPrefix(string(after[:nl]), " ")
	b.buf.Next(i + 1 + len(marker) + nl + 1)
	return output, rest, true
}

// Close ends the session's shell.
func (s *shellSession) Close() {
	s.stdin.Close()
	s.cancel()
}

func (s *shellSession) alive() bool {
	select {
	case <-s.done:
		return false
	default:
		return true
	}
}

// sessionSlot holds a container's session. Its lock is held while the
// session is opened, so that commands for other containers (parallel
// branches of a playbook) do not wait behind a slow open.
type sessionSlot struct {
	mu      sync.Mutex
	s       *shellSession // nil when none is open
	noShell bool          // the container cannot run one: do not try again
}

// Close ends every session the client opened.
func (c *Client) Close() {
	c.sessionsMu.Lock()
	defer c.sessionsMu.Unlock()
	for k, slot := range c.sessions {
		slot.mu.Lock()
		if slot.s != nil {
			slot.s.Close()
			slot.s = nil
		}
		slot.mu.Unlock()
		delete(c.sessions, k)
	}
}

// execInSession runs opts.Command in the container's session, opening it
// if needed. errUseSeparateExec means the caller should exec normally.
func (c *Client) execInSession(ctx context.Context, opts execOptions) (execRun, error) {
	res := execRun{Namespace: opts.Namespace, Pod: opts.Pod, Container: opts.Container, Command: opts.Command, Transport: "session", Attempts: 1}
	key := sessionKey{opts.Namespace, opts.Pod, opts.Container}
	for range 2 {
		s, err := c.session(ctx, key)
		if err != nil {
			return res, err
		}
		if !s.busy.TryLock() {
			return res, errUseSeparateExec
		}
		if !s.alive() {
			// It died while idle (pod restarted, connection cut): nothing
			// was sent, so opening a fresh one is safe.
			s.busy.Unlock()
			c.dropSession(key, s)
			continue
		}
		out, errOut, code, err := s.run(ctx, opts.Command)
		s.busy.Unlock()
		if err != nil {
			if !errors.Is(err, errUseSeparateExec) {
				// A command was interrupted: the shell's state is unknown.
				c.dropSession(key, s)
				s.Close()
			}
			return res, err
		}
		res.Stdout, res.Stderr, res.ExitCode = string(out), string(errOut), code
		return res, nil
	}
	return res, errUseSeparateExec
}

// session returns the open session for key, opening one if needed.
func (c *Client) session(ctx context.Context, key sessionKey) (*shellSession, error) {
	slot := c.slot(key)
	slot.mu.Lock()
	defer slot.mu.Unlock()
	if slot.noShell {
		return nil, errUseSeparateExec
	}
	if slot.s != nil && slot.s.alive() {
		return slot.s, nil
	}
	slot.s = nil
	s, err := c.openSession(ctx, key)
	if err != nil {
		// Do not try again for this container if it has no usable shell.
		slot.noShell = errors.Is(err, errNoShell)
		return nil, errUseSeparateExec
	}
	slot.s = s
	return s, nil
}

// slot returns key's slot, creating it.
func (c *Client) slot(key sessionKey) *sessionSlot {
	c.sessionsMu.Lock()
	defer c.sessionsMu.Unlock()
	if c.sessions == nil {
		c.sessions = map[sessionKey]*sessionSlot{}
	}
	slot, ok := c.sessions[key]
	if !ok {
		slot = &sessionSlot{}
		c.sessions[key] = slot
	}
	return slot
}

func (c *Client) dropSession(key sessionKey, s *shellSession) {
	slot := c.slot(key)
	slot.mu.Lock()
	defer slot.mu.Unlock()
	if slot.s == s {
		slot.s = nil
	}
}

// openSession starts `sh` in the container and waits until it has read the
// function definitions.
func (c *Client) openSession(ctx context.Context, key sessionKey) (*shellSession, error) {
	pr, pw := io.Pipe()
	sctx, cancel := context.WithCancel(context.Background())
	s := newSession(key, pw, cancel)
	go func() {
		_, _, err := c.stream(sctx, execOptions{Namespace: key.namespace, Pod: key.pod, Container: key.container, Command: []string{"sh"}},
			remotecommand.StreamOptions{Stdin: pr, Stdout: s.out, Stderr: s.errOut})
		pr.CloseWithError(s.end(err))
	}()
	if err := s.init(ctx); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// newSession prepares a session around a shell whose stdin is stdin and
// whose stdout and stderr the caller connects to s.out and s.errOut; the
// caller calls s.end when the shell's stream ends, and cancel stops it.
func newSession(key sessionKey, stdin io.WriteCloser, cancel context.CancelFunc) *shellSession {
	notify := make(chan struct{}, 1)
	return &shellSession{
		key:    key,
		stdin:  stdin,
		out:    &streamBuf{notify: notify},
		errOut: &streamBuf{notify: notify},
		notify: notify,
		done:   make(chan struct{}),
		cancel: cancel,
	}
}

// end records why the shell's stream ended and returns that error.
func (s *shellSession) end(err error) error {
	if err == nil {
		err = errors.New("shell exited")
	}
	s.err = err
	close(s.done)
	return err
}

// init sends the function definitions and waits for the shell to confirm
// it has read them.
func (s *shellSession) init(ctx context.Context) error {
	ready, err := newMarker()
	if err != nil {
		return err
	}
	if _, err := io.WriteString(s.stdin, sessionInit+"printf '\\n%s %s\\n' "+ready+" \"$__labrun_ok\"\n"); err != nil {
		return fmt.Errorf("%w: %w", errNoShell, err)
	}
	octx, cancel := context.WithTimeout(ctx, sessionOpenTimeout)
	defer cancel()
	for {
		if _, rest, ok := s.out.cut(ready); ok {
			if rest != "ok" {
				return fmt.Errorf("%w: the shell cannot run programs exactly as exec does", errNoShell)
			}
			// Anything the shell wrote on stderr while starting (a
			// profile's noise) is not a command's output.
			s.errOut.mu.Lock()
			s.errOut.buf.Reset()
			s.errOut.mu.Unlock()
			return nil
		}
		select {
		case <-s.notify:
		case <-s.done:
			// The shell could not start or exited at once (no sh in the
			// image, a distroless container).
			return fmt.Errorf("%w: %w", errNoShell, s.err)
		case <-octx.Done():
			return fmt.Errorf("open exec session: %w", octx.Err())
		}
	}
}

// run sends one command and waits for both marker lines.
func (s *shellSession) run(ctx context.Context, argv []string) (stdout, stderr []byte, code int, err error) {
	marker, err := newMarker()
	if err != nil {
		return nil, nil, 0, err
	}
	line := "__labrun_run " + marker
	for _, a := range argv {
		line += " " + shellQuote(a)
	}
	if _, err := io.WriteString(s.stdin, line+"\n"); err != nil {
		return nil, nil, 0, fmt.Errorf("exec session: sending command: %w", err)
	}
	var status string
	haveOut, haveErr := false, false
	for {
		if !haveOut {
			var rest string
			if stdout, rest, haveOut = s.out.cut(marker); haveOut {
				status = rest
			}
		}
		if !haveErr {
			stderr, _, haveErr = s.errOut.cut(marker)
		}
		if haveOut && haveErr {
			break
		}
		select {
		case <-s.notify:
		case <-s.done:
			// The command may or may not have run: say so, never guess.
			return nil, nil, 0, fmt.Errorf("%w: %w", errSessionLost, s.err)
		case <-ctx.Done():
			return nil, nil, 0, ctx.Err()
		}
	}
	if status == "notfound" {
		return nil, nil, 0, errUseSeparateExec
	}
	code, err = strconv.Atoi(status)
	if err != nil {
		return nil, nil, 0, fmt.Errorf("exec session: bad exit status %q", status)
	}
	return stdout, stderr, code, nil
}

// newMarker returns a random token that cannot occur in real output by
// chance.
func newMarker() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return "__labrun_" + hex.EncodeToString(b), nil
}

// shellQuote quotes s as one POSIX shell word: inside single quotes nothing
// is special, and a single quote itself is written as '\” (end quote,
// escaped quote, reopen). Newlines and every other byte pass through as is.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
