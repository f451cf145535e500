package eval

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"github.com/labrun/labrun/internal/lang/diag"
	"github.com/labrun/labrun/internal/lang/fields"
	"github.com/labrun/labrun/internal/lang/scalar"
)

// Rendering a spec value at run time and storing it into its Go type.

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
		// A nested value's error already names its own, narrower place;
		// prefixing the enclosing value's would print two positions.
		if re := (*RunError)(nil); errors.As(err, &re) {
			return err
		}
		return diag.Errorf(v.Pos, "%v", err)
	}
	return assign(x, target, v)
}

// assign stores an already evaluated value x into target; src is the spec
// value x came from, and locates errors. It settles what applies to every
// type (the source text of a string field, null, pointers), then hands x
// to the assigner of target's kind.
func assign(x any, target reflect.Value, src *Value) error {
	t := target.Type()
	if text, ok := src.sourceText(); ok && (t.Kind() == reflect.String || t.Kind() == reflect.Pointer && t.Elem().Kind() == reflect.String) {
		x = text
	}
	switch {
	case x == nil:
		target.Set(reflect.Zero(t))
		return nil
	case t.Kind() == reflect.Pointer:
		p := reflect.New(t.Elem())
		if err := assign(x, p.Elem(), src); err != nil {
			return err
		}
		target.Set(p)
		return nil
	case t == durationType:
		return assignDuration(x, target, src)
	}
	switch t.Kind() {
	case reflect.Slice:
		return assignList(x, target, src)
	case reflect.Map:
		return assignMap(x, target, src)
	case reflect.Struct:
		return assignStruct(x, target, src)
	}
	return assignScalar(x, target, src)
}

// errorAt is an error at src's place in the playbook.
func errorAt(src *Value, format string, args ...any) error {
	return diag.Errorf(src.Pos, format, args...)
}

// assignDuration stores a duration by the rule every duration in a
// playbook follows (scalar.Duration), so that a value an expression gives
// during the run is held to what a literal is held to before it.
func assignDuration(x any, target reflect.Value, src *Value) error {
	d, err := scalar.Duration(x, fmt.Sprint(x)) // 1e+300, not 300 zeros
	switch {
	case errors.Is(err, scalar.ErrNotDuration):
		if s, ok := x.(string); ok {
			return errorAt(src, "%v, got %q", err, s)
		}
		return errorAt(src, "%v, got %s", err, Format(x))
	case err != nil:
		return errorAt(src, "%v", err)
	}
	target.SetInt(int64(d))
	return nil
}

// assignScalar stores x into a field of any value, a string, a boolean or
// a number.
func assignScalar(x any, target reflect.Value, src *Value) error {
	t := target.Type()
	switch t.Kind() {
	case reflect.Interface:
		if c := src.compiler(); c != nil {
			x = c.ordered(x) // maps in the order their literals wrote them
		}
		target.Set(reflect.ValueOf(x))
		return nil
	case reflect.String:
		switch x.(type) {
		case string, int, int64, float64, bool:
			target.SetString(Format(x))
			return nil
		}
		return errorAt(src, "expected a string, got %s", Format(x))
	case reflect.Bool:
		b, ok := x.(bool)
		if !ok {
			return errorAt(src, "expected a boolean, got %s", Format(x))
		}
		target.SetBool(b)
		return nil
	case reflect.Int, reflect.Int64, reflect.Int32, reflect.Uint16, reflect.Uint32:
		n, ok := toInt(x)
		if !ok {
			return errorAt(src, "expected a whole number, got %s", Format(x))
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
			return errorAt(src, "expected a number, got %s", Format(x))
		}
		target.SetFloat(f)
		return nil
	}
	return errorAt(src, "cannot store %s here: expected %s", Format(x), PlainTypes(t.String()))
}

// assignList stores a list item by item, each located at its own spec
// value when the list was written in YAML.
func assignList(x any, target reflect.Value, src *Value) error {
	rv := reflect.ValueOf(x)
	if rv.Kind() != reflect.Slice && rv.Kind() != reflect.Array {
		return errorAt(src, "expected a list, got %s", Format(x))
	}
	s := reflect.MakeSlice(target.Type(), rv.Len(), rv.Len())
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
}

// assignMap stores a mapping into a Go map, entry by entry.
func assignMap(x any, target reflect.Value, src *Value) error {
	t := target.Type()
	m := reflect.MakeMap(t)
	err := eachEntry(x, func(k string, val any) error {
		ev := reflect.New(t.Elem()).Elem()
		if err := assign(val, ev, src.entry(k)); err != nil {
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
}

// assignStruct stores a mapping into a struct by its fields' keys.
func assignStruct(x any, target reflect.Value, src *Value) error {
	byKey := map[string]fields.Field{}
	for _, f := range fields.Of(target.Type()) {
		byKey[f.Key] = f
	}
	return eachEntry(x, func(k string, val any) error {
		f, ok := byKey[k]
		if !ok {
			return errorAt(src, "unknown key %q", k)
		}
		return assign(val, target.FieldByIndex(f.Index), src.entry(k))
	})
}

// entry is the spec value written for key k of a mapping, to locate an
// error in it; v itself when k was not written there (the mapping came
// from an expression).
func (v *Value) entry(k string) *Value {
	if sv := v.Lookup(k); sv != nil {
		return sv
	}
	return v
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
