package runner

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/labrun/labrun/actions"
)

// handshake needs both branches running at once: each waits for a file
// the other writes after its own first step.
const handshake = `
name: handshake
vars: {out: x}
outputDir: ${{ vars.out }}
steps:
  - id: before
    run: {argv: [echo, ready]}
  - id: both
    parallel:
      a:
        - id: ping
          write: {path: ping, text: "${{ trim(steps.before.stdout) }}"}
        - id: wait_pong
          run: {argv: [cat, "${{ vars.out }}/pong"], allowFailure: true}
          until: result.exitCode == 0
          interval: 10ms
          timeout: 2s
      b:
        - id: wait_ping
          run: {argv: [cat, "${{ vars.out }}/ping"], allowFailure: true}
          until: result.exitCode == 0
          interval: 10ms
          timeout: 2s
        - id: pong
          write: {path: pong, text: "got ${{ trim(steps.wait_ping.stdout) }}"}
  - id: after
    assert:
      - that: trim(steps.wait_pong.stdout) == "got ready"
`

func ids(recs []*StepRecord) []string {
	var out []string
	for _, r := range recs {
		out = append(out, r.ID+"="+string(r.Status))
	}
	return out
}

// Branches run at the same time, each in order; later steps read every
// branch's results; the outcome lists the steps in plan order whatever
// order they finished in.
func TestParallelBranchesRunTogether(t *testing.T) {
	out := t.TempDir()
	plan := compile(t, handshake, "out="+out)
	o, err := (&Runner{Plan: plan, Runtime: &actions.Runtime{}, Observer: &recorder{}}).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"before=passed", "both=passed", "ping=passed", "wait_pong=passed", "wait_ping=passed", "pong=passed", "after=passed"}
	if got := ids(o.Steps); !slices.Equal(got, want) {
		t.Fatalf("steps %v, want %v", got, want)
	}
	if r := o.Steps[4]; r.Parallel != "both" || r.Branch != "b" || o.Steps[0].Parallel != "" {
		t.Errorf("wait_ping's record says parallel %q branch %q", r.Parallel, r.Branch)
	}
	if b, _ := os.ReadFile(filepath.Join(out, "pong")); string(b) != "got ready\n" {
		t.Errorf("pong = %q", b)
	}
	// the journal has every branch step and the parallel step itself, so
	// a later run can resume after it
	_, rec := resume(t, handshake, "after", "out="+out)
	if s := rec.status("wait_pong"); s != Restored {
		t.Errorf("wait_pong: %s, want restored", s)
	}
}

// --sequential runs the branches one after another, so the handshake
// cannot complete: the first branch times out and the second is stopped.
func TestParallelSequential(t *testing.T) {
	plan := compile(t, handshake, "out="+t.TempDir())
	o, err := (&Runner{Plan: plan, Runtime: &actions.Runtime{}, Sequential: true}).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"before=passed", "both=failed", "ping=passed", "wait_pong=failed", "wait_ping=skipped", "pong=skipped", "after=skipped"}
	if got := ids(o.Steps); !slices.Equal(got, want) {
		t.Fatalf("steps %v, want %v", got, want)
	}
	if r := o.Steps[4].Reason; r != "stopped: step wait_pong in branch a failed" {
		t.Errorf("wait_ping reason %q", r)
	}
}

const failingBranch = `
name: fail
steps:
  - id: g
    parallel:
      slow:
        - id: long
          run: {argv: [sleep, "20"]}
        - id: long_next
          run: {argv: ["true"]}
      bad:
        - id: broken
          run: {argv: ["false"]}
        - id: broken_next
          run: {argv: ["true"]}
  - id: after
    run: {argv: ["true"]}
`

// A failed step skips the rest of its branch and stops the steps running
// in the other branches (the run ends after the parallel step anyway).
func TestParallelFailureStopsOtherBranches(t *testing.T) {
	plan := compile(t, failingBranch)
	o, err := (&Runner{Plan: plan, Runtime: &actions.Runtime{}}).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"g=failed", "long=skipped", "long_next=skipped", "broken=failed", "broken_next=skipped", "after=skipped"}
	if got := ids(o.Steps); !slices.Equal(got, want) {
		t.Fatalf("steps %v, want %v", got, want)
	}
	if r := o.Steps[1].Reason; r != "stopped: step broken in branch bad failed" {
		t.Errorf("long reason %q", r)
	}
	if r := o.Steps[4].Reason; r != "an earlier step failed" {
		t.Errorf("broken_next reason %q", r)
	}
}

// Grading (KeepGoing) lets the other branches finish.
func TestParallelKeepGoing(t *testing.T) {
	plan := compile(t, strings.Replace(failingBranch, `[sleep, "20"]`, `["true"]`, 1))
	o, err := (&Runner{Plan: plan, Runtime: &actions.Runtime{}, KeepGoing: true}).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"g=failed", "long=passed", "long_next=passed", "broken=failed", "broken_next=skipped", "after=passed"}
	if got := ids(o.Steps); !slices.Equal(got, want) {
		t.Fatalf("steps %v, want %v", got, want)
	}
}

// Ctrl-C during a parallel step interrupts every branch and still runs
// the finally steps.
func TestParallelInterrupt(t *testing.T) {
	out := t.TempDir()
	plan := compile(t, `
name: interrupt
vars: {out: x}
outputDir: ${{ vars.out }}
steps:
  - id: g
    parallel:
      a:
        - id: a1
          run: {argv: [sleep, "20"]}
      b:
        - id: b1
          run: {argv: [sleep, "20"]}
        - id: b2
          run: {argv: ["true"]}
finally:
  - id: cleanup
    write: {path: cleaned.txt, text: done}
`, "out="+out)
	ctx, cancel := context.WithCancel(context.Background())
	started := 0
	rec := &recorder{}
	rec.onStart = func(s *StepPlan) {
		rec.mu.Lock()
		defer rec.mu.Unlock()
		if s.ID == "a1" || s.ID == "b1" {
			if started++; started == 2 {
				cancel()
			}
		}
	}
	o, err := (&Runner{Plan: plan, Runtime: &actions.Runtime{}, Observer: rec}).Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"g=interrupted", "a1=interrupted", "b1=interrupted", "b2=skipped", "cleanup=passed"}
	if got := ids(o.Steps); !slices.Equal(got, want) {
		t.Fatalf("steps %v, want %v", got, want)
	}
	if o.Status != Interrupted {
		t.Errorf("status %s", o.Status)
	}
}

// A parallel step whose when is false skips all its branches.
func TestParallelWhen(t *testing.T) {
	plan := compile(t, `
name: when
vars: {on: false}
steps:
  - id: g
    when: vars.on
    parallel:
      a: [{id: a1, run: {argv: ["true"]}}]
      b: [{id: b1, run: {argv: ["true"]}}]
  - id: after
    assert: ['steps.a1.stdout == ""']
`)
	o, err := (&Runner{Plan: plan, Runtime: &actions.Runtime{}}).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"g=skipped", "a1=skipped", "b1=skipped", "after=passed"}
	if got := ids(o.Steps); !slices.Equal(got, want) {
		t.Fatalf("steps %v, want %v", got, want)
	}
}

// --from cannot start in the middle of a branch.
func TestParallelFromBranchStep(t *testing.T) {
	plan := compile(t, handshake, "out="+t.TempDir())
	_, err := (&Runner{Plan: plan, Runtime: &actions.Runtime{}, From: "pong"}).Run(context.Background())
	if err == nil || err.Error() != "--from pong: the step runs in branch b of parallel step both; resume from both" {
		t.Fatalf("err = %v", err)
	}
}

// Branches polling at the same time explain their conditions at the same
// time (progress shows the operands of each failed poll): compiling those
// operands must be safe to do concurrently (go test -race).
func TestParallelPollsExplainConcurrently(t *testing.T) {
	plan := compile(t, `
name: polls
steps:
  - id: g
    parallel:
      a:
        - id: pa
          run: {argv: [echo, "1"]}
          until: int(trim(result.stdout)) == 2 && len(result.stderr) == 0
          interval: 1ms
          timeout: 300ms
      b:
        - id: pb
          run: {argv: [echo, "1"]}
          until: int(trim(result.stdout)) == 3 && len(result.stderr) == 0
          interval: 1ms
          timeout: 300ms
`)
	rec := &recorder{}
	o, err := (&Runner{Plan: plan, Runtime: &actions.Runtime{}, Observer: rec, KeepGoing: true}).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"g=failed", "pa=failed", "pb=failed"}
	if got := ids(o.Steps); !slices.Equal(got, want) {
		t.Fatalf("steps %v, want %v", got, want)
	}
	if !strings.Contains(o.Steps[1].Error, "last seen: int(trim(result.stdout)) = 1") {
		t.Errorf("pa error %q", o.Steps[1].Error)
	}
}
