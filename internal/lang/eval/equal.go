package eval

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"strconv"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/conf"
	"github.com/expr-lang/expr/vm/runtime"
)

// Values in expressions compare as they print.
//
// Results are Go structs, and a value the tool may not have printed is a
// pointer (an endpoint's identity is *int). expr-lang dereferences a
// pointer only where an operator reads it directly: put in a list
// ([steps.ep.identity]), mapped out of one (map(eps, .identity)) or kept
// by compute, the pointer itself travels on, and expr's equality, which
// falls back to reflect.DeepEqual, finds [17897] and [&17897] different
// though both print [17897]. The same holds for an int64 counter against
// an int literal in a list, and []string against []any.
//
// Two rewrites of every expression settle it at the root:
//
//   - nullable reads: a read whose type is a pointer to anything but a
//     struct gives the value it points to, or null, typed "any value"
//     (an int or null); so no expression holds a Go pointer to a scalar;
//   - equality: ==, != and `in` on a list compare with Equal, which
//     reads both sides as they print (numbers by value, lists item by
//     item, objects key by key, null as null); sameSet, difference and
//     intersection key items with Key, which agrees with Equal.
//
// Comparisons of two plain scalars (int == int, string == string) keep
// expr's own opcodes: they are right already and the hot path of filters.

// Names of the functions the rewrites call. They hold a character expr's
// lexer does not take in an identifier, so no playbook can call them or
// declare a name that shadows them.
const (
	fnEqual    = "equal·"
	fnIn       = "in·"
	fnNullable = "nullable·"
	fnPlus     = "plus·"
)

// equalityPatches adds the two rewrites and the functions they call to cfg.
func equalityPatches(cfg *conf.Config) {
	expr.Function(fnEqual, func(args ...any) (any, error) { return Equal(args[0], args[1]), nil },
		new(func(any, any) bool))(cfg)
	expr.Function(fnIn, func(args ...any) (any, error) { return in(args[0], args[1]), nil },
		new(func(any, any) bool))(cfg)
	expr.Function(fnNullable, func(args ...any) (any, error) { return deref(args[0]), nil },
		new(func(any) any))(cfg)
	expr.Function(fnPlus, func(args ...any) (any, error) { return plus(args[0], args[1]) },
		new(func(any, any) any))(cfg)
	cfg.Visitors = append(cfg.Visitors, nullableReads{})
}

// rewriteEqualities rewrites the comparisons of a checked tree (see
// equalities). It runs after the checker, not as one of its patchers: a
// call the checker has typed once is never checked again (expr 1.17
// trusts a type a patcher set), so an error inside a rewritten operand,
// countLines(x) == 1, would go unreported.
func rewriteEqualities(tree *ast.Node) { ast.Walk(tree, equalities{}) }

// nullableReads wraps each read of a pointer to a non-struct in a call that
// dereferences it.
type nullableReads struct{}

func (nullableReads) Visit(node *ast.Node) {
	switch n := (*node).(type) {
	case *ast.CallNode:
		if calls(n, fnNullable) {
			return
		}
	case *ast.MemberNode, *ast.IdentifierNode, *ast.PointerNode, *ast.BuiltinNode, *ast.SliceNode:
	default:
		return // a closure, an operator or a literal: never a pointer itself
	}
	t := (*node).Type()
	if t == nil || t.Kind() != reflect.Pointer || t.Elem().Kind() == reflect.Struct {
		return
	}
	ast.Patch(node, &ast.CallNode{Callee: &ast.IdentifierNode{Value: fnNullable}, Arguments: []ast.Node{*node}})
}

// equalities rewrites ==, != and `in` on a list into calls of Equal and
// in, where expr's own operator could disagree with the printed values;
// the checker has accepted the tree, and the new nodes get their types
// here.
type equalities struct{}

var (
	boolType      = reflect.TypeOf(true)
	equalFuncType = reflect.TypeOf(func(any, any) bool { return false })
)

// call is a call of one of the rewrites' functions, typed.
func call(name string, args ...ast.Node) *ast.CallNode {
	callee := &ast.IdentifierNode{Value: name}
	callee.SetType(equalFuncType)
	c := &ast.CallNode{Callee: callee, Arguments: args}
	c.SetType(boolType)
	return c
}

var plusFuncType = reflect.TypeOf(func(any, any) any { return nil })

func (equalities) Visit(node *ast.Node) {
	b, ok := (*node).(*ast.BinaryNode)
	if !ok {
		return
	}
	l, r := b.Left.Type(), b.Right.Type()
	switch b.Operator {
	case "==", "!=":
		if plainScalar(l) && plainScalar(r) {
			return // expr's opcode is right, and fast
		}
		var n ast.Node = call(fnEqual, b.Left, b.Right)
		if b.Operator == "!=" {
			n.SetLocation(b.Location())
			n = &ast.UnaryNode{Operator: "not", Node: n}
			n.SetType(boolType)
		}
		ast.Patch(node, n)
	case "in":
		if r != nil && r.Kind() != reflect.Slice && r.Kind() != reflect.Array && r.Kind() != reflect.Interface {
			return // a key of a map, a field of a struct: expr's meaning
		}
		ast.Patch(node, call(fnIn, b.Left, b.Right))
	case "+":
		// text joined with + is bounded (limits.go); numbers keep expr's
		// opcodes
		if !maybeText(l) && !maybeText(r) {
			return
		}
		c := call(fnPlus, b.Left, b.Right)
		c.Callee.SetType(plusFuncType)
		c.SetType(b.Type()) // what the checker found: the compiler reads it
		ast.Patch(node, c)
	}
}

// maybeText reports whether a value of type t may be a string at run.
func maybeText(t reflect.Type) bool {
	return t == nil || t.Kind() == reflect.String || t.Kind() == reflect.Interface
}

func calls(c *ast.CallNode, name string) bool {
	id, ok := c.Callee.(*ast.IdentifierNode)
	return ok && id.Value == name
}

// plainScalar reports whether t is a number, string or bool type, which
// expr compares by value.
func plainScalar(t reflect.Type) bool {
	if t == nil {
		return false
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64, reflect.String, reflect.Bool:
		return true
	}
	return false
}

// deref gives the value a pointer points to, or nil.
func deref(v any) any {
	rv := reflect.ValueOf(v)
	for rv.IsValid() && rv.Kind() == reflect.Pointer {
		if rv.IsNil() {
			return nil
		}
		rv = rv.Elem()
	}
	if !rv.IsValid() {
		return nil
	}
	return rv.Interface()
}

// in reports whether needle is an item of the list haystack (by Equal);
// for a map or a struct it keeps expr's meaning (a key, a field).
func in(needle, haystack any) bool {
	rv := reflect.ValueOf(haystack)
	for rv.IsValid() && rv.Kind() == reflect.Pointer && !rv.IsNil() {
		rv = rv.Elem()
	}
	if !rv.IsValid() || rv.Kind() == reflect.Pointer {
		return false
	}
	if rv.Kind() != reflect.Slice && rv.Kind() != reflect.Array {
		return runtime.In(needle, rv.Interface())
	}
	for i := 0; i < rv.Len(); i++ {
		if Equal(rv.Index(i).Interface(), needle) {
			return true
		}
	}
	return false
}

// Equal reports whether a and b print the same: null and a nil pointer
// alike, numbers by value whatever their Go type (3, int64(3) and 3.0),
// strings and booleans as they are, lists item by item, objects (maps,
// and structs as their JSON shows them) key by key. It is the equality
// of ==, != and `in` in expressions, and Key agrees with it.
func Equal(a, b any) bool {
	a, b = deref(a), deref(b)
	if x, ok := numberOf(a); ok {
		y, ok := numberOf(b)
		return ok && x.equal(y)
	}
	if x, ok := stringOf(a); ok {
		y, ok := stringOf(b)
		return ok && x == y
	}
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	if x, ok := a.(bool); ok {
		y, ok := b.(bool)
		return ok && x == y
	}
	if _, ok := b.(string); ok {
		return false
	}
	ka, oka := key(a)
	kb, okb := key(b)
	if !oka || !okb {
		return reflect.DeepEqual(a, b)
	}
	return ka == kb
}

// Key is a string that two values share exactly when Equal says they are
// equal, for sets and lookups.
func Key(v any) string {
	k, ok := key(deref(v))
	if !ok {
		// a value JSON cannot show (a func, a channel): its type and
		// Go's own rendering, as before
		return "go:" + reflect.TypeOf(v).String() + ":" + strconv.Quote(Format(v))
	}
	return k
}

// key renders v canonically: JSON with every number in one form and the
// keys of objects sorted (encoding/json sorts map keys).
func key(v any) (string, bool) {
	if n, ok := numberOf(v); ok {
		return n.String(), true
	}
	if s, ok := stringOf(v); ok {
		b, err := json.Marshal(s)
		return string(b), err == nil
	}
	b, err := json.Marshal(Plain(v))
	if err != nil {
		return "", false
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var x any
	if err := dec.Decode(&x); err != nil {
		return "", false
	}
	out, err := json.Marshal(canonicalNumbers(x))
	if err != nil {
		return "", false
	}
	return string(out), true
}

// canonicalNumbers replaces every json.Number in a decoded value by its
// canonical form, so 3 and 3.0 and 3e0 render alike.
func canonicalNumbers(v any) any {
	switch x := v.(type) {
	case json.Number:
		if n, ok := parseNumber(string(x)); ok {
			return json.RawMessage(n.String())
		}
		return x
	case []any:
		for i := range x {
			x[i] = canonicalNumbers(x[i])
		}
	case map[string]any:
		for k := range x {
			x[k] = canonicalNumbers(x[k])
		}
	}
	return v
}

// stringOf reads v as a string when its kind is one (a named string type
// too).
func stringOf(v any) (string, bool) {
	if s, ok := v.(string); ok {
		return s, true
	}
	if rv := reflect.ValueOf(v); rv.IsValid() && rv.Kind() == reflect.String {
		return rv.String(), true
	}
	return "", false
}

// number is a numeric value held without loss: an integer of any Go int
// or uint type (and a float with no fraction within int64's range) as
// int, or a float as one.
type number struct {
	isInt bool
	neg   bool   // for an int: below zero
	mag   uint64 // for an int: its magnitude
	f     float64
}

func (n number) equal(m number) bool {
	if n.isInt && m.isInt {
		return n.neg == m.neg && n.mag == m.mag
	}
	return n.float() == m.float()
}

func (n number) float() float64 {
	if !n.isInt {
		return n.f
	}
	if n.neg {
		return -float64(n.mag)
	}
	return float64(n.mag)
}

func (n number) String() string {
	if !n.isInt {
		return strconv.FormatFloat(n.f, 'g', -1, 64)
	}
	s := strconv.FormatUint(n.mag, 10)
	if n.neg {
		return "-" + s
	}
	return s
}

func intNumber(i int64) number {
	if i < 0 {
		return number{isInt: true, neg: true, mag: uint64(-(i + 1)) + 1}
	}
	return number{isInt: true, mag: uint64(i)}
}

func floatNumber(f float64) number {
	if f == math.Trunc(f) && f >= -(1<<63) && f < 1<<63 {
		return intNumber(int64(f))
	}
	return number{f: f}
}

// numberOf reads v as a number when its kind is one, named types (a
// time.Duration, a port type) included.
func numberOf(v any) (number, bool) {
	switch x := v.(type) {
	case int:
		return intNumber(int64(x)), true
	case int64:
		return intNumber(x), true
	case float64:
		return floatNumber(x), true
	case json.Number:
		return parseNumber(string(x))
	case nil, string, bool:
		return number{}, false
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return intNumber(rv.Int()), true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return number{isInt: true, mag: rv.Uint()}, true
	case reflect.Float32, reflect.Float64:
		return floatNumber(rv.Float()), true
	}
	return number{}, false
}

func parseNumber(s string) (number, bool) {
	if i, err := strconv.ParseInt(s, 10, 64); err == nil {
		return intNumber(i), true
	}
	if u, err := strconv.ParseUint(s, 10, 64); err == nil {
		return number{isInt: true, mag: u}, true
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		return floatNumber(f), true
	}
	return number{}, false
}
