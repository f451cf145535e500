package eval

import (
	"errors"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/file"
	"github.com/expr-lang/expr/parser"
	"github.com/labrun/labrun/internal/lang/diag"
)

// expr-lang's messages reworded where they leave out what an author needs:
// the signature of a function called wrongly, the fields and methods of a
// value read wrongly, and why braces after a comma do not hold a map.

// callError is expr's message for a call whose arguments do not fit.
var callError = regexp.MustCompile(`(arguments to call|to call) (\w+)\s*$`)

// signatureError adds the signature of labrun's function to expr's message
// for a call with too few, too many or wrongly typed arguments ("not
// enough arguments to call countLines: countLines(string, string) int"),
// which otherwise names neither.
func (c *Compiler) signatureError(err error) error {
	var fe *file.Error
	if !errors.As(err, &fe) {
		return err
	}
	m := callError.FindStringSubmatch(fe.Message)
	if m == nil {
		return err
	}
	for _, f := range c.funcs {
		if f.Name == m[2] {
			out := *fe
			out.Message = strings.TrimRight(fe.Message, " ") + ": " + f.Usage()
			return &out
		}
	}
	return err
}

// mapLiteralError explains expr's "unexpected token Operator(":")" inside
// braces that open a builtin's second argument, as in map(xs, {"a": #}):
// expr reads braces there as the closure's own, so a map literal must be
// wrapped in parentheses.
func mapLiteralError(src string, err error) error {
	var fe *file.Error
	if !errors.As(err, &fe) || !strings.Contains(fe.Message, `unexpected token Operator(":")`) {
		return err
	}
	lines := strings.Split(src, "\n")
	if fe.Line < 1 || fe.Line > len(lines) {
		return err
	}
	// the offset of the error in src: lines before it, then its column
	off := 0
	for _, l := range lines[:fe.Line-1] {
		off += len(l) + 1
	}
	line := []rune(lines[fe.Line-1])
	off += len(string(line[:min(fe.Column, len(line))]))
	depth := 0
	for i := off - 1; i >= 0; i-- {
		switch src[i] {
		case '}':
			depth++
		case '{':
			if depth > 0 {
				depth--
				continue
			}
			if before := strings.TrimRight(src[:i], " \t\n"); strings.HasSuffix(before, ",") {
				out := *fe
				out.Message += `; braces after a comma in map, filter, all, ... are the closure's own, so a map literal there needs parentheses: map(xs, ({"key": #}))`
				return &out
			}
			return err
		}
	}
	return err
}

// noField is expr's message for a member a struct lacks.
var noField = regexp.MustCompile(`has no field (\w+)`)

// memberError rewords expr's "type X has no field y", about a value that is
// not a plain chain from steps, vars or result (a parser's result, an
// item of a list), in the words checkRefs uses for chains: the fields and
// methods that exist. The checker gave the nodes it passed their natures,
// so the struct's type is on the member's object.
func memberError(tree *parser.Tree, err error) error {
	var fe *file.Error
	if !errors.As(err, &fe) {
		return err
	}
	m := noField.FindStringSubmatch(fe.Message)
	if m == nil {
		return err
	}
	var msg string
	ast.Find(tree.Node, func(n ast.Node) bool {
		mn, ok := n.(*ast.MemberNode)
		if !ok || msg != "" {
			return false
		}
		prop, ok := mn.Property.(*ast.StringNode)
		if !ok || prop.Value != m[1] {
			return false
		}
		if t := mn.Node.Nature().Type; t != nil {
			msg = fieldPath(mn.Node.String(), t, []string{m[1]})
		}
		return msg != ""
	})
	if msg == "" {
		return err
	}
	out := *fe
	out.Message = msg
	return &out
}

// exprError places an expr-lang error at its column within the file.
func exprError(src string, pos diag.Pos, err error) error {
	var fe *file.Error
	if errors.As(err, &fe) {
		p := pos
		if fe.Line <= 1 && p.Line > 0 {
			p.Col += fe.Column
		} else if fe.Line > 1 {
			p.Line += fe.Line - 1
			p.Col = fe.Column + 1
		}
		return diag.Errorf(p, "in expression %s: %s", quoteExpr(src), PlainTypes(fe.Message))
	}
	return diag.Errorf(pos, "in expression %s: %v", quoteExpr(src), PlainTypes(err.Error()))
}

func quoteExpr(src string) string {
	if utf8.RuneCountInString(src) > 60 {
		src = string([]rune(src)[:57]) + "..."
	}
	return "`" + src + "`"
}
