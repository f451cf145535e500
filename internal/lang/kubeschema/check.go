package kubeschema

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/labrun/labrun/internal/lang/diag"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// Problem is one way an object does not fit its kind's schema: at Path
// in the object, written at Pos (zero when the object was rendered at run
// time: the caller places it by its Path).
type Problem struct {
	Path Path
	Pos  diag.Pos
	Msg  string
}

func (p Problem) String() string {
	if len(p.Path) == 0 {
		return p.Msg
	}
	return p.Path.String() + ": " + p.Msg
}

// Options tune a check.
type Options struct {
	// Partial says the object is a part of one, applied under a field
	// manager of its own beside the manager that owns the rest: keys its
	// kind requires may be left out, since the API server checks the
	// object the parts make together.
	Partial bool
}

// Check checks an object (or each item of a List) against the schema of
// its kind. checked is false when it could not be: its apiVersion or
// kind is only known at run time, or it is of a kind the registry does
// not know (a CRD the cluster has and the playbook does not apply), which
// the API server checks when the object is sent.
func (r *Registry) Check(obj *Node, opts Options) (problems []Problem, checked bool) {
	if obj.Kind == Map {
		if items := obj.Lookup("items"); items != nil && items.Kind == List {
			// a List, which the apply takes item by item
			checked = true
			for i, it := range items.Items {
				ps, ok := r.Check(it, opts)
				for _, p := range ps {
					p.Path = append(Path{"items", i}, p.Path...)
					problems = append(problems, p)
				}
				checked = checked && ok
			}
			return problems, checked
		}
	}
	return r.checkObject(obj, opts)
}

func (r *Registry) checkObject(obj *Node, opts Options) ([]Problem, bool) {
	switch obj.Kind {
	case Computed:
		return nil, false
	case Scalar, List:
		return []Problem{{Pos: obj.Pos, Msg: "expected an object (a mapping with apiVersion, kind and metadata), got " + describe(obj)}}, true
	}
	var problems []Problem
	for _, key := range []string{"apiVersion", "kind"} {
		if obj.Lookup(key) == nil {
			problems = append(problems, Problem{Pos: obj.Pos, Msg: fmt.Sprintf("missing required key %q", key)})
		}
	}
	if meta := obj.Lookup("metadata"); meta == nil || meta.Kind == Map && meta.Lookup("name") == nil {
		p := Problem{Pos: obj.Pos, Msg: `missing required key "name"`, Path: Path{"metadata"}}
		if meta == nil {
			p.Path, p.Msg = nil, `missing required key "metadata" (with its name)`
		} else {
			p.Pos = meta.Pos
		}
		problems = append(problems, p)
	}
	apiVersion, avOK := obj.Lookup("apiVersion").text()
	kindName, kOK := obj.Lookup("kind").text()
	if !avOK || !kOK {
		// not known before the run, or missing (said above)
		return problems, len(problems) > 0
	}
	s, err := r.schema(apiVersion, kindName)
	switch {
	case errors.Is(err, errUnknownKind):
		if p, ok := r.unknownKind(obj, apiVersion, kindName); ok {
			return append(problems, p), true
		}
		return problems, len(problems) > 0
	case err != nil:
		return append(problems, Problem{Pos: obj.Pos, Msg: fmt.Sprintf("cannot check %s %s: %v", apiVersion, kindName, err)}), true
	}
	return append(problems, validate(s, obj, opts)...), true
}

// unknownKind words a kind an apiVersion the registry knows does not
// have; ok is false for an apiVersion it does not know (a CRD's).
func (r *Registry) unknownKind(obj *Node, apiVersion, kindName string) (Problem, bool) {
	kinds, known := r.kindsOf(apiVersion)
	if !known {
		return Problem{}, false
	}
	p := Problem{Pos: obj.Lookup("kind").Pos}
	if versions := r.versionsOf(kindName); len(versions) > 0 {
		p.Pos = obj.Lookup("apiVersion").Pos
		p.Msg = fmt.Sprintf("%s has no kind %s: it is served as %s", apiVersion, kindName, strings.Join(versions, ", "))
		return p, true
	}
	p.Msg = fmt.Sprintf("%s has no kind %q%s", apiVersion, kindName, diag.DidYouMean(kindName, kinds))
	return p, true
}

// validate checks obj with the library and words what it finds.
func validate(s *jsonschema.Schema, obj *Node, opts Options) []Problem {
	err := s.Validate(instance(obj))
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return []Problem{{Pos: obj.Pos, Msg: err.Error()}}
	}
	w := &wording{root: s, obj: obj, opts: opts}
	w.collect(ve)
	slices.SortStableFunc(w.out, func(a, b Problem) int {
		if c := comparePos(a.Pos, b.Pos); c != 0 {
			return c
		}
		return strings.Compare(a.String(), b.String())
	})
	return slices.CompactFunc(w.out, func(a, b Problem) bool { return a.Pos == b.Pos && a.String() == b.String() })
}

func comparePos(a, b diag.Pos) int {
	if a.Line != b.Line {
		return a.Line - b.Line
	}
	return a.Col - b.Col
}

// instance is the object as the library reads it. A value known only by
// its type stands in as a value of that type (a string "", a number
// 0.5, an empty list or object), whose own problems wording keeps only
// when they are about that type; one of no known type, and null (which
// server-side apply takes as "not set" for any field), as null, whose
// problems it drops.
func instance(n *Node) any {
	switch n.Kind {
	case Map:
		m := make(map[string]any, len(n.Keys))
		for i, k := range n.Keys {
			v := n.Vals[i]
			if v.Kind == Scalar && v.Value == nil {
				continue
			}
			m[k] = instance(v)
		}
		return m
	case List:
		l := make([]any, len(n.Items))
		for i, it := range n.Items {
			l[i] = instance(it)
		}
		return l
	case Computed:
		switch n.Type {
		case "string":
			return ""
		case "integer":
			return json.Number("0")
		case "number":
			return json.Number("0.5")
		case "boolean":
			return false
		case "array":
			return []any{}
		case "object":
			return map[string]any{}
		}
		return nil
	}
	switch v := n.Value.(type) {
	case int64:
		return json.Number(strconv.FormatInt(v, 10))
	case float64:
		return json.Number(strconv.FormatFloat(v, 'g', -1, 64))
	}
	return n.Value
}

// wording turns the library's errors into problems at the values of obj.
type wording struct {
	root *jsonschema.Schema
	obj  *Node
	opts Options
	out  []Problem
}

// english renders the library's own words for the kinds not worded here
// (none of which the converted schemas use).
var english = message.NewPrinter(language.English)

func (w *wording) collect(e *jsonschema.ValidationError) {
	switch e.ErrorKind.(type) {
	case *kind.Schema, *kind.Group, *kind.AllOf, *kind.Reference:
		for _, c := range e.Causes {
			w.collect(c)
		}
		return
	}
	n, path, inside := w.node(e.InstanceLocation)
	if inside || n == nil {
		return // a part of a value known only by its type, or no value
	}
	if n.Kind == Computed && n.Type == "" || n.Kind == Scalar && n.Value == nil {
		return
	}
	switch k := e.ErrorKind.(type) {
	case *kind.Type:
		if n.Kind == Computed && n.Type == "number" && slices.Contains(k.Want, "integer") {
			return // a float may be whole at run time
		}
		w.add(path, n.Pos, fmt.Sprintf("expected %s, got %s%s", words(k.Want), found(n), fix(n, k.Want)))
	case *kind.Required:
		if w.opts.Partial || n.Kind == Computed {
			return
		}
		for _, m := range k.Missing {
			w.add(path, n.Pos, fmt.Sprintf("missing required key %q", m))
		}
	case *kind.AdditionalProperties:
		names := propertyNames(schemaAt(w.root, e.InstanceLocation))
		for _, p := range k.Properties {
			msg := fmt.Sprintf("unknown key %q%s", p, diag.DidYouMean(p, names))
			if len(names) > 0 {
				msg += "; expected one of: " + strings.Join(names, ", ")
			}
			w.add(append(path, p), n.keyPos(p), msg)
		}
	default:
		if n.Kind == Computed {
			return
		}
		w.add(path, n.Pos, e.ErrorKind.LocalizedString(english))
	}
}

func (w *wording) add(path Path, pos diag.Pos, msg string) {
	w.out = append(w.out, Problem{Path: slices.Clone(path), Pos: pos, Msg: msg})
}

// node finds the value at an instance location, with its path; inside
// is true when the location is within a value known only by its type.
func (w *wording) node(loc []string) (n *Node, path Path, inside bool) {
	n = w.obj
	for _, tok := range loc {
		if n.Kind == Computed {
			return n, path, true
		}
		switch n.Kind {
		case Map:
			n = n.Lookup(tok)
			path = append(path, tok)
		case List:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(n.Items) {
				return nil, path, false
			}
			n = n.Items[i]
			path = append(path, i)
		default:
			return nil, path, false
		}
		if n == nil {
			return nil, path, false
		}
	}
	return n, path, false
}

// schemaAt follows an instance location through a compiled schema, for
// the keys an object there may have.
func schemaAt(s *jsonschema.Schema, loc []string) *jsonschema.Schema {
	s = deref(s)
	for _, tok := range loc {
		if s == nil {
			return nil
		}
		switch {
		case s.Properties[tok] != nil:
			s = s.Properties[tok]
		case s.Items2020 != nil:
			s = s.Items2020
		case s.Items != nil:
			s, _ = s.Items.(*jsonschema.Schema)
		default:
			ap, _ := s.AdditionalProperties.(*jsonschema.Schema)
			s = ap
		}
		s = deref(s)
	}
	return s
}

func deref(s *jsonschema.Schema) *jsonschema.Schema {
	for s != nil && s.Ref != nil {
		s = s.Ref
	}
	return s
}

func propertyNames(s *jsonschema.Schema) []string {
	if s == nil {
		return nil
	}
	return slices.Sorted(maps.Keys(s.Properties))
}

// typeWords name JSON types as a playbook's author knows them.
var typeWords = map[string]string{
	"integer": "int", "number": "number", "string": "string", "boolean": "bool",
	"array": "list", "object": "object", "null": "null",
}

func words(types []string) string {
	out := make([]string, len(types))
	for i, t := range types {
		out[i] = typeWords[t]
	}
	return strings.Join(out, " or ")
}

// found says what a value is: its type, and its value when written
// (`int 8080`), or the expression it comes from.
func found(n *Node) string {
	switch n.Kind {
	case Computed:
		if n.Src != "" {
			return fmt.Sprintf("%s (${{ %s }})", typeWords[n.Type], n.Src)
		}
		return typeWords[n.Type]
	case Scalar:
		if n.YAML11 {
			return fmt.Sprintf("%s %v (YAML 1.1, which manifests are read with, takes %s for %v)", typeWords[jsonType(n.Value)], n.Value, n.Text, n.Value)
		}
		if s, ok := n.Value.(string); ok {
			return "string " + strconv.Quote(s)
		}
		return fmt.Sprintf("%s %v", typeWords[jsonType(n.Value)], n.Value)
	case List:
		return "list"
	}
	return "object"
}

// fix says how to write a scalar where the API takes a string: one
// written in the file quoted, an expression's value made text with
// string(); nothing for a value rendered at run time, which may come
// from either.
func fix(n *Node, want []string) string {
	if !slices.Contains(want, "string") {
		return ""
	}
	switch {
	case n.Kind == Computed && n.Src != "" && n.Type != "array" && n.Type != "object":
		return fmt.Sprintf("; make it text with ${{ string(%s) }}", n.Src)
	case n.Kind == Scalar && n.Text != "":
		if _, isText := n.Value.(string); !isText && n.Value != nil {
			return fmt.Sprintf("; quote it: %q", n.Text)
		}
	}
	return ""
}

// describe names what a value is, for "expected an object".
func describe(n *Node) string {
	switch n.Kind {
	case List:
		return "a list"
	case Scalar:
		return found(n)
	}
	return "an object"
}

func jsonType(v any) string {
	switch v.(type) {
	case string:
		return "string"
	case int64:
		return "integer"
	case float64:
		return "number"
	case bool:
		return "boolean"
	}
	return "null"
}
