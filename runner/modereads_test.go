package runner

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/labrun/labrun/actions"
	"github.com/labrun/labrun/internal/lang/syntax"
)

// A playbook whose step before runs in labrun run alone, and the read of
// it that validate refuses: check runs the reader, which would fail on
// before's missing result (int("") was "invalid operation: int() (1:1)").
const modeReadsHead = `name: m
vars: {out: /tmp/unused}
outputDir: ${{ vars.out }}
steps:
  - id: before
    only: solve
    run: {argv: [echo, "42"]}
`

// TestMissingReads: which reads of a step a mode never runs validate
// refuses (want: the one error, or "" for none), and which guards it
// accepts. The snippets follow modeReadsHead (its line 8 on).
func TestMissingReads(t *testing.T) {
	const guards = `read it behind a test of mode, as in mode == "solve" ? steps.before.stdout : DEFAULT, or as steps.before?.stdout ?? DEFAULT; or give this step only: solve or when: mode == "solve"`
	tests := []struct {
		name, steps, want string
	}{
		{name: "the lab of the report", steps: `
  - id: n
    compute: {v: "${{ int(trim(steps.before.stdout)) }}"}
`, want: `p.yaml:10:32: steps.before has no result in labrun check (it is only: solve), and this expression reads it there: ` + guards},
		{name: "an assertion", steps: `
  - id: n
    assert: ['steps.before.stdout != ""']
`, want: `p.yaml:10:15: steps.before has no result in labrun check (it is only: solve)`},
		{name: "a file's value", steps: `
  - id: f
    write: {path: f.json, json: {v: "${{ steps.before.exitCode }}"}}
`, want: `p.yaml:10:42: steps.before has no result in labrun check (it is only: solve), and this expression reads it there: read it behind a test of mode, as in mode == "solve" ? steps.before.exitCode : DEFAULT, or as steps.before?.exitCode ?? DEFAULT`},
		{name: "a when", steps: `
  - id: n
    when: steps.before.exitCode == 0
    run: {argv: [true]}
`, want: `p.yaml:10:11: steps.before has no result in labrun check (it is only: solve)`},
		{name: "the wrong mode tested", steps: `
  - id: n
    compute: {v: '${{ mode == "check" ? steps.before.stdout : "" }}'}
`, want: `p.yaml:10:41: steps.before has no result in labrun check`},
		{name: "through a definition", steps: `
  - id: n
    compute: {v: "${{ beforeOut }}"}
`, want: `p.yaml:12:23: steps.before has no result in labrun check (it is only: solve), and this expression reads it there (through define beforeOut)`},
		{name: "a finally step", steps: `
finally:
  - id: n
    run: {argv: [echo, "${{ steps.before.stdout }}"]}
`, want: `p.yaml:11:29: steps.before has no result in labrun check`},
		{name: "a step that reads a solve-only step, itself solve-only", steps: `
  - id: mid
    only: solve
    compute: {v: "${{ steps.before.stdout }}"}
  - id: n
    compute: {v: "${{ steps.mid.v }}"}
`, want: `p.yaml:13:23: steps.mid has no result in labrun check (it is only: solve)`},
		{name: "a step that changes the system", steps: `
  - id: made
    run: {argv: [echo, made], mutates: true}
  - id: n
    compute: {v: "${{ steps.made.stdout }}"}
`, want: `p.yaml:12:23: steps.made has no result in labrun check (it changes the system; labrun check only looks)`},
		{name: "the when of a step that changes the system, which check asks", steps: `
  - id: n
    when: steps.before.exitCode == 0
    run: {argv: [true], mutates: true}
`, want: `p.yaml:10:11: steps.before has no result in labrun check`},
		{name: "a step whose when holds in solve alone", steps: `
  - id: solving
    when: mode == "solve" && vars.out != ""
    run: {argv: [echo, hi]}
  - id: n
    compute: {v: "${{ steps.solving.stdout }}"}
`, want: `p.yaml:13:23: steps.solving has no result in labrun check (its when holds in labrun run alone)`},
		{name: "a check-only step read in solve", steps: `
  - id: graded
    only: check
    run: {argv: [echo, hi]}
  - id: n
    compute: {v: "${{ steps.graded.stdout }}"}
`, want: `p.yaml:13:23: steps.graded has no result in labrun run (it is only: check), and this expression reads it there: read it behind a test of mode, as in mode == "check" ? steps.graded.stdout : DEFAULT, or as steps.graded?.stdout ?? DEFAULT; or give this step only: check or when: mode == "check"`},
		{name: "a member of a solve-only parallel step", steps: `
  - id: g
    only: solve
    parallel:
      a:
        - id: ga
          run: {argv: [echo, a]}
      b:
        - id: gb
          run: {argv: [echo, b]}
  - id: n
    compute: {v: "${{ steps.ga.stdout }}"}
`, want: `p.yaml:19:23: steps.ga has no result in labrun check (its parallel step g: it is only: solve)`},
		{name: "a loop", steps: `
  - id: each
    only: solve
    loop: [1, 2]
    run: {argv: [echo, "${{ item }}"]}
  - id: n
    compute: {v: "${{ len(steps.each) }}"}
`, want: `p.yaml:14:27: steps.each has no result in labrun check (it is only: solve)`},

		// accepted: the read is guarded, or check never evaluates it
		{name: "behind mode", steps: `
  - id: n
    compute: {v: '${{ mode == "solve" ? int(trim(steps.before.stdout)) : 0 }}'}
`},
		{name: "behind mode, with &&", steps: `
  - id: n
    assert: ['mode == "check" || steps.before.exitCode == 0']
`},
		{name: "behind if", steps: `
  - id: n
    compute: {v: '${{ if mode != "check" { steps.before.stdout } else { "" } }}'}
`},
		{name: "behind a test of the result", steps: `
  - id: n
    compute: {v: '${{ steps.before != nil ? int(trim(steps.before.stdout)) : 0 }}'}
`},
		{name: "with ?. and ??", steps: `
  - id: n
    compute: {v: '${{ int(trim(steps.before?.stdout ?? "0")) }}'}
`},
		{name: "the reader is solve-only", steps: `
  - id: n
    only: solve
    compute: {v: "${{ int(trim(steps.before.stdout)) }}"}
`},
		{name: "the reader's when tests mode", steps: `
  - id: n
    when: mode == "solve"
    compute: {v: "${{ int(trim(steps.before.stdout)) }}"}
`},
		{name: "the reader's when tests the result, and reads it behind the test", steps: `
  - id: n
    when: steps.before != nil && steps.before.exitCode == 0
    compute: {v: "${{ int(trim(steps.before.stdout)) }}"}
`},
		{name: "the reader's parallel step tests mode", steps: `
  - id: g
    when: mode == "solve"
    parallel:
      a:
        - id: ga
          run: {argv: [echo, "${{ steps.before.stdout }}"]}
      b:
        - id: gb
          run: {argv: [echo, b]}
`},
		{name: "a step that changes the system reads one", steps: `
  - id: n
    run: {argv: [echo, "${{ steps.before.stdout }}"], mutates: true}
`},
		{name: "a check-only step reads a solve-only one", steps: `
  - id: n
    only: check
    compute: {v: "${{ steps.before?.stdout }}"}
`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := modeReadsHead + tt.steps
			if strings.Contains(tt.steps, "beforeOut") {
				src = strings.Replace(src, "steps:\n", "define:\n  beforeOut: trim(steps.before.stdout)\nsteps:\n", 1)
			}
			pb, err := syntax.Load("p.yaml", []byte(src), actions.Names())
			if err != nil {
				t.Fatal(err)
			}
			_, err = Compile(pb, Options{Functions: Functions(t.TempDir())})
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("refused:\n%v", err)
			case tt.want != "" && err == nil:
				t.Errorf("accepted; want %s", tt.want)
			case tt.want != "" && (!strings.HasPrefix(err.Error(), tt.want) || strings.Count(err.Error(), "\n") > 0):
				t.Errorf("error:\n%v\nwant one error, starting:\n%s", err, tt.want)
			}
		})
	}
}

// In the mode that never runs it, a step has no result: the guards that
// validate accepts give their other value, and one with a result (the
// solve) reads it.
func TestMissingResultIsNil(t *testing.T) {
	src := modeReadsHead + `  - id: each
    only: solve
    loop: [1, 2]
    run: {argv: [echo, "${{ item }}"]}
  - id: n
    compute:
      mode: '${{ mode == "solve" ? int(trim(steps.before.stdout)) : -1 }}'
      test: '${{ steps.before != nil ? int(trim(steps.before.stdout)) : -2 }}'
      chain: '${{ int(trim(steps.before?.stdout ?? "-3")) }}'
      whole: '${{ steps.before == nil }}'
      items: '${{ len(steps.each ?? []) }}'
`
	for _, tc := range []struct {
		mode actions.Mode
		want map[string]any
	}{
		{actions.Solve, map[string]any{"mode": 42.0, "test": 42.0, "chain": 42.0, "whole": false, "items": 2.0}},
		{actions.Check, map[string]any{"mode": -1.0, "test": -2.0, "chain": -3.0, "whole": true, "items": 0.0}},
	} {
		plan := compile(t, src, "out="+t.TempDir())
		r := &Runner{Plan: plan, Runtime: &actions.Runtime{Mode: tc.mode}, KeepGoing: tc.mode == actions.Check}
		o, err := r.Run(context.Background())
		if err != nil || o.Status != Passed {
			t.Fatalf("mode %d: %v %+v", tc.mode, err, o)
		}
		b, err := json.Marshal(r.env.Step("n"))
		if err != nil {
			t.Fatal(err)
		}
		var got map[string]any
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatal(err)
		}
		for k, want := range tc.want {
			if v := got[k]; v != want {
				t.Errorf("mode %d: %s = %#v, want %#v", tc.mode, k, v, want)
			}
		}
	}
}

// labrun eval reads a solve's journal: a step the solve skipped by its
// when reads as zero values there, as it did in the solve, though it
// changes the system (which check never runs).
func TestRecordedReadsAsTheSolve(t *testing.T) {
	src := `name: m
vars: {out: /tmp/unused}
outputDir: ${{ vars.out }}
steps:
  - id: made
    when: vars.out == ""
    run: {argv: [echo, made], mutates: true}
`
	out := "out=" + t.TempDir()
	solve(t, src, out)
	rc, err := OpenRecorded(compile(t, src, out), nil)
	if err != nil {
		t.Fatal(err)
	}
	if v, err := rc.Eval(`steps.made != nil && steps.made.stdout == ""`); err != nil || v != true {
		t.Errorf("eval = %v, %v; want true", v, err)
	}
}
