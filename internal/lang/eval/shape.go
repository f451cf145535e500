package eval

import (
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/expr-lang/expr/conf"
)

// Expressions that differ only in the steps they read check the same way.
//
// A playbook repeats its expressions with other step names: step after step
// asserts len(steps.X.stdout) > 0 of the step before it, and a generated
// playbook does little else. What expr's parser and checker make of such
// an expression depends on its text around the names, on the types of the
// steps it names and on its configuration, never on the names themselves;
// whether it may read those steps (declared, earlier, not running beside
// it) is the one thing that does, and that is checked for each. So an
// expression is checked in full once per shape, and its copies with other
// names get that check's outcome; each makes its own bytecode, from its own
// text, when it first runs.

// shapeKey names one shape of expression checked against one
// configuration for one wanted kind.
type shapeKey struct {
	shape string
	cfg   *conf.Config
	want  reflect.Kind
}

// shaped is the expression a shape was checked as: the names it read, in
// the order of its placeholders, and their result types.
type shaped struct {
	expr  *Expr
	names []string
	types []reflect.Type
}

// exprShape returns src with each step it reads as steps.NAME replaced by
// a numbered placeholder (one number per distinct name, in order of first
// appearance), and the names. ok is false when src mentions steps in a
// way the shape cannot stand for: steps without .NAME after it (steps[x],
// steps alone, steps .x), a name that the lexer would not read as one
// identifier, or a keyword as a name. Text inside string literals is left
// as it is. An expression with no steps in it is its own shape.
func exprShape(src string) (shape string, names []string, ok bool) {
	if !strings.Contains(src, RootSteps) {
		return src, nil, true
	}
	var b strings.Builder
	b.Grow(len(src))
	for i := 0; i < len(src); {
		ch := src[i]
		switch {
		case ch == '"' || ch == '\'':
			end := stringEnd(src, i)
			if end < 0 {
				return "", nil, false
			}
			b.WriteString(src[i:end])
			i = end
		case ch == '`':
			end := strings.IndexByte(src[i+1:], '`')
			if end < 0 {
				return "", nil, false
			}
			b.WriteString(src[i : i+end+2])
			i += end + 2
		case identByte(ch):
			start := i
			for i < len(src) && identByte(src[i]) {
				i++
			}
			word := src[start:i]
			if word != RootSteps || (start > 0 && src[start-1] == '.') {
				b.WriteString(word)
				continue
			}
			if start > 0 && src[start-1] == '#' {
				return "", nil, false
			}
			// steps as the root: it must be steps.NAME
			if i >= len(src) || src[i] != '.' {
				return "", nil, false
			}
			nameStart := i + 1
			j := nameStart
			for j < len(src) && asciiIdentByte(src[j]) {
				j++
			}
			name := src[nameStart:j]
			if name == "" || (name[0] >= '0' && name[0] <= '9') || (j < len(src) && identByte(src[j])) || exprKeyword(name) {
				return "", nil, false
			}
			k := slices.Index(names, name)
			if k < 0 {
				k = len(names)
				names = append(names, name)
			}
			b.WriteString("steps.$")
			b.WriteString(strconv.Itoa(k))
			i = j
		default:
			b.WriteByte(ch)
			i++
		}
	}
	return b.String(), names, true
}

// stringEnd returns the index after the quoted string starting at src[i],
// or -1 when it does not end.
func stringEnd(src string, i int) int {
	quote := src[i]
	for j := i + 1; j < len(src); j++ {
		switch src[j] {
		case '\\':
			j++
		case quote:
			return j + 1
		}
	}
	return -1
}

// identByte reports a byte the lexer may read inside an identifier: ASCII
// letters, digits, _ and $, and any byte of a non-ASCII letter.
func identByte(ch byte) bool {
	return asciiIdentByte(ch) || ch == '$' || ch >= 0x80
}

func asciiIdentByte(ch byte) bool {
	return ch == '_' || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9')
}

// exprKeyword reports words expr's lexer reads as operators or literals
// rather than names.
func exprKeyword(w string) bool {
	switch w {
	case "not", "in", "or", "and", "matches", "contains", "startsWith", "endsWith", "let", "if", "else", "true", "false", "nil":
		return true
	}
	return false
}

// reuseShape returns the expression checked in full for src's shape, with
// src's names, when every step src names is declared with the type the
// checked one had and may be read here; nil otherwise, and the expression
// is then checked in full. The caller holds c.mu.
func (c *Compiler) reuseShape(key shapeKey, src string, names []string, ctx Context) *Expr {
	s, ok := c.shapes[key]
	if !ok || len(s.names) != len(names) {
		return nil
	}
	for k, name := range names {
		if c.unreadableStep(name, ctx) != "" || c.steps[name].result != s.types[k] || c.stale[name] {
			return nil
		}
	}
	e := *s.expr
	if src == s.expr.Src {
		return &e // the same text: it shares its bytecode too
	}
	e.Src = src
	e.Refs = make([]string, len(s.expr.Refs))
	for i, r := range s.expr.Refs {
		if id, ok := strings.CutPrefix(r, RootSteps+"."); ok {
			if k := slices.Index(s.names, id); k >= 0 {
				r = RootSteps + "." + names[k]
			}
		}
		e.Refs[i] = r
	}
	e.prog = &lazyProgram{src: src, cfg: s.expr.prog.cfg, want: s.expr.prog.want}
	return &e
}

// keepShape records a fully checked expression for its shape, when its
// check stands for every copy of the shape: it read the steps it names, as
// steps.NAME and no other way, used no definition (whose text reads steps
// of its own) and warned of nothing. The caller holds c.mu.
func (c *Compiler) keepShape(key shapeKey, names []string, e *Expr) {
	if e.WholeSteps || len(c.expanded) > 0 {
		return
	}
	read := 0
	for _, r := range e.Refs {
		if id, ok := strings.CutPrefix(r, RootSteps+"."); ok {
			read++
			if !slices.Contains(names, id) {
				return
			}
		}
	}
	if read != len(names) {
		return
	}
	types := make([]reflect.Type, len(names))
	for k, n := range names {
		types[k] = c.steps[n].result
	}
	if c.shapes == nil {
		c.shapes = map[shapeKey]*shaped{}
	}
	c.shapes[key] = &shaped{expr: e, names: names, types: types}
}
