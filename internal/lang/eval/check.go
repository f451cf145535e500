package eval

import (
	"errors"
	"reflect"
	"strings"
	"time"

	"github.com/labrun/labrun/internal/lang/diag"
	"github.com/labrun/labrun/internal/lang/fields"
	"github.com/labrun/labrun/internal/lang/scalar"
	"github.com/labrun/labrun/internal/lang/yamlnode"
)

// Checking a spec value against its Go type before anything runs.

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
		checkNumbers(v, errs)
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
		if t == durationType {
			checkDuration(v, errs)
			return
		}
		if t.Kind() != reflect.String {
			if msg := yamlnode.Number(v.Node); msg != "" {
				errs.Add(v.Pos, "%s", msg)
				return
			}
		}
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

// CheckNumbers refuses, in a value whose type is YAML's reading of it (a
// variable, a loop's list, a json or compute value), every number YAML
// reads that labrun cannot hold: out of range (1e400, which yaml.v3 leaves
// as the text "1e400", so the value would be a string), infinity, NaN.
// Where a field takes a string the text is taken as written, so Check
// refuses these only where a number or any value is expected.
func CheckNumbers(v *Value) diag.List {
	var errs diag.List
	checkNumbers(v, &errs)
	return errs
}

func checkNumbers(v *Value, errs *diag.List) {
	switch {
	case v == nil:
	case v.kind == litKind:
		if msg := yamlnode.Number(v.Node); msg != "" {
			errs.Add(v.Pos, "%s", msg)
		}
	case v.kind == listKind:
		for _, item := range v.items {
			checkNumbers(item, errs)
		}
	case v.kind == mapKind:
		for _, x := range v.vals {
			checkNumbers(x, errs)
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

// checkDuration holds a literal duration to the rule every duration in a
// playbook follows (scalar.Duration). A value that is no duration is
// refused like any literal of the wrong kind; one out of range, in the
// rule's words.
func checkDuration(v *Value, errs *diag.List) {
	if v.lit == nil {
		return // null leaves the zero value: the field is not set
	}
	_, err := scalar.Duration(v.lit, v.Node.Value)
	switch {
	case errors.Is(err, scalar.ErrNotDuration):
		errs.Add(v.Pos, "expected %s, found %s", describeType(durationType), yamlnode.Describe(v.Node))
	case err != nil:
		errs.Add(v.Pos, "%v", err)
	}
}

// literalFits says whether a literal (other than a duration) can fill a
// field of type t.
func literalFits(lit any, t reflect.Type) bool {
	if lit == nil {
		return true // null leaves the zero value
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
