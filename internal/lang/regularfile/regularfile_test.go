package regularfile

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// A regular file is read up to the bound; a FIFO is refused at once (no
// writer is waited for), as are a directory, a device and a file over the
// bound; a missing file gives the *fs.PathError.
func TestRead(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f.txt")
	if err := os.WriteFile(file, []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for _, tt := range []struct {
			path string
			max  int64
			want string // the error, "" for the file's text
		}{
			{file, -1, ""},
			{file, 5, ""},
			{file, 4, "larger than 4 bytes"},
			{fifo, -1, fifo + " is a named pipe (FIFO), not a regular file"},
			{dir, -1, dir + " is a directory, not a regular file"},
			{"/dev/zero", -1, "/dev/zero is a device, not a regular file"},
		} {
			data, err := Read(tt.path, tt.max)
			switch {
			case tt.want == "" && (err != nil || string(data) != "hello"):
				t.Errorf("Read(%s, %d) = %q, %v", tt.path, tt.max, data, err)
			case tt.want != "" && (err == nil || err.Error() != tt.want):
				t.Errorf("Read(%s, %d) error %v, want %q", tt.path, tt.max, err, tt.want)
			}
		}
		if _, err := Read(filepath.Join(dir, "missing"), -1); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("a missing file: %v, want not exist", err)
		}
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Read blocked on the FIFO")
	}
}
