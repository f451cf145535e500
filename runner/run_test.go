package runner

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/labrun/labrun/actions"
	"github.com/labrun/labrun/internal/lang/syntax"
)

func compile(t *testing.T, src string, set ...string) *Plan {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "p.yaml")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	pb, err := syntax.Load(path, []byte(src), actions.Names())
	if err != nil {
		t.Fatal(err)
	}
	plan, err := Compile(pb, Options{Set: set})
	if err != nil {
		t.Fatal(err)
	}
	return plan
}

// solve compiles src and runs it to the end, as `labrun run` does; the
// run must pass.
func solve(t *testing.T, src string, set ...string) *Outcome {
	t.Helper()
	o, err := (&Runner{Plan: compile(t, src, set...), Runtime: &actions.Runtime{}}).Run(context.Background())
	if err != nil || o.Status != Passed {
		t.Fatalf("run: %v %+v", err, o)
	}
	return o
}

// resume compiles src afresh and runs it from step from with the journal
// an earlier run left, as `labrun run --from` does; the run must pass. It
// returns the outcome and what the observer saw.
func resume(t *testing.T, src, from string, set ...string) (*Outcome, *recorder) {
	t.Helper()
	rec := &recorder{}
	o, err := (&Runner{Plan: compile(t, src, set...), Runtime: &actions.Runtime{}, Observer: rec, From: from}).Run(context.Background())
	if err != nil || o.Status != Passed {
		t.Fatalf("resumed from %s: %v %+v", from, err, o)
	}
	return o, rec
}

// recorder is an Observer that keeps what it was told.
type recorder struct {
	mu       sync.Mutex
	started  []string
	ended    []*StepRecord
	progress []string
	onStart  func(*StepPlan)
}

func (r *recorder) RunStart(*Plan) {}
func (r *recorder) StepStart(s *StepPlan) {
	r.mu.Lock()
	r.started = append(r.started, s.ID)
	f := r.onStart
	r.mu.Unlock()
	if f != nil {
		f(s)
	}
}
func (r *recorder) StepProgress(s *StepPlan, msg string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.progress = append(r.progress, msg)
}
func (r *recorder) StepEnd(rec *StepRecord) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ended = append(r.ended, rec)
}
func (r *recorder) RunEnd(*Outcome) {}

func (r *recorder) status(id string) Status {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, e := range r.ended {
		if e.ID == id {
			return e.Status
		}
	}
	return ""
}

// cancelOnStart reads the pid a step's program writes into fifo once it
// has started, sends it on the channel returned and then cancels, as a
// Ctrl-C at that moment would.
func cancelOnStart(t *testing.T, fifo string, cancel context.CancelFunc) <-chan int {
	pid := make(chan int, 1)
	go func() {
		b, err := os.ReadFile(fifo) // blocks until the program opens it
		n, _ := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil || n == 0 {
			t.Errorf("reading the program's pid: %q %v", b, err)
		}
		pid <- n
		cancel()
	}()
	return pid
}

// Ctrl-C cancels the running step (its program is killed, not waited
// for), skips the rest, and still runs the finally steps. The cancel comes
// once the program has started: it opens a FIFO the test reads.
func TestInterruptRunsCleanup(t *testing.T) {
	out := t.TempDir()
	fifo := filepath.Join(t.TempDir(), "started")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	plan := compile(t, `
name: interrupt
vars: {out: x, fifo: x}
outputDir: ${{ vars.out }}
steps:
  - id: long
    run: {argv: [sh, -c, 'echo $$ > "$1"; exec sleep 60', sh, "${{ vars.fifo }}"]}
  - id: later
    run: {argv: ["true"]}
finally:
  - id: cleanup
    write: {path: cleaned.txt, text: done}
`, "out="+out, "fifo="+fifo)
	ctx, cancel := context.WithCancel(context.Background())
	pid := cancelOnStart(t, fifo, cancel)
	rec := &recorder{}
	o, err := (&Runner{Plan: plan, Runtime: &actions.Runtime{}, Observer: rec}).Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// The program (sleep 60, exec'd in place of sh) is gone once Run returns.
	if p := <-pid; p != 0 {
		if err := syscall.Kill(p, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("the interrupted program (pid %d) still exists: kill -0 says %v", p, err)
		}
	}
	if o.Status != Interrupted {
		t.Errorf("status %s, want interrupted", o.Status)
	}
	if s := rec.status("long"); s != Interrupted {
		t.Errorf("long: %s, want interrupted", s)
	}
	if s := rec.status("later"); s != Skipped {
		t.Errorf("later: %s, want skipped", s)
	}
	if s := rec.status("cleanup"); s != Passed {
		t.Errorf("cleanup: %s, want passed", s)
	}
	if b, err := os.ReadFile(filepath.Join(out, "cleaned.txt")); err != nil || string(b) != "done\n" {
		t.Errorf("cleanup file: %q, %v", b, err)
	}
}

// Ctrl-C while the finally steps run does not stop them, but bounds them:
// the running cleanup gets CleanupTimeout more, then fails naming that
// limit, its program killed. The cancel comes once the cleanup program
// has started (it opens a FIFO the test reads); the program would run for
// 10 minutes, so only the limit can end it before the test's deadline.
func TestInterruptDuringCleanupIsBounded(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "started")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	plan := compile(t, `
name: interrupt-cleanup
vars: {fifo: x}
steps:
  - id: first
    run: {argv: ["true"]}
finally:
  - id: cleanup
    run: {argv: [sh, -c, 'echo $$ > "$1"; exec sleep 600', sh, "${{ vars.fifo }}"]}
  - id: after
    run: {argv: ["true"]}
`, "fifo="+fifo)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pid := cancelOnStart(t, fifo, cancel)
	rec := &recorder{}
	type result struct {
		o   *Outcome
		err error
	}
	done := make(chan result, 1)
	go func() {
		o, err := (&Runner{Plan: plan, Runtime: &actions.Runtime{}, Observer: rec, CleanupTimeout: 100 * time.Millisecond}).Run(ctx)
		done <- result{o, err}
	}()
	var res result
	select {
	case res = <-done:
	case <-time.After(2 * time.Minute):
		t.Fatal("the cleanup was not stopped by its time limit")
	}
	if res.err != nil {
		t.Fatal(res.err)
	}
	if p := <-pid; p != 0 {
		if err := syscall.Kill(p, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("the cleanup program (pid %d) still exists: kill -0 says %v", p, err)
		}
	}
	if s := rec.status("first"); s != Passed {
		t.Errorf("first: %s, want passed", s)
	}
	for _, e := range res.o.Steps {
		if e.ID == "cleanup" && (e.Status != Failed || !strings.Contains(e.Error, "the cleanup's time limit of 100ms passed")) {
			t.Errorf("cleanup: %s %q, want failed naming the cleanup's time limit", e.Status, e.Error)
		}
		if e.ID == "after" && e.Status != Failed {
			t.Errorf("after: %s %q, want failed: no time is left for it", e.Status, e.Error)
		}
	}
	if res.o.Status != Interrupted {
		t.Errorf("status %s, want interrupted", res.o.Status)
	}
}

// --from restores earlier results from the journal, so later steps see
// the same values without the earlier steps running again.
func TestResumeFromJournal(t *testing.T) {
	out := t.TempDir()
	marker := filepath.Join(t.TempDir(), "count")
	src := `
name: resume
vars: {out: x, marker: y}
outputDir: ${{ vars.out }}
steps:
  - id: first
    run: {argv: [sh, -c, 'echo run >> "$0"; date +%s%N', "${{ vars.marker }}"]}
  - id: second
    write: {path: value.txt, text: "${{ trim(steps.first.stdout) }}"}
`
	solve(t, src, "out="+out, "marker="+marker)
	first, _ := os.ReadFile(filepath.Join(out, "value.txt"))
	os.Remove(filepath.Join(out, "value.txt"))

	_, rec := resume(t, src, "second", "out="+out, "marker="+marker)
	if s := rec.status("first"); s != Restored {
		t.Errorf("first: %s, want restored", s)
	}
	again, _ := os.ReadFile(filepath.Join(out, "value.txt"))
	if string(first) == "" || string(first) != string(again) {
		t.Errorf("resumed value %q, want %q", again, first)
	}
	runs, _ := os.ReadFile(marker)
	if n := strings.Count(string(runs), "run"); n != 1 {
		t.Errorf("first step ran %d times, want 1", n)
	}
}

func TestResumeNeedsJournal(t *testing.T) {
	plan := compile(t, `
name: resume
vars: {out: x}
outputDir: ${{ vars.out }}
steps:
  - id: a
    run: {argv: ["true"]}
  - id: b
    run: {argv: ["true"]}
`, "out="+t.TempDir())
	_, err := (&Runner{Plan: plan, Runtime: &actions.Runtime{}, From: "b"}).Run(context.Background())
	if err == nil || !strings.Contains(err.Error(), "step a has no completed result in the journal") {
		t.Fatalf("err = %v", err)
	}
	_, err = (&Runner{Plan: plan, Runtime: &actions.Runtime{}, From: "zz"}).Run(context.Background())
	if err == nil || !strings.Contains(err.Error(), "--from zz: no such step; steps are: a, b") {
		t.Fatalf("err = %v", err)
	}
}

// retries repeats a failing action; until polls and reports progress.
func TestRetriesAndUntil(t *testing.T) {
	dir := t.TempDir()
	counter := filepath.Join(dir, "n")
	plan := compile(t, `
name: retry
vars: {counter: x}
steps:
  - id: flaky
    run: {argv: [sh, -c, 'n=$(cat "$0" 2>/dev/null || echo 0); n=$((n+1)); echo $n > "$0"; [ $n -ge 3 ]', "${{ vars.counter }}"]}
    retries: 3
    interval: 10ms
  - id: poll
    run: {argv: [sh, -c, 'n=$(cat "$0"); echo $((n+1)) > "$0"; echo $n', "${{ vars.counter }}"]}
    until: int(trim(result.stdout)) >= 6
    interval: 10ms
    timeout: 5s
`, "counter="+counter)
	rec := &recorder{}
	o, err := (&Runner{Plan: plan, Runtime: &actions.Runtime{}, Observer: rec}).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if o.Status != Passed {
		t.Fatalf("status %s: %+v", o.Status, o.Steps)
	}
	if o.Steps[0].Attempts != 3 {
		t.Errorf("flaky took %d attempts, want 3", o.Steps[0].Attempts)
	}
	if o.Steps[1].Attempts != 4 {
		t.Errorf("poll took %d attempts, want 4", o.Steps[1].Attempts)
	}
	if len(rec.progress) == 0 || !strings.Contains(strings.Join(rec.progress, "\n"), "int(trim(result.stdout)) = 3") {
		t.Errorf("progress did not show the last value: %q", rec.progress)
	}
}

// A compute step that keeps a filtered list of parsed structs stores it
// with the element type, so methods still work on the results restored by
// --from (the journal is JSON).
func TestResumeKeepsTypedListsOfComputeSteps(t *testing.T) {
	out := t.TempDir()
	src := `
name: typed
vars: {out: x}
outputDir: ${{ vars.out }}
steps:
  - id: netstat
    run: {argv: [printf, "tcp 0 0 10.42.0.6:40404 10.42.0.33:8080 ESTABLISHED\ntcp 0 0 10.42.0.6:5000 10.42.0.9:80 TIME_WAIT\n"]}
  - id: conns
    compute:
      live: '${{ filter(parseNetstat(steps.netstat.stdout), .state == "ESTABLISHED") }}'
  - id: answer
    write: {path: peer.txt, text: "${{ steps.conns.live[0].foreign.String() }}"}
`
	solve(t, src, "out="+out)
	resume(t, src, "answer", "out="+out)
	if b, _ := os.ReadFile(filepath.Join(out, "peer.txt")); string(b) != "10.42.0.33:8080\n" {
		t.Errorf("peer.txt = %q", b)
	}
}

// A step its when skipped is as final as one that ran: the journal keeps
// it, and --from resumes after it (also after a parallel step whose when
// was false).
func TestResumeAfterWhenSkipped(t *testing.T) {
	out := t.TempDir()
	src := `
name: skip
vars: {out: x, on: false}
outputDir: ${{ vars.out }}
steps:
  - id: maybe
    when: vars.on
    run: {argv: [echo, hi]}
  - id: g
    when: vars.on
    parallel:
      a: [{id: a1, run: {argv: [echo, a]}}]
      b: [{id: b1, run: {argv: [echo, b]}}]
  - id: last
    write: {path: last.txt, text: "[${{ steps.maybe.stdout }}${{ steps.a1.stdout }}]"}
`
	solve(t, src, "out="+out)
	_, rec := resume(t, src, "last", "out="+out)
	for _, id := range []string{"maybe", "g", "a1", "b1"} {
		if s := rec.status(id); s != Restored {
			t.Errorf("%s: %s, want restored", id, s)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(out, "last.txt")); string(b) != "[]\n" {
		t.Errorf("last.txt = %q", b)
	}
}

// A run's time limit fails the running step, naming the limit (and for
// until, what it waited for), skips the rest, and still runs finally.
func TestRunTimeLimit(t *testing.T) {
	for _, tc := range []struct{ name, step, want string }{
		{"a running program", `run: {argv: [sleep, "30"]}`, "the run's time limit of 1s passed: sleep did not finish"},
		{"a poll", "run: {argv: [\"true\"]}\n    until: result.exitCode == 1\n    interval: 20ms", "the run's time limit of 1s passed while waiting for until: result.exitCode == 1; last seen: result.exitCode = 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := t.TempDir()
			plan := compile(t, `
name: limit
vars: {out: x}
outputDir: ${{ vars.out }}
steps:
  - id: first
    run: {argv: ["true"]}
  - id: slow
    `+tc.step+`
  - id: later
    run: {argv: ["true"]}
finally:
  - id: cleanup
    write: {path: cleaned.txt, text: done}
`, "out="+out)
			start := time.Now()
			o, err := (&Runner{Plan: plan, Runtime: &actions.Runtime{}, Timeout: time.Second}).Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("the run took %s with a 1s limit", d)
			}
			if o.Status != Failed {
				t.Errorf("run status %s, want failed", o.Status)
			}
			byID := map[string]*StepRecord{}
			for _, r := range o.Steps {
				byID[r.ID] = r
			}
			if r := byID["slow"]; r.Status != Failed || !strings.Contains(r.Error, tc.want) {
				t.Errorf("slow: %s %q, want failed with %q", r.Status, r.Error, tc.want)
			}
			if r := byID["later"]; r.Status != Skipped || r.Reason != "the run's time limit of 1s passed" {
				t.Errorf("later: %s %q", r.Status, r.Reason)
			}
			if r := byID["cleanup"]; r.Status != Passed {
				t.Errorf("cleanup: %s %s", r.Status, r.Error)
			}
		})
	}
}
