package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"

	"github.com/labrun/labrun/internal/heavy/kube/kubetest"
)

// httpRequests is how many requests a run makes: a lab that polls an
// endpoint, or asks a Service which backend answers, makes a few dozen.
const httpRequests = 20

// benchHTTP times the requests a lab makes to a web endpoint: a playbook
// step with loop (labrun, one process) against a bash loop of curl (one
// process per request), each run as a whole process and each checking
// every status. The server is this process's, on loopback, so the network
// and the server cost both the same and only the clients differ.
func benchHTTP(ctx context.Context, b *bench) ([]Row, error) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"pod": "web-0", "n": %q}`+"\n", r.URL.Query().Get("n"))
	}))
	defer srv.Close()

	playbook := filepath.Join(b.work, "http.yaml")
	if err := os.WriteFile(playbook, fmt.Appendf(nil, `name: http-bench
vars: {url: %q, n: %d}
steps:
  - id: ask
    loop: ${{ 1..vars.n }}
    http: {url: "${{ vars.url }}/?n=${{ item }}"}
    assert:
      - result.status == 200 && result.json.n == string(item)
`, srv.URL, httpRequests), 0o644); err != nil {
		return nil, err
	}
	script := `for i in $(seq 1 "$2"); do
  code=$(curl -s -o /dev/null -w '%{http_code}' "$1/?n=$i") || exit 1
  [ "$code" = 200 ] || { echo "request $i: HTTP $code" >&2; exit 1; }
done`
	labrun, err := timeN(b.n, timeProc(ctx, []string{b.labrun, "run", "--no-progress", playbook}))
	if err != nil {
		return nil, err
	}
	bash, err := timeN(b.n, timeProc(ctx, []string{"bash", "-c", script, "bench", srv.URL, fmt.Sprint(httpRequests)}))
	if err != nil {
		return nil, err
	}
	rows := []Row{
		newRow(fmt.Sprintf("%d HTTP GETs to a local server, whole process: a step with loop vs a bash loop of curl", httpRequests),
			durations("labrun", "ms", labrun), durations("bash + curl", "ms", bash)).
			withNote("Both open a new connection per request and check every status; the bash loop starts curl %d times.", httpRequests),
	}
	agent, err := b.agentStatusRow(ctx)
	if err != nil {
		return nil, err
	}
	return append(rows, agent), nil
}

// agentStatusRow times reading the Cilium agent's status from its own API
// socket, as a playbook on the node does (an http step with unixSocket,
// one labrun process), against kubectl exec cilium-dbg status -o json,
// which prints the same document.
func (b *bench) agentStatusRow(ctx context.Context) (Row, error) {
	sock, err := kubetest.AgentSocket()
	if err != nil {
		return Row{}, err
	}
	playbook := filepath.Join(b.work, "agent-api.yaml")
	if err := os.WriteFile(playbook, fmt.Appendf(nil, `name: agent-status
vars: {sock: %q}
steps:
  - id: status
    http: {url: "http://localhost/v1/healthz", unixSocket: "${{ vars.sock }}"}
    assert:
      - result.status == 200 && result.json["kube-proxy-replacement"].mode == "True"
`, sock), 0o644); err != nil {
		return Row{}, err
	}
	labrun, err := timeN(b.n, timeProc(ctx, []string{b.labrun, "run", "--no-progress", playbook}))
	if err != nil {
		return Row{}, err
	}
	kubectl, err := timeN(b.n, timeProc(ctx, []string{b.kubectl, "--kubeconfig", b.kubeconfig, "-n", "kube-system", "exec", "ds/cilium", "-c", "cilium-agent", "--", "cilium-dbg", "status", "-o", "json"}))
	if err != nil {
		return Row{}, err
	}
	return newRow("the Cilium agent's status as JSON, whole process: an http step on the agent's API socket vs kubectl exec cilium-dbg status -o json",
		durations("labrun", "ms", labrun), durations("kubectl exec", "ms", kubectl)).
		withNote("labrun asks the agent's API (GET /v1/healthz on /var/run/cilium/cilium.sock, reached here through the agent process's root) as cilium-dbg itself does, without an exec and without starting cilium-dbg; on a lab's node the socket is at that path."), nil
}
