package eval

import (
	"reflect"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/file"
	"github.com/expr-lang/expr/parser"
	"github.com/labrun/labrun/internal/lang/diag"
	"github.com/labrun/labrun/internal/lang/fields"
)

// Checks of an expression's text that expr-lang's checker does not make:
// characters that only look like ASCII, and constant regular expressions.

// nonASCIIName refuses a character outside ASCII in an expression outside
// its string literals, naming it by code point: names are ASCII, and a
// Cyrillic е in stеps would otherwise print as "unknown name stеps",
// which looks exactly like the right name.
func nonASCIIName(src string, at Where) error {
	var quote rune
	col := 0
	escaped := false
	for i, r := range src {
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
			return diag.Errorf(at(i), "in expression %s: %s at character %d is not part of any name; names are ASCII letters, digits and _", quoteExpr(src), diag.RuneName(r), col)
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

// checkConstArgs runs the CheckConst of each function called with a
// constant first argument, placing its error at the argument.
func (c *Compiler) checkConstArgs(tree *parser.Tree) error {
	var err *file.Error
	ast.Find(tree.Node, func(n ast.Node) bool {
		call, ok := n.(*ast.CallNode)
		if !ok || err != nil || len(call.Arguments) == 0 {
			return false
		}
		id, ok := call.Callee.(*ast.IdentifierNode)
		s, isString := call.Arguments[0].(*ast.StringNode)
		if !ok || !isString {
			return false
		}
		for _, f := range c.funcs {
			if f.Name == id.Value && f.CheckConst != nil {
				if e := f.CheckConst(s.Value); e != nil {
					err = &file.Error{Location: s.Location(), Message: e.Error()}
				}
			}
		}
		return false
	})
	if err != nil {
		return err.Bind(tree.Source)
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

// goTypeName matches a package-qualified Go type in an expr-lang message
// (actions.RunResult, *parse.Conntrack, []actions.HTTPResult).
var goTypeName = regexp.MustCompile(`(\[\])?\*?\b[a-z][a-z0-9]*\.([A-Z][A-Za-z0-9]*)`)

// PlainTypes rewrites the Go type names expr-lang puts in its messages
// into the playbook's words: a step's result is an object, a list of them
// a list, and a compute step's generated struct type is an object too,
// instead of struct { F0 string "expr:\"v\" json:\"v\"" }.
func PlainTypes(msg string) string {
	msg = replaceStructTypes(msg)
	msg = strings.ReplaceAll(msg, "map[string]interface {}", "a mapping")
	msg = strings.ReplaceAll(msg, "interface {}", "any value")
	return goTypeName.ReplaceAllStringFunc(msg, func(m string) string {
		name := goTypeName.FindStringSubmatch(m)[2]
		what := "an object"
		if r, ok := strings.CutSuffix(name, "Result"); ok && r != "" {
			what = "the result of a " + strings.ToLower(r) + " step"
		}
		if strings.HasPrefix(m, "[]") {
			if r, ok := strings.CutSuffix(name, "Result"); ok && r != "" {
				return "a list of " + strings.ToLower(r) + " step results"
			}
			return "a list of objects"
		}
		return what
	})
}

// replaceStructTypes replaces each "struct { ... }" (braces matched,
// quoted tags skipped) by "an object".
func replaceStructTypes(msg string) string {
	var b strings.Builder
	for {
		i := strings.Index(msg, "struct {")
		if i < 0 {
			b.WriteString(msg)
			return b.String()
		}
		list := strings.HasSuffix(msg[:i], "[]")
		b.WriteString(strings.TrimSuffix(msg[:i], "[]"))
		depth, quoted, escaped, end := 0, false, false, len(msg)
	scan:
		for j := i; j < len(msg); j++ {
			c := msg[j]
			switch {
			case escaped:
				escaped = false
			case quoted && c == '\\':
				escaped = true
			case c == '"':
				quoted = !quoted
			case quoted:
			case c == '{':
				depth++
			case c == '}':
				depth--
				if depth == 0 {
					end = j + 1
					break scan
				}
			}
		}
		if list {
			b.WriteString("a list of objects")
		} else {
			b.WriteString("an object")
		}
		msg = msg[end:]
	}
}

// Ambiguous finds the plain scalars in v that YAML reads as numbers
// although their text says something else (0644 is 420, 0x10 is 16, 1e3
// is 1000, 1.0 is 1) where the spec type t does not say a string is meant
// (a json, kv or compute value): there the number is what is written out,
// and the author may have meant the text. A string field takes the text
// as written, so nothing is ambiguous there.
func Ambiguous(v *Value, t reflect.Type) diag.List {
	var out diag.List
	ambiguous(v, t, &out)
	return out
}

func ambiguous(v *Value, t reflect.Type, out *diag.List) {
	if v == nil {
		return
	}
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	untyped := t == nil || t.Kind() == reflect.Interface
	switch v.kind {
	case litKind:
		if !untyped || v.Node == nil || (v.Node.Tag != "!!int" && v.Node.Tag != "!!float") {
			return
		}
		if text := v.Node.Value; text != Format(v.lit) {
			out.Add(v.Pos, "YAML reads %s as the number %s here; quote it (%q) to keep the text, or write %s", text, Format(v.lit), text, Format(v.lit))
		}
	case listKind:
		var elem reflect.Type
		if !untyped && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
			elem = t.Elem()
		}
		for _, item := range v.items {
			ambiguous(item, elem, out)
		}
	case mapKind:
		fieldTypes := map[string]reflect.Type{}
		switch {
		case untyped:
		case t.Kind() == reflect.Struct:
			for _, f := range fields.Of(t) {
				fieldTypes[f.Key] = f.Type
			}
		case t.Kind() == reflect.Map:
			for _, k := range v.keys {
				fieldTypes[k] = t.Elem()
			}
		}
		for i, k := range v.keys {
			ambiguous(v.vals[i], fieldTypes[k], out)
		}
	}
}
