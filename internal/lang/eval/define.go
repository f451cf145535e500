package eval

import (
	"fmt"
	"regexp"
	"slices"

	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/builtin"
	"github.com/expr-lang/expr/file"
	"github.com/expr-lang/expr/parser"
	"github.com/labrun/labrun/internal/lang/diag"
)

// Named expressions (a playbook's define: block): a name that stands for an
// expression wherever an expression uses it, so that a filter written once
// serves many steps. A use is replaced by the definition's syntax tree
// before the expression is checked, so each use is type-checked where it
// stands, against the steps that have run there, like the expression
// written out; every node of the replacement is placed at the name, so an
// error in the use points at it.

type define struct {
	name string
	src  string
	pos  diag.Pos
}

var defineName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// reservedNames are the roots every expression sees; a definition cannot
// hide them.
var reservedNames = []string{RootVars, RootSteps, RootEnv, RootResult, RootItem, RootIndex, "true", "false", "nil", "let", "in", "not", "and", "or", "matches", "contains", "startsWith", "endsWith", "if", "else"}

// Define declares a named expression, its name written at at and its
// expression at pos. It may use the definitions before it; it is parsed
// now and checked at every use (CheckDefines checks it on its own,
// against every step).
func (c *Compiler) Define(name string, at diag.Pos, src string, pos diag.Pos) error {
	if why := c.nameProblem(name); why != "" {
		return diag.Errorf(at, "define %q: %s", name, why)
	}
	if c.defineIndex(name) >= 0 {
		return diag.Errorf(at, "define %q is defined twice", name)
	}
	tree, err := parser.Parse(src)
	if err != nil {
		return exprError(src, pos, mapLiteralError(src, err))
	}
	for _, later := range c.laterDefines {
		if later.name == name {
			continue
		}
		if c.defineIndex(later.name) < 0 && identifierNamed(tree.Node, later.name) != nil {
			return diag.Errorf(pos, "in define %s: %s is defined further down (at %s); a definition may use only those above it", name, later.name, later.pos)
		}
	}
	if identifierNamed(tree.Node, name) != nil {
		return diag.Errorf(pos, "in define %s: a definition cannot use itself", name)
	}
	c.defines = append(c.defines, define{name: name, src: src, pos: pos})
	return nil
}

// DeclareDefines records every definition's name and place before any is
// defined, so that a use of one further down is named as such.
func (c *Compiler) DeclareDefines(names []string, pos []diag.Pos) {
	for i, n := range names {
		if c.nameProblem(n) == "" {
			c.laterDefines = append(c.laterDefines, define{name: n, pos: pos[i]})
		}
	}
}

// nameProblem says why name cannot be a definition's, or "".
func (c *Compiler) nameProblem(name string) string {
	switch {
	case !defineName.MatchString(name):
		return "a name must be an identifier (letters, digits, _; not starting with a digit)"
	case slices.Contains(reservedNames, name):
		return "the name is one every expression already has"
	case slices.Contains(builtin.Names, name) || slices.ContainsFunc(c.funcs, func(f Function) bool { return f.Name == name }):
		return "a function has that name"
	}
	return ""
}

func (c *Compiler) defineIndex(name string) int {
	return slices.IndexFunc(c.defines, func(d define) bool { return d.name == name })
}

// CheckDefines compiles each definition on its own, where every step has
// run, so a mistake inside one is reported at the definition even where
// no expression uses it yet.
func (c *Compiler) CheckDefines() diag.List {
	var errs diag.List
	for _, d := range c.defines {
		if _, err := c.Compile(d.src, d.pos, Context{Step: AllSteps}); err != nil {
			errs.Append(err)
		}
	}
	return errs
}

// expandDefines replaces each identifier that names a definition with the
// definition's tree, placed at the identifier, repeatedly, since a
// definition may use earlier ones.
func (c *Compiler) expandDefines(tree *parser.Tree) error {
	c.expanded = nil
	if len(c.defines) == 0 {
		return nil
	}
	for depth := 0; ; depth++ {
		if depth > len(c.defines) {
			return fmt.Errorf("definitions use each other in a circle")
		}
		v := &defineExpander{c: c}
		ast.Walk(&tree.Node, v)
		if v.err != nil {
			return v.err
		}
		if !v.changed {
			return nil
		}
	}
}

type defineExpander struct {
	c       *Compiler
	changed bool
	err     error
}

func (v *defineExpander) Visit(node *ast.Node) {
	id, ok := (*node).(*ast.IdentifierNode)
	if !ok || v.err != nil {
		return
	}
	i := v.c.defineIndex(id.Value)
	if i < 0 {
		return
	}
	tree, err := parser.Parse(v.c.defines[i].src)
	if err != nil {
		v.err = err
		return
	}
	loc := id.Location()
	ast.Walk(&tree.Node, locator{loc})
	if v.c.expanded == nil {
		v.c.expanded = map[file.Location]string{}
	}
	if _, outer := v.c.expanded[loc]; !outer {
		v.c.expanded[loc] = id.Value
	}
	*node = tree.Node
	v.changed = true
}

// throughDefine names the definition a node of an expanded expression
// came from, for messages: " (through define NAME)", or "".
func (c *Compiler) throughDefine(n ast.Node) string {
	if name, ok := c.expanded[n.Location()]; ok {
		return " (through define " + name + ")"
	}
	return ""
}

// locator places every node it visits at one location.
type locator struct{ loc file.Location }

func (l locator) Visit(node *ast.Node) { (*node).SetLocation(l.loc) }

// identifierNamed finds an identifier named name in n.
func identifierNamed(n ast.Node, name string) ast.Node {
	return ast.Find(n, func(m ast.Node) bool {
		id, ok := m.(*ast.IdentifierNode)
		return ok && id.Value == name
	})
}
