//go:build e2e

package e2e

import (
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// labCmd runs `labrun CMD` (check or test) on a lab with out=dir and the
// extra flags, and returns its exit code and combined output.
type labCmd func(cmd, dir string, extra ...string) (int, string)

// testSummary is labrun test's last line when no change survived and each
// was rejected naming the value it changed.
var testSummary = regexp.MustCompile(`labrun test: \d+ changes to \d+ graded files: \d+ rejected naming the value, \d+ declared loose, 0 survived, 0 rejected naming another value`)

// gradeByTask proves a lab's grader as lab platforms use it, on the live
// cluster: `labrun test --no-solve` on the solved files (every changed value
// fails the check naming it, or is declared loose by the playbook), then
// `check --task T` on learner, whose files each hold one wrong value: each
// task fails naming its own file's value (wrong maps each file to the text
// check prints for it) and none of the other files'. A file's task is its
// name without the extension, as in both two-node labs. On the solved files,
// the last task alone passes.
func gradeByTask(t *testing.T, run labCmd, solved, learner string, wrong map[string]string) {
	t.Helper()
	code, text := run("test", solved, "--no-solve")
	if code != 0 || !testSummary.MatchString(text) {
		t.Errorf("labrun test --no-solve on the solved files exited %d:\n%s", code, text)
	}
	names := slices.Sorted(func(yield func(string) bool) {
		for name := range wrong {
			if !yield(name) {
				return
			}
		}
	})
	task := func(name string) string { return strings.TrimSuffix(name, filepath.Ext(name)) }
	for _, name := range names {
		code, text := run("check", learner, "--task", task(name))
		if code != 1 {
			t.Errorf("check --task %s on files with wrong values exited %d, want 1:\n%s", task(name), code, text)
			continue
		}
		if !strings.Contains(text, wrong[name]) {
			t.Errorf("check --task %s does not name %s's wrong value (%q):\n%s", task(name), name, wrong[name], text)
		}
		for _, other := range names {
			if other != name && strings.Contains(text, wrong[other]) {
				t.Errorf("check --task %s graded %s as well (%q):\n%s", task(name), other, wrong[other], text)
			}
		}
	}
	last := task(names[len(names)-1])
	if code, text := run("check", solved, "--task", last); code != 0 {
		t.Errorf("check --task %s on the solved files exited %d:\n%s", last, code, text)
	}
}
