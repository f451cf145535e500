// Package diag holds source positions and the positioned errors that every
// phase of labrun reports (load, validate, run). Keeping them in one tiny
// package lets the loader, the expression layer and the runner produce the
// same "file:line:col: message" lines without importing each other.
package diag

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Pos is a 1-based position in a playbook file. The zero Pos means
// "no position known" and prints as just the file name (or nothing).
type Pos struct {
	File string
	Line int
	Col  int
}

// String renders the position the way editors and compilers do, so that
// terminals and IDEs turn it into a link.
func (p Pos) String() string {
	switch {
	case p.Line == 0:
		return p.File
	case p.Col == 0:
		return fmt.Sprintf("%s:%d", p.File, p.Line)
	default:
		return fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Col)
	}
}

// IsZero reports whether the position is unknown.
func (p Pos) IsZero() bool { return p.Line == 0 }

// Error is one problem found in a playbook, tied to where it is.
type Error struct {
	Pos Pos
	Msg string
}

func (e *Error) Error() string {
	if s := e.Pos.String(); s != "" {
		return s + ": " + e.Msg
	}
	return e.Msg
}

// Errorf builds a positioned error.
func Errorf(pos Pos, format string, args ...any) *Error {
	return &Error{Pos: pos, Msg: fmt.Sprintf(format, args...)}
}

// List collects every problem of a phase, so that one `labrun validate`
// shows all of them instead of stopping at the first.
type List []*Error

// Add appends an error built from a format.
func (l *List) Add(pos Pos, format string, args ...any) {
	*l = append(*l, Errorf(pos, format, args...))
}

// Append adds errors of any kind, keeping positions of *Error values and
// wrapping others without a position.
func (l *List) Append(errs ...error) {
	for _, err := range errs {
		if err == nil {
			continue
		}
		var de *Error
		var dl List
		switch {
		case errors.As(err, &dl):
			*l = append(*l, dl...)
		case errors.As(err, &de):
			*l = append(*l, de)
		default:
			*l = append(*l, &Error{Msg: err.Error()})
		}
	}
}

// Sort orders errors by file, line and column, dropping exact duplicates
// (the same message at the same place can be reached by two checks).
func (l List) Sort() List {
	sort.SliceStable(l, func(i, j int) bool {
		a, b := l[i].Pos, l[j].Pos
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Col < b.Col
	})
	out := l[:0]
	for i, e := range l {
		if i > 0 && e.Pos == l[i-1].Pos && e.Msg == l[i-1].Msg {
			continue
		}
		out = append(out, e)
	}
	return out
}

// Err returns the list as an error, or nil when it is empty.
func (l List) Err() error {
	if len(l) == 0 {
		return nil
	}
	return l
}

func (l List) Error() string {
	lines := make([]string, len(l))
	for i, e := range l {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// Suggest returns the candidate closest to word when it is close enough to
// be a likely typo, or "". Used for "did you mean" hints on keys, steps,
// variables and actions.
func Suggest(word string, candidates []string) string {
	best, bestD := "", -1
	for _, c := range candidates {
		d := distance(strings.ToLower(word), strings.ToLower(c))
		if bestD < 0 || d < bestD {
			best, bestD = c, d
		}
	}
	limit := 1 + len(word)/3
	if bestD < 0 || bestD > limit || bestD >= len(word) {
		return ""
	}
	return best
}

// DidYouMean formats a suggestion as a message suffix. Render reads it
// back to show the source line with the suggestion in place.
func DidYouMean(word string, candidates []string) string {
	if s := Suggest(word, candidates); s != "" {
		return didYouMeanPrefix + strconv.Quote(s) + "?)"
	}
	return ""
}

const didYouMeanPrefix = " (did you mean "

// distance is the Damerau-Levenshtein (optimal string alignment) distance,
// so a swapped pair of letters counts as one typo.
func distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}
