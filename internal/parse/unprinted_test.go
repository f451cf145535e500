package parse

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/labrun/labrun/internal/parse/parsetest"
)

// A text parser never invents a value: every string of its result is in
// the text, every number is one the text prints, and a "", 0 or false the
// text did not print is null instead (parsetest.Unprinted); the fields a
// parser computes are parsetest.TextDerived's. Every text input of
// testdata (the testbed's captures in real/, the Linux tools' in local/,
// public/'s copies and synthetic/'s output of Cilium's printing code),
// each kind at least once.
func TestTextResultsInventNothing(t *testing.T) {
	checked := map[string]int{}
	for _, in := range goldenInputs(t) {
		if jsonText(in.body) || in.expectError {
			continue // JSON documents: TestJSONResultsInventNothing
		}
		p, ok := Lookup(in.kind)
		if !ok {
			t.Fatalf("%s: no parser for kind %q", in.rel, in.kind)
		}
		v, err := p.Parse(in.body)
		if err != nil {
			continue // a capture of a command that failed (its golden file has the error)
		}
		bad, err := parsetest.UnprintedBeyond(in.kind, in.body, v)
		if err != nil {
			t.Errorf("%s: %v", in.rel, err)
			continue
		}
		for _, b := range bad {
			t.Errorf("%s (%s): %s", in.rel, in.kind, b)
		}
		checked[in.kind]++
	}
	for _, p := range All {
		if checked[p.Kind] == 0 && p.Kind != kindEndpointGet && p.Kind != "hubble-observe" {
			t.Errorf("no text input of %s was checked", p.Kind)
		}
	}
}

// jsonText reports whether text is JSON: one document, or a stream of
// them a line each (hubble observe -o jsonpb), which has no text form.
func jsonText(text string) bool {
	if json.Valid([]byte(text)) {
		return true
	}
	lines := 0
	for _, line := range strings.Split(text, "\n") {
		if line = strings.TrimSpace(line); line == "" {
			continue
		}
		if !json.Valid([]byte(line)) {
			return false
		}
		lines++
	}
	return lines > 0
}
