package runner

import (
	"reflect"
	"sort"
	"strings"
	"testing"
	"unicode"

	"github.com/labrun/labrun/actions"
	_ "github.com/labrun/labrun/actions/all" // every action, bpfmap's included
)

// A result field has two names: its json tag, which the journal, the
// reports and `labrun parse` print, and its expr tag, which expressions
// read (expr-lang reads only a tag named expr). This test walks every
// type a result or function can hand to an expression or the journal and
// fails on any field whose two names differ, or that lacks one of them or
// is not lowerCamel (the convention parse and bpfmaps/entries also test
// for their own types), so a playbook's
// steps.x.backendPods and the journal's "backendPods" cannot drift apart.
func TestResultFieldNamesAgree(t *testing.T) {
	roots := map[string]reflect.Type{}
	for _, a := range actions.All() {
		roots["action "+a.Name] = a.Result
	}
	for _, f := range DefaultFunctions() {
		for _, sig := range f.Types {
			ft := reflect.TypeOf(sig)
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			for i := 0; i < ft.NumOut(); i++ {
				roots["function "+f.Name] = ft.Out(i)
			}
		}
	}
	names := make([]string, 0, len(roots))
	for n := range roots {
		names = append(names, n)
	}
	sort.Strings(names)
	seen := map[reflect.Type]bool{}
	fields := 0
	var walk func(from string, t reflect.Type)
	walk = func(from string, typ reflect.Type) {
		for typ.Kind() == reflect.Pointer || typ.Kind() == reflect.Slice || typ.Kind() == reflect.Array || typ.Kind() == reflect.Map {
			typ = typ.Elem()
		}
		if typ.Kind() != reflect.Struct || seen[typ] {
			return
		}
		seen[typ] = true
		for i := 0; i < typ.NumField(); i++ {
			f := typ.Field(i)
			if !f.IsExported() {
				continue
			}
			jsonTag, hasJSON := f.Tag.Lookup("json")
			jsonName := strings.Split(jsonTag, ",")[0]
			exprName, hasExpr := f.Tag.Lookup("expr")
			if f.Anonymous && !hasJSON && !hasExpr {
				walk(from, f.Type) // promoted fields, in JSON and expressions alike
				continue
			}
			if jsonName == "" {
				jsonName = f.Name
			}
			if exprName == "" {
				exprName = f.Name
			}
			fields++
			switch {
			case jsonName != exprName:
				t.Errorf("%s: %s.%s is %q in JSON but %q in expressions", from, typ, f.Name, jsonName, exprName)
			case !hasJSON || !hasExpr:
				t.Errorf("%s: %s.%s needs both a json and an expr tag, so its name is written, not taken from Go", from, typ, f.Name)
			case !unicode.IsLower(rune(jsonName[0])) || strings.ContainsAny(jsonName, "_- "):
				t.Errorf("%s: %s.%s: %q is not lowerCamel", from, typ, f.Name, jsonName)
			}
			walk(from, f.Type)
		}
	}
	for _, n := range names {
		walk(n, roots[n])
	}
	t.Logf("%d fields in %d types", fields, len(seen))
	if fields < 300 {
		t.Fatalf("checked %d fields; expected the results of every action and parser", fields)
	}
}
