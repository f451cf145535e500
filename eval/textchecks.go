package eval

import (
	"unicode/utf8"

	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/file"
	"github.com/expr-lang/expr/parser"
	"github.com/labrun/labrun/diag"
)

// Checks of an expression's text that expr-lang's checker does not make:
// characters that only look like ASCII, and constant regular expressions.

// nonASCIIName refuses a character outside ASCII in an expression outside
// its string literals, naming it by code point: names are ASCII, and a
// Cyrillic е in stеps would otherwise print as "unknown name stеps",
// which looks exactly like the right name.
func nonASCIIName(src string, pos diag.Pos) error {
	var quote rune
	col := 0
	escaped := false
	for _, r := range src {
		col++
		switch {
		case quote != 0:
			switch {
			case escaped:
				escaped = false
			case r == '\\' && quote != '`':
				escaped = true
			case r == quote:
				quote = 0
			}
		case r == '"' || r == '\'' || r == '`':
			quote = r
		case r >= utf8.RuneSelf:
			p := pos
			if p.Line > 0 {
				p.Col += col - 1
			}
			return diag.Errorf(p, "in expression %s: %s at character %d is not part of any name; names are ASCII letters, digits and _", quoteExpr(src), diag.RuneName(r), col)
		}
	}
	return nil
}

// checkConstRegexps compiles the constant regular expressions passed to
// labrun's regexp functions, and a constant right side of matches.
func checkConstRegexps(tree *parser.Tree) error {
	v := &regexpVisitor{}
	ast.Walk(&tree.Node, v)
	if v.err != nil {
		return v.err.Bind(tree.Source)
	}
	return nil
}

type regexpVisitor struct{ err *file.Error }

func (v *regexpVisitor) Visit(node *ast.Node) {
	call, ok := (*node).(*ast.CallNode)
	if !ok || v.err != nil {
		return
	}
	id, ok := call.Callee.(*ast.IdentifierNode)
	if !ok {
		return
	}
	i, ok := regexpArgs[id.Value]
	if !ok || i >= len(call.Arguments) {
		return
	}
	if s, ok := call.Arguments[i].(*ast.StringNode); ok {
		if _, err := compileRegexp(s.Value); err != nil {
			v.err = &file.Error{Location: s.Location(), Message: err.Error()}
		}
	}
}
