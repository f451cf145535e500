package runner

import (
	"slices"
	"testing"

	"github.com/labrun/labrun/actions"
)

// A task's files are known before the run when their paths are literal or
// read only variables; a path built from a step's result is not, and the
// task is then graded whatever the learner's directory holds.
func TestTaskFiles(t *testing.T) {
	p := compile(t, `name: files
vars: {out: /tmp/unused, name: b}
outputDir: ${{ vars.out }}
tasks:
  literal: a.json and b.json
  fromvars: the file named by a variable
  fromstep: the file named by a step's output
steps:
  - id: a
    task: literal
    write: {path: a.json, json: {x: 1}}
  - id: a_again
    task: literal
    write: {path: a.json, json: {x: 1}}
  - id: b
    task: literal
    write: {path: b.json, json: {x: 1}}
  - id: v
    task: fromvars
    write: {path: "${{ vars.name }}-v.json", json: {x: 1}}
  - id: word
    task: fromstep
    run: {argv: [echo, w]}
  - id: s
    task: fromstep
    write: {path: "${{ trim(steps.word.stdout) }}.json", json: {x: 1}}
`)
	env := p.compiler.NewEnv()
	for _, v := range p.Vars {
		x, err := v.Value.Eval(env)
		if err != nil {
			t.Fatal(err)
		}
		if err := env.SetVar(v.Name, x); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		task      int
		want      []string
		wantKnown bool
	}{
		{0, []string{"a.json", "b.json"}, true},
		{1, []string{"b-v.json"}, true},
		{2, nil, false},
	}
	for _, tt := range tests {
		files, known := p.TaskFiles(p.Tasks[tt.task], env)
		if !slices.Equal(files, tt.want) || known != tt.wantKnown {
			t.Errorf("task %s: files %q (known %v), want %q (known %v)", p.Tasks[tt.task].ID, files, known, tt.want, tt.wantKnown)
		}
	}
}

// A failed task carries the hint for the problem its reason names: the
// failed assertion's own, else its step's; an error's is the step's. A task
// whose step gives no hint has none, and a passed task none.
func TestTaskHint(t *testing.T) {
	o := runWith(t, `name: t
tasks:
  own: the assertion's hint
  step: the step's hint
  error: an error, the step's hint
  none: no hint
  ok: passes
steps:
  - id: own
    task: own
    run: {argv: [echo, "2"]}
    hint: look at the step
    assert:
      - that: trim(result.stdout) == "2"
        hint: not this one, it passed
      - that: trim(result.stdout) == "3"
        hint: three, not two
  - id: step
    task: step
    run: {argv: [echo, "2"]}
    hint: look at the step
    assert: [trim(result.stdout) == "3"]
  - id: error
    task: error
    run: {argv: ["false"]}
    hint: false always fails
  - id: none
    task: none
    run: {argv: [echo, "2"]}
    assert: [trim(result.stdout) == "3"]
  - id: ok
    task: ok
    run: {argv: [echo, "2"]}
    hint: unused
`, actions.Solve, nil, true)
	want := map[string]string{"own": "three, not two", "step": "look at the step", "error": "false always fails", "none": "", "ok": ""}
	for _, tr := range o.Tasks {
		if tr.Hint != want[tr.ID] {
			t.Errorf("task %s (%s: %s): hint %q, want %q", tr.ID, tr.Status, tr.Reason, tr.Hint, want[tr.ID])
		}
	}
}
