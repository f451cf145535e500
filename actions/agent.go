package actions

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/labrun/labrun/internal/lang/diag"
	"github.com/labrun/labrun/internal/lang/eval"
)

// AgentSpec reads one document of the Cilium agent's REST API, over the
// agent's Unix socket on the node labrun runs on: the documents cilium-dbg
// prints with -o json come from there, and reading one takes about a
// millisecond where each cilium-dbg started in the agent's pod takes a
// tenth of a second of CPU and an exec.
type AgentSpec struct {
	Path    string        `yaml:"path" required:"true" doc:"The API path, e.g. /v1/service (cilium-dbg service list), /v1/healthz (status), /v1/config (config), /v1/endpoint and /v1/endpoint/ID, /v1/identity and /v1/identity/ID, /v1/map (map list)."`
	Socket  string        `yaml:"socket" doc:"The agent's API socket (default /var/run/cilium/cilium.sock, the agent's on this node)."`
	Timeout time.Duration `yaml:"timeout" doc:"Limit for one request (default 10s). With until, each attempt has this limit."`
}

// DefaultAgentSocket is where a Cilium agent serves its API on its node.
const DefaultAgentSocket = "/var/run/cilium/cilium.sock"

func init() {
	Register(Def[AgentSpec, HTTPResult]{
		Name:  "agent",
		Cost:  LocalRead,
		Doc:   "GET a document of the Cilium agent's API on its Unix socket (what cilium-dbg prints with -o json); an answer other than 2xx, or no answer, is an error, which until polls past while the agent starts.",
		Run:   agentRequest,
		Check: checkAgent,
		Host:  agentHost,
	})
}

// agentHost: the agent's socket is a file of the node labrun runs on, and
// the agent it answers for is that node's.
func agentHost(spec *AgentSpec, hc *HostContext) []HostNeed {
	if hc.Unknown("socket") {
		return []HostNeed{{
			What:  "the Cilium agent's API socket, at a path known only when the step runs",
			InPod: "a hostPath volume of the socket's directory on the node, mounted at the same path, and runAsUser: 0 (the socket is root's) or the socket's group",
		}}
	}
	socket := spec.Socket
	if socket == "" {
		socket = DefaultAgentSocket
	}
	dir := hostPathOf(socket)
	return []HostNeed{{
		What:  "the Cilium agent's API socket " + socket + ", the node's",
		InPod: "a hostPath volume of the node's " + dir + " mounted at " + dir + ", and runAsUser: 0 (the socket is root's) or the socket's group",
	}}
}

// checkAgent refuses at validate time a path that is not one.
func checkAgent(spec *eval.Value, _ *StaticContext) diag.List {
	var errs diag.List
	if p, path, ok := literalString(spec, "path"); ok {
		if _, err := agentURL(path); err != nil {
			errs.Add(p.Pos, "%v", err)
		}
	}
	return errs
}

// agentURL is the request's URL: the agent ignores the host, which only
// fills the Host header, as cilium-dbg's client sends it.
func agentURL(path string) (string, error) {
	if !strings.HasPrefix(path, "/") {
		return "", fmt.Errorf("path %q: expected an API path such as /v1/service", path)
	}
	u, err := url.Parse("http://localhost" + path)
	if err != nil {
		return "", fmt.Errorf("path %q is not a URL path", path)
	}
	return u.String(), nil
}

func agentRequest(ctx context.Context, rt *Runtime, spec *AgentSpec) (*HTTPResult, error) {
	u, err := agentURL(spec.Path)
	if err != nil {
		return nil, err
	}
	socket := spec.Socket
	if socket == "" {
		socket = DefaultAgentSocket
	}
	res, err := httpRequest(ctx, rt, &HTTPSpec{URL: u, UnixSocket: socket, Timeout: spec.Timeout})
	if err != nil {
		return res, fmt.Errorf("the agent's API on %s: %w", socket, err)
	}
	if res.Status < 200 || res.Status > 299 {
		return res, fmt.Errorf("the agent's API on %s answered GET %s with %d%s", socket, spec.Path, res.Status, agentReason(res.Body))
	}
	return res, nil
}

// agentReason is the first line of an error answer's body, which holds the
// agent's reason (a JSON string, or text), as a suffix; "" when empty.
func agentReason(body string) string {
	line := eval.FirstLine(strings.TrimSpace(body))
	if line == "" {
		return ""
	}
	if len(line) > 200 {
		line = line[:200] + "..."
	}
	return ": " + line
}
