package eval

import (
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/conf"
	"github.com/expr-lang/expr/parser"
	"github.com/labrun/labrun/internal/lang/diag"
)

// Checking what an expression reads (steps.X, vars.X, env.X, result
// fields) in the playbook's words, before expr's own checker.

// checkRefs walks the expression for steps.X, vars.X, env.X and result
// member chains and reports unknown or not-yet-run names in the words of
// the playbook, with a suggestion, before expr's more generic checker.
// wholeSteps says the expression uses steps other than as steps.NAME;
// results lists the fields of result it reads (result.file: "file").
func (c *Compiler) checkRefs(src string, at Where, root ast.Node, ctx Context) (refs []string, wholeSteps bool, results []string, err error) {
	var first error
	fail := func(n ast.Node, msg string) {
		if first != nil {
			return
		}
		first = diag.Errorf(at(byteOffset(src, n.Location().From)), "in expression %s: %s%s", quoteExpr(src), msg, c.throughDefine(n))
	}
	v := &refVisitor{}
	ast.Walk(&root, v)
	for _, cmp := range v.modeCompares {
		if s := cmp.value.Value; s != ModeSolve && s != ModeCheck {
			fail(cmp.value, fmt.Sprintf("mode is %q or %q, never %q%s", ModeSolve, ModeCheck, s, diag.DidYouMean(s, []string{ModeSolve, ModeCheck})))
		}
	}
	for _, chain := range v.chains {
		names := chain.names
		if len(names) >= 2 && (names[0] == RootSteps || names[0] == RootVars) {
			if ref := names[0] + "." + names[1]; !slices.Contains(refs, ref) {
				refs = append(refs, ref)
			}
		}
		if names[0] == RootSteps && len(names) < 2 {
			wholeSteps = true
		}
		if names[0] == RootResult && len(names) >= 2 && !slices.Contains(results, names[1]) {
			results = append(results, names[1])
		}
		if msg := c.chainProblem(names, ctx); msg != "" {
			fail(chain.node, msg)
		}
	}
	return refs, wholeSteps, results, first
}

// ReadsUnder lists what the expression reads below the member chain
// prefix, by the walk checkRefs makes: for prefix result, file, the names
// that follow it in each chain that starts with it (result.file.after.id
// gives [after id], result.file alone an empty list). A computed key or
// an index (result.file.pods[0]) ends a chain where it stands.
// Definitions are read as written, not expanded; nil when the source
// does not parse.
func (x *Expr) ReadsUnder(prefix ...string) [][]string {
	var cfg *conf.Config
	if x.prog != nil {
		cfg = x.prog.cfg
	}
	tree, err := parser.ParseWithConfig(x.Src, cfg)
	if err != nil {
		return nil
	}
	v := &refVisitor{}
	ast.Walk(&tree.Node, v)
	var out [][]string
	for _, c := range v.chains {
		if len(c.names) >= len(prefix) && slices.Equal(c.names[:len(prefix)], prefix) {
			out = append(out, c.names[len(prefix):])
		}
	}
	return out
}

// chainProblem says what is wrong with the member chain names (steps.X.Y,
// vars.X, env.X, result.Y, item.Y) in an expression standing at ctx, in
// the playbook's words; "" when nothing is, or names starts elsewhere.
func (c *Compiler) chainProblem(names []string, ctx Context) string {
	switch names[0] {
	case RootSteps:
		if len(names) < 2 {
			return ""
		}
		if why := c.unreadableStep(names[1], ctx); why != "" {
			return why
		}
		return fieldPath("steps."+names[1], c.steps[names[1]].result, names[2:])
	case RootVars:
		if len(names) < 2 {
			return ""
		}
		return c.varProblem(names)
	case RootEnv:
		if len(names) >= 2 && !slices.Contains(c.envNames, names[1]) {
			return fmt.Sprintf("environment variable %q is not declared; add it to the playbook's env list%s", names[1], diag.DidYouMean(names[1], c.envNames))
		}
		return ""
	case RootResult:
		if ctx.Result == nil {
			return "result is not available here; it exists in until and assert of a step"
		}
		return fieldPath("result", ctx.Result, names[1:])
	case RootItem, RootIndex:
		if ctx.Item == nil {
			return fmt.Sprintf("%s is not available here; it exists in the spec, until and assert of a step with loop", names[0])
		}
		if names[0] == RootItem {
			return fieldPath("item", ctx.Item, names[1:])
		}
	}
	return ""
}

// varProblem says what is wrong with vars.X...: X is not declared, or
// declared below, or has no such field.
func (c *Compiler) varProblem(names []string) string {
	t, ok := c.varTypes[names[1]]
	if ok {
		return fieldPath("vars."+names[1], t, names[2:])
	}
	if p, later := c.laterVars[names[1]]; later {
		return fmt.Sprintf("variable %q is declared further down (at %s); a variable may read only those above it", names[1], p)
	}
	return fmt.Sprintf("unknown variable %q%s", names[1], diag.DidYouMean(names[1], c.varOrder))
}

// unreadableStep says why an expression standing at ctx cannot read step
// id, or "" when it can: checkRefs reports it, and reuseShape lets a copy
// of a checked shape through only where it is "".
func (c *Compiler) unreadableStep(id string, ctx Context) string {
	if ctx.Step < 0 {
		return "variables and outputDir are set before any step runs, so they cannot read steps"
	}
	s, ok := c.steps[id]
	if !ok {
		return fmt.Sprintf("unknown step %q%s", id, diag.DidYouMean(id, c.stepOrder))
	}
	if s.index == ctx.Step {
		return fmt.Sprintf("steps.%s is this step itself; use result for its own result", id)
	}
	if s.index > ctx.Step {
		return fmt.Sprintf("step %q has not run yet at this point (it is declared at %s)", id, s.pos)
	}
	if ctx.Unavailable != nil {
		return ctx.Unavailable(id)
	}
	return ""
}

// fieldPath follows names through t by expr field names and reports the
// first one that does not exist, listing what does.
func fieldPath(prefix string, t reflect.Type, names []string) string {
	path := prefix
	for _, name := range names {
		for t != nil && t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if t == nil {
			return ""
		}
		switch t.Kind() {
		case reflect.Struct:
			fields := ExprFields(t)
			ft, ok := fields[name]
			if !ok {
				if _, isMethod := reflect.PointerTo(t).MethodByName(name); isMethod {
					return ""
				}
				keys := make([]string, 0, len(fields))
				for k := range fields {
					keys = append(keys, k)
				}
				sort.Strings(keys)
				methods := MethodNames(t)
				if len(methods) == 0 {
					return fmt.Sprintf("%s has no field %q%s; fields: %s", path, name, diag.DidYouMean(name, keys), strings.Join(keys, ", "))
				}
				return fmt.Sprintf("%s has no field or method %q%s; fields: %s; methods: %s", path, name, diag.DidYouMean(name, append(keys, methods...)), strings.Join(keys, ", "), strings.Join(methods, ", "))
			}
			t = ft
		case reflect.Map:
			t = t.Elem()
		case reflect.Slice, reflect.Array:
			if _, isMethod := reflect.PointerTo(t).MethodByName(name); isMethod {
				return ""
			}
			take := fmt.Sprintf("take one item (%s[0].%s) or map over it (map(%s, .%s))", path, name, path, name)
			if methods := MethodNames(t); len(methods) > 0 {
				return fmt.Sprintf("%s is a list with the methods %s, and %q is none of them%s; for its items' fields, %s", path, strings.Join(methods, ", "), name, diag.DidYouMean(name, methods), take)
			}
			return fmt.Sprintf("%s is a list; %s", path, take)
		default:
			return ""
		}
		path += "." + name
	}
	return ""
}

// MethodNames lists the methods an expression can call on a value of t
// (the method set of *t, which the checker accepts), sorted, without those
// that serve encoders.
func MethodNames(t reflect.Type) []string {
	var out []string
	pt := reflect.PointerTo(t)
	for i := 0; i < pt.NumMethod(); i++ {
		switch n := pt.Method(i).Name; n {
		case "MarshalJSON", "UnmarshalJSON", "MarshalYAML", "UnmarshalYAML", "MarshalText", "UnmarshalText":
		default:
			out = append(out, n)
		}
	}
	return out
}

// ExprFields maps the names expressions use for a struct's fields (the
// expr tag, else the Go name) to their types, following embedded structs.
//
// The map is made once per type (every reference to a step's field looks
// it up) and shared: callers must not change it.
func ExprFields(t reflect.Type) map[string]reflect.Type {
	if v, ok := exprFieldsOf.Load(t); ok {
		return v.(map[string]reflect.Type)
	}
	out := exprFields(t)
	exprFieldsOf.Store(t, out)
	return out
}

var exprFieldsOf sync.Map // reflect.Type -> map[string]reflect.Type

func exprFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for _, f := range ExprFieldList(t) {
		out[f.Name] = f.Type
	}
	return out
}

// ExprField is one field an expression reads on a struct.
type ExprField struct {
	Name   string // as expressions spell it: the expr tag, else the Go name
	Type   reflect.Type
	GoName string
	Owner  reflect.Type // the struct that declares it (an embedded one for its fields)
}

// ExprFieldList lists the fields expressions read on struct type t, in
// declaration order, those of embedded structs in their place, without
// unexported fields and those tagged expr:"-": the one rule of what a
// field is called, which ExprFields and the result reference read.
func ExprFieldList(t reflect.Type) []ExprField {
	var out []ExprField
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		if f.Anonymous && f.Type.Kind() == reflect.Struct {
			out = append(out, ExprFieldList(f.Type)...)
			continue
		}
		name := f.Tag.Get("expr")
		if name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out = append(out, ExprField{Name: name, Type: f.Type, GoName: f.Name, Owner: t})
	}
	return out
}

// chain is a member access path such as steps.svc.stdout.
type chain struct {
	names []string
	node  ast.Node
}

type refVisitor struct {
	chains []chain
	// modeCompares are the string literals mode is compared with.
	modeCompares []modeCompare
}

// modeCompare is mode == "..." (or !=), for a check of the literal.
type modeCompare struct{ value *ast.StringNode }

// Visit collects the longest identifier.member.member chains. ast.Walk
// visits children first, so inner chains are seen before outer ones and
// replaced by them.
func (v *refVisitor) Visit(node *ast.Node) {
	if b, ok := (*node).(*ast.BinaryNode); ok && (b.Operator == "==" || b.Operator == "!=") {
		for _, pair := range [][2]ast.Node{{b.Left, b.Right}, {b.Right, b.Left}} {
			id, isID := pair[0].(*ast.IdentifierNode)
			lit, isLit := pair[1].(*ast.StringNode)
			if isID && isLit && id.Value == RootMode {
				v.modeCompares = append(v.modeCompares, modeCompare{value: lit})
			}
		}
	}
	names, ok := memberChain(*node)
	if !ok || len(names) == 0 {
		return
	}
	if m, isMember := (*node).(*ast.MemberNode); isMember {
		// drop the inner chain recorded just before
		for i := len(v.chains) - 1; i >= 0; i-- {
			if v.chains[i].node == m.Node {
				v.chains = append(v.chains[:i], v.chains[i+1:]...)
				break
			}
		}
	}
	v.chains = append(v.chains, chain{names: names, node: *node})
}

// memberChain returns ["steps","svc","stdout"] for steps.svc.stdout and
// steps["svc"].stdout; false for anything that is not a plain chain.
func memberChain(n ast.Node) ([]string, bool) {
	switch n := n.(type) {
	case *ast.IdentifierNode:
		return []string{n.Value}, true
	case *ast.MemberNode:
		prop, ok := n.Property.(*ast.StringNode)
		if !ok {
			return nil, false
		}
		base, ok := memberChain(n.Node)
		if !ok {
			return nil, false
		}
		return append(base, prop.Value), true
	}
	return nil, false
}
