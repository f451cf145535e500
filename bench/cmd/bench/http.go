package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
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
	return []Row{
		newRow(fmt.Sprintf("%d HTTP GETs to a local server, whole process: a step with loop vs a bash loop of curl", httpRequests),
			durations("labrun", "ms", labrun), durations("bash + curl", "ms", bash)).
			withNote("Both open a new connection per request and check every status; the bash loop starts curl %d times.", httpRequests),
	}, nil
}
