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

// closureBraces finds the brace that opens a map literal as a builtin's
// second argument, as in map(xs, {"a": #}), where expr's error is
// "unexpected token Operator(":")": expr reads braces there as the
// closure's own, so a map literal must be wrapped in parentheses. It is
// the brace's byte offset in src, or -1 when fe is another error.
func closureBraces(src string, fe *file.Error) int {
	if fe.Message != `unexpected token Operator(":")` {
		return -1
	}
	off := byteOffset(src, fe.From)
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
				return i
			}
			return -1
		}
	}
	return -1
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

// exprError places an expr-lang error at the text it is about.
func exprError(src string, at Where, err error) error {
	var fe *file.Error
	if errors.As(err, &fe) {
		return diag.Errorf(at(byteOffset(src, fe.From)), "in expression %s: %s", quoteExpr(src), PlainTypes(fe.Message))
	}
	return diag.Errorf(at(0), "in expression %s: %v", quoteExpr(src), PlainTypes(err.Error()))
}

// quoteExpr quotes an expression for a message on one line: an
// expression written over several lines is shown with each line break
// and the indentation after it as one space.
func quoteExpr(src string) string {
	src = strings.TrimSpace(src)
	if strings.Contains(src, "\n") {
		lines := strings.Split(src, "\n")
		for i := range lines {
			lines[i] = strings.TrimSpace(lines[i])
		}
		src = strings.Join(lines, " ")
	}
	if utf8.RuneCountInString(src) > 60 {
		src = string([]rune(src)[:57]) + "..."
	}
	return "`" + src + "`"
}
