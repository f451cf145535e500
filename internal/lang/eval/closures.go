package eval

import (
	"github.com/expr-lang/expr/ast"
	"github.com/labrun/labrun/internal/lang/diag"
)

// Inside a closure nested in another (filter inside map), # is the inner
// closure's element: the outer one's cannot be reached as #. A join
// across two lists, map(xs, filter(ys, .n == #.n)), then compares an item
// of ys with itself and checks fine. validate warns where that is likely:
// an outer closure that reads its item nowhere but (as it thinks) inside
// an inner closure over a list that does not come from the outer item (ys,
// not #.children), whose body uses #.

// Warnings returns what compiling found worth pointing out without
// refusing it, in the order found.
func (c *Compiler) Warnings() diag.List {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.warnings
}

// nestedPointers adds a warning for each closure that reads # inside
// another closure while iterating a list of its own.
func (c *Compiler) nestedPointers(src string, at Where, root ast.Node) {
	var outer []*ast.BuiltinNode
	ast.Find(root, func(n ast.Node) bool {
		if b, ok := n.(*ast.BuiltinNode); ok && closureBody(b) != nil {
			outer = append(outer, b)
		}
		return false
	})
	seen := map[*ast.BuiltinNode]bool{}
	for _, o := range outer {
		body := closureBody(o)
		if ast.Find(body, func(n ast.Node) bool { _, ok := n.(*ast.VariableDeclaratorNode); return ok }) != nil {
			continue // the outer item is named (let outer = #; ...)
		}
		if usesPointer(body) {
			continue // the outer item is read as # where it is the outer one
		}
		ast.Find(body, func(n ast.Node) bool {
			in, ok := n.(*ast.BuiltinNode)
			if !ok || in == o || seen[in] || closureBody(in) == nil {
				return false
			}
			if usesPointer(in.Arguments[0]) || !usesPointer(closureBody(in)) {
				return false
			}
			seen[in] = true
			p := at(byteOffset(src, in.Location().From))
			for _, w := range c.warnings {
				if w.Pos == p {
					return false // the same expression compiled again
				}
			}
			c.warnings.Add(p, "in expression %s: # inside %s(...) is an item of %s's own list, not of the %s(...) around it; to compare with the outer item, name it first: %s(list, let outer = #; %s(..., .x == outer.x))",
				quoteExpr(src), in.Name, in.Name, o.Name, o.Name, in.Name)
			return false
		})
	}
}

// closureBody is the body of a builtin's closure argument, or nil.
func closureBody(b *ast.BuiltinNode) ast.Node {
	for _, a := range b.Arguments[min(1, len(b.Arguments)):] {
		if p, ok := a.(*ast.PredicateNode); ok {
			return p.Node
		}
	}
	return nil
}

// usesPointer reports whether n reads # (or .field, its shorthand) outside
// the closures inside it, which have a # of their own.
func usesPointer(n ast.Node) bool {
	inner := map[ast.Node]bool{}
	ast.Find(n, func(m ast.Node) bool {
		if b, ok := m.(*ast.BuiltinNode); ok {
			if body := closureBody(b); body != nil {
				for _, p := range pointers(body) {
					inner[p] = true
				}
			}
		}
		return false
	})
	for _, p := range pointers(n) {
		if !inner[p] {
			return true
		}
	}
	return false
}

// pointers lists the # nodes under n.
func pointers(n ast.Node) []ast.Node {
	var out []ast.Node
	ast.Find(n, func(m ast.Node) bool {
		if p, ok := m.(*ast.PointerNode); ok && p.Name == "" {
			out = append(out, m)
		}
		return false
	})
	return out
}
