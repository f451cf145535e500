package kube

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"k8s.io/streaming/pkg/httpstream"

	"github.com/labrun/labrun/internal/boundary/cluster"
)

// serveDiscovery answers the discovery requests of a server that serves
// only pods, so that a test's List reaches the list request itself.
func serveDiscovery(w http.ResponseWriter, r *http.Request) bool {
	w.Header().Set("Content-Type", "application/json")
	switch r.URL.Path {
	case "/api":
		fmt.Fprint(w, `{"kind":"APIVersions","versions":["v1"]}`)
	case "/apis":
		fmt.Fprint(w, `{"kind":"APIGroupList","apiVersion":"v1","groups":[]}`)
	case "/api/v1":
		fmt.Fprint(w, `{"kind":"APIResourceList","groupVersion":"v1","resources":[{"name":"pods","singularName":"pod","namespaced":true,"kind":"Pod","verbs":["list"]}]}`)
	default:
		return false
	}
	return true
}

// status answers with a Kubernetes Status of code and reason (no
// Retry-After, so client-go does not retry it itself).
func status(w http.ResponseWriter, code int, reason string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	fmt.Fprintf(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","code":%d,"reason":%q,"message":"the server says %s"}`, code, reason, reason)
}

// A List against a real local HTTP server is marked transient exactly when
// client-go's conventions say the same request may work a moment later:
// the connection refused (at discovery, the run's first call), a 429 or a
// 5xx answer; not when the server refused the request itself.
func TestListMarksTransientFailures(t *testing.T) {
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refusedHost := "http://" + closed.Addr().String()
	closed.Close()
	for _, tc := range []struct {
		name   string
		serve  func(w http.ResponseWriter, r *http.Request) // nil: nothing listens
		reason string                                       // "" not transient
		text   string
	}{
		{"refused at discovery", nil, "connection refused", "connect: connection refused"},
		{"503 at discovery", func(w http.ResponseWriter, r *http.Request) { status(w, 503, "ServiceUnavailable") }, "503 ServiceUnavailable", "resolve kind v1 Pod: ServiceUnavailable (503)"},
		{"429 at list", func(w http.ResponseWriter, r *http.Request) { status(w, 429, "TooManyRequests") }, "429 TooManyRequests", "the server says TooManyRequests"},
		{"500 at list", func(w http.ResponseWriter, r *http.Request) { status(w, 500, "InternalError") }, "500 InternalError", "the server says InternalError"},
		{"403 at list", func(w http.ResponseWriter, r *http.Request) { status(w, 403, "Forbidden") }, "", "Forbidden (403)"},
		{"404 at list", func(w http.ResponseWriter, r *http.Request) { status(w, 404, "NotFound") }, "", "NotFound (404)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			host := refusedHost
			if tc.serve != nil {
				srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if strings.Contains(tc.name, "at list") && serveDiscovery(w, r) {
						return
					}
					tc.serve(w, r)
				}))
				defer srv.Close()
				host = srv.URL
			}
			c, err := NewFromConfig(&rest.Config{Host: host}, ConnectOptions{})
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.List(context.Background(), cluster.ObjectQuery{APIVersion: "v1", Kind: "Pod", Namespace: "lab"})
			var te *cluster.TransientError
			switch {
			case err == nil:
				t.Fatal("List succeeded")
			case !strings.Contains(err.Error(), tc.text):
				t.Errorf("error %q does not hold %q", err, tc.text)
			case tc.reason == "" && errors.As(err, &te):
				t.Errorf("%v marked transient (%s)", err, te.Reason)
			case tc.reason != "" && (!errors.As(err, &te) || te.Reason != tc.reason):
				t.Errorf("%v: marked %v, want transient %q", err, te, tc.reason)
			}
		})
	}
}

// A connection the server resets or closes without an answer is
// transient. client-go itself retries a GET that meets one for about ten
// seconds before giving up, so the errors are made here with net/http,
// which client-go's requests go through, against a real local server.
func TestConnectionFailuresAreTransient(t *testing.T) {
	for _, tc := range []struct {
		name   string
		linger bool // reset instead of a plain close
		reason string
	}{
		{"reset", true, "connection reset"},
		{"closed", false, "connection closed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			go func() {
				conn, err := l.Accept()
				if err != nil {
					return
				}
				// Read the whole request, then drop the connection.
				req, err := http.ReadRequest(bufio.NewReader(conn))
				if err == nil {
					req.Body.Close()
				}
				if tc.linger {
					conn.(*net.TCPConn).SetLinger(0)
				}
				conn.Close()
			}()
			tr := &http.Transport{DisableKeepAlives: true}
			defer tr.CloseIdleConnections()
			resp, err := (&http.Client{Transport: tr}).Get("http://" + l.Addr().String() + "/api")
			if err == nil {
				resp.Body.Close()
				t.Fatal("GET succeeded")
			}
			err = wrapErr(err, "list", "pods", nil)
			if got := transientReason(err); got != tc.reason {
				t.Errorf("%v: reason %q, want %q", err, got, tc.reason)
			}
		})
	}
}

// A lost exec status is transient (the runner runs a read-only command
// again); the caller's own deadline or cancel is not.
func TestTransientReasons(t *testing.T) {
	for _, tc := range []struct {
		err    error
		reason string
	}{
		{wrapErr(ErrExitStatusLost, "exec", `"cat" in pod "web"`, nil), "exit status lost"},
		{fmt.Errorf("%w: %w", errSessionLost, errors.New("websocket: close 1006")), "exit status lost"},
		{wrapErr(&httpstream.UpgradeFailureError{Cause: apierrors.NewInternalError(errors.New("error dialing backend: dial tcp 10.250.42.2:10250: connect: connection refused"))}, "exec", "cat", nil), "exec upgrade refused with 500"},
		{wrapErr(&httpstream.UpgradeFailureError{Cause: apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "web", errors.New("no"))}, "exec", "cat", nil), ""},
		{wrapErr(errors.New("error dialing backend: dial tcp 10.250.42.2:10250: connect: connection refused"), "exec", "cat", nil), "exec stream not set up"},
		{wrapErr(context.DeadlineExceeded, "list", "pods", nil), ""},
		{wrapErr(context.Canceled, "list", "pods", nil), ""},
		{errors.New("exec: no command given"), ""},
		{nil, ""},
	} {
		if got := transientReason(tc.err); got != tc.reason {
			t.Errorf("transientReason(%v) = %q, want %q", tc.err, got, tc.reason)
		}
	}
}

// The API server's warnings go to ConnectOptions.Warnings (labrun passes
// its stderr, escaped), not to the process's stderr.
func TestWarningsGoToTheirWriter(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if serveDiscovery(w, r) {
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Warning", "299 - \"policy says \u202eno\"")
		fmt.Fprint(w, `{"kind":"PodList","apiVersion":"v1","items":[]}`)
	}))
	defer srv.Close()
	var warnings bytes.Buffer
	c, err := NewFromConfig(&rest.Config{Host: srv.URL}, ConnectOptions{Warnings: &warnings})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.List(context.Background(), cluster.ObjectQuery{APIVersion: "v1", Kind: "Pod", Namespace: "lab"}); err != nil {
		t.Fatal(err)
	}
	if got, want := warnings.String(), "Warning: policy says \u202eno\n"; got != want {
		t.Errorf("warnings %q, want %q", got, want)
	}
}
