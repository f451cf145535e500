package actions

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/labrun/labrun/internal/lang/diag"
	"github.com/labrun/labrun/internal/lang/eval"
	"github.com/labrun/labrun/internal/lang/keypath"
	"github.com/labrun/labrun/internal/lang/schemacheck"
	"gopkg.in/yaml.v3"
)

// The paths of a write step's loose and hints keys: checked against the
// file's schema, or the json as written, when the playbook is validated,
// and against the file as rendered when the step runs and no schema or
// literal could tell.

// checkKeyPaths checks every loose and hints path of a write spec at its
// place in the playbook.
func checkKeyPaths(spec *eval.Value, sc *StaticContext) diag.List {
	var errs diag.List
	type entry struct {
		key, path string
		pos       diag.Pos
	}
	var entries []entry
	if l := spec.Lookup("loose"); l != nil {
		switch {
		case l.Node.Kind == yaml.SequenceNode:
			for _, item := range l.Items() {
				lit, ok := item.Literal()
				s, isString := lit.(string)
				if !ok || !isString {
					errs.Add(item.Pos, "loose item must be a path written out (seconds, after.identity, pods[*].ip)")
					continue
				}
				entries = append(entries, entry{"loose", s, item.Pos})
			}
		case l.Node.Kind == yaml.MappingNode:
			for _, k := range l.Keys() {
				lit, ok := l.Lookup(k).Literal()
				if s, isString := lit.(string); !ok || !isString || strings.TrimSpace(s) == "" {
					errs.Add(l.Lookup(k).Pos, "loose %s: the reason must be written out, a sentence saying why the value may differ", k)
				}
				entries = append(entries, entry{"loose", k, l.KeyPos(k)})
			}
		default:
			errs.Add(l.Pos, "loose must be a list of paths, or a mapping of path: why the value may differ")
		}
	}
	if h := spec.Lookup("hints"); h != nil {
		for _, k := range h.Keys() {
			entries = append(entries, entry{"hints", k, h.KeyPos(k)})
		}
	}
	if len(entries) == 0 {
		return errs
	}
	var schema *schemacheck.Schema
	if s := spec.Lookup("schema"); s != nil {
		if lit, ok := s.Literal(); ok {
			path := fmt.Sprint(lit)
			if !filepath.IsAbs(path) {
				path = filepath.Join(sc.PlaybookDir, path)
			}
			schema, _ = schemacheck.Load(path) // a bad schema is reported by checkWrite
		}
	}
	for _, e := range entries {
		p, err := keypath.Parse(e.path)
		if err != nil {
			errs.Add(e.pos, "%s: %v", e.key, err)
			continue
		}
		switch {
		case spec.Lookup("text") != nil:
			errs.Add(e.pos, "%s %s: a text file is compared as a whole; loose and hints name keys of json or kv content", e.key, e.path)
		case spec.Lookup("kv") != nil:
			keys := spec.Lookup("kv").Keys()
			if len(p) != 1 || p[0].Item || !contains(keys, p[0].Key) {
				errs.Add(e.pos, "%s %s: kv content has no such key%s; its keys: %s", e.key, e.path, diag.DidYouMean(e.path, keys), strings.Join(keys, ", "))
			}
		case schema != nil:
			if !schema.Declares(p) {
				errs.Add(e.pos, "%s %s: the file's schema %s declares no such value", e.key, e.path, spec.Lookup("schema").Node.Value)
			}
		case spec.Lookup("json") != nil:
			if why := literalLacks(spec.Lookup("json"), p, nil); why != "" {
				errs.Add(e.pos, "%s %s: the json written has no such value: %s", e.key, e.path, why)
			}
		}
	}
	return errs
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// literalLacks says why the json value v, as written in the playbook, has
// no value at path p (at is the part of p already followed), or "" when it
// has one or an expression on the way leaves it to the file as rendered.
func literalLacks(v *eval.Value, p, at keypath.Path) string {
	if len(p) == 0 || v.WholeExpr() != nil {
		return ""
	}
	seg := p[0]
	switch v.Node.Kind {
	case yaml.MappingNode:
		if seg.Item {
			return fmt.Sprintf("%s is an object, not a list", show(at))
		}
		x := v.Lookup(seg.Key)
		if x == nil {
			return fmt.Sprintf("%s has no key %q%s; its keys: %s", show(at), seg.Key, diag.DidYouMean(seg.Key, v.Keys()), strings.Join(v.Keys(), ", "))
		}
		return literalLacks(x, p[1:], at.Key(seg.Key))
	case yaml.SequenceNode:
		if !seg.Item {
			return fmt.Sprintf("%s is a list; write %s[*] for its items", show(at), show(at))
		}
		items := v.Items()
		return anyItemHas(len(items), func(i int) string { return literalLacks(items[i], p[1:], at.Index(-1)) })
	}
	if _, ok := v.Literal(); ok {
		return fmt.Sprintf("%s is a single value, not an object or a list", show(at))
	}
	return ""
}

// anyItemHas says why none of a list's n items has a value (lacks(i)
// says why item i does not), or "" when one has it or the list is empty:
// items of a list share a shape, and an empty list may have items another
// time.
func anyItemHas(n int, lacks func(i int) string) string {
	first := ""
	for i := 0; i < n; i++ {
		why := lacks(i)
		if why == "" {
			return ""
		}
		if first == "" {
			first = why
		}
	}
	return first
}

// renderedLacks says why the rendered value x (JSON data) has no value at
// path p, or "" when it has one. A [*] over an empty list, or a path
// through null, holds: the list may have items, and the null be an object,
// another time.
func renderedLacks(x any, p, at keypath.Path) string {
	if len(p) == 0 || x == nil {
		return ""
	}
	seg := p[0]
	switch v := x.(type) {
	case map[string]any:
		if seg.Item {
			return fmt.Sprintf("%s is an object, not a list", show(at))
		}
		y, ok := v[seg.Key]
		if !ok {
			keys := slices.Sorted(maps.Keys(v))
			return fmt.Sprintf("%s has no key %q%s; its keys: %s", show(at), seg.Key, diag.DidYouMean(seg.Key, keys), strings.Join(keys, ", "))
		}
		return renderedLacks(y, p[1:], at.Key(seg.Key))
	case []any:
		if !seg.Item {
			return fmt.Sprintf("%s is a list; write %s[*] for its items", show(at), show(at))
		}
		return anyItemHas(len(v), func(i int) string { return renderedLacks(v[i], p[1:], at.Index(-1)) })
	}
	return fmt.Sprintf("%s is %s, not an object or a list", show(at), jsonKind(x))
}
