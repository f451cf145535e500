package eval

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
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
