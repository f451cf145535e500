package actions

import (
	"context"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// agentServer serves, on a Unix socket, the status document a Cilium
// 1.20.1 agent answered on the test cluster (its capture's header lines
// dropped), and answers other paths as the agent answers an endpoint it
// does not have or an ID it cannot read.
func agentServer(t *testing.T) string {
	t.Helper()
	capture, err := os.ReadFile("../internal/parse/testdata/real/agent_api_healthz.txt")
	if err != nil {
		t.Fatal(err)
	}
	var doc []string
	for _, line := range strings.Split(string(capture), "\n") {
		if !strings.HasPrefix(line, "# ") {
			doc = append(doc, line)
		}
	}
	sock := filepath.Join(t.TempDir(), "cilium.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	s := &httptest.Server{Listener: l, Config: &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/v1/healthz":
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(strings.Join(doc, "\n")))
		case "/v1/endpoint/x":
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			w.Write([]byte(`"invalid endpoint ID format x"` + "\n"))
		default:
			w.WriteHeader(http.StatusNotFound)
		}
	})}}
	s.Start()
	t.Cleanup(s.Close)
	return sock
}

func TestAgentRequest(t *testing.T) {
	sock := agentServer(t)
	r, err := agentRequest(context.Background(), &Runtime{}, &AgentSpec{Path: "/v1/healthz", Socket: sock})
	if err != nil {
		t.Fatal(err)
	}
	doc, ok := r.JSON.(map[string]any)
	if r.Status != 200 || !ok || doc["kube-proxy-replacement"] == nil {
		t.Fatalf("status %d, document %T with keys %v", r.Status, r.JSON, slices.Collect(maps.Keys(doc)))
	}
	for _, c := range []struct{ path, err string }{
		{"/v1/endpoint/x", `answered GET /v1/endpoint/x with 400: "invalid endpoint ID format x"`},
		{"/v1/endpoint/42", "answered GET /v1/endpoint/42 with 404"},
	} {
		r, err := agentRequest(context.Background(), &Runtime{}, &AgentSpec{Path: c.path, Socket: sock})
		if err == nil || !strings.Contains(err.Error(), c.err) || !strings.HasSuffix(err.Error(), c.err) {
			t.Errorf("%s: %v, want an error ending %q", c.path, err, c.err)
		}
		if r == nil || r.Status == 0 {
			t.Errorf("%s: the answer should still be the result: %+v", c.path, r)
		}
	}
	none := filepath.Join(t.TempDir(), "none.sock")
	if _, err := agentRequest(context.Background(), &Runtime{}, &AgentSpec{Path: "/v1/healthz", Socket: none}); err == nil || !strings.Contains(err.Error(), "the agent's API on "+none) || !strings.Contains(err.Error(), "no such file or directory") {
		t.Errorf("a missing socket: %v", err)
	}
}

func TestAgentURL(t *testing.T) {
	for _, c := range []struct{ path, url, err string }{
		{"/v1/service", "http://localhost/v1/service", ""},
		{"/v1/endpoint?labels=k8s:app=web", "http://localhost/v1/endpoint?labels=k8s:app=web", ""},
		{"v1/service", "", `path "v1/service": expected an API path such as /v1/service`},
		{"/v1/%zz", "", `path "/v1/%zz" is not a URL path`},
	} {
		u, err := agentURL(c.path)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if u != c.url || got != c.err {
			t.Errorf("agentURL(%q) = %q, %q; want %q, %q", c.path, u, got, c.url, c.err)
		}
	}
}
