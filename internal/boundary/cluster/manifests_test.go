package cluster

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A manifest that is not a regular file is refused without waiting on
// it: opening a FIFO for reading blocks until a writer comes.
func TestReadManifest(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "ok.yaml"), []byte("kind: Namespace\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo.yaml"), 0o600); err != nil {
		t.Skipf("cannot make a FIFO: %v", err)
	}
	for _, tc := range []struct{ file, want, err string }{
		{"ok.yaml", "kind: Namespace\n", ""},
		{"fifo.yaml", "", "fifo.yaml is a named pipe (FIFO), not a regular file"},
		{".", "", " is a directory, not a regular file"},
		{"nope.yaml", "", "no such file"},
	} {
		type read struct {
			data []byte
			err  error
		}
		done := make(chan read, 1)
		go func() { b, err := ReadManifest(filepath.Join(dir, tc.file)); done <- read{b, err} }()
		select {
		case r := <-done:
			switch {
			case tc.err == "" && (r.err != nil || string(r.data) != tc.want):
				t.Errorf("ReadManifest(%s) = %q, %v; want %q", tc.file, r.data, r.err, tc.want)
			case tc.err != "" && (r.err == nil || !strings.Contains(r.err.Error(), tc.err)):
				t.Errorf("ReadManifest(%s): error %v, want one saying %q", tc.file, r.err, tc.err)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("ReadManifest(%s) still blocked after 5s", tc.file)
		}
	}
}
