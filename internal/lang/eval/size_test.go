package eval

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Each file of the package keeps to one job (building spec values,
// checking them, decoding them, compiling expressions, checking what they
// read, ...); a file past 500 lines is a sign that a second job moved in.
func TestNoFileOver500Lines(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if n := bytes.Count(b, []byte{'\n'}); n > 500 {
			t.Errorf("%s has %d lines; split it by job", f, n)
		}
	}
}
