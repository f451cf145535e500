package runner

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/labrun/labrun/actions"
)

// threeSteps echoes a, b and c, each step's result kept in the journal.
const threeSteps = `
name: journal
vars: {out: x}
outputDir: ${{ vars.out }}
steps:
  - id: a
    run: {argv: [echo, a]}
  - id: b
    run: {argv: [echo, b]}
  - id: c
    run: {argv: [echo, c]}
`

// A run stopped by a full disk leaves a torn last line: --from resumes
// after the complete lines, and what it appends starts on a line of its
// own, so a later --from finds it.
func TestResumeAfterTornLastLine(t *testing.T) {
	out := t.TempDir()
	src := threeSteps
	solve(t, src, "out="+out)
	path := filepath.Join(out, ".labrun", "journal.jsonl")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// cut in the middle of b's line
	cut := bytes.Index(data, []byte(`{"id":"b"`)) + 20
	if err := os.WriteFile(path, data[:cut], 0o600); err != nil {
		t.Fatal(err)
	}
	resume(t, src, "b", "out="+out)
	_, rec := resume(t, src, "c", "out="+out)
	if s := rec.status("b"); s != Restored {
		t.Errorf("b: %s, want restored from the line the first resume appended", s)
	}
	data, _ = os.ReadFile(path)
	for i, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		if !strings.HasPrefix(line, `{"id":"`) || !strings.HasSuffix(line, "}") {
			t.Errorf("journal line %d is not a whole entry: %q", i+1, line)
		}
	}
}

// A result that cannot be written to the journal fails its step at once,
// naming the journal, and the run with it; the journal keeps whole lines.
func TestJournalWriteFailureFailsTheRun(t *testing.T) {
	out := t.TempDir()
	path := filepath.Join(out, ".labrun", "journal.jsonl")
	plan := compile(t, threeSteps, "out="+out)
	r := &Runner{Plan: plan, Runtime: &actions.Runtime{}}
	r.Observer = &recorder{onStart: func(s *StepPlan) {
		if s.ID == "b" {
			// the journal's file turns read-only while b runs, so
			// its write fails as on a full disk
			ro, err := os.Open(path)
			if err != nil {
				t.Error(err)
				return
			}
			r.journal.f.Close()
			r.journal.f = ro
		}
	}}
	o, err := r.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if o.Status != Failed {
		t.Errorf("run %s, want failed", o.Status)
	}
	want := "cannot write journal " + path + ": bad file descriptor"
	if len(o.Steps) != 3 || o.Steps[1].Status != Failed || o.Steps[1].Error != want || o.Steps[2].Status != Skipped {
		t.Errorf("steps %+v %+v %+v, want b failed with %q and c skipped", o.Steps[0], o.Steps[1], o.Steps[2], want)
	}
}
