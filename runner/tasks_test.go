package runner

import (
	"slices"
	"testing"
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
