package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/labrun/labrun/actions"
)

// fifoCheck can only pass when reader and writer run at the same time:
// reader's cat blocks until writer opens the FIFO. after reads reader's
// output, so it must run once reader has finished; both sit after the
// FIFO steps in plan order, in a parallel step and at the top level.
const fifoCheck = `
name: graph
vars: {out: x, fifo: x}
outputDir: ${{ vars.out }}
steps:
  - id: reader
    run: {argv: [cat, "${{ vars.fifo }}"]}
    timeout: 30s
  - id: group
    parallel:
      w:
        - id: writer
          run: {argv: [sh, -c, 'echo hi >"$1"', sh, "${{ vars.fifo }}"]}
          timeout: 30s
      r:
        - id: after
          assert:
            - that: trim(steps.reader.stdout) == "hi"
  - id: last
    assert:
      - that: steps.after != nil && trim(steps.reader.stdout) == "hi"
`

// A check runs each step once the steps it reads have finished: reads
// that do not read each other overlap (reader and writer, which only pass
// together), and a step that reads another waits for it (after sees
// reader's output). The report lists the steps in plan order.
func TestCheckRunsIndependentStepsTogether(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	plan := compile(t, fifoCheck, "out="+dir, "fifo="+fifo)
	rec := &recorder{}
	o, err := (&Runner{Plan: plan, Runtime: &actions.Runtime{Mode: actions.Check}, KeepGoing: true, Observer: rec}).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"reader=passed", "group=passed", "writer=passed", "after=passed", "last=passed"}
	if got := ids(o.Steps); !slices.Equal(got, want) {
		t.Fatalf("steps %v, want %v", got, want)
	}
	// the observer hears of the ends in a sequential run's order
	if got := ids(rec.ended); !slices.Equal(got, []string{"reader=passed", "writer=passed", "after=passed", "group=passed", "last=passed"}) {
		t.Errorf("observer told %v", got)
	}
	if o.Status != Passed {
		t.Errorf("check %s, want passed", o.Status)
	}
}

// twice makes the same read in two steps, and another read once; each
// read appends a line to a file, so the file counts the commands run.
const twice = `
name: twice
vars: {out: x, log: x}
outputDir: ${{ vars.out }}
steps:
  - id: first
    run: {argv: [sh, -c, 'echo read >>"$1"; wc -l <"$1"', sh, "${{ vars.log }}"]}
  - id: second
    run: {argv: [sh, -c, 'echo read >>"$1"; wc -l <"$1"', sh, "${{ vars.log }}"]}
  - id: other
    run: {argv: [sh, -c, 'echo other >>"$1"; wc -l <"$1"', sh, "${{ vars.log }}"]}
  - id: same
    assert:
      - that: steps.first.stdout == steps.second.stdout
`

// A check makes each distinct read once: two steps with the same action
// and spec share one run of it; a different spec runs on its own.
func TestCheckSharesIdenticalReads(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "log")
	plan := compile(t, twice, "out="+dir, "log="+log)
	o, err := (&Runner{Plan: plan, Runtime: &actions.Runtime{Mode: actions.Check}, KeepGoing: true}).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if o.Status != Passed {
		t.Fatalf("check %s: %v", o.Status, ids(o.Steps))
	}
	data, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Count(string(data), "read\n"); got != 1 {
		t.Errorf("the shared read ran %d times, want 1", got)
	}
	if got := strings.Count(string(data), "other\n"); got != 1 {
		t.Errorf("the other read ran %d times, want 1", got)
	}
}

// Steps that share a read share its JSON encoding too (a check's report
// would otherwise encode a conntrack table once per step re-reading it),
// and every record's encoding is what encoding/json makes of its result.
func TestCheckEncodesSharedReadOnce(t *testing.T) {
	dir := t.TempDir()
	plan := compile(t, twice, "out="+dir, "log="+filepath.Join(dir, "log"))
	o, err := (&Runner{Plan: plan, Runtime: &actions.Runtime{Mode: actions.Check}, KeepGoing: true, EncodeResults: true}).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	recs := map[string]*StepRecord{}
	for _, rec := range o.Steps {
		recs[rec.ID] = rec
		got, err := rec.ResultJSON()
		if err != nil {
			t.Fatalf("%s: %v", rec.ID, err)
		}
		want, err := json.Marshal(rec.Result)
		if rec.Result == nil {
			want = nil
		}
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: encoded %s, want %s (%v)", rec.ID, got, want, err)
		}
	}
	if recs["first"].encoded != recs["second"].encoded {
		t.Error("the two steps of one read encode its result twice")
	}
	if recs["other"].encoded == recs["first"].encoded {
		t.Error("another read shares the first read's encoding")
	}
}

// fifoTasks is fifoCheck in a lab with tasks: a's steps only pass when
// they overlap, and b's file was never written, so b is not started.
const fifoTasks = `
name: graph-tasks
vars: {out: x, fifo: x}
outputDir: ${{ vars.out }}
tasks:
  a: a.txt, from two reads that only pass together
  b: b.txt, not started
steps:
  - id: reader
    task: a
    run: {argv: [cat, "${{ vars.fifo }}"]}
    timeout: 30s
  - id: group
    parallel:
      w:
        - id: writer
          task: a
          run: {argv: [sh, -c, 'echo hi >"$1"', sh, "${{ vars.fifo }}"]}
          timeout: 30s
      v:
        - id: version
          task: a
          run: {argv: ["true"]}
  - id: a_file
    task: a
    write: {path: a.txt, text: "${{ trim(steps.reader.stdout) }}"}
  - id: b_group
    parallel:
      x:
        - id: b_read
          task: b
          run: {argv: ["true"]}
      y:
        - id: b_other
          task: b
          run: {argv: ["true"]}
  - id: b_file
    task: b
    write: {path: b.txt, text: "${{ steps.b_read.stdout }}"}
`

// The check of a lab with tasks runs as a graph too (reader and writer
// overlap, or a's steps could not pass), and what no graded task needs is
// skipped as the step loop skips it: b's parallel step, its member and its
// write, each with the reason.
func TestCheckGraphWithTasks(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out, "a.txt"), []byte("hi\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	plan := compile(t, fifoTasks, "out="+out, "fifo="+fifo)
	r := &Runner{Plan: plan, Runtime: &actions.Runtime{Mode: actions.Check}, KeepGoing: true}
	if !r.canRunGraph(nil) {
		t.Fatal("a check of a lab with tasks should run as a graph")
	}
	o, err := r.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"reader=passed", "group=passed", "writer=passed", "version=passed", "a_file=passed", "b_group=skipped", "b_read=skipped", "b_other=skipped", "b_file=skipped"}
	if got := ids(o.Steps); !slices.Equal(got, want) {
		t.Fatalf("steps %v, want %v", got, want)
	}
	for _, rec := range o.Steps[5:] {
		want := "task 2 not started: no b.txt yet"
		if rec.Step.Task == nil {
			want = "no graded task needs it"
		}
		if !rec.Ungraded() || rec.Reason != want {
			t.Errorf("%s: ungraded %v, reason %q; want %q", rec.ID, rec.Ungraded(), rec.Reason, want)
		}
	}
	var tasks []string
	for _, tr := range o.Tasks {
		tasks = append(tasks, tr.ID+"="+string(tr.Status))
	}
	if !slices.Equal(tasks, []string{"a=passed", "b=not-started"}) {
		t.Errorf("tasks %v", tasks)
	}
}

// longestFirst can only pass when a check starts the step that leads the
// longest chain of reads before the reads that end a branch: l1 to l4 each
// wait for their FIFO to be written and hold one of the check's four turns
// meanwhile; tail writes l1 to l3's FIFOs once head has run, and final
// writes l4's once tail has. head is declared after the leaves, so a
// check that started steps in plan order (or in any order) could give all
// four turns to the leaves, which would then wait until their timeouts.
const longestFirst = `
name: longest-first
vars: {out: x, dir: x}
outputDir: ${{ vars.out }}
steps:
  - id: l1
    run: {argv: [cat, "${{ vars.dir }}/f1"]}
    timeout: 20s
  - id: l2
    run: {argv: [cat, "${{ vars.dir }}/f2"]}
    timeout: 20s
  - id: l3
    run: {argv: [cat, "${{ vars.dir }}/f3"]}
    timeout: 20s
  - id: l4
    run: {argv: [cat, "${{ vars.dir }}/f4"]}
    timeout: 20s
  - id: head
    run: {argv: ["true"]}
  - id: tail
    run: {argv: [sh, -c, 'for f in f1 f2 f3; do echo "$2" >"$1/$f"; done', sh, "${{ vars.dir }}", "${{ steps.head.exitCode }}"]}
    timeout: 20s
  - id: final
    run: {argv: [sh, -c, 'echo "$2" >"$1/f4"', sh, "${{ vars.dir }}", "${{ steps.tail.exitCode }}"]}
    timeout: 20s
`

// A check starts, of the steps that are ready, those that lead the longest
// chain of work ahead (head, then tail), and the reads that end a branch
// when a turn is free (longestFirst).
func TestCheckStartsLongestChainFirst(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"f1", "f2", "f3", "f4"} {
		if err := syscall.Mkfifo(filepath.Join(dir, f), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	plan := compile(t, longestFirst, "out="+dir, "dir="+dir)
	o, err := (&Runner{Plan: plan, Runtime: &actions.Runtime{Mode: actions.Check}, KeepGoing: true}).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"l1=passed", "l2=passed", "l3=passed", "l4=passed", "head=passed", "tail=passed", "final=passed"}
	if got := ids(o.Steps); !slices.Equal(got, want) {
		t.Fatalf("steps %v, want %v", got, want)
	}
	for _, rec := range o.Steps[:4] {
		if got := strings.TrimSpace(rec.Result.(*actions.RunResult).Stdout); got != "0" {
			t.Errorf("%s read %q from its FIFO, want tail's or final's 0", rec.ID, got)
		}
	}
}
