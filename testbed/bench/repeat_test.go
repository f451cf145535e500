package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// Each lab the repeat section runs is on the profile its testbed vars file
// names: cca-datapath and classroom on single, the two-node labs on
// tunnel.
func TestRepeatLabProfiles(t *testing.T) {
	t.Chdir("../..")
	want := map[string]string{"cca-datapath": "single", "classroom": "single", "cca-identity": "tunnel", "cca-services": "tunnel"}
	for _, lab := range repeatLabs {
		got, err := labProfile(lab.name)
		if err != nil || got != want[lab.name] {
			t.Errorf("%s: profile %q, %v; want %q", lab.name, got, err, want[lab.name])
		}
	}
}

// A lab's rows from labrun test's report: the flaky tasks counted against
// the goal 0, each task's failures in the note, and the fresh runs' time.
func TestRepeatRows(t *testing.T) {
	var rep repeatReport
	err := json.Unmarshal([]byte(`{"repeat": 2, "fresh": "delete namespace lab", "status": "flaky",
	  "runs": [{"run": 1, "fresh": true, "resetSeconds": 1, "solveSeconds": 5, "checkSeconds": 0.5, "seconds": 6.5},
	           {"run": 2, "fresh": true, "resetSeconds": 1, "solveSeconds": 7, "checkSeconds": 0.5, "seconds": 8.5},
	           {"run": 3, "fresh": false, "solveSeconds": 3, "checkSeconds": 0.5, "seconds": 3.5}],
	  "tasks": [{"number": 1, "id": "svc", "runs": 3, "failed": 0, "flakeRate": 0, "flaky": false},
	            {"number": 2, "id": "ct", "runs": 3, "failed": 1, "flakeRate": 0.3333, "flaky": true, "differed": [{"key": "ct.json entries (expected)"}]}]}`), &rep)
	if err != nil {
		t.Fatal(err)
	}
	rows := repeatRows("lab", rep, 20*time.Second)
	if len(rows) != 2 {
		t.Fatalf("%d rows, want 2", len(rows))
	}
	if r := rows[0]; r.Labrun.Median != 1 || r.Met == nil || *r.Met || !strings.Contains(r.Note, "task 2 (ct) 1 of 3 failed (flake rate 33%; differed: ct.json entries (expected))") ||
		!strings.Contains(r.Note, "task 1 (svc) 0 of 3 failed;") {
		t.Errorf("flaky row %+v", r)
	}
	if r := rows[1]; len(r.Labrun.Samples) != 2 || r.Labrun.Median != 7.5 {
		t.Errorf("time row %+v; want the 2 fresh runs, median 7.5 s", r)
	}
}
