package parse

import (
	"strings"
	"testing"
)

// TestCutMidLineRefused is the measurement of issue "honest at the edges",
// item 1, on every capture under testdata: text cut at any byte that is
// not just after a newline (inside a value, inside a line's leading
// spaces, between "\r" and "\n") must be refused as Truncated, with an
// error that names a line; only a cut that loses nothing but the final
// newline of a self-delimiting document (JSON) may read as the full
// output. TestCutAnywhere checks what cuts at line ends give.
func TestCutMidLineRefused(t *testing.T) {
	for _, in := range goldenInputs(t) {
		if in.expectError || in.mayFail {
			continue
		}
		t.Run(in.rel, func(t *testing.T) {
			p, _ := Lookup(in.kind)
			full, err := p.Parse(in.body)
			if err != nil {
				t.Fatal(err)
			}
			fullJSON := mustJSON(toJSONValue(t, full))
			for _, i := range cutPoints(in.body) {
				if i == 0 || in.body[i-1] == '\n' {
					continue
				}
				checkMidLineCut(t, p, in.body[:i], fullJSON)
			}
		})
	}
}

// checkMidLineCut fails when cut, text that does not end with a newline,
// parses to anything but the full output (fullJSON) or fails without
// naming the line of the cut.
func checkMidLineCut(t *testing.T, p Parser, cut, fullJSON string) {
	t.Helper()
	v, err := p.Parse(cut)
	if err == nil {
		if mustJSON(toJSONValue(t, v)) == fullJSON {
			return
		}
		last := cut[strings.LastIndexByte(cut, '\n')+1:]
		if p.Kind == kindCurl && !strings.Contains(last, "curl: (") {
			// curl prints its -w text with no newline of its own, so a
			// value cut short ("200 0.0017" of "200 0.001764") looks
			// whole; its error line ends with one (docs/language.md).
			return
		}
		t.Fatalf("cut at byte %d (%q) accepted: %.200s", len(cut), tail(cut), mustJSON(v))
	}
	var pe *Error
	if !asError(err, &pe) {
		t.Fatalf("cut at byte %d: error %v is not a *parse.Error", len(cut), err)
	}
	if noRecordYet(cut) && !pe.Truncated {
		return // nothing complete before the cut: refused as empty or headless
	}
	if !pe.Truncated || pe.Line == 0 {
		t.Fatalf("cut at byte %d (%q): error not marked Truncated or names no line: %v", len(cut), tail(cut), err)
	}
}
