package kube

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	gwebsocket "github.com/gorilla/websocket"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
)

// fakeExecServer speaks the server side of the v5.channel.k8s.io exec
// protocol, so that the exec client's handling of exit statuses, stdin,
// lost connections and retries is tested without a cluster. The command's
// first word selects the behavior.
type fakeExecServer struct {
	t            *testing.T
	upgradeFails atomic.Int32 // answer this many upgrades with a 500
	dialFails    atomic.Int32 // report this many "error dialing backend" after the upgrade
	attempts     atomic.Int32
	sawToken     atomic.Bool
}

func (f *fakeExecServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.attempts.Add(1)
	if r.Header.Get("Authorization") == "Bearer "+secretToken {
		f.sawToken.Store(true)
	}
	if !strings.HasSuffix(r.URL.Path, "/exec") {
		http.NotFound(w, r)
		return
	}
	if r.Method != http.MethodGet || f.upgradeFails.Add(-1) >= 0 {
		// A 500 with a Status, as the API server answers when it cannot
		// reach the kubelet; SPDY attempts (POST) get the same.
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusInternalServerError)
		_ = json.NewEncoder(w).Encode(metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: metav1.StatusFailure,
			Code: 500, Reason: metav1.StatusReasonInternalError, Message: "error dialing backend: dial tcp 10.0.0.2:10250: connect: connection refused"})
		return
	}
	up := gwebsocket.Upgrader{Subprotocols: []string{"v5.channel.k8s.io"}}
	conn, err := up.Upgrade(w, r, nil)
	if err != nil {
		f.t.Errorf("upgrade: %v", err)
		return
	}
	defer conn.Close()
	send := func(ch byte, data string) {
		_ = conn.WriteMessage(gwebsocket.BinaryMessage, append([]byte{ch}, data...))
	}
	status := func(st metav1.Status) {
		b, _ := json.Marshal(st)
		send(chanStatus, string(b))
		_ = conn.WriteMessage(gwebsocket.CloseMessage, gwebsocket.FormatCloseMessage(gwebsocket.CloseNormalClosure, ""))
	}
	success := func() { status(metav1.Status{Status: metav1.StatusSuccess}) }
	exit := func(code string) {
		status(metav1.Status{Status: metav1.StatusFailure, Reason: "NonZeroExitCode",
			Details: &metav1.StatusDetails{Causes: []metav1.StatusCause{{Type: "ExitCode", Message: code}}}})
	}
	if f.dialFails.Add(-1) >= 0 {
		status(metav1.Status{Status: metav1.StatusFailure, Code: 500, Reason: metav1.StatusReasonInternalError,
			Message: "Internal error occurred: error dialing backend: EOF"})
		return
	}
	cmd := r.URL.Query()["command"]
	switch cmd[0] {
	case "echo":
		send(chanStdout, strings.Join(cmd[1:], " ")+"\n")
		send(chanStderr, "to stderr\n")
		success()
	case "exit":
		send(chanStdout, "partial")
		exit(cmd[1])
	case "cat":
		var in []byte
		for {
			_, msg, err := conn.ReadMessage()
			if err != nil {
				f.t.Errorf("read stdin: %v", err)
				return
			}
			if len(msg) == 2 && msg[0] == chanClose && msg[1] == chanStdin {
				break
			}
			if msg[0] == chanStdin {
				in = append(in, msg[1:]...)
			}
		}
		send(chanStdout, string(in))
		success()
	case "lost":
		// Output, then a clean close without any status.
		send(chanStdout, "some output")
		_ = conn.WriteMessage(gwebsocket.CloseMessage, gwebsocket.FormatCloseMessage(gwebsocket.CloseNormalClosure, ""))
	case "cut":
		// Output, then the TCP connection just goes away.
		send(chanStdout, "some output")
		conn.UnderlyingConn().Close()
	case "forbidden":
		status(metav1.Status{Status: metav1.StatusFailure, Code: 403, Reason: metav1.StatusReasonForbidden, Message: "nope"})
	default:
		exit("127")
	}
}

func fakeExecClient(t *testing.T) (*Client, *fakeExecServer) {
	t.Helper()
	f := &fakeExecServer{t: t}
	srv := httptest.NewTLSServer(f)
	t.Cleanup(srv.Close)
	c, err := NewFromConfig(&rest.Config{Host: srv.URL, BearerToken: secretToken, TLSClientConfig: rest.TLSClientConfig{Insecure: true}}, ConnectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return c, f
}

func execFake(t *testing.T, c *Client, argv []string, stdin []byte) (execRun, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return c.execPod(ctx, execOptions{Namespace: "ns", Pod: "p", Container: "c", Command: argv, Stdin: stdin})
}

func TestExecProtocol(t *testing.T) {
	c, f := fakeExecClient(t)

	r, err := execFake(t, c, []string{"echo", "hello", "world"}, nil)
	if err != nil || r.Stdout != "hello world\n" || r.Stderr != "to stderr\n" || r.ExitCode != 0 || r.Transport != "websocket" || r.Attempts != 1 {
		t.Errorf("echo: %+v %v", r, err)
	}
	if !f.sawToken.Load() {
		t.Errorf("the bearer token was not sent")
	}

	r, err = execFake(t, c, []string{"exit", "42"}, nil)
	if err != nil || r.ExitCode != 42 || r.Stdout != "partial" {
		t.Errorf("exit 42: %+v %v", r, err)
	}

	in := []byte("binary\x00data\xff" + strings.Repeat("x", 100000))
	r, err = execFake(t, c, []string{"cat"}, in)
	if err != nil || r.Stdout != string(in) {
		t.Errorf("cat: %d bytes back, err %v", len(r.Stdout), err)
	}
	r, err = execFake(t, c, []string{"cat"}, []byte{})
	if err != nil || r.Stdout != "" {
		t.Errorf("cat empty stdin: %+v %v", r, err)
	}

	_, err = execFake(t, c, []string{"forbidden"}, nil)
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "Forbidden (403): nope") {
		t.Errorf("forbidden status: %v", err)
	}
}

func TestExecLostExitStatusIsAnError(t *testing.T) {
	c, f := fakeExecClient(t)
	for _, cmd := range []string{"lost", "cut"} {
		f.attempts.Store(0)
		r, err := execFake(t, c, []string{cmd}, nil)
		if !errors.Is(err, ErrExitStatusLost) {
			t.Errorf("%s: got %+v %v, want ErrExitStatusLost", cmd, r, err)
		}
		if r.Stdout != "some output" {
			t.Errorf("%s: output before the loss should be kept, got %q", cmd, r.Stdout)
		}
		if f.attempts.Load() != 1 {
			t.Errorf("%s: %d attempts; a command that may have run must not be retried", cmd, f.attempts.Load())
		}
	}
}

func TestExecRetriesTransportFailures(t *testing.T) {
	c, f := fakeExecClient(t)

	// The upgrade fails twice (WebSocket, then the SPDY fallback, each
	// time), then works.
	f.upgradeFails.Store(2)
	r, err := execFake(t, c, []string{"echo", "ok"}, nil)
	if err != nil || r.Stdout != "ok\n" || r.Attempts != 3 {
		t.Errorf("after upgrade failures: %+v %v", r, err)
	}

	// The API server took the WebSocket but could not reach the kubelet:
	// nothing ran, so it is retried.
	f.dialFails.Store(1)
	r, err = execFake(t, c, []string{"echo", "ok"}, nil)
	if err != nil || r.Stdout != "ok\n" || r.Attempts != 2 {
		t.Errorf("after a backend dial failure: %+v %v", r, err)
	}

	// Bounded: a failure that persists ends with the server's message.
	f.upgradeFails.Store(100)
	r, err = execFake(t, c, []string{"echo", "ok"}, nil)
	if err == nil || r.Attempts != DefaultExecAttempts || !strings.Contains(err.Error(), "error dialing backend") {
		t.Errorf("persistent failure: %+v %v", r, err)
	}
	if err != nil && strings.Contains(err.Error(), secretToken) {
		t.Errorf("error leaks the token")
	}
}
