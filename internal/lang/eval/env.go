package eval

import (
	"fmt"
	"reflect"
	"strings"
	"sync"

	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/parser"
	"github.com/expr-lang/expr/vm"
	"github.com/labrun/labrun/internal/lang/diag"
)

// Env is what expressions see while a playbook runs: typed values laid out
// as the compiler declared them.
//
// The branches of a parallel step run at the same time, each setting its
// own steps' results while the others evaluate expressions. The compiler
// makes sure no expression reads a step of another branch, so they touch
// different fields; mu guards the whole-struct copies root makes for
// expressions compiled against an older layout.
type Env struct {
	l      *layout
	mu     *sync.RWMutex // shared by copies of the Env, like steps
	vars   reflect.Value // struct
	steps  reflect.Value // pointer to struct, shared by copies of the Env
	env    reflect.Value // struct
	result reflect.Value
	// item and index are the current item of a step with loop.
	item  reflect.Value
	index int
	mode  string // ModeSolve or ModeCheck
}

// NewEnv returns an environment for the compiler's declarations, with
// every step result nil until set.
func (c *Compiler) NewEnv() *Env {
	c.Settle()
	l := c.getLayout()
	return &Env{
		l:     l,
		mu:    &sync.RWMutex{},
		vars:  reflect.New(l.vars).Elem(),
		steps: reflect.New(l.steps),
		env:   reflect.New(l.env).Elem(),
	}
}

// SetMode sets what mode reads: ModeSolve or ModeCheck.
func (e *Env) SetMode(mode string) { e.mode = mode }

// SetVar stores a variable's value, converting it to the declared type.
func (e *Env) SetVar(name string, v any) error {
	i, ok := e.l.varField[name]
	if !ok {
		return fmt.Errorf("unknown variable %s", name)
	}
	f := e.vars.Field(i)
	rv, err := fit(v, f.Type())
	if err != nil {
		return fmt.Errorf("variable %s: %w", name, err)
	}
	f.Set(rv)
	return nil
}

// Var returns a variable's value.
func (e *Env) Var(name string) any {
	if i, ok := e.l.varField[name]; ok {
		return e.vars.Field(i).Interface()
	}
	return nil
}

// SetEnv stores an environment variable's value.
func (e *Env) SetEnv(name, value string) {
	if i, ok := e.l.envField[name]; ok {
		e.env.Field(i).SetString(value)
	}
}

// SetStep stores a step's result and returns it as stored: the value an
// action returned (a pointer to its result struct, a list of them for a
// step with loop), or compute's values (*map[string]any), which become the
// step's declared struct. This is the one conversion from a result to what
// expressions, the journal and the reports see.
func (e *Env) SetStep(id string, v any) (any, error) {
	i, ok := e.l.stepField[id]
	if !ok {
		return nil, fmt.Errorf("unknown step %s", id)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	f := e.steps.Elem().Field(i)
	rv, err := fit(v, f.Type())
	if err != nil {
		return nil, fmt.Errorf("step %s: %w", id, err)
	}
	f.Set(rv)
	return rv.Interface(), nil
}

// Step returns a step's stored result.
func (e *Env) Step(id string) any {
	if i, ok := e.l.stepField[id]; ok {
		e.mu.RLock()
		defer e.mu.RUnlock()
		return e.steps.Elem().Field(i).Interface()
	}
	return nil
}

// WithResult returns a copy of env in which `result` is r.
func (e *Env) WithResult(r any) *Env {
	c := *e
	c.result = reflect.ValueOf(r)
	return &c
}

// WithItem returns a copy of env in which `item` is v and `index` is i,
// for one pass of a step with loop. v is converted to t, the item's
// declared type.
func (e *Env) WithItem(v any, i int, t reflect.Type) (*Env, error) {
	rv, err := fit(v, t)
	if err != nil {
		return nil, err
	}
	c := *e
	c.item, c.index = rv, i
	return &c, nil
}

// fit converts a run-time value to a declared Go type where the meaning is
// kept (an int into a float64 field, []any into []any).
func fit(v any, t reflect.Type) (reflect.Value, error) {
	if v == nil {
		return reflect.Zero(t), nil
	}
	rv := reflect.ValueOf(v)
	if rv.Type().AssignableTo(t) {
		return rv, nil
	}
	if t.Kind() == reflect.Float64 {
		if f, ok := toFloat(v); ok {
			return reflect.ValueOf(f), nil
		}
	}
	if t.Kind() == reflect.Int {
		if n, ok := toInt(v); ok {
			return reflect.ValueOf(int(n)), nil
		}
	}
	if t.Kind() == reflect.String {
		switch v.(type) {
		case int, int64, float64, bool:
			return reflect.ValueOf(Format(v)), nil
		}
	}
	if m, ok := v.(*map[string]any); ok && t.Kind() == reflect.Pointer && t.Elem().Kind() == reflect.Struct {
		return toStruct(*m, t.Elem())
	}
	if t.Kind() == reflect.Slice && rv.Kind() == reflect.Slice {
		// expr's builtins (sortBy, take, filter) return []any for a list
		// whose static type is, say, []map[string]any
		out := reflect.MakeSlice(t, rv.Len(), rv.Len())
		for i := 0; i < rv.Len(); i++ {
			e, err := fit(rv.Index(i).Interface(), t.Elem())
			if err != nil {
				return reflect.Value{}, fmt.Errorf("item %d: %w", i, err)
			}
			out.Index(i).Set(e)
		}
		return out, nil
	}
	return reflect.Value{}, fmt.Errorf("value %s is %s, expected %s", Show(v), rv.Type(), t)
}

// root builds the value expr runs against, in the layout the expression
// was compiled for. Expressions of variables are compiled before later
// declarations exist, so their layout may be a subset of the run's: values
// are then copied over by name.
func (e *Env) root(et reflect.Type) reflect.Value {
	r := reflect.New(et).Elem()
	r.Field(0).Set(adapt(e.vars, et.Field(0).Type))
	if steps := et.Field(1).Type; steps == e.steps.Type() {
		r.Field(1).Set(e.steps)
	} else {
		p := reflect.New(steps.Elem())
		e.mu.RLock()
		p.Elem().Set(adapt(e.steps.Elem(), steps.Elem()))
		e.mu.RUnlock()
		r.Field(1).Set(p)
	}
	r.Field(2).Set(adapt(e.env, et.Field(2).Type))
	// then Mode, and Result, Item and Index, each when the scope has it
	for i := 3; i < et.NumField(); i++ {
		f := r.Field(i)
		var v reflect.Value
		switch et.Field(i).Name {
		case "Result":
			v = e.result
		case "Item":
			v = e.item
		case "Index":
			v = reflect.ValueOf(e.index)
		case "Mode":
			v = reflect.ValueOf(e.mode)
		}
		if v.IsValid() && v.Type().AssignableTo(f.Type()) {
			f.Set(v)
		}
	}
	return r
}

func adapt(v reflect.Value, t reflect.Type) reflect.Value {
	if v.Type() == t {
		return v
	}
	out := reflect.New(t).Elem()
	byName := map[string]int{}
	for i := 0; i < v.NumField(); i++ {
		byName[v.Type().Field(i).Tag.Get("expr")] = i
	}
	for i := 0; i < t.NumField(); i++ {
		if j, ok := byName[t.Field(i).Tag.Get("expr")]; ok && v.Field(j).Type().AssignableTo(t.Field(i).Type) {
			out.Field(i).Set(v.Field(j))
		}
	}
	return out
}

// RunError is an expression that failed on the values it read, at its
// place in the playbook. It is a type of its own because a *diag.Error is
// one that could not be compiled: bad input, where this is a failure.
type RunError struct {
	at *diag.Error
	x  *Expr
}

func (e *RunError) Error() string { return e.at.Error() }

// Expr is the expression that failed, so that the runner can tell a
// failure of its own from one of a step it read.
func (e *RunError) Expr() *Expr { return e.x }

// Eval runs the expression.
func (x *Expr) Eval(env *Env) (any, error) {
	prog, err := x.program()
	if err != nil {
		// expr refused a tree its own checker accepted: not the
		// author's doing, but this expression cannot run
		return nil, &RunError{diag.Errorf(x.Pos, "expression %s could not be compiled: %v", quoteExpr(x.Src), FirstLine(err.Error())), x}
	}
	out, err := vm.Run(prog, env.root(x.envType).Interface())
	if err != nil {
		return nil, &RunError{diag.Errorf(x.Pos, "expression %s: %s", quoteExpr(x.Src), overBudget(FirstLine(err.Error()))), x}
	}
	return out, nil
}

// EvalBool runs a condition.
func (x *Expr) EvalBool(env *Env) (bool, error) {
	out, err := x.Eval(env)
	if err != nil {
		return false, err
	}
	b, ok := out.(bool)
	if !ok {
		return false, &RunError{diag.Errorf(x.Pos, "expression %s gave %s, expected true or false", quoteExpr(x.Src), Format(out)), x}
	}
	return b, nil
}

// FirstLine is the first line of s, for one-line messages.
func FirstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

// Operand is a sub-expression of a failed condition with the value it had.
type Operand struct {
	Expr  string `json:"expr"`
	Value string `json:"value"`
}

// Explain evaluates the operands of a condition that came out false, so a
// failure can say "steps.svc.count == 4: left is 2". For a chain of `and`
// it explains the first part that is false; for a comparison, both sides;
// for a function call or negation, its arguments.
func (x *Expr) Explain(env *Env) []Operand {
	tree, err := parser.Parse(x.Src)
	if err != nil {
		return nil
	}
	eval := func(n ast.Node) (any, bool) {
		prog, et, err := x.compiler.compile(n.String(), x.scope, reflect.Invalid)
		if err != nil {
			return nil, false
		}
		out, err := vm.Run(prog, env.root(et).Interface())
		if err != nil {
			return nil, false
		}
		return out, true
	}
	node := tree.Node
	// descend into the first false conjunct
	for {
		b, ok := node.(*ast.BinaryNode)
		if !ok || (b.Operator != "and" && b.Operator != "&&") {
			break
		}
		if v, ok := eval(b.Left); ok && v == false {
			node = b.Left
		} else {
			node = b.Right
		}
	}
	var operands []ast.Node
	switch n := node.(type) {
	case *ast.BinaryNode:
		operands = []ast.Node{n.Left, n.Right}
	case *ast.UnaryNode:
		operands = []ast.Node{n.Node}
	case *ast.CallNode:
		if id, ok := n.Callee.(*ast.IdentifierNode); ok && id.Value == "partialMatch" && len(n.Arguments) == 2 {
			// two whole objects say little; where they differ says it all
			a, aok := eval(n.Arguments[0])
			b, bok := eval(n.Arguments[1])
			if aok && bok {
				return []Operand{{Expr: "first difference", Value: Mismatch(a, b)}}
			}
		}
		operands = n.Arguments
	case *ast.BuiltinNode:
		operands = n.Arguments
	default:
		operands = []ast.Node{node}
	}
	var out []Operand
	for _, o := range operands {
		if isConstant(o) {
			continue
		}
		v, ok := eval(o)
		s := "(error)"
		if ok {
			s = Show(v)
		}
		out = append(out, Operand{Expr: o.String(), Value: s})
	}
	return out
}

func isConstant(n ast.Node) bool {
	switch n.(type) {
	case *ast.IntegerNode, *ast.FloatNode, *ast.StringNode, *ast.BoolNode, *ast.NilNode, *ast.ConstantNode:
		return true
	}
	return false
}

// Show renders a value for a person: strings quoted, long values cut.
func Show(v any) string {
	var s string
	switch x := v.(type) {
	case string:
		s = fmt.Sprintf("%q", x)
	case nil:
		s = "nil"
	default:
		s = Format(v)
	}
	if len(s) > 200 {
		s = s[:197] + "..."
	}
	return s
}
