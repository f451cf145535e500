package parse

import (
	"strings"
	"testing"

	"github.com/labrun/labrun/internal/parse/parsetest"
)

// A parser of JSON output never invents a value: a field that is "", 0
// or false in its result was printed so by Cilium, under a key of a like
// name; what Cilium did not print is null (an endpoint's podName was ""
// on 1.20, which fills external-identifiers with cni-attachment-id only).
// Cilium's models omit a key whose value is the zero (omitempty): such
// a field is null too, unless the parser derives it from what was
// printed (parsetest.Derived). Every JSON input of the testbed's
// captures (real/), of Cilium's docs and issues (public/) and of the
// synthetic inputs built from Cilium's models and the tools' sources
// (synthetic/), which print what no capture has (a service without an
// ID, an XDP attachment). Not local/: curl -w '%{json}' prints null for
// a variable without a value, which the curl parser's Fields still
// records as "".
func TestJSONResultsInventNothing(t *testing.T) {
	n := 0
	for _, in := range goldenInputs(t) {
		body := strings.TrimSpace(in.body)
		if strings.HasPrefix(in.rel, "local/") || !(strings.HasPrefix(body, "{") || strings.HasPrefix(body, "[")) || in.expectError || in.mayFail {
			continue
		}
		p, ok := Lookup(in.kind)
		if !ok {
			t.Fatalf("%s: no parser for kind %q", in.rel, in.kind)
		}
		v, err := p.Parse(in.body)
		if err != nil {
			continue
		}
		if in.kind == kindBpftoolNet {
			body = bpftoolNetJSON(body) // an attached flow dissector's id is not JSON as printed
		}
		bad, err := parsetest.InventedBeyond(in.kind, []byte(body), v)
		if err != nil {
			t.Errorf("%s: %v", in.rel, err)
			continue
		}
		for _, b := range bad {
			t.Errorf("%s (%s): %s", in.rel, in.kind, b)
		}
		n++
	}
	if n == 0 {
		t.Fatal("no real JSON capture was checked")
	}
}
