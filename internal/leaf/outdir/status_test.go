package outdir

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func writeAll(t *testing.T, d *Dir, names ...string) {
	t.Helper()
	for _, n := range names {
		if err := d.WriteFile(n, []byte(n)); err != nil {
			t.Fatal(err)
		}
	}
}

func readStatus(t *testing.T, d *Dir) *RunStatus {
	t.Helper()
	st, err := d.ReadStatus()
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// A run's manifest lists the files it wrote; the next fresh run removes
// them before it writes anything, so a run that fails (or is killed, its
// manifest left "running") leaves no earlier run's file looking current.
// Files no run wrote stay, as does whatever a listed name became that is
// not a regular file; names that leave the directory or lead into
// labrun's state are passed over.
func TestFreshRunRemovesPreviousFiles(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	d := create(t, dir)
	if err := d.StartRun("p.yaml", ""); err != nil {
		t.Fatal(err)
	}
	writeAll(t, d, "a.json", "sub/b.txt", "c.txt", "a.json")
	if err := d.FinishRun(RunPassed); err != nil {
		t.Fatal(err)
	}
	first := readStatus(t, d)
	if first.Status != RunPassed || first.Ended == nil || !slices.Equal(first.Files, []string{"a.json", "c.txt", "sub/b.txt"}) {
		t.Fatalf("first run's manifest: %+v", first)
	}
	os.WriteFile(filepath.Join(dir, "learner.txt"), []byte("mine"), 0o644)
	os.Remove(filepath.Join(dir, "c.txt"))
	os.Mkdir(filepath.Join(dir, "c.txt"), 0o755) // no longer a file of the run
	d.Close()

	d = create(t, dir)
	defer d.Close()
	if err := d.StartRun("p.yaml", ""); err != nil {
		t.Fatal(err)
	}
	second := readStatus(t, d)
	if second.Status != RunRunning || second.RunID == first.RunID || second.Ended != nil || len(second.Files) != 0 {
		t.Fatalf("second run's manifest at its start: %+v", second)
	}
	for name, want := range map[string]bool{"a.json": false, "sub/b.txt": false, "learner.txt": true, "c.txt": true} {
		if _, err := os.Lstat(filepath.Join(dir, name)); (err == nil) != want {
			t.Errorf("%s: present %v, want %v", name, err == nil, want)
		}
	}
	writeAll(t, d, "a.json")
	// killed here: no FinishRun
	if st := readStatus(t, d); st.Status != RunRunning || !slices.Equal(st.Files, []string{"a.json"}) {
		t.Errorf("killed run's manifest: %+v", st)
	}
	if why := readStatus(t, d).Stale(); !strings.Contains(why, "never finished") {
		t.Errorf("Stale() = %q", why)
	}
}

// A resumed run keeps the files of the run it resumes, which its restored
// steps wrote, and adds its own.
func TestResumedRunKeepsFiles(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	d := create(t, dir)
	defer d.Close()
	d.StartRun("p.yaml", "")
	writeAll(t, d, "a.json")
	d.FinishRun(RunFailed)
	if err := d.StartRun("p.yaml", "later"); err != nil {
		t.Fatal(err)
	}
	writeAll(t, d, "b.json")
	d.FinishRun(RunPassed)
	st := readStatus(t, d)
	if st.From != "later" || st.Status != RunPassed || !slices.Equal(st.Files, []string{"a.json", "b.json"}) {
		t.Errorf("resumed run's manifest: %+v", st)
	}
	if _, err := os.Stat(filepath.Join(dir, "a.json")); err != nil {
		t.Error(err)
	}
}

// The manifest is read from a directory a learner controls: what is not
// one labrun wrote is refused with the reason, a listed name outside the
// directory or inside labrun's state is never removed, and a link in the
// manifest's place is not followed.
func TestReadStatusRefusals(t *testing.T) {
	for _, tc := range []struct{ name, content, err string }{
		{"garbage", "not json", "invalid character"},
		{"no id", `{"status":"passed","files":[]}`, "no runId"},
		{"status", `{"runId":"x","status":"done","files":[]}`, `status "done" is none of running, passed, failed, interrupted`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "out")
			os.MkdirAll(filepath.Join(dir, StateDir), 0o700)
			os.WriteFile(filepath.Join(dir, StatusFile), []byte(tc.content), 0o600)
			d := create(t, dir)
			defer d.Close()
			if _, err := d.ReadStatus(); err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ReadStatus: %v, want %q", err, tc.err)
			}
			// A fresh run starts anew over a manifest it cannot read.
			if err := d.StartRun("p.yaml", ""); err != nil {
				t.Errorf("StartRun: %v", err)
			}
		})
	}
	t.Run("outside names", func(t *testing.T) {
		top := t.TempDir()
		dir := filepath.Join(top, "out")
		os.MkdirAll(filepath.Join(dir, StateDir), 0o700)
		os.WriteFile(filepath.Join(top, "victim"), nil, 0o644)
		os.WriteFile(filepath.Join(dir, StateDir, "journal.jsonl"), nil, 0o600)
		os.WriteFile(filepath.Join(dir, StatusFile), []byte(`{"runId":"x","status":"passed","files":["../victim","`+top+`/victim",".labrun/journal.jsonl","./x/../.labrun/journal.jsonl"]}`), 0o600)
		d := create(t, dir)
		defer d.Close()
		if err := d.StartRun("p.yaml", ""); err != nil {
			t.Fatal(err)
		}
		for _, p := range []string{filepath.Join(top, "victim"), filepath.Join(dir, StateDir, "journal.jsonl")} {
			if _, err := os.Stat(p); err != nil {
				t.Errorf("%s was removed", p)
			}
		}
	})
	t.Run("link", func(t *testing.T) {
		top := t.TempDir()
		dir := filepath.Join(top, "out")
		os.MkdirAll(filepath.Join(dir, StateDir), 0o700)
		os.WriteFile(filepath.Join(top, "elsewhere.json"), []byte(`{"runId":"x","status":"passed","files":[]}`), 0o644)
		os.Symlink(filepath.Join(top, "elsewhere.json"), filepath.Join(dir, StatusFile))
		d := create(t, dir)
		defer d.Close()
		if _, err := d.ReadStatus(); err == nil || !strings.Contains(err.Error(), "symbolic link") {
			t.Errorf("ReadStatus: %v, want a refused link", err)
		}
	})
}
