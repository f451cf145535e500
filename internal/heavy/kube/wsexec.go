package kube

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sync"
	"time"

	gwebsocket "github.com/gorilla/websocket"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/util/remotecommand"
	"k8s.io/client-go/rest"
	clientremotecommand "k8s.io/client-go/tools/remotecommand"
	"k8s.io/client-go/transport"
	"k8s.io/client-go/transport/websocket"
	"k8s.io/client-go/util/exec"
)

// ErrExitStatusLost means an exec stream ended without the exit status the
// protocol always sends last: the connection was cut (API server or kubelet
// restart, proxy timeout), so whether and how the command finished is
// unknown. It is never reported as exit code 0.
var ErrExitStatusLost = errors.New("exec stream ended without an exit status (connection lost; the command's outcome is unknown)")

// The WebSocket exec client.
//
// client-go's WebSocket executor cannot tell "exit status 0" from "no exit
// status at all": both come back as a nil error, so a cut connection would
// look like success. This executor speaks the same v5.channel.k8s.io
// protocol and uses client-go for everything else (TLS, credentials,
// proxies, the upgrade itself through transport/websocket), but it sees the
// status channel and returns ErrExitStatusLost when the status is missing.
// It also keeps one TLS session cache per Client, so successive execs
// resume TLS sessions instead of doing full handshakes.
//
// The protocol: every WebSocket message is binary, its first byte the
// channel (0 stdin, 1 stdout, 2 stderr, 3 status, 4 resize), the rest
// payload. The client ends stdin with the message {255, 0} (v5's
// half-close). The server sends a metav1.Status on channel 3 and closes.
const (
	chanStdin  = 0
	chanStdout = 1
	chanStderr = 2
	chanStatus = 3
	chanClose  = 255
)

// Heartbeat: a ping every wsPingPeriod keeps idle exec streams (a long
// command without output, an idle session) alive through proxies, and a
// missing answer for wsReadTimeout means the connection is dead.
const (
	wsPingPeriod  = 5 * time.Second
	wsReadTimeout = 12*wsPingPeriod + time.Second
	wsWriteWait   = 10 * time.Second
)

// wsDialer opens exec WebSockets for one Client. Its TLS config (with the
// session cache) is built once; the upgrade round tripper must be new for
// every connection, as client-go requires.
type wsDialer struct {
	transportConfig *transport.Config
	tlsConfig       *tls.Config
	proxy           func(*http.Request) (*url.URL, error)
}

func newWSDialer(config *rest.Config) (*wsDialer, error) {
	tc, err := config.TransportConfig()
	if err != nil {
		return nil, err
	}
	tlsConfig, err := transport.TLSConfigFor(tc)
	if err != nil {
		return nil, err
	}
	if tlsConfig != nil {
		tlsConfig.ClientSessionCache = tls.NewLRUClientSessionCache(16)
	}
	proxy := config.Proxy
	if proxy == nil {
		proxy = utilnet.NewProxierWithNoProxyCIDR(http.ProxyFromEnvironment)
	}
	return &wsDialer{transportConfig: tc, tlsConfig: tlsConfig, proxy: proxy}, nil
}

func (d *wsDialer) dial(ctx context.Context, rawURL string) (*gwebsocket.Conn, error) {
	upgrader := &websocket.RoundTripper{TLSConfig: d.tlsConfig, Proxier: d.proxy}
	rt, err := transport.HTTPWrappersForConfig(d.transportConfig, upgrader)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return nil, err
	}
	return websocket.Negotiate(rt, upgrader, req, remotecommand.StreamProtocolV5Name)
}

// wsExecutor runs one remote command. It implements client-go's
// remotecommand.Executor so that it can be the primary of a
// remotecommand.FallbackExecutor, with SPDY as the fallback.
type wsExecutor struct {
	dialer *wsDialer
	url    string
	// started is set once the WebSocket upgrade succeeded: from then on the
	// command may be running, and a failure must not be retried blindly.
	started bool
}

var _ clientremotecommand.Executor = (*wsExecutor)(nil)

func (e *wsExecutor) Stream(opts clientremotecommand.StreamOptions) error {
	return e.StreamWithContext(context.Background(), opts)
}

func (e *wsExecutor) StreamWithContext(ctx context.Context, opts clientremotecommand.StreamOptions) error {
	if opts.Tty {
		return errors.New("exec: TTY is not supported")
	}
	conn, err := e.dialer.dial(ctx, e.url)
	if err != nil {
		return err
	}
	e.started = true
	return runWSStream(ctx, conn, opts)
}

// runWSStream drives one exec stream over an upgraded connection until the
// server sends the status and closes, the connection fails, or ctx ends.
func runWSStream(ctx context.Context, conn *gwebsocket.Conn, opts clientremotecommand.StreamOptions) error {
	s := &wsStream{conn: conn, done: make(chan struct{})}
	defer close(s.done)
	defer s.close()
	go s.closeOnCancel(ctx)
	s.heartbeat()
	if opts.Stdin != nil {
		go s.sendStdin(opts.Stdin)
	}
	return s.receive(ctx, opts)
}

// wsStream is one exec stream's connection and what its goroutines share.
type wsStream struct {
	conn      *gwebsocket.Conn
	writeMu   sync.Mutex    // gorilla allows one writer at a time
	closeOnce sync.Once     // the connection is closed once, by whoever ends first
	done      chan struct{} // closed when runWSStream returns
}

// write sends one binary message.
func (s *wsStream) write(msg []byte) error {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	if err := s.conn.SetWriteDeadline(time.Now().Add(wsWriteWait)); err != nil {
		return err
	}
	return s.conn.WriteMessage(gwebsocket.BinaryMessage, msg)
}

// close closes the connection, the only way to interrupt a blocked read.
func (s *wsStream) close() { s.closeOnce.Do(func() { s.conn.Close() }) }

// closeOnCancel closes the connection when ctx ends before the stream.
func (s *wsStream) closeOnCancel(ctx context.Context) {
	select {
	case <-ctx.Done():
		s.close()
	case <-s.done:
	}
}

// heartbeat sets the read deadline that every message and pong pushes
// back, and pings every wsPingPeriod until the stream ends.
func (s *wsStream) heartbeat() {
	_ = s.conn.SetReadDeadline(time.Now().Add(wsReadTimeout))
	s.conn.SetPongHandler(func(string) error {
		return s.conn.SetReadDeadline(time.Now().Add(wsReadTimeout))
	})
	go func() {
		t := time.NewTicker(wsPingPeriod)
		defer t.Stop()
		for {
			select {
			case <-s.done:
				return
			case <-t.C:
				if err := s.conn.WriteControl(gwebsocket.PingMessage, nil, time.Now().Add(wsWriteWait)); err != nil {
					return
				}
			}
		}
	}()
}

// sendStdin copies stdin to the stdin channel, then half-closes it.
func (s *wsStream) sendStdin(stdin io.Reader) {
	buf := make([]byte, 32*1024+1)
	for {
		n, err := stdin.Read(buf[1:])
		if n > 0 {
			buf[0] = chanStdin
			if werr := s.write(buf[:n+1]); werr != nil {
				return
			}
		}
		if err != nil {
			// End of input (or a failing reader): half-close stdin
			// so the command sees EOF.
			_ = s.write([]byte{chanClose, chanStdin})
			return
		}
	}
}

// receive reads messages until the status arrives or the connection ends,
// copying stdout and stderr to opts.
func (s *wsStream) receive(ctx context.Context, opts clientremotecommand.StreamOptions) error {
	var status []byte
	gotStatus := false
	for {
		typ, msg, err := s.conn.ReadMessage()
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if gotStatus {
				// The status arrived; the rest is the connection closing.
				return decodeExecStatus(status)
			}
			if gwebsocket.IsCloseError(err, gwebsocket.CloseNormalClosure) {
				return ErrExitStatusLost
			}
			return fmt.Errorf("%w: %w", ErrExitStatusLost, err)
		}
		_ = s.conn.SetReadDeadline(time.Now().Add(wsReadTimeout))
		if typ != gwebsocket.BinaryMessage || len(msg) == 0 {
			continue
		}
		payload := msg[1:]
		switch msg[0] {
		case chanStdout:
			if opts.Stdout != nil {
				if _, err := opts.Stdout.Write(payload); err != nil {
					return fmt.Errorf("exec: writing stdout: %w", err)
				}
			}
		case chanStderr:
			if opts.Stderr != nil {
				if _, err := opts.Stderr.Write(payload); err != nil {
					return fmt.Errorf("exec: writing stderr: %w", err)
				}
			}
		case chanStatus:
			status = append(status, payload...)
			// The status is one JSON document, sent last. Once it parses,
			// the command is over; do not wait for the close handshake.
			if json.Valid(status) {
				gotStatus = true
				return decodeExecStatus(status)
			}
		}
	}
}

// decodeExecStatus turns the status channel's metav1.Status into the errors
// client-go's executors return: nil for success, exec.CodeExitError for a
// non-zero exit code, a *StatusError for anything else (for example
// "error dialing backend", reported by the API server after the upgrade).
func decodeExecStatus(b []byte) error {
	var st metav1.Status
	if err := json.Unmarshal(b, &st); err != nil {
		return fmt.Errorf("exec: bad status from server: %w", err)
	}
	if st.Status == metav1.StatusSuccess {
		return nil
	}
	if st.Reason == remotecommand.NonZeroExitCodeReason && st.Details != nil {
		for _, c := range st.Details.Causes {
			if c.Type != remotecommand.ExitCodeCauseType {
				continue
			}
			var code int
			if _, err := fmt.Sscanf(c.Message, "%d", &code); err != nil {
				return fmt.Errorf("exec: bad exit code %q from server", c.Message)
			}
			return exec.CodeExitError{Err: fmt.Errorf("command terminated with exit code %d", code), Code: code}
		}
	}
	if st.Code == 0 {
		st.Code = http.StatusInternalServerError
	}
	return &apierrors.StatusError{ErrStatus: st}
}
