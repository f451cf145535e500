package kube

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/remotecommand"
	"k8s.io/client-go/util/exec"
	"k8s.io/streaming/pkg/httpstream"

	"github.com/labrun/labrun/internal/boundary/cluster"
)

// execOptions say what to run in which container.
type execOptions struct {
	// Namespace defaults to the client's namespace.
	Namespace string
	Pod       string
	// Container defaults to the pod's default container.
	Container string
	// Command is the argv, run directly (no shell) as kubectl exec does.
	Command []string
	// Stdin, when not nil, is attached as the command's standard input and
	// closed after its last byte. Nil means no stdin.
	Stdin []byte
	// Reuse runs the command through a long-lived shell session in the
	// container instead of a new exec (see session.go): much faster for
	// successive commands, same stdout, stderr and exit code. It needs a
	// POSIX sh in the container and is skipped (a separate exec is used)
	// when there is none, when Stdin is set, or when the session is busy.
	Reuse bool
	// MaxAttempts bounds tries when the connection fails before the
	// command starts; zero means DefaultExecAttempts.
	MaxAttempts int
}

// execRun is what a command did, and how it ran. A non-zero exit code is
// a result, not an error: execPod returns an error only when it cannot tell
// what the command did.
type execRun struct {
	Namespace string
	Pod       string
	Container string
	Command   []string
	Stdout    string
	Stderr    string
	ExitCode  int
	// Duration is the wall time of the whole call, retries included.
	Duration time.Duration
	// Attempts counts connection attempts (1 when the first one worked).
	Attempts int
	// Transport is how the command ran: "websocket", "spdy" or "session".
	Transport string
}

// DefaultExecAttempts is the default bound on exec connection attempts.
const DefaultExecAttempts = 4

// Backoff between exec attempts: 100 ms, 200 ms, 400 ms, ... capped.
const (
	execRetryMin = 100 * time.Millisecond
	execRetryMax = 2 * time.Second
)

// Exec runs a command in a container of the pod t picks (see ResolvePod)
// and returns its output and exit code (see execPod).
func (c *Client) Exec(ctx context.Context, t cluster.PodTarget, req cluster.ExecRequest) (_ *cluster.ExecResult, err error) {
	defer transient(&err)
	pod, err := c.ResolvePod(ctx, t)
	if err != nil {
		return nil, err
	}
	opts := execOptions{Namespace: pod.Namespace, Pod: pod.Name, Container: t.Container, Command: req.Argv, Reuse: req.Reuse}
	if req.Stdin != nil {
		opts.Stdin = []byte(*req.Stdin)
	}
	r, err := c.execPod(ctx, opts)
	return &cluster.ExecResult{
		Namespace: r.Namespace, Pod: r.Pod, Container: r.Container, Argv: req.Argv,
		Stdout: r.Stdout, Stderr: r.Stderr, ExitCode: r.ExitCode, Seconds: r.Duration.Seconds(),
	}, err
}

// execPod runs a command in a container of a named pod and returns its
// output and exit code.
//
// The stream goes over WebSocket (the v5 protocol of Kubernetes 1.30+) and
// falls back to SPDY for API servers that refuse the WebSocket upgrade,
// through client-go's remotecommand.FallbackExecutor, as kubectl does.
// Failures that happen before the command can have started (the upgrade is
// refused with a 5xx, "error dialing backend", a connection reset during
// the handshake) are retried with backoff, at most MaxAttempts times.
// A stream that ends without an exit status is an error
// (ErrExitStatusLost), never a silent exit code 0.
func (c *Client) execPod(ctx context.Context, opts execOptions) (execRun, error) {
	start := time.Now()
	if opts.Namespace == "" {
		opts.Namespace = c.Namespace
	}
	res := execRun{Namespace: opts.Namespace, Pod: opts.Pod, Container: opts.Container, Command: opts.Command}
	if err := checkCommand(opts.Command); err != nil {
		return res, err
	}
	if opts.Pod == "" {
		return res, errors.New("exec: no pod given")
	}
	if opts.Container == "" {
		ct, err := c.defaultContainer(ctx, opts.Namespace, opts.Pod)
		if err != nil {
			return res, err
		}
		opts.Container, res.Container = ct, ct
	}

	if opts.Reuse && opts.Stdin == nil {
		r, err := c.execInSession(ctx, opts)
		if err == nil {
			r.Duration = time.Since(start)
			return r, nil
		}
		if !errors.Is(err, errUseSeparateExec) {
			return r, err
		}
	}

	r, err := c.execOnce(ctx, opts)
	r.Duration = time.Since(start)
	return r, err
}

// execOnce runs the command as its own exec, with retries.
func (c *Client) execOnce(ctx context.Context, opts execOptions) (execRun, error) {
	res := execRun{Namespace: opts.Namespace, Pod: opts.Pod, Container: opts.Container, Command: opts.Command}
	attempts := opts.MaxAttempts
	if attempts <= 0 {
		attempts = DefaultExecAttempts
	}
	what := fmt.Sprintf("%q in container %q of pod %q in namespace %q", strings.Join(opts.Command, " "), opts.Container, opts.Pod, opts.Namespace)
	delay := execRetryMin
	for {
		res.Attempts++
		var stdout, stderr bytes.Buffer
		var stdin io.Reader
		if opts.Stdin != nil {
			stdin = bytes.NewReader(opts.Stdin)
		}
		transport, started, err := c.stream(ctx, opts, remotecommand.StreamOptions{Stdin: stdin, Stdout: &stdout, Stderr: &stderr})
		res.Transport = transport
		res.Stdout, res.Stderr = stdout.String(), stderr.String()
		var exitErr exec.ExitError
		switch {
		case err == nil:
			res.ExitCode = 0
			return res, nil
		case errors.As(err, &exitErr):
			res.ExitCode = exitErr.ExitStatus()
			return res, nil
		}
		if ctx.Err() != nil {
			return res, fmt.Errorf("exec %s: %w", what, ctx.Err())
		}
		output := stdout.Len() > 0 || stderr.Len() > 0
		if res.Attempts >= attempts || output || !retriableExecError(err, started) {
			return res, c.wrap(err, "exec", what)
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return res, fmt.Errorf("exec %s: %w (after %d attempts, last error: %w)", what, ctx.Err(), res.Attempts, c.scrub(err))
		case <-t.C:
		}
		delay = min(delay*2, execRetryMax)
	}
}

// stream runs one exec stream: WebSocket first, SPDY if the server does not
// take the WebSocket upgrade. It reports the transport used and whether the
// command may have started.
func (c *Client) stream(ctx context.Context, opts execOptions, so remotecommand.StreamOptions) (transport string, started bool, err error) {
	u := c.builtin.core().Post().
		Namespace(opts.Namespace).Resource("pods").Name(opts.Pod).SubResource("exec").
		VersionedParams(&corev1.PodExecOptions{
			Container: opts.Container,
			Command:   opts.Command,
			Stdin:     so.Stdin != nil,
			Stdout:    true,
			Stderr:    true,
		}, parameterCodec()).URL()

	dialer, err := c.wsDialer()
	if err != nil {
		return "", false, err
	}
	ws := &wsExecutor{dialer: dialer, url: u.String()}
	usedSPDY := false
	var wsErr error
	primary := &hookExecutor{Executor: ws, after: func(err error) { wsErr = err }}
	// The SPDY executor is only built when needed: building it loads the
	// TLS configuration again, a cost every exec would otherwise pay.
	fallback := &lazyExecutor{build: func() (remotecommand.Executor, error) {
		usedSPDY = true
		return remotecommand.NewSPDYExecutor(c.config, http.MethodPost, u)
	}}
	exe, err := remotecommand.NewFallbackExecutor(primary, fallback, shouldFallback)
	if err != nil {
		return "", false, err
	}
	err = exe.StreamWithContext(ctx, so)
	if usedSPDY {
		started = !spdyNotStarted(err)
		if !started && serverStatus(wsErr) != nil {
			// Both upgrades were refused. The WebSocket refusal carries the
			// server's Status (reason, code, message); SPDY's is only text.
			err = wsErr
		}
		return "spdy", started, serverStatusOr(err)
	}
	return "websocket", ws.started, serverStatusOr(err)
}

// serverStatus returns the server's Status carried by an upgrade failure,
// or nil.
func serverStatus(err error) error {
	var uf *httpstream.UpgradeFailureError
	if !errors.As(err, &uf) {
		return nil
	}
	var st apierrors.APIStatus
	if errors.As(uf.Cause, &st) {
		return uf.Cause
	}
	return nil
}

// serverStatusOr unwraps an upgrade failure that carries the server's
// Status, so that a refused exec reads like any other refused request
// ("Forbidden (403): ...") and apierrors.IsForbidden works on it.
func serverStatusOr(err error) error {
	if st := serverStatus(err); st != nil {
		return st
	}
	return err
}

// wsDialer returns the client's WebSocket dialer, built on first use.
func (c *Client) wsDialer() (*wsDialer, error) {
	c.wsOnce.Do(func() { c.ws, c.wsErr = newWSDialer(c.config) })
	return c.ws, c.wsErr
}

// lazyExecutor builds its executor on first use.
type lazyExecutor struct {
	build func() (remotecommand.Executor, error)
}

func (l *lazyExecutor) Stream(o remotecommand.StreamOptions) error {
	return l.StreamWithContext(context.Background(), o)
}

func (l *lazyExecutor) StreamWithContext(ctx context.Context, o remotecommand.StreamOptions) error {
	exe, err := l.build()
	if err != nil {
		return err
	}
	return exe.StreamWithContext(ctx, o)
}

// hookExecutor calls after with the result of streaming, to record how the
// primary executor of a FallbackExecutor failed.
type hookExecutor struct {
	remotecommand.Executor
	after func(error)
}

func (h *hookExecutor) StreamWithContext(ctx context.Context, o remotecommand.StreamOptions) error {
	err := h.Executor.StreamWithContext(ctx, o)
	h.after(err)
	return err
}

// shouldFallback decides when to retry an exec over SPDY: the WebSocket
// upgrade was refused in a way SPDY might not be (an old API server, a
// proxy that does not pass WebSockets). An upgrade refused for lack of
// rights or because the pod does not exist would be refused the same way
// over SPDY, so it is reported as is.
func shouldFallback(err error) bool {
	if httpstream.IsHTTPSProxyError(err) {
		return true
	}
	var uf *httpstream.UpgradeFailureError
	if !errors.As(err, &uf) {
		return false
	}
	switch statusCode(uf.Cause) {
	case http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound:
		return false
	}
	return true
}

// transientExecMessages are failures of the path client -> API server ->
// kubelet that mean a SPDY stream was never set up, seen while API servers
// or kubelets restart.
var transientExecMessages = []string{
	"unable to upgrade connection",
	"error dialing backend",
	"connection reset by peer",
	"connection refused",
	"broken pipe",
	"i/o timeout",
	"tls handshake timeout",
	"http2: client connection lost",
}

// retriableExecError tells whether an exec failure happened before the
// command could have run, so that running it again cannot run it twice.
func retriableExecError(err error, started bool) bool {
	if err == nil || errors.Is(err, ErrExitStatusLost) || refused(err) {
		return false
	}
	if !started {
		// Nothing reached the container runtime: a transport failure is
		// safe to retry.
		return true
	}
	// The API server took the stream; only its own failure to reach the
	// kubelet, reported on the status channel, means nothing ran.
	msg := strings.ToLower(err.Error())
	return strings.Contains(msg, "error dialing backend") || strings.Contains(msg, "unable to upgrade connection")
}

// refused tells whether the server refused the exec itself (bad request,
// no rights, no such pod or container): retrying cannot help.
func refused(err error) bool {
	code := statusCode(err)
	var uf *httpstream.UpgradeFailureError
	if errors.As(err, &uf) {
		code = statusCode(uf.Cause)
	}
	switch code {
	case http.StatusBadRequest, http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound,
		http.StatusConflict, http.StatusUnprocessableEntity:
		return true
	}
	return false
}

// spdyNotStarted tells whether a SPDY exec failed before the stream was
// set up; SPDY does not say so itself, so the error text decides.
func spdyNotStarted(err error) bool {
	if err == nil {
		return false
	}
	if httpstream.IsUpgradeFailure(err) {
		return true
	}
	msg := strings.ToLower(err.Error())
	for _, m := range transientExecMessages {
		if strings.Contains(msg, m) {
			return true
		}
	}
	return false
}

// checkCommand rejects argv that cannot be passed to a process.
func checkCommand(argv []string) error {
	if len(argv) == 0 {
		return errors.New("exec: no command given")
	}
	for i, a := range argv {
		if strings.IndexByte(a, 0) >= 0 {
			return fmt.Errorf("exec: argument %d contains a NUL byte", i)
		}
	}
	return nil
}
