// Package typeref is the reference of every value an expression can read:
// each action's result, each parser's result, the BPF map entries and the
// types they hold, with every field and method, its type and a one-line
// doc. It is read by reflection from the same Go types expressions are
// type-checked against, so it cannot list a field validate refuses or miss
// one it accepts. The docs are the types' doc comments, extracted from the
// source by go/doc when the generated files are made (docs_gen.go, and
// docs/reference.md from it; `go test ./cmd/labrun/internal/typeref -update`, `make
// reference`), since a built binary has no source to read them from.
package typeref

import (
	"fmt"
	"reflect"
	"sort"
	"strings"
	"time"

	"github.com/labrun/labrun/actions"
	"github.com/labrun/labrun/internal/lang/eval"
	"github.com/labrun/labrun/internal/parse"
)

// Field is one field an expression reads with .name.
type Field struct {
	Name string // as expressions spell it (the expr tag)
	Type string // in the reference's words: string, list of Frontend, ...
	// Null is whether the field can be null: its Go type is a pointer
	// (nil is null to expressions), or it is tagged nullable:"true" (an
	// any, map or list that is left nil when there is nothing to put in
	// it). Its doc says when.
	Null bool
	Doc  string
}

// TypeText is the field's type as the reference prints it: "int or null"
// for a nullable field.
func (f Field) TypeText() string {
	if f.Null {
		return f.Type + " or null"
	}
	return f.Type
}

// Method is one method an expression calls with .Name(args).
type Method struct {
	Name string
	Sig  string // (string) Frontend
	Doc  string
}

// Type is a named type of a result: a struct with fields, or a list type
// with methods of its own.
type Type struct {
	Name    string // short Go name, package-qualified only where two packages share it
	Kind    string // "object", or "list of X" for a list type
	Doc     string
	Fields  []Field
	Methods []Method
	goType  reflect.Type
}

// Root is where a type is met: an action's result, a parser's, or a
// function's.
type Root struct {
	Kind string // "action", "parser" or "function"
	Name string // action name, parser kind or function name
	Func string // a parser's expression function
	Doc  string
	Type string // the result's type name; "" for compute's spec-made result
}

// Reference is every root and every type reachable from them.
type Reference struct {
	Actions, Parsers, Functions []Root
	Types                       []*Type // sorted by name
	byName                      map[string]*Type
}

// Build reads the reference from the registered actions, the parsers and
// the functions, with docs looked up in docs (key: import path, then
// .Type, then .Field or .Method); Load passes the generated table.
func Build(funcs []eval.Function, docs map[string]string) *Reference {
	b := &builder{seen: map[reflect.Type]bool{}}
	type rooted struct {
		list *[]Root
		i    int
		t    reflect.Type
	}
	var roots []rooted
	ref := &Reference{}
	for _, a := range actions.All() {
		if !a.DynamicResult {
			roots = append(roots, rooted{&ref.Actions, len(ref.Actions), a.Result})
		}
		ref.Actions = append(ref.Actions, Root{Kind: "action", Name: a.Name, Doc: a.Doc})
	}
	for _, p := range parse.All {
		roots = append(roots, rooted{&ref.Parsers, len(ref.Parsers), p.Result})
		ref.Parsers = append(ref.Parsers, Root{Kind: "parser", Name: p.Kind, Func: p.Func, Doc: p.Doc})
	}
	for _, f := range funcs {
		if strings.HasPrefix(f.Name, "parse") {
			continue // the parsers, above
		}
		ft := reflect.TypeOf(f.Types[0]).Elem()
		if ft.NumOut() > 0 && named(deref(ft.Out(0))) {
			roots = append(roots, rooted{&ref.Functions, len(ref.Functions), ft.Out(0)})
			ref.Functions = append(ref.Functions, Root{Kind: "function", Name: f.Name, Doc: f.Doc})
		}
	}
	for _, r := range roots {
		b.walk(r.t)
	}
	b.nameTypes()
	for _, r := range roots {
		(*r.list)[r.i].Type = b.typeName(r.t)
	}
	ref.byName = map[string]*Type{}
	for _, t := range b.order {
		rt := &Type{Name: b.names[t], goType: t, Doc: docs[key(t, "")]}
		if t.Kind() == reflect.Struct {
			rt.Kind = "object"
			for _, f := range eval.ExprFieldList(t) {
				rt.Fields = append(rt.Fields, Field{Name: f.Name, Type: b.typeName(f.Type), Null: nullable(f.Owner, f.GoName),
					Doc: docs[key(f.Owner, f.GoName)]})
			}
		} else {
			rt.Kind = b.typeName(reflect.SliceOf(t.Elem()))
		}
		for _, m := range methods(t) {
			rt.Methods = append(rt.Methods, Method{Name: m.Name, Sig: b.signature(m.Type), Doc: methodDoc(docs, t, m.Name)})
		}
		ref.Types = append(ref.Types, rt)
		ref.byName[rt.Name] = rt
	}
	sort.Slice(ref.Types, func(i, j int) bool { return ref.Types[i].Name < ref.Types[j].Name })
	return ref
}

// Load builds the reference with the docs extracted from the source.
func Load(funcs []eval.Function) *Reference { return Build(funcs, docs) }

// Type returns the type named name.
func (r *Reference) Type(name string) (*Type, bool) {
	t, ok := r.byName[name]
	return t, ok
}

type builder struct {
	seen  map[reflect.Type]bool
	order []reflect.Type
	names map[reflect.Type]string
}

var timeType, durationType = reflect.TypeOf(time.Time{}), reflect.TypeOf(time.Duration(0))

// nullable is whether field name of struct owner can hold null: a pointer,
// or a field tagged nullable:"true".
func nullable(owner reflect.Type, name string) bool {
	f, _ := owner.FieldByName(name)
	return f.Type.Kind() == reflect.Pointer || f.Tag.Get("nullable") == "true"
}

func deref(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

// named is whether t is a type of its own in the reference: a named struct,
// or a named list type (which may have methods).
func named(t reflect.Type) bool {
	if t.Name() == "" || t == timeType {
		return false
	}
	return t.Kind() == reflect.Struct || t.Kind() == reflect.Slice
}

// walk collects the named types reachable from t, in the order met.
func (b *builder) walk(t reflect.Type) {
	t = deref(t)
	switch t.Kind() {
	case reflect.Slice, reflect.Array, reflect.Map:
		if named(t) && !b.seen[t] {
			b.seen[t] = true
			b.order = append(b.order, t)
			for _, m := range methods(t) {
				b.walkFunc(m.Type)
			}
		}
		b.walk(t.Elem())
	case reflect.Struct:
		if !named(t) || b.seen[t] {
			return
		}
		b.seen[t] = true
		b.order = append(b.order, t)
		for _, f := range eval.ExprFieldList(t) {
			b.walk(f.Type)
		}
		for _, m := range methods(t) {
			b.walkFunc(m.Type)
		}
	}
}

func (b *builder) walkFunc(ft reflect.Type) {
	for i := 1; i < ft.NumIn(); i++ {
		b.walk(ft.In(i))
	}
	for i := 0; i < ft.NumOut(); i++ {
		b.walk(ft.Out(i))
	}
}

// nameTypes gives each type its short name, qualified by its package
// where two packages have a type of that name.
func (b *builder) nameTypes() {
	count := map[string]int{}
	for _, t := range b.order {
		count[t.Name()]++
	}
	b.names = map[reflect.Type]string{}
	for _, t := range b.order {
		n := t.Name()
		if count[n] > 1 {
			p := t.PkgPath()
			n = p[strings.LastIndexByte(p, '/')+1:] + "." + n
		}
		b.names[t] = n
	}
}

// typeName renders a type the way playbook authors read it. A pointer at
// the top is left to the caller (a field's Null, a method's result); one
// inside a list or map is "(X or null)".
func (b *builder) typeName(t reflect.Type) string {
	t = deref(t)
	if n, ok := b.names[t]; ok {
		return n
	}
	switch {
	case t == timeType:
		return "time"
	case t == durationType:
		return "duration"
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		return "list of " + b.elemName(t.Elem())
	case reflect.Map:
		return "map of " + b.elemName(t.Elem())
	case reflect.Interface:
		return "any"
	case reflect.Struct:
		return "object"
	}
	return t.Kind().String()
}

// elemName is typeName of a list's or map's element, "(X or null)" when
// it is a pointer.
func (b *builder) elemName(t reflect.Type) string {
	if t.Kind() == reflect.Pointer {
		return "(" + b.typeName(t) + " or null)"
	}
	return b.typeName(t)
}

// resultName is typeName of a method's parameter or result: "X or null"
// for a pointer, which a method returns when it finds nothing.
func (b *builder) resultName(t reflect.Type) string {
	if t.Kind() == reflect.Pointer {
		return b.typeName(t) + " or null"
	}
	return b.typeName(t)
}

// signature renders a method's parameters and result, without the
// receiver and the error result expressions never see.
func (b *builder) signature(ft reflect.Type) string {
	var in, out []string
	for i := 1; i < ft.NumIn(); i++ {
		in = append(in, b.resultName(ft.In(i)))
	}
	for i := 0; i < ft.NumOut(); i++ {
		if ft.Out(i).String() != "error" {
			out = append(out, b.resultName(ft.Out(i)))
		}
	}
	s := "(" + strings.Join(in, ", ") + ")"
	switch len(out) {
	case 0:
		return s
	case 1:
		return s + " " + out[0]
	}
	return s + " (" + strings.Join(out, ", ") + ")"
}

// methods lists what an expression can call on a value of t: the methods
// eval's field check accepts (eval.MethodNames).
func methods(t reflect.Type) []reflect.Method {
	pt := reflect.PointerTo(t)
	var out []reflect.Method
	for _, n := range eval.MethodNames(t) {
		m, _ := pt.MethodByName(n)
		out = append(out, m)
	}
	return out
}

// key is the docs table's key of type t, or of its field or method name.
// methodDoc is the doc of t's method name: its own, or that of the
// embedded struct it is promoted from (a capture's result has its
// monitor's DropsTo).
func methodDoc(docs map[string]string, t reflect.Type, name string) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if d := docs[key(t, name)]; d != "" || t.Kind() != reflect.Struct {
		return d
	}
	for i := 0; i < t.NumField(); i++ {
		if f := t.Field(i); f.Anonymous {
			if d := methodDoc(docs, f.Type, name); d != "" {
				return d
			}
		}
	}
	return ""
}

func key(t reflect.Type, name string) string {
	k := t.PkgPath() + "." + t.Name()
	if name != "" {
		k += "." + name
	}
	return k
}

// String renders a type for `labrun types`.
func (t *Type) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s (%s)", t.Name, t.Kind)
	if t.Doc != "" {
		fmt.Fprintf(&b, "\n  %s", t.Doc)
	}
	if len(t.Fields) > 0 {
		b.WriteString("\n  fields:")
		w := 0
		for _, f := range t.Fields {
			w = max(w, len(f.Name))
		}
		for _, f := range t.Fields {
			fmt.Fprintf(&b, "\n    %-*s  %s", w, f.Name, f.TypeText())
			if f.Doc != "" {
				fmt.Fprintf(&b, "\n    %-*s  %s", w, "", f.Doc)
			}
		}
	}
	if len(t.Methods) > 0 {
		b.WriteString("\n  methods:")
		for _, m := range t.Methods {
			fmt.Fprintf(&b, "\n    %s%s", m.Name, m.Sig)
			if m.Doc != "" {
				fmt.Fprintf(&b, "\n        %s", m.Doc)
			}
		}
	}
	return b.String()
}

// Lookup finds what name names: a type, an action, a parser (by kind or
// expression function) or a function, and returns the type it stands for
// ("" for compute's, whose fields its spec names) and what it is.
func (r *Reference) Lookup(name string) (root *Root, typ *Type, ok bool) {
	if t, ok := r.byName[name]; ok {
		return nil, t, true
	}
	for _, list := range [][]Root{r.Actions, r.Parsers, r.Functions} {
		for i := range list {
			if list[i].Name == name || (list[i].Func != "" && list[i].Func == name) {
				return &list[i], r.byName[list[i].Type], true
			}
		}
	}
	return nil, nil, false
}

// Names lists every name Lookup knows, for suggestions.
func (r *Reference) Names() []string {
	var out []string
	for _, list := range [][]Root{r.Actions, r.Parsers, r.Functions} {
		for _, x := range list {
			out = append(out, x.Name)
			if x.Func != "" {
				out = append(out, x.Func)
			}
		}
	}
	for _, t := range r.Types {
		out = append(out, t.Name)
	}
	return out
}

// Closure is t followed by every type of the reference its fields and
// methods lead to, each once, in the order met: all one needs to read a
// value of type t.
func (r *Reference) Closure(t *Type) []*Type {
	out := []*Type{t}
	seen := map[*Type]bool{t: true}
	for i := 0; i < len(out); i++ {
		var refs []string
		for _, f := range out[i].Fields {
			refs = append(refs, f.Type)
		}
		for _, m := range out[i].Methods {
			refs = append(refs, m.Sig)
		}
		refs = append(refs, out[i].Kind)
		for _, s := range refs {
			for _, w := range strings.FieldsFunc(s, func(c rune) bool { return strings.ContainsRune("() ,", c) }) {
				if u, ok := r.byName[w]; ok && !seen[u] {
					seen[u] = true
					out = append(out, u)
				}
			}
		}
	}
	return out
}
