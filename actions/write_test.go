package actions

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/labrun/labrun/eval"
	"github.com/labrun/labrun/internal/outdir"
)

func createOut(t *testing.T, dir string) *outdir.Dir {
	t.Helper()
	d, err := outdir.Create(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

func TestWriteStaysInsideOutputDir(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	rt := &Runtime{Out: createOut(t, root)}
	text := "x"
	for path, want := range map[string]string{
		"../escape.txt":                     "is outside the output directory",
		"/etc/labrun-test":                  "is outside the output directory",
		"link/file.txt":                     "leaves the output directory through a symbolic link",
		"ok/nested.txt":                     "",
		filepath.Join(root, "absolute.txt"): "",
	} {
		_, err := writeFile(context.Background(), rt, &WriteSpec{Path: path, Text: &text})
		switch {
		case want == "" && err != nil:
			t.Errorf("%s: %v", path, err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
			t.Errorf("%s: err %v, want %q", path, err, want)
		}
	}
	if _, err := os.Stat(filepath.Join(outside, "file.txt")); err == nil {
		t.Error("a file was written through the symbolic link")
	}
}

func TestWriteIsAtomicAndLeavesNoTemporaryFiles(t *testing.T) {
	root := t.TempDir()
	rt := &Runtime{Out: createOut(t, root)}
	m := eval.NewMap()
	m.Set("b", 1)
	m.Set("a", []any{"x"})
	if _, err := writeFile(context.Background(), rt, &WriteSpec{Path: "f.json", JSON: m}); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(root)
	if len(entries) != 1 || entries[0].Name() != "f.json" {
		t.Errorf("directory holds %v", entries)
	}
	got, _ := os.ReadFile(filepath.Join(root, "f.json"))
	if string(got) != "{\n  \"b\": 1,\n  \"a\": [\n    \"x\"\n  ]\n}\n" {
		t.Errorf("content %q", got)
	}
}

func TestWriteChecksSchemaBeforeWriting(t *testing.T) {
	root := t.TempDir()
	schema := filepath.Join(t.TempDir(), "s.json")
	os.WriteFile(schema, []byte(`{"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}`), 0o644)
	m := eval.NewMap()
	m.Set("n", "4")
	_, err := writeFile(context.Background(), &Runtime{Out: createOut(t, root)}, &WriteSpec{Path: "f.json", JSON: m, Schema: schema})
	if err == nil || !strings.Contains(err.Error(), `/n: is a string "4", expected integer`) {
		t.Fatalf("err = %v", err)
	}
	if _, err := os.Stat(filepath.Join(root, "f.json")); err == nil {
		t.Error("an invalid file was written")
	}
}

func TestRunKillsProcessGroupOnTimeout(t *testing.T) {
	// The child shell starts a grandchild that would outlive a plain kill.
	res, err := runProgram(context.Background(), &Runtime{}, &RunSpec{Argv: []string{"sh", "-c", "sleep 30 & sleep 30"}, Timeout: 200e6})
	if err == nil || !strings.Contains(err.Error(), "did not finish within the time limit") {
		t.Fatalf("err = %v", err)
	}
	if res.Seconds > 5 {
		t.Errorf("took %.1fs", res.Seconds)
	}
}

func TestRunArgvIsNotAShell(t *testing.T) {
	res, err := runProgram(context.Background(), &Runtime{}, &RunSpec{Argv: []string{"echo", "$HOME; rm -rf /"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Stdout != "$HOME; rm -rf /\n" {
		t.Errorf("stdout %q", res.Stdout)
	}
	if got := ShellQuote([]string{"sh", "-c", "a b", "it's"}); got != `sh -c 'a b' 'it'\''s'` {
		t.Errorf("ShellQuote = %s", got)
	}
}
