package main

import (
	"bytes"
	"os"
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
