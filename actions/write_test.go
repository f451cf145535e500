package actions

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/labrun/labrun/internal/lang/eval"
	"github.com/labrun/labrun/internal/leaf/outdir"
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

// result.file is what was written in a run, and the learner's file in
// check mode, so one assertion over it grades both.
func TestWriteResultFile(t *testing.T) {
	root := t.TempDir()
	m := eval.NewMap()
	m.Set("after_hash", "b")
	m.Set("before_hash", "a")
	m.Set("n", 2)
	spec := &WriteSpec{Path: "f.json", JSON: m, Loose: []any{"before_hash"}}
	res, err := writeFile(context.Background(), &Runtime{Out: createOut(t, root)}, spec)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(res.File, res.Data) {
		t.Errorf("run: file %#v, want data %#v", res.File, res.Data)
	}
	os.WriteFile(filepath.Join(root, "f.json"), []byte(`{"after_hash": "b", "before_hash": "x", "n": 2, "f": 1.5, "l": [3]}`), 0o600)
	res, err = writeFile(context.Background(), &Runtime{Out: createOut(t, root), Mode: Check}, spec)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"after_hash": "b", "before_hash": "x", "n": 2, "f": 1.5, "l": []any{3}}
	if !reflect.DeepEqual(res.File, want) {
		t.Errorf("check: file %#v, want the learner's %#v", res.File, want)
	}
	kv := eval.NewMap()
	kv.Set("k", "v")
	os.WriteFile(filepath.Join(root, "r.txt"), []byte("k=w\n"), 0o600)
	res, _ = writeFile(context.Background(), &Runtime{Out: createOut(t, root), Mode: Check}, &WriteSpec{Path: "r.txt", KV: kv})
	if !reflect.DeepEqual(res.File, map[string]string{"k": "w"}) || len(res.Problems) != 1 {
		t.Errorf("check kv: file %#v, problems %v", res.File, res.Problems)
	}
	res, _ = writeFile(context.Background(), &Runtime{Out: createOut(t, root), Mode: Check}, &WriteSpec{Path: "absent.json", JSON: m})
	if res.File != nil {
		t.Errorf("check of a missing file: file %#v, want nil", res.File)
	}
}
