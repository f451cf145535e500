package runner

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/labrun/labrun/actions"
)

// A playbook whose step ep fails (its command exits 3), and a step ok that
// passes.
const failedReadHead = `name: f
steps:
  - id: ep
    run: {argv: [sh, -c, "echo oops >&2; echo a; exit 3"]}
  - id: ok
    run: {argv: [echo, a]}
`

const epFailed = `steps.ep (line 3) failed: sh -c 'echo oops >&2; echo a; exit 3' exited with code 3: oops`

// TestFailedReadMessage: an expression that cannot be evaluated because a
// step it reads failed says that step's failure, at the read, not what
// the expression made of the step's empty result ("index out of range",
// "invalid operation: int()"). The snippets follow failedReadHead;
// want is the error of the step reader (or of its assertion).
func TestFailedReadMessage(t *testing.T) {
	tests := []struct {
		name, steps string
		solve       bool // run as labrun run does (going on after a failure); else as labrun check
		want        string
	}{
		{name: "a spec", steps: `
  - id: reader
    compute: {v: "${{ int(trim(steps.ep.stdout)) + 1 }}"}
`, want: "p.yaml:9:32: " + epFailed},
		{name: "a when", steps: `
  - id: reader
    when: split(steps.ep.stdout, " ")[1] == "x"
    run: {argv: ["true"]}
`, want: "p.yaml:9:17: " + epFailed},
		{name: "an assertion", steps: `
  - id: reader
    assert: ['int(steps.ok.stdout) == 0 || split(steps.ep.stdout, " ")[1] == "x"']
`, want: "p.yaml:9:50: " + epFailed},
		{name: "a loop", steps: `
  - id: reader
    loop: '${{ [split(steps.ep.stdout, " ")[1]] }}'
    run: {argv: [echo, "${{ item }}"]}
`, want: "p.yaml:9:23: " + epFailed},
		{name: "an until", solve: true, steps: `
  - id: reader
    run: {argv: [echo, b]}
    until: split(steps.ep.stdout, " ")[1] == result.stdout
`, want: "p.yaml:10:18: " + epFailed},
		{name: "through a definition", steps: `
  - id: reader
    compute: {v: "${{ epWords[1] }}"}
`, want: "p.yaml:11:23: " + strings.Replace(epFailed, "line 3", "line 5", 1)},
		{name: "two failed steps", steps: `
  - id: ep2
    run: {argv: [sh, -c, "exit 4"]}
  - id: reader
    compute: {v: '${{ split(steps.ok.stdout + steps.ep2.stdout + steps.ep.stdout, " ")[1] }}'}
`, want: "p.yaml:11:66: " + epFailed + "; steps.ep2 (line 8) failed: sh -c 'exit 4' exited with code 4: no error output"},
		{name: "a step that failed an assertion", steps: `
  - id: counted
    run: {argv: [echo, "1"]}
    assert:
      - that: result.stdout == "2\n"
        message: two lines were counted
  - id: reader
    compute: {v: '${{ split(steps.counted.stdout, ",")[1] }}'}
`, want: "p.yaml:14:29: steps.counted (line 8) failed: two lines were counted"},
		{name: "a finally step of a run", solve: true, steps: `
finally:
  - id: reader
    run: {argv: [echo, '${{ split(steps.ep.stdout, " ")[1] }}']}
`, want: "p.yaml:10:35: " + epFailed},
		// a failure of its own stays the expression's
		{name: "no failed step read", steps: `
  - id: reader
    compute: {v: '${{ split(steps.ok.stdout, " ")[1] }}'}
`, want: "p.yaml:9:23: expression `split(steps.ok.stdout, \" \")[1]`: index out of range: 1 (array length is 1) (1:28)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := failedReadHead + tt.steps
			if strings.Contains(tt.steps, "epWords") {
				src = strings.Replace(src, "steps:\n", "define:\n  epWords: split(steps.ep.stdout, \" \")\nsteps:\n", 1)
			}
			mode := actions.Check
			if tt.solve {
				mode = actions.Solve
			}
			plan := compile(t, src)
			o, err := (&Runner{Plan: plan, Runtime: &actions.Runtime{Mode: mode}, KeepGoing: true}).Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			var got string
			for _, s := range o.Steps {
				if s.ID != "reader" {
					continue
				}
				got = s.Error
				for _, a := range s.Assertions {
					if !a.Passed {
						got = a.Error
					}
				}
			}
			got = strings.ReplaceAll(got, filepath.Dir(plan.Playbook.File)+string(filepath.Separator), "")
			got = strings.TrimPrefix(got, "item 0 (\"a\"): ")
			if got != tt.want {
				t.Errorf("reader's error:\n%s\nwant:\n%s", got, tt.want)
			}
		})
	}
}
