package runner

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/labrun/labrun/actions"
	"github.com/labrun/labrun/internal/lang/syntax"
)

// A step with loop runs its action once per item, in order, with item and
// index in its spec, until and assertions; later steps read the list of
// results, typed, and the journal brings it back for --from.
func TestLoop(t *testing.T) {
	out := t.TempDir()
	src := `
name: loop
vars: {out: x, ports: [80, 443]}
outputDir: ${{ vars.out }}
steps:
  - id: each
    loop: ${{ vars.ports }}
    run: {argv: [echo, "${{ index }}:${{ item }}"]}
    until: result.stdout != ""
    assert:
      - trim(result.stdout) == string(index) + ":" + string(item)
  - id: literal
    loop: [a, "${{ vars.ports[0] }}"]
    run: {argv: [echo, "${{ item }}"]}
  - id: chained
    loop: ${{ steps.each }}
    run: {argv: [echo, "${{ upper(trim(item.stdout)) }}"]}
  - id: none
    loop: '${{ filter(vars.ports, # > 1000) }}'
    run: {argv: ["false"]}
  - id: files
    loop: ${{ steps.literal }}
    write: {path: "${{ trim(item.stdout) }}.txt", text: "${{ item.stdout }}"}
  - id: summary
    write:
      path: summary.json
      json:
        each: ${{ map(steps.each, trim(.stdout)) }}
        literal: ${{ map(steps.literal, trim(.stdout)) }}
        chained: ${{ steps.chained[1].stdout }}
        none: ${{ len(steps.none) }}
`
	rec := &recorder{}
	o, err := (&Runner{Plan: compile(t, src, "out="+out), Runtime: &actions.Runtime{}, Observer: rec}).Run(context.Background())
	if err != nil || o.Status != Passed {
		t.Fatalf("run: %v %v %+v", o.Status, err, o.Steps)
	}
	want := `{"chained":"1:443\n","each":["0:80","1:443"],"literal":["a","80"],"none":0}`
	if got := compactJSON(t, filepath.Join(out, "summary.json")); got != want {
		t.Errorf("summary.json = %s, want %s", got, want)
	}
	for _, f := range []string{"a.txt", "80.txt"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("the write loop did not write %s: %v", f, err)
		}
	}
	if !strings.Contains(strings.Join(rec.progress, "\n"), "item 1 (443), 2 of 2") {
		t.Errorf("progress does not name the item: %q", rec.progress)
	}
	var asserted []string
	for _, r := range o.Steps {
		if r.ID == "each" {
			for _, a := range r.Assertions {
				asserted = append(asserted, a.Item)
			}
		}
	}
	if strings.Join(asserted, ",") != "item 0 (80),item 1 (443)" {
		t.Errorf("each's assertions were checked on %q, want one per item", asserted)
	}

	// --from restores the lists, typed: summary reads item fields again.
	os.Remove(filepath.Join(out, "summary.json"))
	resume(t, src, "summary", "out="+out)
	if got := compactJSON(t, filepath.Join(out, "summary.json")); got != want {
		t.Errorf("resumed summary.json = %s, want %s", got, want)
	}
}

// The first item that fails stops the step; the results so far, the
// failing item's included, stay readable, and the failure names the item.
func TestLoopStopsAtFailingItem(t *testing.T) {
	for _, tc := range []struct {
		name, step, wantErr, wantAssert string
		ran                             int
	}{
		{"action error", `run: {argv: [sh, -c, 'exit $0', "${{ item }}"]}`, `item 1 (3): sh -c 'exit $0' 3 exited with code 3`, "", 2},
		{"assertion", "run: {argv: [echo, \"${{ item }}\"]}\n    assert: [\"item == 0\"]", "", "assertion failed for item 1 (3): item == 0", 2},
		{"until timeout", "run: {argv: [echo, \"${{ item }}\"]}\n    until: item == 0\n    timeout: 1s\n    interval: 50ms", "item 1 (3): timed out after 1s waiting for until: item == 0", "", 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			plan := compile(t, `
name: stop
steps:
  - id: l
    loop: [0, 3, 0]
    `+tc.step+`
  - id: after
    run: {argv: ["true"]}
`)
			o, err := (&Runner{Plan: plan, Runtime: &actions.Runtime{}}).Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			l := o.Steps[0]
			if l.Status != Failed || o.Steps[1].Status != Skipped {
				t.Fatalf("statuses %s, %s; want failed, skipped", l.Status, o.Steps[1].Status)
			}
			if tc.wantErr != "" && !strings.Contains(l.Error, tc.wantErr) {
				t.Errorf("error %q, want it to contain %q", l.Error, tc.wantErr)
			}
			if tc.wantAssert != "" {
				last := l.Assertions[len(l.Assertions)-1]
				if last.Passed || last.Failure() != tc.wantAssert {
					t.Errorf("last assertion %+v, want %q", last, tc.wantAssert)
				}
			}
			if got := len(l.Result.([]*actions.RunResult)); got != tc.ran {
				t.Errorf("%d results kept, want %d", got, tc.ran)
			}
		})
	}
}

// when decides once for the whole loop; a skipped loop reads as an empty
// list.
func TestLoopSkippedByWhen(t *testing.T) {
	out := t.TempDir()
	plan := compile(t, `
name: skip
vars: {out: x}
outputDir: ${{ vars.out }}
steps:
  - id: l
    when: false
    loop: [1, 2]
    run: {argv: ["false"]}
  - id: w
    write: {path: n.txt, text: "${{ len(steps.l) }}"}
`, "out="+out)
	o, err := (&Runner{Plan: plan, Runtime: &actions.Runtime{}}).Run(context.Background())
	if err != nil || o.Status != Passed || o.Steps[0].Status != Skipped {
		t.Fatalf("run: %v %v", o, err)
	}
	if b, _ := os.ReadFile(filepath.Join(out, "n.txt")); string(b) != "0\n" {
		t.Errorf("n.txt = %q, want the empty list's length 0", b)
	}
}

func compactJSON(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	c, _ := json.Marshal(v)
	return string(c)
}

// A loop runs at most MaxLoopItems items: a list written out or a range
// with constant ends beyond it is refused when the playbook is validated,
// naming the limit; any other list, before its first item runs (config:
// the lab is broken).
func TestLoopLimit(t *testing.T) {
	long := "[" + strings.Repeat("1, ", MaxLoopItems) + "1]"
	for _, tc := range []struct{ loop, err string }{
		{"${{ 1..10001 }}", "p.yaml:5:11: loop over 10001 items; a loop runs at most 10000 (labrun's limit, docs/language.md#limits)"},
		{long, "p.yaml:5:11: loop over 10001 items; a loop runs at most 10000"},
		{"${{ 1..10000 }}", ""},
		{"${{ 1..vars.n }}", ""}, // known at run only
	} {
		src := "name: l\nvars: {n: 10001}\nsteps:\n  - id: a\n    loop: " + tc.loop + "\n    run: {argv: [\"true\"]}\n"
		pb, err := syntax.Load("p.yaml", []byte(src), actions.Names())
		if err != nil {
			t.Fatal(err)
		}
		_, err = Compile(pb, Options{})
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("loop %.20s: %v", tc.loop, err)
		case tc.err != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.err)):
			t.Errorf("loop %.20s: error %v, want one starting %q", tc.loop, err, tc.err)
		}
	}
	plan := compile(t, "name: l\nvars: {n: 10001}\nsteps:\n  - id: a\n    loop: ${{ 1..vars.n }}\n    run: {argv: [\"true\"]}\n")
	o, err := (&Runner{Plan: plan, Runtime: &actions.Runtime{}}).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	s := o.Steps[0]
	if s.Status != Failed || s.Class != ClassConfig || s.Attempts != 0 || !strings.HasSuffix(s.Error, ":5:11: loop over 10001 items; a loop runs at most 10000 (labrun's limit, docs/language.md#limits)") {
		t.Errorf("a loop over 1..10001 ran as %s [%s], %d attempts: %q", s.Status, s.Class, s.Attempts, s.Error)
	}
}
