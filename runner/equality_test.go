package runner

import (
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/labrun/labrun/actions"
	"github.com/labrun/labrun/internal/lang/diag"
	"github.com/labrun/labrun/internal/lang/eval"
)

// Two values that print the same compare equal, for every field of every
// type a step or a function hands to expressions: read from two results
// built alike (different pointers, same values), and against the literal
// the value prints as, with ==, `in`, sameSet, inside lists and maps, and
// mapped out of a list. A nullable field (*int) put in a list compared
// unequal to the same number before: expressions saw the Go pointer.
func TestValuesPrintedAlikeCompareEqual(t *testing.T) {
	roots := map[string]reflect.Type{}
	for _, a := range actions.All() {
		if a.Result != nil {
			roots["action "+a.Name] = a.Result
		}
	}
	for _, f := range DefaultFunctions() {
		for _, sig := range f.Types {
			ft := reflect.TypeOf(sig)
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.NumOut() > 0 {
				roots["function "+f.Name] = ft.Out(0)
			}
		}
	}
	names := make([]string, 0, len(roots))
	for n := range roots {
		names = append(names, n)
	}
	sort.Strings(names)
	checked := 0
	for _, name := range names {
		root := roots[name]
		if root.Kind() == reflect.Interface {
			continue
		}
		c := eval.NewCompiler(DefaultFunctions())
		c.DeclareStep("a", root, diag.Pos{File: "p.yaml", Line: 1, Col: 1})
		c.DeclareStep("b", root, diag.Pos{File: "p.yaml", Line: 2, Col: 1})
		stored := root
		if stored.Kind() == reflect.Struct {
			stored = reflect.PointerTo(root) // an action returns *Result
		}
		env := c.NewEnv()
		if _, err := env.SetStep("a", sample(stored)); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if _, err := env.SetStep("b", sample(stored)); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, p := range readPaths(stored, "", 0) {
			a, b := "steps.a"+p.path, "steps.b"+p.path
			exprs := []string{
				a + " == " + b,
				"!(" + a + " != " + b + ")",
				"[" + a + "] == [" + b + "]",
				`{"k": ` + a + `} == {"k": ` + b + `}`,
				a + " in [" + b + "]",
				"sameSet([" + a + "], [" + b + "])",
				"len(difference([" + a + "], [" + b + "])) == 0",
			}
			if p.list != "" {
				la, lb := "steps.a"+p.list, "steps.b"+p.list
				exprs = append(exprs,
					"map("+la+", #"+p.rest+") == map("+lb+", #"+p.rest+")",
					a+" in map("+lb+", #"+p.rest+")",
					"sameSet(map("+la+", #"+p.rest+"), map("+lb+", #"+p.rest+"))")
			}
			if lit, ok := literal(p.value); ok {
				exprs = append(exprs,
					"["+a+"] == ["+lit+"]",
					`{"k": `+a+`} == {"k": `+lit+`}`,
					lit+" in ["+a+"]",
					"sameSet(["+a+"], ["+lit+"])")
				if p.scalar {
					exprs = append(exprs, a+" == "+lit)
				}
			}
			for _, src := range exprs {
				e, err := c.Compile(src, diag.Pos{File: "p.yaml", Line: 3, Col: 1}, eval.Context{Step: 2, Want: reflect.Bool})
				if err != nil {
					t.Errorf("%s: %s: %v", name, src, err)
					continue
				}
				ok, err := e.EvalBool(env)
				if err != nil || !ok {
					t.Errorf("%s: %s = %v, %v; both sides print %s", name, src, ok, err, eval.Format(p.value))
				}
				checked++
			}
		}
	}
	t.Logf("%d comparisons", checked)
	if checked < 1000 {
		t.Fatalf("only %d comparisons checked: the walk over result types found too little", checked)
	}
}

// readPath is an expression path into a sample value: .f, .list[0].f,
// with the list part and the rest apart for map(list, #.rest).
type readPath struct {
	path       string
	list, rest string
	value      any
	scalar     bool // a number, string or bool, or a pointer to one
}

// readPaths lists the fields reachable from t, following the first item
// of lists and the key "k" of maps, to a depth of 6.
func readPaths(t reflect.Type, prefix string, depth int) []readPath {
	var out []readPath
	var walk func(t reflect.Type, path, list, rest string, v reflect.Value, depth int)
	walk = func(t reflect.Type, path, list, rest string, v reflect.Value, depth int) {
		if depth > 6 {
			return
		}
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
			if v.IsValid() && !v.IsNil() {
				v = v.Elem()
			}
		}
		switch t.Kind() {
		case reflect.Struct:
			for i := 0; i < t.NumField(); i++ {
				f := t.Field(i)
				if !f.IsExported() {
					continue
				}
				name := strings.Split(f.Tag.Get("expr"), ",")[0]
				if name == "-" {
					continue
				}
				fv := v.Field(i)
				if f.Anonymous && name == "" {
					walk(f.Type, path, list, rest, fv, depth)
					continue
				}
				if name == "" {
					name = f.Name
				}
				p, r := path+"."+name, rest
				if list != "" {
					r = rest + "." + name
				}
				out = append(out, readPath{path: p, list: list, rest: r, value: fv.Interface(), scalar: scalarKind(f.Type)})
				walk(f.Type, p, list, r, fv, depth+1)
			}
		case reflect.Slice, reflect.Array:
			if v.Len() == 0 {
				return
			}
			// the first list on the path is the one map(...) reads
			if list == "" {
				walk(t.Elem(), path+"[0]", path, "", v.Index(0), depth+1)
			} else {
				walk(t.Elem(), path+"[0]", list, rest+"[0]", v.Index(0), depth+1)
			}
		case reflect.Map:
			if t.Key().Kind() != reflect.String || v.Len() == 0 {
				return
			}
			k := v.MapKeys()[0]
			p, r := path+"["+strconv.Quote(k.String())+"]", rest
			if list != "" {
				r = rest + "[" + strconv.Quote(k.String()) + "]"
			}
			walk(t.Elem(), p, list, r, v.MapIndex(k), depth+1)
		}
	}
	walk(t, prefix, "", "", reflect.ValueOf(sample(t)), depth)
	return out
}

func scalarKind(t reflect.Type) bool {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String, reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		return true
	}
	return false
}

// literal is the expression literal a scalar value prints as: 17897,
// "web", true, [1, 2]; false for what has no literal (an object).
func literal(v any) (string, bool) {
	rv := reflect.ValueOf(v)
	for rv.IsValid() && rv.Kind() == reflect.Pointer {
		if rv.IsNil() {
			return "nil", true
		}
		rv = rv.Elem()
	}
	if !rv.IsValid() {
		return "nil", true
	}
	switch rv.Kind() {
	case reflect.String:
		return strconv.Quote(rv.String()), true
	case reflect.Bool:
		return strconv.FormatBool(rv.Bool()), true
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.FormatInt(rv.Int(), 10), true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return strconv.FormatUint(rv.Uint(), 10), true
	case reflect.Float32, reflect.Float64:
		return strconv.FormatFloat(rv.Float(), 'g', -1, 64), true
	case reflect.Slice, reflect.Array:
		var items []string
		for i := 0; i < rv.Len(); i++ {
			s, ok := literal(rv.Index(i).Interface())
			if !ok {
				return "", false
			}
			items = append(items, s)
		}
		return "[" + strings.Join(items, ", ") + "]", true
	}
	return "", false
}

// sample builds a value of t with every pointer set, one item in each
// list and one key in each map, and distinct scalars; two calls give
// equal values that share no pointer.
func sample(t reflect.Type) any {
	n := 0
	var fill func(t reflect.Type, depth int) reflect.Value
	fill = func(t reflect.Type, depth int) reflect.Value {
		v := reflect.New(t).Elem()
		if depth > 8 {
			return v
		}
		n++
		switch t.Kind() {
		case reflect.Pointer:
			v.Set(fill(t.Elem(), depth+1).Addr())
		case reflect.Struct:
			if t.PkgPath() == "time" {
				return v
			}
			for i := 0; i < t.NumField(); i++ {
				if t.Field(i).IsExported() {
					v.Field(i).Set(fill(t.Field(i).Type, depth+1))
				}
			}
		case reflect.Slice:
			v.Set(reflect.MakeSlice(t, 0, 2))
			v.Set(reflect.Append(v, fill(t.Elem(), depth+1), fill(t.Elem(), depth+1)))
		case reflect.Map:
			if t.Key().Kind() == reflect.String {
				v.Set(reflect.MakeMap(t))
				v.SetMapIndex(reflect.ValueOf("k"+strconv.Itoa(n)).Convert(t.Key()), fill(t.Elem(), depth+1))
			}
		case reflect.String:
			v.SetString(fmt.Sprintf("s%d", n))
		case reflect.Bool:
			v.SetBool(n%2 == 0)
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			v.SetInt(int64(n % 100))
		case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			v.SetUint(uint64(n % 100))
		case reflect.Float32, reflect.Float64:
			v.SetFloat(float64(n) + 0.5)
		case reflect.Interface:
			if t.NumMethod() == 0 {
				v.Set(reflect.ValueOf(n))
			}
		}
		return v
	}
	return fill(t, 0).Interface()
}
