package eval

import (
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/file"
	"github.com/expr-lang/expr/parser"
	"github.com/labrun/labrun/internal/lang/diag"
)

// Guards: which reads of a step's result an expression makes where that
// result may be missing. A step that a mode never runs (only: solve in
// labrun check, say) has no result in that mode, and an expression that
// mode evaluates may read it only behind a guard the compiler can see:
//
//   - a test of mode that the read stands behind: the branch of
//     mode == "solve" ? ... : ..., the right of mode == "solve" && ...
//     or of mode == "check" || ..., and the like with != and not;
//   - a test that the result is there: steps.X != nil before the read in
//     the same way (steps.X != nil && steps.X.stdout != "");
//   - a read that cannot fail on a missing result: steps.X?.field (nil
//     when X has no result), steps.X ?? default, steps.X == nil.
//
// What holds where the expression is evaluated at all (the step's own
// when, a parallel step's when) is given by the caller as a Guard, which
// Implies makes of a condition.

// Guard is what is known to hold where an expression, or a part of it, is
// evaluated.
type Guard struct {
	// Mode is ModeSolve or ModeCheck when a test of mode holds there, ""
	// when either mode may; Never says no mode can reach it (a branch
	// that tests mode == "solve" and mode == "check" at once).
	Mode  string
	Never bool
	// Present lists the steps a test has shown to have a result
	// (steps.X != nil).
	Present []string
}

// And is what holds where both g and h hold.
func (g Guard) And(h Guard) Guard {
	out := Guard{Mode: g.Mode, Never: g.Never || h.Never, Present: slices.Clone(g.Present)}
	switch {
	case out.Mode == "":
		out.Mode = h.Mode
	case h.Mode != "" && h.Mode != out.Mode:
		out.Never = true
	}
	for _, id := range h.Present {
		if !slices.Contains(out.Present, id) {
			out.Present = append(out.Present, id)
		}
	}
	return out
}

// or is what holds where g or h holds: what both say.
func (g Guard) or(h Guard) Guard {
	switch {
	case g.Never:
		return h
	case h.Never:
		return g
	}
	out := Guard{}
	if g.Mode == h.Mode {
		out.Mode = g.Mode
	}
	for _, id := range g.Present {
		if slices.Contains(h.Present, id) {
			out.Present = append(out.Present, id)
		}
	}
	return out
}

// Reaches reports whether a part of an expression under g is evaluated
// in mode.
func (g Guard) Reaches(mode string) bool {
	return !g.Never && (g.Mode == "" || g.Mode == mode)
}

// StepRead is a read of a step's result that no guard covers.
type StepRead struct {
	Step string   // the step's id
	Pos  diag.Pos // where steps.ID stands in the file
	// Field is the field read first (stdout of steps.X.stdout), "" when
	// the result is read as a whole or by a computed key.
	Field string
	// Define names the definition the read comes through, "" when it is
	// written in the expression itself.
	Define string
}

// Implies is what holds wherever x, a condition, is true (for a step's
// when: what holds in the rest of the step). Nothing is known of a
// source that does not parse.
func (x *Expr) Implies() Guard {
	if x.compiler != nil && len(x.compiler.defines) == 0 && !strings.Contains(x.Src, RootMode) && !strings.Contains(x.Src, "nil") {
		return Guard{} // a condition without a test of either (most)
	}
	tree, _, err := x.guardTree()
	if err != nil {
		return Guard{}
	}
	return implies(tree.Node, true)
}

// UnguardedReads lists the reads x makes, when evaluated in mode where
// known holds, of a step that missing says has no result there, and that
// no guard in x covers (see the top of this file). Reads by a computed
// name (steps[x]) are not seen.
func (x *Expr) UnguardedReads(mode string, known Guard, missing func(id string) bool) []StepRead {
	if !known.Reaches(mode) || !x.readsAny(missing) {
		return nil
	}
	tree, defines, err := x.guardTree()
	if err != nil {
		return nil
	}
	w := &guardWalk{mode: mode, missing: missing}
	w.walk(tree.Node, known, false)
	out := make([]StepRead, 0, len(w.reads))
	for _, r := range w.reads {
		out = append(out, StepRead{Step: r.step, Pos: x.posAt(r.loc), Field: r.field, Define: defines[r.loc]})
	}
	return out
}

// ReadPos is where x first reads step id's result as steps.ID; x's own
// place when it reads it only by a computed name.
func (x *Expr) ReadPos(id string) diag.Pos {
	tree, _, err := x.guardTree()
	if err != nil {
		return x.Pos
	}
	f := &firstRead{id: id}
	ast.Walk(&tree.Node, f)
	if f.at == nil {
		return x.Pos
	}
	return x.posAt(f.at.Location())
}

// firstRead finds the first steps.ID in the order written (ast.Walk
// visits children left to right).
type firstRead struct {
	id string
	at *ast.IdentifierNode
}

func (f *firstRead) Visit(n *ast.Node) {
	if id, at, ok := stepRead(*n); ok && id == f.id && f.at == nil {
		f.at = at
	}
}

// posAt is the file position of loc in x's source, counted as checkRefs
// counts it.
func (x *Expr) posAt(loc file.Location) diag.Pos {
	p := x.Pos
	if loc.From > 0 && p.Line > 0 {
		p.Col += utf8.RuneCountInString(x.Src[:min(loc.From, len(x.Src))])
	}
	return p
}

// readsAny reports whether x reads a step missing names, so that only the
// few expressions that do are parsed again.
func (x *Expr) readsAny(missing func(id string) bool) bool {
	for _, r := range x.Refs {
		if id, ok := strings.CutPrefix(r, RootSteps+"."); ok && missing(id) {
			return true
		}
	}
	return false
}

// guardTree parses x again, with the definitions it uses expanded (each
// placed at its use), and returns where each was used.
func (x *Expr) guardTree() (*parser.Tree, map[file.Location]string, error) {
	c := x.compiler
	if c == nil {
		tree, err := parser.Parse(x.Src)
		return tree, nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	tree, err := c.parse(x.Src, x.prog.cfg)
	if err != nil {
		return nil, nil, err
	}
	defines := c.expanded
	c.expanded = nil
	return tree, defines, nil
}

// implies is what holds where n evaluates to truth.
func implies(n ast.Node, truth bool) Guard {
	switch n := n.(type) {
	case *ast.UnaryNode:
		if n.Operator == "!" || n.Operator == "not" {
			return implies(n.Node, !truth)
		}
	case *ast.BinaryNode:
		switch n.Operator {
		case "&&", "and":
			if truth {
				return implies(n.Left, true).And(implies(n.Right, true))
			}
			return implies(n.Left, false).or(implies(n.Right, false))
		case "||", "or":
			if truth {
				return implies(n.Left, true).or(implies(n.Right, true))
			}
			return implies(n.Left, false).And(implies(n.Right, false))
		case "==", "!=":
			equal := truth == (n.Operator == "==")
			if mode, ok := modeTest(n); ok {
				if !equal {
					mode = otherMode(mode)
				}
				return Guard{Mode: mode}
			}
			if id, ok := nilTest(n); ok && !equal {
				return Guard{Present: []string{id}}
			}
		}
	}
	return Guard{}
}

// modeTest reads mode == "solve" (either way round) as the mode compared
// with; checkRefs has refused any word but the two modes.
func modeTest(b *ast.BinaryNode) (string, bool) {
	for _, pair := range [][2]ast.Node{{b.Left, b.Right}, {b.Right, b.Left}} {
		id, isID := pair[0].(*ast.IdentifierNode)
		lit, isLit := pair[1].(*ast.StringNode)
		if isID && isLit && id.Value == RootMode && (lit.Value == ModeSolve || lit.Value == ModeCheck) {
			return lit.Value, true
		}
	}
	return "", false
}

// nilTest reads steps.X == nil (either way round) as X.
func nilTest(b *ast.BinaryNode) (string, bool) {
	for _, pair := range [][2]ast.Node{{b.Left, b.Right}, {b.Right, b.Left}} {
		if _, isNil := pair[1].(*ast.NilNode); !isNil {
			continue
		}
		if id, _, ok := stepRead(pair[0]); ok {
			return id, true
		}
	}
	return "", false
}

func otherMode(mode string) string {
	if mode == ModeSolve {
		return ModeCheck
	}
	return ModeSolve
}

// stepRead reads n as steps.X (or steps["X"]), the read of a step's
// result as a whole.
func stepRead(n ast.Node) (id string, at *ast.IdentifierNode, ok bool) {
	if c, isChain := n.(*ast.ChainNode); isChain {
		n = c.Node
	}
	m, isMember := n.(*ast.MemberNode)
	if !isMember {
		return "", nil, false
	}
	root, isID := m.Node.(*ast.IdentifierNode)
	prop, isString := m.Property.(*ast.StringNode)
	if !isID || !isString || root.Value != RootSteps {
		return "", nil, false
	}
	return prop.Value, root, true
}

// guardWalk finds the unguarded reads of missing steps in one mode.
type guardWalk struct {
	mode    string
	missing func(string) bool
	reads   []guardRead
}

type guardRead struct {
	step, field string
	loc         file.Location
}

// walk visits n, evaluated where g holds; safe says n's parent cannot
// fail on a missing result when n is a step's read (steps.X?.f, steps.X
// ?? d, steps.X == nil).
func (w *guardWalk) walk(n ast.Node, g Guard, safe bool) {
	w.visit(n, g, safe, "")
}

// visit is walk with the field the parent of n reads of it, if any.
func (w *guardWalk) visit(n ast.Node, g Guard, safe bool, field string) {
	if n == nil || !g.Reaches(w.mode) {
		return
	}
	if id, at, ok := stepRead(n); ok {
		if w.missing(id) && !safe && !slices.Contains(g.Present, id) {
			w.reads = append(w.reads, guardRead{step: id, field: field, loc: at.Location()})
		}
		return
	}
	switch n := n.(type) {
	case *ast.ChainNode:
		w.walk(n.Node, g, safe)
	case *ast.MemberNode:
		prop, _ := n.Property.(*ast.StringNode)
		if prop != nil {
			field = prop.Value
		}
		w.visit(n.Node, g, n.Optional, field)
		w.walk(n.Property, g, false)
	case *ast.ConditionalNode:
		w.walk(n.Cond, g, false)
		w.walk(n.Exp1, g.And(implies(n.Cond, true)), false)
		w.walk(n.Exp2, g.And(implies(n.Cond, false)), false)
	case *ast.BinaryNode:
		switch n.Operator {
		case "&&", "and":
			w.walk(n.Left, g, false)
			w.walk(n.Right, g.And(implies(n.Left, true)), false)
		case "||", "or":
			w.walk(n.Left, g, false)
			w.walk(n.Right, g.And(implies(n.Left, false)), false)
		case "??":
			w.walk(n.Left, g, true)
			w.walk(n.Right, g, false)
		case "==", "!=":
			_, isNilTest := nilTest(n)
			w.walk(n.Left, g, isNilTest)
			w.walk(n.Right, g, isNilTest)
		default:
			w.walk(n.Left, g, false)
			w.walk(n.Right, g, false)
		}
	case *ast.UnaryNode:
		w.walk(n.Node, g, false)
	case *ast.SliceNode:
		w.walk(n.Node, g, false)
		w.walk(n.From, g, false)
		w.walk(n.To, g, false)
	case *ast.CallNode:
		w.walk(n.Callee, g, false)
		w.all(n.Arguments, g)
	case *ast.BuiltinNode:
		w.all(n.Arguments, g)
	case *ast.PredicateNode:
		w.walk(n.Node, g, false)
	case *ast.VariableDeclaratorNode:
		w.walk(n.Value, g, false)
		w.walk(n.Expr, g, false)
	case *ast.SequenceNode:
		w.all(n.Nodes, g)
	case *ast.ArrayNode:
		w.all(n.Nodes, g)
	case *ast.MapNode:
		w.all(n.Pairs, g)
	case *ast.PairNode:
		w.walk(n.Key, g, false)
		w.walk(n.Value, g, false)
	}
}

func (w *guardWalk) all(nodes []ast.Node, g Guard) {
	for _, n := range nodes {
		w.walk(n, g, false)
	}
}
