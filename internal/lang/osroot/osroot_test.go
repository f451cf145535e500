package osroot

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// A path out of a root, by ".." or through a link, is Escapes; a missing
// file, or an error that only says the same words, is not.
func TestEscapes(t *testing.T) {
	dir := t.TempDir()
	inner := filepath.Join(dir, "root")
	if err := os.Mkdir(inner, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "outside.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../outside.txt", filepath.Join(inner, "link")); err != nil {
		t.Fatal(err)
	}
	r, err := os.OpenRoot(inner)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	_, dotdot := r.Open("../outside.txt")
	_, link := r.Open("link")
	_, missing := r.Open("missing.txt")
	for _, tt := range []struct {
		name string
		err  error
		want bool
	}{
		{"..", dotdot, true},
		{"a link out", link, true},
		{"wrapped", fmt.Errorf("reading: %w", link), true},
		{"missing", missing, false},
		{"the same words", errors.New("openat x: path escapes from parent"), false},
		{"nil", nil, false},
	} {
		if got := Escapes(tt.err); got != tt.want {
			t.Errorf("%s: Escapes(%v) = %v, want %v", tt.name, tt.err, got, tt.want)
		}
	}
}
