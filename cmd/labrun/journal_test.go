package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
)

// A journal that cannot take a step's result (here: the file size limit,
// as a full disk) fails the run at that step, naming the journal, with
// exit 2: the output directory cannot be used (config), which no answer
// of the learner's causes; a later --from resumes from the complete lines.
func TestJournalWriteFailure(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	pb := filepath.Join(dir, "p.yaml")
	os.WriteFile(pb, []byte(`name: full
vars: {out: x}
outputDir: ${{ vars.out }}
steps:
  - id: small
    run: {argv: [echo, hi]}
  - id: big
    run: {argv: [sh, -c, 'head -c 70000 /dev/zero | tr "\0" a']}
  - id: after
    run: {argv: [echo, after]}
`), 0o644)
	run := func(limit string, args ...string) (string, int) {
		cmd := exec.Command(os.Args[0], append([]string{"run", "--no-progress", "--set", "out=" + out, pb}, args...)...)
		cmd.Env = append(os.Environ(), "LABRUN_TEST_AS_MAIN=1", "LABRUN_TEST_FSIZE="+limit)
		b, err := cmd.CombinedOutput()
		var exitErr *exec.ExitError
		if errors.As(err, &exitErr) {
			return string(b), exitErr.ExitCode()
		}
		if err != nil {
			t.Fatal(err)
		}
		return string(b), 0
	}
	got, code := run("32768")
	got = regexp.MustCompile(`\d+\.\ds`).ReplaceAllString(got, "X.Xs")
	want := `labrun: full (3 steps)
ok   [1/3] small (run) X.Xs
FAIL [2/3] big (run) X.Xs [config]
       cannot write journal ` + out + `/.labrun/journal.jsonl: file too large
skip [3/3] after (run) - an earlier step failed
full: FAILED [config] in X.Xs (1 passed, 1 failed, 1 skipped)
outputs (incomplete, the run failed): ` + out + `
`
	if code != 2 || got != want {
		t.Errorf("exit %d, output:\n%s\nwant exit 2, output:\n%s", code, got, want)
	}
	if got, code := run("unlimited", "--from", "big"); code != 0 {
		t.Errorf("--from big: exit %d\n%s", code, got)
	}
}
