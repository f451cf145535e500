package diag

import (
	"errors"
	"strings"
	"testing"

	"github.com/labrun/labrun/internal/lang/visible"
)

func TestRender(t *testing.T) {
	src := map[string]string{
		"p.yaml": "name: a\nstep:\n  - id: a\n    run: {argv: [echo, '${{ steps.frist.stdout }}']}\n\tx: \"quoted\"\nbad: \x01\n\nrtl: \"a\u202eb\"\n",
	}
	read := func(file string) ([]byte, error) {
		if s, ok := src[file]; ok {
			return []byte(s), nil
		}
		return nil, errors.New("no such file")
	}
	pos := func(line, col int) Pos { return Pos{File: "p.yaml", Line: line, Col: col} }
	tests := []struct {
		name string
		err  *Error
		want string
	}{
		{"the word at the column, with its suggestion in place", &Error{Pos: pos(2, 1), Msg: `unknown key "step"` + DidYouMean("step", []string{"steps"}) + "; expected one of: name, steps"}, `
p.yaml:2:1: unknown key "step" (did you mean "steps"?); expected one of: name, steps
  2 | step:
    | ^^^^
    = help: did you mean
  2 | steps:
`},
		{"the typo before the column", &Error{Pos: pos(4, 41), Msg: "in expression `steps.frist.stdout`: unknown step \"frist\" (did you mean \"first\"?)"}, `
p.yaml:4:41: in expression ` + "`steps.frist.stdout`" + `: unknown step "frist" (did you mean "first"?)
  4 |     run: {argv: [echo, '${{ steps.frist.stdout }}']}
    |                                   ^^^^^
    = help: did you mean
  4 |     run: {argv: [echo, '${{ steps.first.stdout }}']}
`},
		{"a quoted expression after the column", &Error{Pos: pos(4, 25), Msg: "in expression `steps.frist.stdout`: wrong"}, `
p.yaml:4:25: in expression ` + "`steps.frist.stdout`" + `: wrong
  4 |     run: {argv: [echo, '${{ steps.frist.stdout }}']}
    |                             ^^^^^^^^^^^^^^^^^^
`},
		{"nothing named: one caret; tabs kept", &Error{Pos: pos(5, 2), Msg: "expected a list"}, `
p.yaml:5:2: expected a list
  5 | 	x: "quoted"
    | 	^
`},
		{"a quoted value at the column: its text", &Error{Pos: pos(5, 5), Msg: `unknown value "quoted"`}, `
p.yaml:5:5: unknown value "quoted"
  5 | 	x: "quoted"
    | 	    ^^^^^^
`},
		{"a line with a control character is not shown", &Error{Pos: pos(6, 6), Msg: "control character"}, `
p.yaml:6:6: control character
`},
		{"a line with a bidi control is not shown", &Error{Pos: pos(8, 6), Msg: "bidi"}, `
p.yaml:8:6: bidi
`},
		{"control characters in the message are escaped", &Error{Pos: pos(8, 6), Msg: "unknown key \x1b[2J\u202e\x9b in\nthis"}, `
p.yaml:8:6: unknown key \u001b[2J\u202e\x9b in
this
`},
		{"a blank line is not shown", &Error{Pos: pos(7, 1), Msg: "empty"}, `
p.yaml:7:1: empty
`},
		{"past the end of the file", &Error{Pos: pos(40, 1), Msg: "gone"}, `
p.yaml:40:1: gone
`},
		{"no such file", &Error{Pos: Pos{File: "--set", Line: 1, Col: 1}, Msg: "bad value"}, `
--set:1:1: bad value
`},
		{"no position", &Error{Msg: "no position"}, `
no position
`},
	}
	for _, tt := range tests {
		var b strings.Builder
		Render(&b, []*Error{tt.err}, read)
		if got, want := b.String(), strings.TrimPrefix(tt.want, "\n"); got != want {
			t.Errorf("%s:\ngot\n%s\nwant\n%s", tt.name, got, want)
		}
	}
}

// Render prints any error on any source without panicking, always starts
// with the error's own line, and prints no control character.
func FuzzRender(f *testing.F) {
	f.Add("name: a\nstep:\n", 2, 1, `unknown key "step" (did you mean "steps"?)`)
	f.Add("\t'${{ steps.frist }}'", 1, 9, "unknown step \"frist\" (did you mean \"first\"?)")
	f.Add("é \"x", 1, 3, "`x` \"\"")
	f.Fuzz(func(t *testing.T, src string, line, col int, msg string) {
		e := &Error{Pos: Pos{File: "f", Line: line, Col: col}, Msg: msg}
		var b strings.Builder
		Render(&b, []*Error{e}, func(string) ([]byte, error) { return []byte(src), nil })
		if !strings.HasPrefix(b.String(), visible.Text(e.Error())+"\n") {
			t.Fatalf("output does not start with the error line: %q", b.String())
		}
		for _, r := range b.String() {
			if visible.Escaped(r) {
				t.Fatalf("output holds %U: %q", r, b.String())
			}
		}
	})
}
