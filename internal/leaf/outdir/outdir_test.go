package outdir

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestResolve(t *testing.T) {
	const dir = "/out"
	for _, tc := range []struct{ in, rel, err string }{
		{in: "a.json", rel: "a.json"},
		{in: "./sub/../a.json", rel: "a.json"},
		{in: "sub//b.txt", rel: "sub/b.txt"},
		{in: "/out/sub/c.txt", rel: "sub/c.txt"},
		{in: ".labrunx/a", rel: ".labrunx/a"},
		{in: "", err: "output path is empty"},
		{in: ".", err: "output path . names the output directory itself, not a file in it"},
		{in: "sub/..", err: "output path sub/.. names the output directory itself, not a file in it"},
		{in: "/out", err: "output path /out names the output directory itself, not a file in it"},
		{in: "a\x00b", err: `output path "a\x00b" holds a NUL byte`},
		{in: "../x", err: "output path ../x is outside the output directory /out"},
		{in: "sub/../../x", err: "output path sub/../../x is outside the output directory /out"},
		{in: "/etc/passwd", err: "output path /etc/passwd is outside the output directory /out"},
		{in: "/outside/x", err: "output path /outside/x is outside the output directory /out"},
		{in: ".labrun/journal.jsonl", err: "output path .labrun/journal.jsonl is inside .labrun, which labrun keeps for its journal"},
		{in: "x/../.labrun", err: "output path x/../.labrun is inside .labrun, which labrun keeps for its journal"},
		{in: "dir/", err: "output path dir/ ends with /, which names a directory; expected a file name after the last /"},
		{in: "/out/dir/", err: "output path /out/dir/ ends with /, which names a directory; expected a file name after the last /"},
		{in: "dir/.", err: "output path dir/. ends with /., which names a directory; expected a file name after the last /"},
		{in: "a/b/..", err: "output path a/b/.. ends with /.., which names a directory; expected a file name after the last /"},
		{in: "new\nline.txt", err: `output path "new\nline.txt" holds a control character; file names here are printable text`},
		{in: "tab\there", err: `output path "tab\there" holds a control character; file names here are printable text`},
		{in: "del\x7f", err: `output path "del\x7f" holds a control character; file names here are printable text`},
		{in: "c1\u0085", err: `output path "c1\u0085" holds a control character; file names here are printable text`},
	} {
		rel, err := Resolve(dir, tc.in)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if rel != tc.rel || got != tc.err {
			t.Errorf("Resolve(%q) = %q, %q; want %q, %q", tc.in, rel, got, tc.rel, tc.err)
		}
	}
}

// FuzzResolve: whatever a playbook writes as a path, what Resolve accepts
// is a clean relative path naming a file strictly inside the directory and
// outside labrun's own state, and the same file whether given relative or
// absolute.
func FuzzResolve(f *testing.F) {
	for _, s := range []string{"a.json", "./sub/../a.json", "../x", "/out/a", "/out/../out/a", ".labrun/j", "", ".", "a\x00", "//out//a/", "sub/./../.."} {
		f.Add(s)
	}
	const dir = "/out"
	f.Fuzz(func(t *testing.T, p string) {
		rel, err := Resolve(dir, p)
		if err != nil {
			if rel != "" {
				t.Fatalf("Resolve(%q) returned %q with error %v", p, rel, err)
			}
			return
		}
		switch {
		case rel == "" || rel == "." || filepath.IsAbs(rel) || rel != filepath.Clean(rel):
			t.Fatalf("Resolve(%q) = %q: not a clean relative path", p, rel)
		case rel == ".." || strings.HasPrefix(rel, "../"):
			t.Fatalf("Resolve(%q) = %q: leaves the directory", p, rel)
		case rel == StateDir || strings.HasPrefix(rel, StateDir+"/"):
			t.Fatalf("Resolve(%q) = %q: inside %s", p, rel, StateDir)
		case strings.IndexByte(rel, 0) >= 0:
			t.Fatalf("Resolve(%q) = %q: holds a NUL byte", p, rel)
		}
		if !filepath.IsAbs(p) {
			abs, err := Resolve(dir, filepath.Join(dir, p))
			if err != nil || abs != rel {
				t.Fatalf("Resolve(%q) = %q but its absolute form gives %q, %v", p, rel, abs, err)
			}
		}
	})
}

func create(t *testing.T, dir string) *Dir {
	t.Helper()
	d, err := Create(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// A directory labrun makes is owner-only; written files follow the umask,
// as any tool's; the journal is owner-only whatever the umask.
func TestModes(t *testing.T) {
	old := syscall.Umask(0o027)
	defer syscall.Umask(old)
	path := filepath.Join(t.TempDir(), "a", "out")
	d := create(t, path)
	if err := d.WriteFile("sub/f.txt", []byte("x")); err != nil {
		t.Fatal(err)
	}
	j, err := d.OpenJournal(true)
	if err != nil {
		t.Fatal(err)
	}
	j.Close()
	for p, want := range map[string]os.FileMode{
		"":                 os.ModeDir | 0o700,
		"sub":              os.ModeDir | 0o750,
		"sub/f.txt":        0o640,
		StateDir:           os.ModeDir | 0o700,
		JournalFile:        0o600,
		filepath.Dir(path): os.ModeDir | 0o750,
	} {
		full := filepath.Join(path, p)
		if filepath.IsAbs(p) {
			full = p
		}
		fi, err := os.Stat(full)
		if err != nil || fi.Mode() != want {
			t.Errorf("%s: mode %v (%v), want %v", p, fi.Mode(), err, want)
		}
	}
	entries, _ := os.ReadDir(filepath.Join(path, "sub"))
	if len(entries) != 1 {
		t.Errorf("sub holds %v, want f.txt alone (no temporary file left)", entries)
	}
}

// A journal an older run left readable by all becomes owner-only.
func TestJournalBecomesOwnerOnly(t *testing.T) {
	dir := t.TempDir()
	os.Mkdir(filepath.Join(dir, StateDir), 0o755)
	if err := os.WriteFile(filepath.Join(dir, JournalFile), []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := create(t, dir).OpenJournal(false)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if fi, _ := os.Stat(filepath.Join(dir, JournalFile)); fi.Mode() != 0o600 {
		t.Errorf("journal mode %v, want 0600", fi.Mode())
	}
}

// The output directory itself as a link is refused: whoever planted it
// chose where the files go.
func TestOutputDirLinkRefused(t *testing.T) {
	target := t.TempDir()
	link := filepath.Join(t.TempDir(), "out")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	want := "output directory " + link + " is a symbolic link; refusing to follow it"
	for name, open := range map[string]func(string) (*Dir, error){"Create": Create, "Open": Open} {
		if _, err := open(link); err == nil || err.Error() != want {
			t.Errorf("%s: err = %v, want %q", name, err, want)
		}
	}
}

// check reads a learner's regular files only, and only so much: a pipe
// would block it, a device or a huge file would fill its memory.
func TestReadFileRefusals(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o600); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "big"), make([]byte, 11), 0o600)
	os.WriteFile(filepath.Join(dir, "small"), []byte("0123456789"), 0o600)
	os.Symlink("small", filepath.Join(dir, "inside"))
	os.Symlink("/etc/hostname", filepath.Join(dir, "outside"))
	d, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	for name, want := range map[string]string{
		"fifo":    "fifo is not a regular file (p---------)",
		"big":     "big is larger than 10 bytes",
		"outside": "output path outside leaves the output directory through a symbolic link",
		"small":   "",
		"inside":  "",
	} {
		_, err := d.ReadFile(name, 10)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != want {
			t.Errorf("%s: err %q, want %q", name, got, want)
		}
	}
}

// A missing directory read by check has every file missing.
func TestOpenMissing(t *testing.T) {
	d, err := Open(filepath.Join(t.TempDir(), "none"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.ReadFile("a", 10); !os.IsNotExist(err) {
		t.Errorf("err = %v, want not exist", err)
	}
}

// A run starting in a directory removes the temporary files of writes a
// killed run did not finish, at any depth, and nothing else: not a file
// merely named alike, not a directory, not a file a link leads to.
func TestCreateRemovesInterruptedWrites(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "out")
	outside := filepath.Join(base, "outside")
	for _, d := range []string{dir + "/sub/deep", dir + "/.labrun", outside, dir + "/.x.tmp-0123456789abcdef"} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	// The names an interrupted write leaves, made by the code that writes.
	d, err := Create(dir)
	if err != nil {
		t.Fatal(err)
	}
	var leftovers []string
	for _, rel := range []string{"a.json", "sub/deep/b.txt"} {
		name, f, err := d.createTemp(rel)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString("half")
		f.Close()
		leftovers = append(leftovers, name)
	}
	d.Close()
	kept := []string{
		"a.json", ".a.json.tmp-0123", "a.json.tmp-0123456789abcdef", ".a.json.tmp-0123456789abcdeg",
		".a.json.tmp-0123456789abcdef0", ".labrun/journal.jsonl",
	}
	for _, rel := range kept {
		if err := os.WriteFile(filepath.Join(dir, rel), []byte("keep"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	outsideTemp := filepath.Join(outside, ".c.tmp-0123456789abcdef")
	os.WriteFile(outsideTemp, []byte("keep"), 0o600)
	os.Symlink(outside, filepath.Join(dir, "link"))
	os.Symlink(outsideTemp, filepath.Join(dir, ".d.tmp-0123456789abcdef"))

	d, err = Create(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	for _, rel := range leftovers {
		if _, err := os.Lstat(filepath.Join(dir, rel)); !os.IsNotExist(err) {
			t.Errorf("leftover %s of an interrupted write is still there: %v", rel, err)
		}
	}
	for _, rel := range append(kept, ".x.tmp-0123456789abcdef", ".d.tmp-0123456789abcdef") {
		if _, err := os.Lstat(filepath.Join(dir, rel)); err != nil {
			t.Errorf("%s was removed: %v", rel, err)
		}
	}
	if _, err := os.Stat(outsideTemp); err != nil {
		t.Errorf("a file outside the directory, reached through a link, was removed: %v", err)
	}
}
