package eval

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

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
	pos  diag.Pos // where the name is written
	src  string
	at   Where // where src is written
	uses []string
}

// Definition is a named expression as a playbook writes it.
type Definition struct {
	Name string
	Pos  diag.Pos // where the name is written
	Src  string   // the expression
	At   Where    // where the expression is written
}

var defineName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// reservedNames are the roots every expression sees; a definition cannot
// hide them.
var reservedNames = []string{RootVars, RootSteps, RootEnv, RootResult, RootItem, RootIndex, "true", "false", "nil", "let", "in", "not", "and", "or", "matches", "contains", "startsWith", "endsWith", "if", "else"}

// DeclareDefines records every definition before any is defined, so that
// a use of one further down is named as such, and a circle of definitions
// using each other as a circle.
func (c *Compiler) DeclareDefines(defs []Definition) {
	for _, d := range defs {
		if c.nameProblem(d.Name) == "" {
			c.laterDefines = append(c.laterDefines, define{name: d.Name, pos: d.Pos, src: d.Src, at: d.At})
		}
	}
	for i := range c.laterDefines {
		d := &c.laterDefines[i]
		tree, err := parser.Parse(d.src)
		if err != nil {
			continue
		}
		for _, n := range identifiers(tree.Node) {
			if c.declared(n.Value) >= 0 && !slices.Contains(d.uses, n.Value) {
				d.uses = append(d.uses, n.Value)
			}
		}
	}
}

// Define declares a named expression. It may use the definitions above it;
// it is parsed now and checked at every use (CheckDefines checks it on its
// own, against every step). A definition that fails is remembered, so
// that a use of it says so instead of "unknown name".
func (c *Compiler) Define(d Definition) error {
	if d.At == nil {
		d.At = At(d.Src, d.Pos)
	}
	err := c.define(d)
	if err != nil && c.nameProblem(d.Name) == "" && c.defineIndex(d.Name) < 0 {
		if c.broken == nil {
			c.broken = map[string]diag.Pos{}
		}
		c.broken[d.Name] = d.Pos
	}
	return err
}

func (c *Compiler) define(d Definition) error {
	name, src := d.Name, d.Src
	if why := c.nameProblem(name); why != "" {
		return diag.Errorf(d.Pos, "define %q: %s", name, why)
	}
	if c.defineIndex(name) >= 0 {
		return diag.Errorf(d.Pos, "define %q is defined twice", name)
	}
	tree, err := parser.Parse(src)
	if err != nil {
		return exprError(src, d.At, syntaxError(src, err))
	}
	here := c.declared(name)
	for _, id := range identifiers(tree.Node) {
		used := id.Value
		j := c.declared(used)
		if used == name || j < 0 || c.defineIndex(used) >= 0 {
			continue
		}
		if circle := c.circle(name, used); circle != nil {
			return c.circleError(circle)
		}
		at := d.At(byteOffset(src, id.Location().From))
		if j > here {
			return diag.Errorf(at, "in define %s: %s is defined further down (at %s); a definition may use only those above it", name, used, c.laterDefines[j].pos)
		}
		return diag.Errorf(at, "in define %s: %s cannot be used: its definition (at %s) has an error", name, used, c.laterDefines[j].pos)
	}
	if id := identifierNamed(tree.Node, name); id != nil {
		return diag.Errorf(d.At(byteOffset(src, id.Location().From)), "in define %s: a definition cannot use itself", name)
	}
	c.defines = append(c.defines, define{name: name, pos: d.Pos, src: src, at: d.At})
	return nil
}

// declared is the index of the definition named name among all of them,
// or -1.
func (c *Compiler) declared(name string) int {
	return slices.IndexFunc(c.laterDefines, func(d define) bool { return d.name == name })
}

// circle finds a chain of uses from the definition named from back to
// the one named to, which uses from: to, from, ..., to. Nil when there is
// none.
func (c *Compiler) circle(to, from string) []string {
	seen := map[string]bool{}
	var walk func(name string) []string
	walk = func(name string) []string {
		if name == to {
			return []string{to}
		}
		if seen[name] {
			return nil
		}
		seen[name] = true
		i := c.declared(name)
		if i < 0 {
			return nil
		}
		for _, u := range c.laterDefines[i].uses {
			if rest := walk(u); rest != nil {
				return append([]string{name}, rest...)
			}
		}
		return nil
	}
	rest := walk(from)
	if rest == nil {
		return nil
	}
	return append([]string{to}, rest...)
}

// circleError reports a circle of definitions (a, b, ..., a) once: each
// of its members reports it alike, at the first of them in the file, where
// it uses the next, so that the list of errors keeps one.
func (c *Compiler) circleError(circle []string) error {
	members := circle[:len(circle)-1]
	first := 0
	for i, m := range members {
		if c.declared(m) < c.declared(members[first]) {
			first = i
		}
	}
	members = append(members[first:len(members):len(members)], members[:first]...)
	var chain []string
	for _, m := range members {
		chain = append(chain, fmt.Sprintf("%s (line %d)", m, c.laterDefines[c.declared(m)].pos.Line))
	}
	chain = append(chain, members[0])
	head := c.laterDefines[c.declared(members[0])]
	at := head.at(0)
	if tree, err := parser.Parse(head.src); err == nil {
		if id := identifierNamed(tree.Node, members[1%len(members)]); id != nil {
			at = head.at(byteOffset(head.src, id.Location().From))
		}
	}
	return diag.Errorf(at, "in define %s: the definitions use each other in a circle: %s; a definition may use only those above it", members[0], strings.Join(chain, " -> "))
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
		if _, err := c.CompileAt(d.src, d.at, Context{Step: AllSteps}); err != nil {
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
	if len(c.defines) == 0 && len(c.broken) == 0 {
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
		if pos, ok := v.c.broken[id.Value]; ok {
			v.err = &file.Error{Location: id.Location(), Message: fmt.Sprintf("define %q cannot be used: its definition (at %s) has an error", id.Value, pos)}
		}
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

// identifiers lists the identifiers of n in the order they are written.
func identifiers(n ast.Node) []*ast.IdentifierNode {
	var out []*ast.IdentifierNode
	ast.Find(n, func(m ast.Node) bool {
		if id, ok := m.(*ast.IdentifierNode); ok {
			out = append(out, id)
		}
		return false
	})
	slices.SortStableFunc(out, func(a, b *ast.IdentifierNode) int { return a.Location().From - b.Location().From })
	return out
}

// identifierNamed finds the first identifier named name in n.
func identifierNamed(n ast.Node, name string) ast.Node {
	for _, id := range identifiers(n) {
		if id.Value == name {
			return id
		}
	}
	return nil
}
