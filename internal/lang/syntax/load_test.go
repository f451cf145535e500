package syntax

import (
	"strings"
	"testing"
)

var testActions = []string{"run", "write", "sleep"}

func TestLoadKeepsPositionsAndOrder(t *testing.T) {
	src := `name: lab
vars:
  b: 1
  a: [x]
steps:
  - id: first
    run: {argv: [true]}
    timeout: 2m
    assert:
      - result.exitCode == 0
      - that: true
        hint: h
finally:
  - id: last
    sleep: {duration: 1s}
`
	pb, err := Load("p.yaml", []byte(src), testActions)
	if err != nil {
		t.Fatal(err)
	}
	if pb.Name != "lab" || len(pb.Vars) != 2 || pb.Vars[0].Name != "b" || pb.Vars[1].Name != "a" {
		t.Fatalf("vars %+v", pb.Vars)
	}
	s := pb.Steps[0]
	if s.ID.Value != "first" || s.ID.Pos.String() != "p.yaml:6:9" || s.Action != "run" || s.ActionPos.String() != "p.yaml:7:5" {
		t.Errorf("step %+v", s)
	}
	if s.Timeout.D.Minutes() != 2 || len(s.Assert) != 2 || s.Assert[1].Hint.Value != "h" {
		t.Errorf("step fields %+v", s)
	}
	if !pb.Finally[0].Cleanup || pb.Finally[0].Action != "sleep" {
		t.Errorf("finally %+v", pb.Finally[0])
	}
	if got := len(pb.AllSteps()); got != 2 {
		t.Errorf("AllSteps = %d", got)
	}
}

// Every error message of the loader is pinned by the CLI script tests; this
// checks that the loader reports all problems, not just the first.
func TestLoadReportsEveryError(t *testing.T) {
	src := "name: a\nnmae: b\nsteps:\n  - id: x-y\n    rn: {}\n  - run: {argv: [true]}\n"
	_, err := Load("p.yaml", []byte(src), testActions)
	if err == nil {
		t.Fatal("no error")
	}
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != 4 {
		t.Fatalf("got %d errors, want 4:\n%s", len(lines), err)
	}
	for i, prefix := range []string{"p.yaml:2:1:", "p.yaml:4:9:", "p.yaml:5:5:", "p.yaml:6:5:"} {
		if !strings.HasPrefix(lines[i], prefix) {
			t.Errorf("error %d = %q, want prefix %s", i, lines[i], prefix)
		}
	}
}

func FuzzLoad(f *testing.F) {
	for _, s := range []string{
		"", "name: a\nsteps:\n  - id: a\n    run: {argv: [true]}\n",
		"a: &a [*a]", "- x", "name: [", "\x00", "steps: {a: b}", "name: a\nvars: {x: ${{ }}}\nsteps: [{id: a, assert: [x]}]",
		"name: a\nsteps:\n  - id: a\n    timeout: 1e400\n    run: {}\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		pb, err := Load("f.yaml", []byte(src), testActions)
		if err == nil && (pb == nil || len(pb.Steps) == 0) {
			t.Fatalf("accepted a playbook without steps: %q", src)
		}
		if err != nil {
			for _, line := range strings.Split(err.Error(), "\n") {
				if !strings.HasPrefix(line, "f.yaml") {
					t.Fatalf("error without a position: %q", line)
				}
			}
		}
	})
}
