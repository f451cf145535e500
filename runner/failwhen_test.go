package runner

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/labrun/labrun/actions"
	"github.com/labrun/labrun/internal/boundary/cluster"
	"github.com/labrun/labrun/internal/boundary/cluster/clustertest"
)

// failWhen ends an until as a failure at the first result it holds on,
// with the author's message, the condition and its operands, and the
// author's hint instead of the step's: when polling, when watching, and in
// check mode's single read. until is asked first.
func TestFailWhen(t *testing.T) {
	counting := `
name: failwhen
vars: {counter: x}
steps:
  - id: poll
    run: {argv: [sh, -c, 'n=$(cat "$0" 2>/dev/null || echo 0); n=$((n+1)); echo $n > "$0"; echo $n', "${{ vars.counter }}"]}
    until: int(trim(result.stdout)) >= UNTIL
    failWhen: {that: 'int(trim(result.stdout)) == 3', message: the counter stopped at 3, hint: look at the counter file}
    hint: the step's own hint
    interval: 1ms
    timeout: 1h
`
	pods := &clustertest.Cluster{}
	pods.Put(map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": map[string]any{"namespace": "lab", "name": "web-1", "labels": map[string]any{"app": "web"}}})
	waiting := `
name: failwhen
steps:
  - id: watch
    wait: {kind: Pod, namespace: lab, selector: app=web}
    until: result.ready == 1
    failWhen: result.count == 1
    hint: the step's own hint
    timeout: 1h
`
	cases := []struct {
		name, src, until string
		mode             actions.Mode
		status           Status
		attempts         int
		err, hint        string
	}{
		{"poll", counting, "100", actions.Solve, Failed, 3, "the counter stopped at 3: failWhen int(trim(result.stdout)) == 3 (int(trim(result.stdout)) = 3)", "look at the counter file"},
		{"until first", counting, "3", actions.Solve, Passed, 3, "", "the step's own hint"},
		{"check mode reads once", counting, "100", actions.Check, Failed, 1, "the counter stopped at 3: failWhen int(trim(result.stdout)) == 3 (int(trim(result.stdout)) = 3)", "look at the counter file"},
		{"watch", waiting, "", actions.Solve, Failed, 1, "failWhen result.count == 1 (result.count = 1)", "the step's own hint"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			counter := filepath.Join(t.TempDir(), "n")
			if c.mode == actions.Check {
				if err := os.WriteFile(counter, []byte("2\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			var set []string
			if c.src == counting {
				set = append(set, "counter="+counter)
			}
			plan := compile(t, strings.ReplaceAll(c.src, "UNTIL", c.until), set...)
			rt := &actions.Runtime{Mode: c.mode, Cluster: func() (cluster.Cluster, error) { return pods, nil }}
			o, err := (&Runner{Plan: plan, Runtime: rt}).Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			s := o.Steps[0]
			if s.Status != c.status || s.Attempts != c.attempts || !strings.HasSuffix(s.Error, c.err) || s.Hint != c.hint {
				t.Errorf("got %s after %d attempts, error %q, hint %q\nwant %s after %d, error ending %q, hint %q",
					s.Status, s.Attempts, s.Error, s.Hint, c.status, c.attempts, c.err, c.hint)
			}
			if strings.Contains(s.Error, "timed out") {
				t.Errorf("failWhen waited for the timeout: %s", s.Error)
			}
		})
	}
}
