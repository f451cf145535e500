// Package fields reads which YAML keys a struct accepts from its tags:
// yaml:"key" names a key, required:"true" makes it required, doc:"..." says
// what it is for. The playbook loader, the spec checker and decoder,
// `labrun actions` and the JSON Schema generator all read keys through Of,
// so they cannot disagree about which keys exist or which are required.
package fields

import (
	"reflect"
	"strings"
	"sync"
)

// Field is one key of a struct.
type Field struct {
	Key      string
	Index    []int // path through embedded structs, for reflect.Value.FieldByIndex
	Type     reflect.Type
	Required bool
	Doc      string
}

// Of lists the keys of struct type t in declaration order. The fields of
// an embedded struct count as the outer struct's own, so specs can share
// groups of keys (a pod target, say); unexported fields and fields tagged
// yaml:"-" or without a yaml tag are not keys. The list is made once per
// type (every step is decoded with it) and shared: callers must not change
// it.
func Of(t reflect.Type) []Field {
	if v, ok := cache.Load(t); ok {
		return v.([]Field)
	}
	out := read(t)
	cache.Store(t, out)
	return out
}

var cache sync.Map // reflect.Type -> []Field

func read(t reflect.Type) []Field {
	var out []Field
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if f.Anonymous && f.Type.Kind() == reflect.Struct {
			for _, inner := range read(f.Type) {
				inner.Index = append([]int{i}, inner.Index...)
				out = append(out, inner)
			}
			continue
		}
		key := strings.Split(f.Tag.Get("yaml"), ",")[0]
		if key == "" || key == "-" || !f.IsExported() {
			continue
		}
		out = append(out, Field{Key: key, Index: []int{i}, Type: f.Type, Required: f.Tag.Get("required") == "true", Doc: f.Tag.Get("doc")})
	}
	return out
}

// Keys returns the keys of t in declaration order, for messages and
// "did you mean" suggestions.
func Keys(t reflect.Type) []string {
	fs := Of(t)
	keys := make([]string, len(fs))
	for i, f := range fs {
		keys[i] = f.Key
	}
	return keys
}
