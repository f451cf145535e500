//go:build e2e

package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/labrun/labrun/internal/heavy/kube/kubetest"
	"github.com/labrun/labrun/internal/parse"
	"github.com/labrun/labrun/internal/parse/parsetest"
)

// Every JSON document the running agent prints, parsed as a lab parses
// it, holds no "", 0 or false the agent did not print (an endpoint's
// podName was "" on Cilium 1.20.1, which fills external-identifiers with
// cni-attachment-id only): what the agent did not print is null, keys
// its models omit as zero (omitempty) among them, unless the parser
// derives the value from what was printed (parsetest.Derived).
func TestLiveJSONResultsInventNothing(t *testing.T) {
	c := kubetest.Connect(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ag := newAgent(ctx, t, c)
	for _, tt := range []struct {
		kind string
		args []string
	}{
		{"cilium-endpoint-get", []string{"endpoint", "list", "-o", "json"}},
		{"cilium-status", []string{"status", "-o", "json"}},
		{"cilium-service-list", []string{"service", "list", "-o", "json"}},
		{"cilium-map-list", []string{"map", "list", "-o", "json"}},
		// not `bpf ipcache list -o json`: its values are text inside JSON
		// strings ("identity=2 encryptkey=0 ..."), which keys cannot name
	} {
		out, err := ag.run(ctx, true, tt.args...)
		if err != nil {
			t.Errorf("cilium-dbg %s: %v", strings.Join(tt.args, " "), err)
			continue
		}
		p, ok := parse.Lookup(tt.kind)
		if !ok {
			t.Fatalf("no parser %s", tt.kind)
		}
		v, err := p.Parse(out)
		if err != nil {
			t.Errorf("%s on the agent's output: %v", tt.kind, err)
			continue
		}
		bad, err := parsetest.InventedBeyond(tt.kind, []byte(out), v)
		if err != nil {
			t.Errorf("%s: %v", tt.kind, err)
		}
		for _, b := range bad {
			t.Errorf("cilium-dbg %s, parsed by %s: %s", strings.Join(tt.args, " "), tt.kind, b)
		}
	}
}
