package eval

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/labrun/labrun/diag"
	"github.com/labrun/labrun/internal/fields"
	"github.com/labrun/labrun/internal/yamlnode"
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
			v.keys = append(v.keys, k.Value)
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
		errs.Add(offsetPos(v.Pos, n, te.offset), "%s", msg)
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
		e, err := c.Compile(s.expr, offsetPos(v.Pos, n, s.offset), ectx)
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

// offsetPos finds the file position of byte off inside a scalar. It is
// exact for plain and quoted one-line scalars; for block scalars it points
// at the scalar itself.
func offsetPos(p diag.Pos, n *yaml.Node, off int) diag.Pos {
	if strings.Contains(n.Value[:min(off, len(n.Value))], "\n") || n.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0 {
		return p
	}
	if n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) != 0 {
		p.Col++
	}
	p.Col += utf8.RuneCountInString(n.Value[:min(off, len(n.Value))])
	return p
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

var durationType = reflect.TypeOf(time.Duration(0))

// Check verifies statically that v fits Go type t (an action's spec type):
// keys exist, scalars have the right YAML type, and whole-value expressions
// have a compatible static type. Everything found is returned.
func Check(v *Value, t reflect.Type) diag.List {
	var errs diag.List
	check(v, t, &errs)
	return errs
}

func check(v *Value, t reflect.Type, errs *diag.List) {
	if v == nil {
		return
	}
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() == reflect.Interface {
		return
	}
	want := describeType(t)
	switch v.kind {
	case exprKind:
		if v.expr.Type != nil && !assignable(v.expr.Type, t) {
			errs.Add(v.expr.Pos, "in expression %s: value is %s, expected %s", quoteExpr(v.expr.Src), describeType(v.expr.Type), want)
		}
		return
	case interpKind:
		if t.Kind() != reflect.String && t != durationType {
			errs.Add(v.Pos, "text with ${{ }} is a string, expected %s", want)
		}
		return
	case litKind:
		if !literalFits(v.lit, t) {
			errs.Add(v.Pos, "expected %s, found %s", want, yamlnode.Describe(v.Node))
		}
		return
	case listKind:
		if t.Kind() != reflect.Slice {
			errs.Add(v.Pos, "expected %s, found a list", want)
			return
		}
		for _, item := range v.items {
			check(item, t.Elem(), errs)
		}
		return
	case mapKind:
		switch t.Kind() {
		case reflect.Map:
			for _, x := range v.vals {
				check(x, t.Elem(), errs)
			}
		case reflect.Struct:
			checkStruct(v, t, errs)
		default:
			errs.Add(v.Pos, "expected %s, found a mapping", want)
		}
	}
}

func checkStruct(v *Value, t reflect.Type, errs *diag.List) {
	fs := fields.Of(t)
	names := fields.Keys(t)
	byName := map[string]fields.Field{}
	for _, f := range fs {
		byName[f.Key] = f
	}
	suggested := map[string]bool{}
	for i, k := range v.keys {
		f, ok := byName[k]
		if !ok {
			suggested[diag.Suggest(k, names)] = true
			kn := v.Node.Content[2*i]
			errs.Add(diag.Pos{File: v.Pos.File, Line: kn.Line, Col: kn.Column}, "unknown key %q%s; expected one of: %s", k, diag.DidYouMean(k, names), strings.Join(names, ", "))
			continue
		}
		check(v.vals[i], f.Type, errs)
	}
	for _, f := range fs {
		if f.Required && v.Lookup(f.Key) == nil && !suggested[f.Key] {
			errs.Add(v.Pos, "missing required key %q", f.Key)
		}
	}
}

func literalFits(lit any, t reflect.Type) bool {
	if lit == nil {
		return true // null leaves the zero value
	}
	if t == durationType {
		switch x := lit.(type) {
		case int, float64:
			return true
		case string:
			_, err := time.ParseDuration(x)
			return err == nil
		}
		return false
	}
	switch t.Kind() {
	case reflect.String:
		return true // numbers and booleans are written as their YAML text
	case reflect.Bool:
		_, ok := lit.(bool)
		return ok
	case reflect.Int, reflect.Int64, reflect.Int32, reflect.Uint16, reflect.Uint32:
		_, ok := lit.(int)
		return ok
	case reflect.Float64:
		switch lit.(type) {
		case int, float64:
			return true
		}
	}
	return false
}

// assignable says whether an expression's static type can fill a field.
func assignable(from, to reflect.Type) bool {
	if from.AssignableTo(to) {
		return true
	}
	if to == durationType {
		return isNumber(from) || from.Kind() == reflect.String
	}
	switch to.Kind() {
	case reflect.String:
		return isNumber(from) || from.Kind() == reflect.Bool || from.Kind() == reflect.String
	case reflect.Int, reflect.Int64, reflect.Int32, reflect.Uint16, reflect.Uint32, reflect.Float64:
		return isNumber(from)
	case reflect.Slice:
		return from.Kind() == reflect.Slice || from.Kind() == reflect.Array
	case reflect.Map, reflect.Struct:
		return from.Kind() == reflect.Map || from.Kind() == reflect.Struct
	}
	return false
}

func isNumber(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
		return true
	}
	return false
}

func describeType(t reflect.Type) string {
	if t == durationType {
		return "a duration (e.g. 30s)"
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "a list"
	case reflect.Map, reflect.Struct:
		return "a mapping"
	case reflect.Interface:
		return "any value"
	}
	return t.String()
}

// Eval renders the value with the run-time environment into plain Go
// values: strings, numbers, booleans, nil, []any and *Map (order kept).
func (v *Value) Eval(env *Env) (any, error) {
	switch v.kind {
	case litKind:
		return v.lit, nil
	case exprKind:
		return v.expr.Eval(env)
	case interpKind:
		var b strings.Builder
		for _, p := range v.parts {
			if p.expr == nil {
				b.WriteString(p.lit)
				continue
			}
			x, err := p.expr.Eval(env)
			if err != nil {
				return nil, err
			}
			b.WriteString(Format(x))
		}
		return b.String(), nil
	case listKind:
		out := make([]any, 0, len(v.items))
		for _, item := range v.items {
			x, err := item.Eval(env)
			if err != nil {
				return nil, err
			}
			out = append(out, x)
		}
		return out, nil
	case mapKind:
		m := NewMap()
		for i, k := range v.keys {
			x, err := v.vals[i].Eval(env)
			if err != nil {
				return nil, err
			}
			m.Set(k, x)
		}
		return m, nil
	}
	return nil, nil
}

// Format renders a value inside text: strings as they are, numbers in their
// shortest form, and anything else as compact JSON.
func Format(x any) string {
	switch x := x.(type) {
	case nil:
		return ""
	case string:
		return x
	case bool:
		return strconv.FormatBool(x)
	case int:
		return strconv.Itoa(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case fmt.Stringer:
		return x.String()
	}
	b, err := json.Marshal(x)
	if err != nil {
		return fmt.Sprint(x)
	}
	return string(b)
}

// Decode evaluates v and stores it into target (a settable value of the
// spec's type), converting as the checker allowed. Errors carry the
// position of the offending value.
func (v *Value) Decode(env *Env, target reflect.Value) error {
	x, err := v.Eval(env)
	if err != nil {
		return diag.Errorf(v.Pos, "%v", err)
	}
	return assign(x, target, v)
}

// DecodeValue stores an already evaluated value into target; src locates
// errors.
func assign(x any, target reflect.Value, src *Value) error {
	at := func(format string, args ...any) error {
		return diag.Errorf(src.Pos, format, args...)
	}
	t := target.Type()
	if text, ok := src.sourceText(); ok && (t.Kind() == reflect.String || t.Kind() == reflect.Pointer && t.Elem().Kind() == reflect.String) {
		x = text
	}
	if x == nil {
		target.Set(reflect.Zero(t))
		return nil
	}
	if t.Kind() == reflect.Pointer {
		p := reflect.New(t.Elem())
		if err := assign(x, p.Elem(), src); err != nil {
			return err
		}
		target.Set(p)
		return nil
	}
	if t == durationType {
		switch n := x.(type) {
		case int:
			target.SetInt(int64(time.Duration(n) * time.Second))
		case float64:
			target.SetInt(int64(time.Duration(n * float64(time.Second))))
		case string:
			d, err := time.ParseDuration(n)
			if err != nil {
				return at("expected a duration such as 30s, got %q", n)
			}
			target.SetInt(int64(d))
		default:
			return at("expected a duration, got %T", x)
		}
		return nil
	}
	switch t.Kind() {
	case reflect.Interface:
		target.Set(reflect.ValueOf(x))
		return nil
	case reflect.String:
		switch x.(type) {
		case string, int, int64, float64, bool:
			target.SetString(Format(x))
			return nil
		}
		return at("expected a string, got %s", Format(x))
	case reflect.Bool:
		b, ok := x.(bool)
		if !ok {
			return at("expected a boolean, got %s", Format(x))
		}
		target.SetBool(b)
		return nil
	case reflect.Int, reflect.Int64, reflect.Int32, reflect.Uint16, reflect.Uint32:
		n, ok := toInt(x)
		if !ok {
			return at("expected a whole number, got %s", Format(x))
		}
		if target.CanInt() {
			target.SetInt(n)
		} else {
			target.SetUint(uint64(n))
		}
		return nil
	case reflect.Float64:
		f, ok := toFloat(x)
		if !ok {
			return at("expected a number, got %s", Format(x))
		}
		target.SetFloat(f)
		return nil
	case reflect.Slice:
		rv := reflect.ValueOf(x)
		if rv.Kind() != reflect.Slice && rv.Kind() != reflect.Array {
			return at("expected a list, got %s", Format(x))
		}
		s := reflect.MakeSlice(t, rv.Len(), rv.Len())
		for i := 0; i < rv.Len(); i++ {
			item := src
			if src.kind == listKind && i < len(src.items) {
				item = src.items[i]
			}
			if err := assign(rv.Index(i).Interface(), s.Index(i), item); err != nil {
				return err
			}
		}
		target.Set(s)
		return nil
	case reflect.Map:
		m := reflect.MakeMap(t)
		err := eachEntry(x, func(k string, val any) error {
			ev := reflect.New(t.Elem()).Elem()
			item := src
			if sv := src.Lookup(k); sv != nil {
				item = sv
			}
			if err := assign(val, ev, item); err != nil {
				return err
			}
			m.SetMapIndex(reflect.ValueOf(k).Convert(t.Key()), ev)
			return nil
		})
		if err != nil {
			return err
		}
		target.Set(m)
		return nil
	case reflect.Struct:
		byKey := map[string]fields.Field{}
		for _, f := range fields.Of(t) {
			byKey[f.Key] = f
		}
		return eachEntry(x, func(k string, val any) error {
			f, ok := byKey[k]
			if !ok {
				return at("unknown key %q", k)
			}
			item := src
			if sv := src.Lookup(k); sv != nil {
				item = sv
			}
			return assign(val, target.FieldByIndex(f.Index), item)
		})
	}
	return at("cannot store %T in %s", x, t)
}

// eachEntry iterates a mapping value, *Map or map[string]any, in order.
func eachEntry(x any, fn func(string, any) error) error {
	switch m := x.(type) {
	case *Map:
		for _, k := range m.Keys {
			if err := fn(k, m.Values[k]); err != nil {
				return err
			}
		}
		return nil
	case map[string]any:
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if err := fn(k, m[k]); err != nil {
				return err
			}
		}
		return nil
	}
	return fmt.Errorf("expected a mapping, got %s", Format(x))
}

func toInt(x any) (int64, bool) {
	switch n := x.(type) {
	case int:
		return int64(n), true
	case int64:
		return n, true
	case int32:
		return int64(n), true
	case uint16:
		return int64(n), true
	case uint32:
		return int64(n), true
	case float64:
		if n == math.Trunc(n) && !math.IsInf(n, 0) {
			return int64(n), true
		}
	}
	return 0, false
}

func toFloat(x any) (float64, bool) {
	switch n := x.(type) {
	case float64:
		return n, true
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	}
	return 0, false
}

// Map is a mapping that keeps its keys in the order they were written, so
// that rendered JSON files list keys as the lab asks.
type Map struct {
	Keys   []string
	Values map[string]any
}

// NewMap returns an empty ordered map.
func NewMap() *Map { return &Map{Values: map[string]any{}} }

// Set adds or replaces a key, keeping first-insertion order.
func (m *Map) Set(k string, v any) {
	if _, ok := m.Values[k]; !ok {
		m.Keys = append(m.Keys, k)
	}
	m.Values[k] = v
}

// MarshalJSON writes the keys in order.
func (m *Map) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range m.Keys {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		b.Write(kb)
		b.WriteByte(':')
		vb, err := json.Marshal(m.Values[k])
		if err != nil {
			return nil, err
		}
		b.Write(vb)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// Plain converts *Map values (recursively) to map[string]any, the form
// expressions can index.
func Plain(x any) any {
	switch v := x.(type) {
	case *Map:
		out := make(map[string]any, len(v.Keys))
		for _, k := range v.Keys {
			out[k] = Plain(v.Values[k])
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = Plain(e)
		}
		return out
	}
	return x
}

// StructType derives a struct type from a mapping value: one field per key,
// typed by the value's static type (an expression's checked type, a
// literal's YAML type), so that steps.<id>.<key> is type-checked downstream.
func StructType(v *Value) reflect.Type {
	var fields []reflect.StructField
	for i, k := range v.keys {
		fields = append(fields, reflect.StructField{
			Name: fmt.Sprintf("F%d", i),
			Type: staticType(v.vals[i]),
			Tag:  reflect.StructTag(fmt.Sprintf(`expr:%q json:%q`, k, k)),
		})
	}
	return reflect.StructOf(fields)
}

var anyType = reflect.TypeOf((*any)(nil)).Elem()

func staticType(v *Value) reflect.Type {
	switch v.kind {
	case exprKind:
		if v.expr.Type != nil {
			return v.expr.Type
		}
	case interpKind:
		return reflect.TypeOf("")
	case litKind:
		if v.lit != nil {
			return reflect.TypeOf(v.lit)
		}
	case listKind:
		return reflect.TypeOf([]any{})
	case mapKind:
		return reflect.TypeOf(map[string]any{})
	}
	return anyType
}

// ToStruct fills a value of a struct type made by StructType from a map.
func ToStruct(m map[string]any, t reflect.Type) (any, error) {
	out := reflect.New(t)
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		key := f.Tag.Get("expr")
		rv, err := fit(Plain(m[key]), f.Type)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", key, err)
		}
		out.Elem().Field(i).Set(rv)
	}
	return out.Interface(), nil
}
