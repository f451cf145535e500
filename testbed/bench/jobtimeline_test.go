package main

import (
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

// testdata/class-35-p20.pods.json is the pod list of a sharded Job that
// graded 35 classroom learners at --parallel 20 on the test cluster
// (tunnel profile), cut down with jq to the fields the timeline reads.
// kubectl apply began at 07:39:57.3 and collect ended 13.5 s later.
func TestParseJobTimeline(t *testing.T) {
	data, err := os.ReadFile("testdata/class-35-p20.pods.json")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 12, 7, 7, 39, 57, 300_000_000, time.UTC)
	tl, err := parseJobTimeline(data, start, start.Add(13500*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	if tl.pods != 5 || !slices.Equal(tl.created, []float64{1, 1, 1, 1, 1}) || !slices.Equal(tl.started, []float64{1, 2, 2, 3, 4}) ||
		!slices.Equal(tl.ran, []float64{8, 8, 9, 10, 11}) || tl.lastEnd != 13 || tl.wall != 13.5 {
		t.Errorf("%+v", tl)
	}
	want := "its 5 pods' timestamps (whole seconds): created 1 s after apply's start, the labrun container started 1-4 s after that, ran 8-11 s; the last ended 13 s after apply's start, collect 0.5 s after it"
	if got := tl.String(); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}

	// a pod still running has no end to read
	running := strings.Replace(string(data), `"terminated"`, `"running"`, 1)
	if _, err := parseJobTimeline([]byte(running), start, start); err == nil || !strings.Contains(err.Error(), "class-35-p20-0-lqkck") {
		t.Errorf("a pod without an ended container: %v", err)
	}
	if _, err := parseJobTimeline([]byte(`{"items": []}`), start, start); err == nil {
		t.Error("no pods: no error")
	}
}
