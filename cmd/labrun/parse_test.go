package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/labrun/labrun/internal/parse"
)

// The streamed JSON of `labrun parse` is byte for byte what encoding/json
// prints for the whole result, indented and compact, for every parser on
// its real captures; --lines prints one value per record.
func TestParseStreamsLikeEncodingJSON(t *testing.T) {
	files, err := filepath.Glob("../../internal/parse/testdata/real/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no captures: %v", err)
	}
	seen := map[string]bool{}
	for _, path := range files {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		header, body := splitCapture(string(data))
		p, ok := parse.ForCommand(header["command"])
		if !ok {
			continue
		}
		v, err := p.Parse(body)
		if err != nil {
			continue // captures of failed commands
		}
		seen[p.Kind] = true
		for _, indent := range []bool{false, true} {
			var want bytes.Buffer
			enc := json.NewEncoder(&want)
			enc.SetEscapeHTML(false)
			if indent {
				enc.SetIndent("", "  ")
			}
			if err := enc.Encode(v); err != nil {
				t.Fatal(err)
			}
			var got bytes.Buffer
			w := bufio.NewWriter(&got)
			if err := writeJSON(w, v, p.Records, indent); err != nil {
				t.Fatal(err)
			}
			w.Flush()
			if got.String() != want.String() {
				t.Errorf("%s (indent %v): streamed JSON differs from encoding/json", path, indent)
			}
		}
		var lines bytes.Buffer
		w := bufio.NewWriter(&lines)
		if err := writeJSONLines(w, v, p.Records); err != nil {
			t.Fatal(err)
		}
		w.Flush()
		if lines.Len() == 0 {
			continue // no records
		}
		for i, l := range strings.Split(strings.TrimSuffix(lines.String(), "\n"), "\n") {
			if !json.Valid([]byte(l)) {
				t.Errorf("%s: --lines line %d is not one JSON value: %.80s", path, i+1, l)
			}
		}
	}
	for _, kind := range []string{"cilium-bpf-ct-list", "cilium-service-list", "cilium-status", "bpftool-net-show"} {
		if !seen[kind] {
			t.Errorf("no capture of %s was checked", kind)
		}
	}
}

// splitCapture removes the "# key: value" header of a capture.
func splitCapture(text string) (map[string]string, string) {
	h := map[string]string{}
	for strings.HasPrefix(text, "# ") {
		line, rest, _ := strings.Cut(text, "\n")
		k, v, ok := strings.Cut(line[2:], ":")
		if !ok || strings.ContainsAny(k, " ") {
			break
		}
		h[k] = strings.TrimSpace(v)
		text = rest
	}
	return h, text
}
