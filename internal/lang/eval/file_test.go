package eval

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// file() reads inside the playbook's directory only: a symbolic link out
// of it is refused like "..", whether it points at a file or a directory.
func TestFileStaysInside(t *testing.T) {
	base := t.TempDir()
	lab := filepath.Join(base, "lab")
	if err := os.MkdirAll(filepath.Join(lab, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{"secret.txt": "outside", "lab/in.txt": "inside", "lab/sub/deep.txt": "deep"} {
		if err := os.WriteFile(filepath.Join(base, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{"lab/out.txt": "../secret.txt", "lab/outdir": "..", "lab/ok.txt": "sub/deep.txt"} {
		if err := os.Symlink(target, filepath.Join(base, link)); err != nil {
			t.Fatal(err)
		}
	}
	f := FileFunction(lab)
	for _, tc := range []struct{ path, want, err string }{
		{"in.txt", "inside", ""},
		{"sub/deep.txt", "deep", ""},
		{"ok.txt", "deep", ""}, // a link that stays inside
		{"sub/../in.txt", "inside", ""},
		{"out.txt", "", "leads out of the playbook's directory"},
		{"outdir/secret.txt", "", "leads out of the playbook's directory"},
		{"../secret.txt", "", "leads out of the playbook's directory"},
		{filepath.Join(base, "secret.txt"), "", "must be relative"},
		{"", "", "must be relative"},
		{"nope.txt", "", "no such file"},
	} {
		got, err := f.Fn(tc.path)
		if tc.err == "" {
			if err != nil || got != tc.want {
				t.Errorf("file(%q) = %v, %v; want %q", tc.path, got, err, tc.want)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("file(%q) error %v, want one saying %q", tc.path, err, tc.err)
		}
		if f.CheckConst(tc.path) == nil {
			t.Errorf("CheckConst(%q) passed", tc.path)
		}
	}
	if _, err := FileFunction("").Fn("in.txt"); err == nil {
		t.Error("file() without a playbook directory read something")
	}
}

// file() refuses what is not a regular file without waiting on it: opening
// a FIFO for reading blocks until a writer comes, and validate hung there.
func TestFileRefusesFIFO(t *testing.T) {
	lab := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(lab, "fifo"), 0o600); err != nil {
		t.Skipf("cannot make a FIFO: %v", err)
	}
	f := FileFunction(lab)
	for _, read := range []struct {
		name string
		call func() error
	}{
		{"file()", func() error { _, err := f.Fn("fifo"); return err }},
		{"CheckConst", func() error { return f.CheckConst("fifo") }},
	} {
		done := make(chan error, 1)
		go func() { done <- read.call() }()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), "not a regular file") {
				t.Errorf("%s of a FIFO: error %v, want one saying it is not a regular file", read.name, err)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s of a FIFO still blocked after 5s", read.name)
		}
	}
}
