package eval

import (
	"fmt"
	"reflect"
)

// Result types derived from a spec: compute's values, typed by their
// expressions, as a struct expressions can check member access on.

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

// toStruct fills a value of a struct type made by StructType from
// compute's map of values; fit calls it when a step's result is stored.
func toStruct(m map[string]any, t reflect.Type) (reflect.Value, error) {
	out := reflect.New(t)
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		key := f.Tag.Get("expr")
		rv, err := fit(Plain(m[key]), f.Type)
		if err != nil {
			return reflect.Value{}, fmt.Errorf("%s: %w", key, err)
		}
		out.Elem().Field(i).Set(rv)
	}
	return out, nil
}
