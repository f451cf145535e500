package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// labrun eval reads what a run left in the journal: typed, without running
// anything again, and with the run's own error rules for expressions.
func TestEvalOnRecordedRun(t *testing.T) {
	dir := t.TempDir()
	pb := filepath.Join(dir, "p.yaml")
	marker := filepath.Join(dir, "runs")
	os.WriteFile(pb, []byte(`name: e
vars: {out: x, marker: y}
outputDir: ${{ vars.out }}
steps:
  - id: words
    run: {argv: [sh, -c, 'echo run >> "$0"; printf "web-1 10.42.0.7\nweb-2 10.42.0.9\n"', "${{ vars.marker }}"]}
  - id: each
    loop: ${{ lines(steps.words.stdout) }}
    run: {argv: [echo, "${{ fields(item)[1] }}"]}
  - id: never
    when: false
    run: {argv: ["false"]}
`), 0o644)
	out := filepath.Join(dir, "out")
	flags := []string{"--set", "out=" + out, "--set", "marker=" + marker, pb}
	var stdout, stderr bytes.Buffer
	if code := Main(append([]string{"run", "--no-progress"}, flags...), &stdout, &stderr); code != 0 {
		t.Fatalf("run: exit %d\n%s%s", code, stdout.String(), stderr.String())
	}

	for _, tc := range []struct {
		raw       bool
		exprs     []string
		code      int
		stdout    string // exact, when the expressions evaluate
		stderrHas string
	}{
		{false, []string{"map(steps.each, trim(.stdout))", "len(steps.words.stdout)"}, 0, "[\n  \"10.42.0.7\",\n  \"10.42.0.9\"\n]\n32\n", ""},
		{true, []string{"steps.each[1].stdout"}, 0, "10.42.0.9\n\n", ""},
		{false, []string{"steps.each.stdout"}, 2, "", "expression:1:12: in expression `steps.each.stdout`: steps.each is a list; take one item"},
		{false, []string{"steps.words.stdot"}, 2, "", `steps.words has no field "stdot" (did you mean "stdout"?)`},
		{false, []string{"int(steps.words.stdout)"}, 1, "", "invalid operation"},
	} {
		stdout.Reset()
		stderr.Reset()
		args := []string{"eval"}
		if tc.raw {
			args = append(args, "--raw")
		}
		args = append(append(args, flags...), tc.exprs...)
		code := Main(args, &stdout, &stderr)
		if code != tc.code {
			t.Errorf("%v: exit %d, want %d\n%s", tc.exprs, code, tc.code, stderr.String())
		}
		if tc.code == 0 && stdout.String() != tc.stdout {
			t.Errorf("%v: stdout %q, want %q", tc.exprs, stdout.String(), tc.stdout)
		}
		if !strings.Contains(stderr.String(), tc.stderrHas) {
			t.Errorf("%v: stderr %q, want it to contain %q", tc.exprs, stderr.String(), tc.stderrHas)
		}
	}
	if runs, _ := os.ReadFile(marker); strings.Count(string(runs), "run") != 1 {
		t.Errorf("eval ran the playbook's steps again: %q", runs)
	}

	// no run yet in another output directory
	stderr.Reset()
	code := Main([]string{"eval", "--set", "out=" + filepath.Join(dir, "fresh"), pb, "1"}, &stdout, &stderr)
	if code != 2 || !strings.Contains(stderr.String(), "no journal at "+filepath.Join(dir, "fresh", ".labrun", "journal.jsonl")+": run the playbook with this output directory first") {
		t.Errorf("without a run: exit %d, %q", code, stderr.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "fresh")); err == nil {
		t.Error("eval created the output directory")
	}
}
