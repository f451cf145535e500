package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/labrun/labrun/internal/leaf/outdir"
)

// A fresh run that fails leaves none of the previous run's files looking
// current: they are removed when it starts, its manifest says it failed
// and lists only what it wrote, the summary says the outputs are
// incomplete, and check, grading the directory, warns that its files are
// those of a run that did not pass.
func TestFailedFreshRunLeavesNoStaleFile(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	pb := filepath.Join(dir, "p.yaml")
	os.WriteFile(pb, []byte(`name: stale
vars: {out: x, fail: false}
outputDir: ${{ vars.out }}
steps:
  - id: first
    write: {path: first.txt, text: one}
  - id: gate
    assert:
      - that: ${{ !vars.fail }}
  - id: second
    write: {path: second.txt, text: two}
`), 0o644)
	run := func(cmd string, set ...string) (string, int) {
		var stdout, stderr bytes.Buffer
		args := []string{cmd, "--no-progress", "--set", "out=" + out}
		for _, s := range set {
			args = append(args, "--set", s)
		}
		code := Main(append(args, pb), &stdout, &stderr)
		return stdout.String() + stderr.String(), code
	}
	status := func() map[string]any { return readManifest(t, out) }
	if got, code := run("run"); code != 0 || !strings.Contains(got, "outputs: "+out+"\n") {
		t.Fatalf("first run: exit %d\n%s", code, got)
	}
	if st := status(); st["status"] != "passed" || !slices.Equal(st["files"].([]any), []any{"first.txt", "second.txt"}) {
		t.Fatalf("first run's manifest: %v", st)
	}
	got, code := run("run", "fail=true")
	if code != 1 || !strings.Contains(got, "outputs (incomplete, the run failed): "+out+"\n") {
		t.Errorf("failing run: exit %d\n%s", code, got)
	}
	if _, err := os.Stat(filepath.Join(out, "second.txt")); err == nil {
		t.Error("second.txt of the previous run is still there")
	}
	if st := status(); st["status"] != "failed" || !slices.Equal(st["files"].([]any), []any{"first.txt"}) {
		t.Errorf("failed run's manifest: %v", st)
	}
	got, _ = run("check")
	if !strings.Contains(got, "warning: the output directory holds the files of a run that did not pass: labrun run ") || !strings.Contains(got, " failed; its files may be incomplete") {
		t.Errorf("check after a failed run does not warn:\n%s", got)
	}
	if got, code := run("run", "fail=false"); code != 0 {
		t.Errorf("run again: exit %d\n%s", code, got)
	}
	if got, _ := run("check"); strings.Contains(got, "warning:") {
		t.Errorf("check after a passed run warns:\n%s", got)
	}
}

// A SIGKILLed fresh run leaves its manifest at "running" with the files it
// finished; `--from` the step it was killed in completes the lab, and
// check then passes the files without a warning. The kill comes once the
// step's program has started (it writes its pid into a FIFO), not after a
// sleep.
func TestKilledRunResumedPassesCheck(t *testing.T) {
	fifo, pb := fifoPlaybook(t, `name: killed
vars: {out: x, fifo: x, block: "no"}
outputDir: ${{ vars.out }}
steps:
  - id: first
    write: {path: first.json, json: {n: 1}}
  - id: long
    run: {argv: [sh, -c, 'if [ "$1" = yes ]; then echo $$ > "$2"; exec sleep 60; fi; echo done', sh, "${{ vars.block }}", "${{ vars.fifo }}"]}
  - id: second
    write: {path: second.txt, text: "${{ trim(steps.long.stdout) }}"}
`)
	out := filepath.Join(t.TempDir(), "out")
	var output lockedBuffer
	cmd, exited := startLabrun(t, &output, "run", "--no-progress", "--set", "out="+out, "--set", "fifo="+fifo, "--set", "block=yes", pb)
	watchPids(t, fifo, exited, &output)
	cmd.Process.Kill()
	if code := waitExit(t, cmd, exited, &output); code != -1 {
		t.Fatalf("labrun exit %d after SIGKILL, want -1 (killed)", code)
	}
	st := readManifest(t, out)
	if st["status"] != "running" || !slices.Equal(st["files"].([]any), []any{"first.json"}) {
		t.Errorf("killed run's manifest: %v", st)
	}
	var stdout, stderr bytes.Buffer
	if code := Main([]string{"run", "--no-progress", "--set", "out=" + out, "--set", "fifo=" + fifo, "--from", "long", pb}, &stdout, &stderr); code != 0 {
		t.Fatalf("--from long: exit %d\n%s%s", code, stdout.String(), stderr.String())
	}
	st = readManifest(t, out)
	if st["status"] != "passed" || st["from"] != "long" || !slices.Equal(st["files"].([]any), []any{"first.json", "second.txt"}) {
		t.Errorf("resumed run's manifest: %v", st)
	}
	stdout.Reset()
	stderr.Reset()
	if code := Main([]string{"check", "--no-progress", "--set", "out=" + out, "--set", "fifo=" + fifo, pb}, &stdout, &stderr); code != 0 || strings.Contains(stdout.String(), "warning") {
		t.Errorf("check after the resumed run: exit %d\n%s%s", code, stdout.String(), stderr.String())
	}
}

func readManifest(t *testing.T, out string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(out, outdir.StatusFile))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	return m
}
