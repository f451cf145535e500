package actions

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// echoServer answers every request with what it received, as JSON, and
// serves a few fixed paths the tests need.
func echoServer(t *testing.T, tlsServer bool) *httptest.Server {
	mux := http.NewServeMux()
	mux.HandleFunc("/echo", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.Header().Add("X-Twice", "a")
		w.Header().Add("X-Twice", "b")
		json.NewEncoder(w).Encode(map[string]any{
			"method":      r.Method,
			"host":        r.Host,
			"contentType": r.Header.Get("Content-Type"),
			"token":       r.Header.Get("X-Token"),
			"userAgent":   r.UserAgent(),
			"body":        string(body),
		})
	})
	mux.HandleFunc("/text", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, `{"not":"decoded"}`)
	})
	mux.HandleFunc("/missing", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "no such thing", http.StatusNotFound)
	})
	mux.HandleFunc("/moved", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/text", http.StatusFound)
	})
	mux.HandleFunc("/bad-json", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/problem+json")
		fmt.Fprint(w, `{"half":`)
	})
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
	})
	var s *httptest.Server
	if tlsServer {
		s = httptest.NewTLSServer(mux)
	} else {
		s = httptest.NewServer(mux)
	}
	t.Cleanup(s.Close)
	return s
}

func TestHTTPRequests(t *testing.T) {
	s := echoServer(t, false)
	for _, tc := range []struct {
		name  string
		spec  HTTPSpec
		check func(t *testing.T, r *HTTPResult)
	}{
		{"GET decodes a JSON body and joins repeated headers", HTTPSpec{URL: s.URL + "/echo"}, func(t *testing.T, r *HTTPResult) {
			want(t, "status", r.Status, 200)
			want(t, "method", r.Method, "GET")
			want(t, "proto", r.Proto, "HTTP/1.1")
			want(t, "X-Twice", r.Headers["X-Twice"], "a, b")
			want(t, "json.method", r.JSON.(map[string]any)["method"], "GET")
			want(t, "json.userAgent", r.JSON.(map[string]any)["userAgent"], "labrun")
			if !strings.HasPrefix(r.Body, `{"body":""`) {
				t.Errorf("body = %q", r.Body)
			}
			if r.Seconds <= 0 {
				t.Errorf("seconds = %v", r.Seconds)
			}
		}},
		{"POST json sets the content type", HTTPSpec{URL: s.URL + "/echo", Method: "POST", JSON: map[string]any{"n": 1}}, func(t *testing.T, r *HTTPResult) {
			j := r.JSON.(map[string]any)
			want(t, "method", j["method"], "POST")
			want(t, "contentType", j["contentType"], "application/json")
			want(t, "body", j["body"], `{"n":1}`)
		}},
		{"headers and a virtual host", HTTPSpec{URL: s.URL + "/echo", Method: "PUT", Body: "plain", Headers: map[string]string{"X-Token": "t0k", "host": "web.example", "Content-Type": "text/x-lab"}}, func(t *testing.T, r *HTTPResult) {
			j := r.JSON.(map[string]any)
			want(t, "host", j["host"], "web.example")
			want(t, "token", j["token"], "t0k")
			want(t, "contentType", j["contentType"], "text/x-lab")
			want(t, "body", j["body"], "plain")
		}},
		{"a text body is not decoded", HTTPSpec{URL: s.URL + "/text"}, func(t *testing.T, r *HTTPResult) {
			want(t, "body", r.Body, `{"not":"decoded"}`)
			if r.JSON != nil {
				t.Errorf("json = %#v, want nil for text/plain", r.JSON)
			}
		}},
		{"404 is a result, not a failure", HTTPSpec{URL: s.URL + "/missing"}, func(t *testing.T, r *HTTPResult) {
			want(t, "status", r.Status, 404)
			want(t, "body", r.Body, "no such thing\n")
		}},
		{"a redirect is the result unless followed", HTTPSpec{URL: s.URL + "/moved"}, func(t *testing.T, r *HTTPResult) {
			want(t, "status", r.Status, 302)
			want(t, "Location", r.Headers["Location"], "/text")
			want(t, "url", r.URL, s.URL+"/moved")
		}},
		{"followRedirects follows", HTTPSpec{URL: s.URL + "/moved", FollowRedirects: true}, func(t *testing.T, r *HTTPResult) {
			want(t, "status", r.Status, 200)
			want(t, "url", r.URL, s.URL+"/text")
		}},
		{"HEAD", HTTPSpec{URL: s.URL + "/text", Method: "HEAD"}, func(t *testing.T, r *HTTPResult) {
			want(t, "status", r.Status, 200)
			want(t, "body", r.Body, "")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := httpRequest(context.Background(), &Runtime{}, &tc.spec)
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, r)
		})
	}
}

func TestHTTPFailures(t *testing.T) {
	s := echoServer(t, false)
	refused := closedPort(t)
	for _, tc := range []struct {
		name    string
		spec    HTTPSpec
		wantErr string // the step's error; "" when the result carries it
		wantRes string // result.error with allowFailure
	}{
		{"connection refused", HTTPSpec{URL: "http://" + refused + "/"}, "GET http://" + refused + "/: dial tcp " + refused + ": connect: connection refused", ""},
		{"refused with allowFailure", HTTPSpec{URL: "http://" + refused + "/", AllowFailure: true}, "", "connection refused"},
		{"timeout names the limit", HTTPSpec{URL: s.URL + "/slow", Timeout: 100 * time.Millisecond}, "GET " + s.URL + "/slow: no complete response within 100ms", ""},
		{"timeout with allowFailure", HTTPSpec{URL: s.URL + "/slow", Timeout: 50 * time.Millisecond, AllowFailure: true}, "", "no complete response within 50ms"},
		{"a body that claims JSON", HTTPSpec{URL: s.URL + "/bad-json", AllowFailure: true}, "the response says it is JSON (application/problem+json) but is not: unexpected end of JSON input", ""},
		{"not http", HTTPSpec{URL: "ftp://example.com/"}, `url "ftp://example.com/": expected an http:// or https:// URL`, ""},
		{"no host", HTTPSpec{URL: "http:///path"}, `url "http:///path" has no host`, ""},
		{"bad method", HTTPSpec{URL: s.URL, Method: "GET ME"}, `method "GET ME" is not an HTTP method token`, ""},
		{"missing CA file", HTTPSpec{URL: s.URL, CAFile: filepath.Join(t.TempDir(), "none.pem")}, "caFile: open ", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := httpRequest(context.Background(), &Runtime{}, &tc.spec)
			switch {
			case tc.wantErr != "":
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tc.wantErr)
				}
			case err != nil:
				t.Fatalf("err = %v, want the failure in the result", err)
			default:
				want(t, "status", r.Status, 0)
				if !strings.Contains(r.Error, tc.wantRes) {
					t.Errorf("result error = %q, want it to contain %q", r.Error, tc.wantRes)
				}
			}
		})
	}
}

func TestHTTPTLS(t *testing.T) {
	s := echoServer(t, true)
	ca := filepath.Join(t.TempDir(), "ca.pem")
	pemBytes := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: s.Certificate().Raw})
	if err := os.WriteFile(ca, pemBytes, 0o600); err != nil {
		t.Fatal(err)
	}
	notPEM := filepath.Join(t.TempDir(), "ca.txt")
	os.WriteFile(notPEM, []byte("not a certificate\n"), 0o600)

	if _, err := httpRequest(context.Background(), &Runtime{}, &HTTPSpec{URL: s.URL + "/echo"}); err == nil || !strings.Contains(err.Error(), "certificate signed by unknown authority") {
		t.Errorf("without the CA: err = %v, want an unknown authority", err)
	}
	for _, spec := range []HTTPSpec{{URL: s.URL + "/echo", CAFile: ca}, {URL: s.URL + "/echo", Insecure: true}} {
		r, err := httpRequest(context.Background(), &Runtime{}, &spec)
		if err != nil || r.Status != 200 {
			t.Errorf("caFile %q insecure %v: %+v, %v", spec.CAFile, spec.Insecure, r, err)
		}
	}
	if _, err := httpRequest(context.Background(), &Runtime{}, &HTTPSpec{URL: s.URL, CAFile: notPEM}); err == nil || !strings.Contains(err.Error(), "holds no PEM certificate") {
		t.Errorf("a CA file without PEM: err = %v", err)
	}
}

// unixSocket talks HTTP over a Unix socket, as node agents serve their
// APIs; the URL gives the path and the Host header.
func TestHTTPUnixSocket(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "api.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	s := &httptest.Server{Listener: l, Config: &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"path": %q, "host": %q}`, r.URL.Path, r.Host)
	})}}
	s.Start()
	defer s.Close()
	r, err := httpRequest(context.Background(), &Runtime{}, &HTTPSpec{URL: "http://localhost/v1/healthz", UnixSocket: sock})
	if err != nil {
		t.Fatal(err)
	}
	want(t, "path", r.JSON.(map[string]any)["path"], "/v1/healthz")
	want(t, "host", r.JSON.(map[string]any)["host"], "localhost")
	_, err = httpRequest(context.Background(), &Runtime{}, &HTTPSpec{URL: "http://localhost/", UnixSocket: filepath.Join(t.TempDir(), "none.sock")})
	if err == nil || !strings.Contains(err.Error(), "none.sock: connect: no such file or directory") {
		t.Errorf("a missing socket: %v", err)
	}
}

// Each request opens its own connection, so a load balancer chooses again.
func TestHTTPNewConnectionEachTime(t *testing.T) {
	var mu sync.Mutex
	var conns []string
	s := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	s.Config.ConnState = func(c net.Conn, st http.ConnState) {
		if st == http.StateNew {
			mu.Lock()
			conns = append(conns, c.RemoteAddr().String())
			mu.Unlock()
		}
	}
	s.Start()
	defer s.Close()
	for range 3 {
		if _, err := httpRequest(context.Background(), &Runtime{}, &HTTPSpec{URL: s.URL}); err != nil {
			t.Fatal(err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(conns) != 3 {
		t.Errorf("3 requests used %d connections: %v", len(conns), conns)
	}
}

// Ctrl-C ends a request at once, and is reported as the interruption,
// not as a failed request.
func TestHTTPInterrupted(t *testing.T) {
	s := echoServer(t, false)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	start := time.Now()
	_, err := httpRequest(ctx, &Runtime{}, &HTTPSpec{URL: s.URL + "/slow", AllowFailure: true})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled even with allowFailure", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the interrupted request took %v", d)
	}
}

// closedPort returns a loopback address nothing listens on.
func closedPort(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

func want[T comparable](t *testing.T, what string, got any, w T) {
	t.Helper()
	if g, ok := got.(T); !ok || g != w {
		t.Errorf("%s = %#v, want %#v", what, got, w)
	}
}
