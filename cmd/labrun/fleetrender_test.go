package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The Job fleet render prints for the lab of the fleet tests
// (testdata/fleet/lab.yaml) and a class of 20 in 4 shards, as the e2e
// test TestFleetJob renders it: testdata/fleet/job.yaml. go test -update
// rewrites it.
func TestFleetRenderGolden(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := Main([]string{"fleet", "render", "testdata/fleet/lab.yaml", "--targets", "testdata/fleet/targets.yaml",
		"-n", "grading", "--image", "labrun.local/labrun:v1", "--pods", "4", "--parallel", "16"}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("fleet render exited %d: %s", code, stderr.String())
	}
	got := stdout.String()
	if *update {
		if err := os.WriteFile("testdata/fleet/job.yaml", []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile("testdata/fleet/job.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("fleet render differs from testdata/fleet/job.yaml (go test -run TestFleetRenderGolden -update rewrites it):\n%s", got)
	}
	for _, s := range []string{"completions: 4", "parallelism: 4", "$(JOB_COMPLETION_INDEX)/4", `labrun/targets: "20"`} {
		if !strings.Contains(got, s) {
			t.Errorf("the Job has no %q", s)
		}
	}
}

// Without --pods, render sizes the Job by the check: the small lab's
// check reads the API server twice, so one pod grades 200 learners
// (more would cost their start-ups for nothing); the classroom lab's
// runs curl in pods, which takes as long as curl does (3 s of its 3.3 s
// waiting out intruder's dropped request), so its class gets as many
// pods as --parallel runs at once. Before, its steps' kinds (380 ms)
// gave 35 learners 2 pods at --parallel 20, 8 checks at once where
// check --targets makes 20: 21.2 s against 9.1 s on the test cluster.
func TestFleetRenderDefaultPods(t *testing.T) {
	for _, tc := range []struct {
		playbook          string
		n, parallel, pods int
		outputs           bool
	}{
		{"testdata/fleet/lab.yaml", 200, 20, 1, false},
		{"../../playbooks/classroom.yaml", 35, 20, 5, true},
		{"../../playbooks/classroom.yaml", 35, 4, 1, true},
		{"../../playbooks/classroom.yaml", 3, 20, 3, true},
	} {
		dir := t.TempDir()
		var targets strings.Builder
		targets.WriteString("targets:\n")
		for i := range tc.n {
			ns := fmt.Sprintf("learner-%03d", i)
			fmt.Fprintf(&targets, "  - namespace: %s\n", ns)
			if tc.outputs {
				if err := os.MkdirAll(filepath.Join(dir, "out", ns), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, "out", ns, "scale.json"), []byte("{}\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
		file := filepath.Join(dir, "targets.yaml")
		if err := os.WriteFile(file, []byte(targets.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		args := []string{"fleet", "render", tc.playbook, "--targets", file, "-n", "grading", "--parallel", fmt.Sprint(tc.parallel)}
		if tc.outputs {
			args = append(args, "--outputs", "out="+filepath.Join(dir, "out"))
			for _, s := range []string{"deploy", "scale", "expose", "policy"} {
				args = append(args, "--include", "classroom/schemas/"+s+".schema.json")
			}
		}
		var stdout, stderr bytes.Buffer
		if code := Main(args, &stdout, &stderr); code != 0 {
			t.Fatalf("%v exited %d: %s", args, code, stderr.String())
		}
		m := regexp.MustCompile(`(?m)^  completions: (\d+)$`).FindStringSubmatch(stdout.String())
		if m == nil || m[1] != fmt.Sprint(tc.pods) {
			t.Errorf("%s, %d learners, --parallel %d: completions %v, want %d pods", filepath.Base(tc.playbook), tc.n, tc.parallel, m, tc.pods)
		}
	}
}
