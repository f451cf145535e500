package parse

import (
	"reflect"
	"strings"
	"testing"
	"unicode"
)

func TestRegistry(t *testing.T) {
	kinds, funcs := map[string]bool{}, map[string]bool{}
	for _, p := range All {
		if p.Kind == "" || p.Func == "" || p.Doc == "" || p.Parse == nil || p.Result == nil || len(p.Commands) == 0 {
			t.Errorf("incomplete registry entry %+v", p)
			continue
		}
		if kinds[p.Kind] || funcs[p.Func] {
			t.Errorf("duplicate kind or func: %s / %s", p.Kind, p.Func)
		}
		kinds[p.Kind], funcs[p.Func] = true, true
		if !strings.HasPrefix(p.Func, "parse") || strings.ContainsAny(p.Func, "-_ ") {
			t.Errorf("%s: expr function name %q should be parseXxx", p.Kind, p.Func)
		}
		got, ok := Lookup(p.Kind)
		if !ok || got.Func != p.Func {
			t.Errorf("Lookup(%q) = %v, %v", p.Kind, got.Func, ok)
		}
		// Garbage input gives a *parse.Error naming this parser, and a nil
		// value, never a half-filled one. Empty input is fine for the
		// parsers whose empty output means "nothing" (ss, tc, iptables,
		// conntrack, bpftool link).
		v, err := p.Parse("\x00garbage: [ here\n{")
		if err == nil {
			t.Errorf("%s accepted garbage: %+v", p.Kind, v)
			continue
		}
		var pe *Error
		if !asError(err, &pe) || pe.Parser != p.Kind {
			t.Errorf("%s: error %v is not a *parse.Error for this kind", p.Kind, err)
		}
		if v != nil {
			t.Errorf("%s: non-nil value with error", p.Kind)
		}
	}
	if _, ok := Lookup("no-such-kind"); ok {
		t.Error("Lookup of an unknown kind succeeded")
	}
	// Every parser file of the brief has its kind.
	for _, k := range []string{"cilium-status", "cilium-service-list", "cilium-bpf-lb-list", "cilium-bpf-ct-list",
		"cilium-endpoint-get", "cilium-endpoint-list", "cilium-map-list", "cilium-config", "bpftool-net-show",
		"tc-filter-show", "iptables-save", "ss", "netstat", "curl-w"} {
		if !kinds[k] {
			t.Errorf("kind %s not registered", k)
		}
	}
}

// TestResultTags checks the API convention: every exported field of every
// result type (recursively) has json and expr tags, equal, in lowerCamel.
func TestResultTags(t *testing.T) {
	seen := map[reflect.Type]bool{}
	var walk func(reflect.Type, string)
	walk = func(typ reflect.Type, path string) {
		for typ.Kind() == reflect.Slice || typ.Kind() == reflect.Map || typ.Kind() == reflect.Pointer {
			typ = typ.Elem()
		}
		if typ.Kind() != reflect.Struct || seen[typ] {
			return
		}
		seen[typ] = true
		for i := 0; i < typ.NumField(); i++ {
			f := typ.Field(i)
			if !f.IsExported() {
				t.Errorf("%s.%s: unexported field in a result type (lost in JSON round trips)", path, f.Name)
				continue
			}
			js, ex := f.Tag.Get("json"), f.Tag.Get("expr")
			if f.Anonymous && js == "" && ex == "" {
				// an embedded struct without tags: its fields are the
				// result's own, in JSON and expressions alike
				walk(f.Type, path)
				continue
			}
			if js == "" || ex == "" || js != ex {
				t.Errorf("%s.%s: json %q and expr %q tags must both be set and equal", path, f.Name, js, ex)
			}
			if js != "" && (!unicode.IsLower(rune(js[0])) || strings.ContainsAny(js, "_-, ")) {
				t.Errorf("%s.%s: tag %q is not lowerCamel", path, f.Name, js)
			}
			if k := f.Type.Kind(); k == reflect.Uint || k == reflect.Uint64 || k == reflect.Int32 || k == reflect.Float32 {
				t.Errorf("%s.%s: numbers are int, int64 or float64, not %v", path, f.Name, k)
			}
			walk(f.Type, path+"."+f.Name)
		}
	}
	for _, p := range All {
		walk(p.Result, p.Result.String())
	}
	if len(seen) < 20 {
		t.Errorf("only %d struct types checked", len(seen))
	}
}

// Records names a slice field of the result, so that output can stream it.
func TestRegistryRecords(t *testing.T) {
	for _, p := range All {
		if p.Records == "" {
			continue
		}
		f, ok := p.Result.FieldByName(p.Records)
		if !ok || f.Type.Kind() != reflect.Slice {
			t.Errorf("%s: Records %q is not a slice field of %v", p.Kind, p.Records, p.Result)
		}
	}
}
