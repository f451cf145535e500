package eval

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/labrun/labrun/internal/lang/diag"
	"gopkg.in/yaml.v3"
)

type valueKind int

const (
	litKind    valueKind = iota // a YAML scalar with no template
	exprKind                    // a string that is exactly one ${{ }}: keeps the expression's type
	interpKind                  // text with ${{ }} parts: always a string
	listKind                    // a YAML sequence
	mapKind                     // a YAML mapping, order kept
)

// Value is a YAML value with its templates compiled: the form in which an
// action's spec waits between validation and the moment the step runs.
type Value struct {
	kind  valueKind
	Pos   diag.Pos
	Node  *yaml.Node
	lit   any // string, int, float64, bool or nil
	expr  *Expr
	parts []part
	items []*Value
	keys  []string
	kpos  []diag.Pos // where each key is written
	vals  []*Value
}

type part struct {
	lit  string
	expr *Expr
}

// Build compiles the templates of a YAML value. ctx says which steps are
// visible and what result is.
func Build(c *Compiler, file string, n *yaml.Node, ctx Context) (*Value, diag.List) {
	var errs diag.List
	v := build(c, file, n, ctx, &errs)
	return v, errs
}

func build(c *Compiler, file string, n *yaml.Node, ctx Context, errs *diag.List) *Value {
	pos := diag.Pos{File: file, Line: n.Line, Col: n.Column}
	v := &Value{Pos: pos, Node: n}
	switch n.Kind {
	case yaml.SequenceNode:
		v.kind = listKind
		v.items = []*Value{}
		for _, item := range n.Content {
			v.items = append(v.items, build(c, file, item, ctx, errs))
		}
	case yaml.MappingNode:
		v.kind = mapKind
		seen := map[string]bool{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if k.Kind != yaml.ScalarNode {
				errs.Add(diag.Pos{File: file, Line: k.Line, Col: k.Column}, "mapping keys must be plain strings")
				continue
			}
			if seen[k.Value] {
				errs.Add(diag.Pos{File: file, Line: k.Line, Col: k.Column}, "duplicate key %q", k.Value)
				continue
			}
			seen[k.Value] = true
			if HasTemplate(k.Value) {
				// keys are written as they are: a template there would
				// reach the output as ${{ ... }} text
				errs.Add(diag.Pos{File: file, Line: k.Line, Col: k.Column}, "a mapping key cannot hold ${{ }}: keys are taken as written; compute the mapping in an expression instead")
			}
			v.keys = append(v.keys, k.Value)
			v.kpos = append(v.kpos, diag.Pos{File: file, Line: k.Line, Col: k.Column})
			v.vals = append(v.vals, build(c, file, n.Content[i+1], ctx, errs))
		}
	case yaml.ScalarNode:
		buildScalar(c, v, ctx, errs)
	case yaml.AliasNode:
		errs.Add(pos, "YAML aliases are not supported; use vars and ${{ }} for reuse")
	}
	return v
}

func buildScalar(c *Compiler, v *Value, ctx Context, errs *diag.List) {
	n := v.Node
	v.kind = litKind
	switch n.Tag {
	case "!!null":
		v.lit = nil
		return
	case "!!bool":
		v.lit = n.Value == "true" || n.Value == "True" || n.Value == "TRUE"
		return
	case "!!int":
		if i, err := strconv.ParseInt(n.Value, 0, 64); err == nil {
			v.lit = int(i)
			return
		}
		v.lit = n.Value
		return
	case "!!float":
		if f, err := strconv.ParseFloat(n.Value, 64); err == nil {
			v.lit = f
			return
		}
		v.lit = n.Value
		return
	}
	v.lit = n.Value
	if !HasTemplate(n.Value) {
		if strings.Contains(n.Value, "$${{") {
			v.lit = strings.ReplaceAll(n.Value, "$${{", "${{")
		}
		return
	}
	segs, err := splitTemplate(n.Value)
	if err != nil {
		te := err.(*templateError)
		msg := te.msg
		if n.LineComment != "" && n.Style == 0 {
			// expr's # (the current element in map/filter) after a space
			// starts a YAML comment in an unquoted value.
			msg += fmt.Sprintf(`; YAML took %q as a comment: quote the value`, n.LineComment)
		}
		errs.Add(c.offsetPos(v.Pos, n, te.offset), "%s", msg)
		return
	}
	var parts []part
	for _, s := range segs {
		if !s.isExpr {
			parts = append(parts, part{lit: s.lit})
			continue
		}
		ectx := ctx
		if len(segs) > 1 {
			ectx.Want = reflect.Invalid
		}
		e, err := c.CompileAt(s.expr, c.InScalar(v.Pos, n, s.offset), ectx)
		if err != nil {
			errs.Append(err)
			continue
		}
		parts = append(parts, part{expr: e})
	}
	if len(segs) == 1 && segs[0].isExpr && len(parts) == 1 {
		v.kind, v.expr = exprKind, parts[0].expr
		return
	}
	v.kind, v.parts = interpKind, parts
}

// sourceText is the text of a plain scalar that YAML reads as something
// other than a string (0644 as 420, 0x10 as 16, 1e3 as 1000, 1.0 as 1, ~ as
// null, yes as true), as written. A field that takes a string takes what
// the author typed: `argv: [chmod, 0644, f]` runs chmod 0644.
func (v *Value) sourceText() (string, bool) {
	if v == nil || v.kind != litKind || v.Node == nil || v.Node.Kind != yaml.ScalarNode || v.Node.Value == "" {
		return "", false
	}
	switch v.Node.Tag {
	case "!!int", "!!float", "!!bool", "!!null":
		return v.Node.Value, true
	}
	return "", false
}

// IsLiteral reports whether the value has no template anywhere inside, so
// it is known at validation time.
func (v *Value) IsLiteral() bool {
	switch v.kind {
	case litKind:
		return true
	case listKind:
		for _, i := range v.items {
			if !i.IsLiteral() {
				return false
			}
		}
		return true
	case mapKind:
		for _, x := range v.vals {
			if !x.IsLiteral() {
				return false
			}
		}
		return true
	}
	return false
}

// WholeExpr returns the expression when the value is exactly one ${{ }}
// (and so keeps the expression's type), else nil.
func (v *Value) WholeExpr() *Expr {
	if v == nil || v.kind != exprKind {
		return nil
	}
	return v.expr
}

// Literal returns a scalar's value when it has no template.
func (v *Value) Literal() (any, bool) {
	if v == nil || v.kind != litKind {
		return nil, false
	}
	return v.lit, true
}

// Lookup returns the value under key of a mapping, or nil.
func (v *Value) Lookup(key string) *Value {
	if v == nil || v.kind != mapKind {
		return nil
	}
	for i, k := range v.keys {
		if k == key {
			return v.vals[i]
		}
	}
	return nil
}

// KeyPos is where key is written in a mapping value (the value's own
// position when it has no such key), so that an error about a key points
// at the key, not at its value.
func (v *Value) KeyPos(key string) diag.Pos {
	if v != nil {
		for i, k := range v.keys {
			if k == key {
				return v.kpos[i]
			}
		}
		return v.Pos
	}
	return diag.Pos{}
}

// Keys returns a mapping's keys in order.
func (v *Value) Keys() []string {
	if v == nil || v.kind != mapKind {
		return nil
	}
	return v.keys
}

// Items returns a list's items.
func (v *Value) Items() []*Value {
	if v == nil || v.kind != listKind {
		return nil
	}
	return v.items
}

// Exprs returns every compiled expression inside the value, for the plan's
// "reads" column.
func (v *Value) Exprs() []*Expr {
	var out []*Expr
	switch v.kind {
	case exprKind:
		out = append(out, v.expr)
	case interpKind:
		for _, p := range v.parts {
			if p.expr != nil {
				out = append(out, p.expr)
			}
		}
	case listKind:
		for _, i := range v.items {
			out = append(out, i.Exprs()...)
		}
	case mapKind:
		for _, x := range v.vals {
			out = append(out, x.Exprs()...)
		}
	}
	return out
}

// Locate is where text is written under key of a mapping value: the value
// itself when it is a single value (a path, literal or ${{ }}), the list
// item or mapping key equal to text, else key itself (the value's own
// position when it has no such key).
func (v *Value) Locate(key, text string) diag.Pos {
	x := v.Lookup(key)
	if x == nil {
		return v.KeyPos(key)
	}
	if x.kind != listKind && x.kind != mapKind {
		return x.Pos
	}
	for _, item := range x.Items() {
		if lit, ok := item.Literal(); ok && fmt.Sprint(lit) == text {
			return item.Pos
		}
	}
	for _, k := range x.Keys() {
		if k == text {
			return x.KeyPos(k)
		}
	}
	return v.KeyPos(key)
}

// PosAt is where the value at path inside v is written: path is mapping
// keys (string) and list indexes (int), and where a part of it comes from
// an expression (an object rendered from vars, a list from a step's
// result), the expression's position, since the rest is its value.
func (v *Value) PosAt(path []any) diag.Pos {
	for _, seg := range path {
		var next *Value
		switch seg := seg.(type) {
		case string:
			if v.kind == mapKind {
				for i, k := range v.keys {
					if k == seg {
						next = v.vals[i]
					}
				}
			}
		case int:
			if v.kind == listKind && seg >= 0 && seg < len(v.items) {
				next = v.items[seg]
			}
		}
		if next == nil {
			return v.Pos
		}
		v = next
	}
	return v.Pos
}

// Text is a string value known before the run: a literal, or text whose
// every ${{ }} the lookup knows the value of (it is given the
// expression's source, trimmed); ok is false otherwise.
func (v *Value) Text(lookup func(src string) (string, bool)) (string, bool) {
	switch v.kind {
	case litKind:
		s, ok := v.lit.(string)
		return s, ok
	case exprKind:
		return lookup(strings.TrimSpace(v.expr.Src))
	case interpKind:
		var b strings.Builder
		for _, p := range v.parts {
			if p.expr == nil {
				b.WriteString(p.lit)
				continue
			}
			s, ok := lookup(strings.TrimSpace(p.expr.Src))
			if !ok {
				return "", false
			}
			b.WriteString(s)
		}
		return b.String(), true
	}
	return "", false
}
