package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// rerunLab is a lab of three tasks graded from local files: task 2 reads
// task 1's data step, so re-checking task 2 alone still runs that step.
const rerunLab = `name: words
vars: {out: /tmp/unused, data: /tmp/unused}
outputDir: ${{ vars.out }}
tasks:
  count: "count.json: how many lines data.txt has"
  first: "first.json: the first word of data.txt"
  last: "last.json: the last word of data.txt"
steps:
  - id: data
    task: count
    run: {argv: [cat, "${{ vars.data }}"]}
  - id: count_json
    task: count
    write: {path: count.json, json: {lines: "${{ len(lines(steps.data.stdout)) }}"}}
  - id: first_json
    task: first
    write: {path: first.json, json: {word: "${{ lines(steps.data.stdout)[0] }}"}}
  - id: last_data
    task: last
    run: {argv: [tail, -n, "1", "${{ vars.data }}"]}
  - id: last_json
    task: last
    write: {path: last.json, json: {word: "${{ trim(steps.last_data.stdout) }}"}}
`

// rerunReport is what these tests read of a JSON report.
type rerunReport struct {
	Only  []int `json:"only"`
	Tasks []struct {
		Number int    `json:"number"`
		Status string `json:"status"`
	} `json:"tasks"`
	Steps []struct {
		ID     string `json:"id"`
		Status string `json:"status"`
	} `json:"steps"`
}

// rerunFixture writes the lab, its data and a learner's files (task 2's
// wrong) and returns the playbook, the learner's directory and check's
// flags before the playbook.
func rerunFixture(t *testing.T) (playbook, learner string, flags []string) {
	dir := t.TempDir()
	playbook, learner = filepath.Join(dir, "p.yaml"), filepath.Join(dir, "learner")
	data := filepath.Join(dir, "data.txt")
	must(t, os.WriteFile(playbook, []byte(rerunLab), 0o644))
	must(t, os.WriteFile(data, []byte("a\nb\n"), 0o644))
	must(t, os.Mkdir(learner, 0o755))
	for name, text := range map[string]string{"count.json": `{"lines": 2}`, "first.json": `{"word": "b"}`, "last.json": `{"word": "b"}`} {
		must(t, os.WriteFile(filepath.Join(learner, name), []byte(text), 0o644))
	}
	return playbook, learner, []string{"--no-progress", "--set", "out=" + learner, "--set", "data=" + data}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// check runs labrun check with args and the playbook last, and returns
// its exit code and output.
func checkArgs(args ...string) (int, string) {
	var stdout, stderr bytes.Buffer
	code := Main(append([]string{"check"}, args...), &stdout, &stderr)
	return code, stdout.String() + stderr.String()
}

func readRerunReport(t *testing.T, path string) rerunReport {
	t.Helper()
	b, err := os.ReadFile(path)
	must(t, err)
	var r rerunReport
	must(t, json.Unmarshal(b, &r))
	return r
}

// A check with task 2 wrong, then --rerun-failed of its report: only
// task 2 is graded (the report says only [2]), with its own step and the
// data step it reads, and task 3's steps do not run; once the learner
// fixes the file the re-check passes, and a re-check of that passing
// report has nothing to do and says so without writing a report.
func TestRerunFailed(t *testing.T) {
	playbook, learner, flags := rerunFixture(t)
	dir := t.TempDir()
	first, again, clean := filepath.Join(dir, "first.json"), filepath.Join(dir, "again.json"), filepath.Join(dir, "clean.json")
	if code, out := checkArgs(append(flags, "--report", "json="+first, playbook)...); code != exitFailed {
		t.Fatalf("first check exited %d, want 1:\n%s", code, out)
	}
	code, out := checkArgs(append(flags, "--rerun-failed", first, "--report", "json="+again, playbook)...)
	if code != exitFailed || !strings.Contains(out, "FAIL: task 2 (first.json: the first word of data.txt)") {
		t.Fatalf("re-check exited %d, want 1 with task 2 failed:\n%s", code, out)
	}
	rep := readRerunReport(t, again)
	if !slices.Equal(rep.Only, []int{2}) {
		t.Errorf("re-check graded tasks %v, want [2]", rep.Only)
	}
	ran := map[string]string{}
	for _, s := range rep.Steps {
		ran[s.ID] = s.Status
	}
	want := map[string]string{"data": "passed", "count_json": "skipped", "first_json": "failed", "last_data": "skipped", "last_json": "skipped"}
	for id, st := range want {
		if ran[id] != st {
			t.Errorf("step %s %s, want %s (every step: %v)", id, ran[id], st, ran)
		}
	}
	must(t, os.WriteFile(filepath.Join(learner, "first.json"), []byte(`{"word": "a"}`), 0o644))
	if code, out := checkArgs(append(flags, "--rerun-failed", first, "--report", "json="+clean, playbook)...); code != exitOK {
		t.Fatalf("re-check of the fixed file exited %d, want 0:\n%s", code, out)
	}
	code, out = checkArgs(append(flags, "--rerun-failed", clean, "--report", "json="+filepath.Join(dir, "none.json"), playbook)...)
	if code != exitOK || !strings.Contains(out, "labrun check: no task failed in "+clean+": nothing to re-check") {
		t.Errorf("re-check of a passing report exited %d, want 0 saying so:\n%s", code, out)
	}
	if _, err := os.Stat(filepath.Join(dir, "none.json")); err == nil {
		t.Error("a re-check with nothing to do wrote a report")
	}
}

// --task and --rerun-failed together grade the tasks asked for that
// failed: none, said so with exit 0, or those.
func TestRerunFailedWithTask(t *testing.T) {
	playbook, _, flags := rerunFixture(t)
	first := filepath.Join(t.TempDir(), "first.json")
	checkArgs(append(flags, "--report", "json="+first, playbook)...)
	code, out := checkArgs(append(flags, "--rerun-failed", first, "--task", "1", "--task", "last", playbook)...)
	if want := "labrun check: of the tasks asked for (1 (count), 3 (last)), none failed in " + first + " (failed: 2 (first)): nothing to re-check"; code != exitOK || !strings.Contains(out, want) {
		t.Errorf("exit %d, want 0 and %q:\n%s", code, want, out)
	}
	again := filepath.Join(t.TempDir(), "again.json")
	if code, out := checkArgs(append(flags, "--rerun-failed", first, "--upto", "2", "--report", "json="+again, playbook)...); code != exitFailed {
		t.Fatalf("exit %d, want 1:\n%s", code, out)
	}
	if rep := readRerunReport(t, again); !slices.Equal(rep.Only, []int{2}) {
		t.Errorf("--upto 2 with --rerun-failed graded %v, want [2]", rep.Only)
	}
}

// A report that cannot be used is refused with exit 2, at its place in
// the file where it has one, before any step runs.
func TestRerunFailedRefused(t *testing.T) {
	playbook, _, flags := rerunFixture(t)
	dir := t.TempDir()
	good := filepath.Join(dir, "good.json")
	checkArgs(append(flags, "--report", "json="+good, playbook)...)
	text, err := os.ReadFile(good)
	must(t, err)
	edited := filepath.Join(dir, "edited.yaml")
	must(t, os.WriteFile(edited, []byte(strings.Replace(rerunLab, "how many lines", "the number of lines", 1)), 0o644))
	solve := filepath.Join(dir, "solve.json")
	var stdout, stderr bytes.Buffer
	Main(append(append([]string{"run"}, flags...), "--set", "out="+filepath.Join(dir, "solved"), "--report", "json="+solve, playbook), &stdout, &stderr)
	tests := []struct {
		name, report, playbook string
		want                   string // a regexp
	}{
		{"not JSON", `{"playbook": "p.yaml",` + "\n" + `  "name": }`, playbook, `bad.json:2:11: not JSON: invalid character '}'`},
		{"cut short", `{"playbook": "p.yaml"`, playbook, `bad.json:1:21: not JSON: unexpected end of JSON input`},
		{"not a report", `{"playbook": "p.yaml", "mode": "grade"}`, playbook, `bad.json:1:1: not a labrun JSON report \(schemas/report.schema.json\): missing key "name"(.|\n)*bad.json:1:24: not a labrun JSON report \(schemas/report.schema.json\): /mode: is "grade", expected one of "solve", "check"`},
		{"a wrong status", strings.Replace(string(text), `"status": "failed"`, `"status": "wrong"`, 1), playbook, `bad.json:6:3: not a labrun JSON report \(schemas/report.schema.json\): /status: is "wrong", expected one of "passed"`},
		{"tampered task", strings.Replace(string(text), `"id": "first"`, `"id": "firts"`, 1), playbook, `bad.json:\d+:5: task 2 \(firts\) failed in the report, but the playbook's task 2 is not firts`},
		{"another version", string(text), edited, `bad.json:3:3: a report of another version of playbook "words": its playbookDigest is sha256:[0-9a-f]{64}, .*edited.yaml's is sha256:`},
		{"another playbook", strings.Replace(string(text), `"name": "words"`, `"name": "letters"`, 1), playbook, `bad.json:1:1: a report of playbook "letters", not of "words"`},
		{"a solve's report", "", playbook, `solve.json:1:1: the report of a labrun run \(mode solve\), not of a check`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := solve
			if tt.report != "" {
				path = filepath.Join(t.TempDir(), "bad.json")
				must(t, os.WriteFile(path, []byte(tt.report), 0o644))
			}
			code, out := checkArgs(append(flags, "--rerun-failed", path, tt.playbook)...)
			if code != exitInvalid || !regexp.MustCompile(tt.want).MatchString(out) {
				t.Errorf("exit %d, want 2 and %s:\n%s", code, tt.want, out)
			}
			if strings.Contains(out, "PASS") || strings.Contains(out, "FAIL") {
				t.Errorf("a step ran:\n%s", out)
			}
		})
	}
	code, out := checkArgs(append(flags, "--rerun-failed", filepath.Join(dir, "missing.json"), playbook)...)
	if code != exitInvalid || !strings.Contains(out, "labrun check: --rerun-failed "+filepath.Join(dir, "missing.json")+": open ") {
		t.Errorf("a missing report: exit %d, want 2 naming it:\n%s", code, out)
	}
}
