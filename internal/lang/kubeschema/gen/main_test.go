package main

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"testing"
)

// The committed builtin.json.gz is what the generator makes of the
// sources in the module cache (go mod download fetches them when they
// are not there): a change to the conversion, or to the versions, needs
// `go generate ./internal/lang/kubeschema`.
func TestGeneratedMatchesSources(t *testing.T) {
	want, err := generate()
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("../builtin.json.gz")
	if err != nil {
		t.Fatal(err)
	}
	if g, w := gunzip(t, got), gunzip(t, want); !bytes.Equal(g, w) {
		t.Errorf("builtin.json.gz (%d bytes of JSON) is not what the sources give (%d bytes): run go generate ./internal/lang/kubeschema", len(g), len(w))
	}
	if len(got) > 64<<10 {
		t.Errorf("builtin.json.gz is %d bytes: keep only what validation needs", len(got))
	}
}

func gunzip(t *testing.T, data []byte) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
