package schemacheck

import (
	"encoding/json"
	"fmt"
	"math/big"
	"slices"
	"strconv"
	"strings"

	"github.com/labrun/labrun/internal/lang/diag"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// Problem is one way a value breaks the schema, at a JSON pointer into the
// value ("" for the whole value).
type Problem struct {
	Path string
	Msg  string
}

func (p Problem) String() string {
	if p.Path == "" {
		return p.Msg
	}
	return p.Path + ": " + p.Msg
}

// Problems words a validation error tree as a flat list, one problem per
// failed keyword, ordered by location. Keywords that only group others
// (allOf, $ref, the schema itself) give their causes; anyOf and oneOf,
// whose causes are alternatives, give one problem that names what each
// alternative wanted.
//
// doc is the instance that was validated; a wrong type is shown with its
// value ("is a string \"7\", expected integer").
func Problems(doc any, ve *jsonschema.ValidationError) []Problem {
	var out []Problem
	w := wording{doc: doc}
	w.collect(ve, &out)
	slices.SortStableFunc(out, func(a, b Problem) int {
		if c := strings.Compare(a.Path, b.Path); c != 0 {
			return c
		}
		return strings.Compare(a.Msg, b.Msg)
	})
	return slices.Compact(out)
}

// english renders the library's own words for the rare kinds worded here
// no better (content encoding, media type, $ref cycles).
var english = message.NewPrinter(language.English)

// wording words the errors found in one instance.
type wording struct{ doc any }

// collect words e and its causes into out. The keywords that group others
// or word their alternatives, or that place a problem at a key rather than
// at the value, are handled here; the rest fail at the value itself
// (messages).
func (w wording) collect(e *jsonschema.ValidationError, out *[]Problem) {
	path := pointer(e.InstanceLocation)
	switch k := e.ErrorKind.(type) {
	case *kind.Schema, *kind.Group, *kind.AllOf, *kind.Reference:
		for _, c := range e.Causes {
			w.collect(c, out)
		}
	case *kind.AdditionalProperties:
		for _, p := range k.Properties {
			*out = append(*out, Problem{Path: path + "/" + escape(p), Msg: "is not an allowed key"})
		}
	case *kind.PropertyNames:
		*out = append(*out, Problem{Path: pointer(w.objectWith(e.InstanceLocation, k.Property)), Msg: fmt.Sprintf("key %q: %s", k.Property, w.firstMsg(e.Causes))})
	case *kind.AnyOf:
		w.noneMatched(path, "matches none of the allowed forms (anyOf)", e.Causes, out)
	case *kind.OneOf:
		if len(k.Subschemas) > 1 {
			*out = append(*out, Problem{Path: path, Msg: fmt.Sprintf("matches forms %s of oneOf, expected exactly one", forms(k.Subschemas))})
		} else {
			w.noneMatched(path, "matches none of the forms of oneOf", e.Causes, out)
		}
	default:
		for _, msg := range w.messages(e) {
			*out = append(*out, Problem{Path: path, Msg: msg})
		}
	}
}

// messages words a keyword that fails at the value itself: one message per
// missing key, else one for the keyword.
func (w wording) messages(e *jsonschema.ValidationError) []string {
	var msgs []string
	switch k := e.ErrorKind.(type) {
	case *kind.Required:
		for _, m := range k.Missing {
			msgs = append(msgs, fmt.Sprintf("missing key %q", m))
		}
	case *kind.DependentRequired:
		for _, m := range k.Missing {
			msgs = append(msgs, fmt.Sprintf("has key %q, so expected key %q too", k.Prop, m))
		}
	case *kind.Dependency:
		for _, m := range k.Missing {
			msgs = append(msgs, fmt.Sprintf("has key %q, so expected key %q too", k.Prop, m))
		}
	default:
		if msg, ok := sizeMessage(k); ok {
			return []string{msg}
		}
		return []string{w.valueMessage(e)}
	}
	return msgs
}

// sizeMessage words the keywords that bound how many keys, items or
// characters a value has; ok is false for the others.
func sizeMessage(k jsonschema.ErrorKind) (msg string, ok bool) {
	switch k := k.(type) {
	case *kind.MinProperties:
		msg = fmt.Sprintf("has %d keys, expected at least %d", k.Got, k.Want)
	case *kind.MaxProperties:
		msg = fmt.Sprintf("has %d keys, expected at most %d", k.Got, k.Want)
	case *kind.MinItems:
		msg = fmt.Sprintf("has %d items, expected at least %d", k.Got, k.Want)
	case *kind.MaxItems:
		msg = fmt.Sprintf("has %d items, expected at most %d", k.Got, k.Want)
	case *kind.AdditionalItems:
		msg = fmt.Sprintf("has %d items more than the schema allows", k.Count)
	case *kind.UniqueItems:
		msg = fmt.Sprintf("items %d and %d are equal, expected unique items", k.Duplicates[0], k.Duplicates[1])
	case *kind.Contains:
		msg = "has no item that matches contains"
	case *kind.MinContains:
		msg = fmt.Sprintf("has %d items that match contains, expected at least %d", len(k.Got), k.Want)
	case *kind.MaxContains:
		msg = fmt.Sprintf("has %d items that match contains, expected at most %d", len(k.Got), k.Want)
	case *kind.MinLength:
		msg = fmt.Sprintf("is %d characters long, expected at least %d", k.Got, k.Want)
	case *kind.MaxLength:
		msg = fmt.Sprintf("is %d characters long, expected at most %d", k.Got, k.Want)
	default:
		return "", false
	}
	return msg, true
}

// valueMessage words the keywords about the value's type and contents,
// and in the library's words the kinds not worded here.
func (w wording) valueMessage(e *jsonschema.ValidationError) string {
	switch k := e.ErrorKind.(type) {
	case *kind.FalseSchema:
		return "no value is allowed here"
	case *kind.Type:
		return fmt.Sprintf("is %s, expected %s", w.found(e.InstanceLocation, k.Got), strings.Join(k.Want, " or "))
	case *kind.Enum:
		opts := make([]string, len(k.Want))
		for i, w := range k.Want {
			opts[i] = show(w)
		}
		return fmt.Sprintf("is %s, expected one of %s%s", show(k.Got), strings.Join(opts, ", "), didYouMean(k.Got, k.Want))
	case *kind.Const:
		return fmt.Sprintf("is %s, expected %s", show(k.Got), show(k.Want))
	case *kind.Format:
		return fmt.Sprintf("%s is not a valid %s: %v", show(k.Got), k.Want, k.Err)
	case *kind.Pattern:
		return fmt.Sprintf("%s does not match pattern %s", show(k.Got), k.Want)
	case *kind.Minimum:
		return fmt.Sprintf("is %s, expected at least %s", num(k.Got), num(k.Want))
	case *kind.Maximum:
		return fmt.Sprintf("is %s, expected at most %s", num(k.Got), num(k.Want))
	case *kind.ExclusiveMinimum:
		return fmt.Sprintf("is %s, expected more than %s", num(k.Got), num(k.Want))
	case *kind.ExclusiveMaximum:
		return fmt.Sprintf("is %s, expected less than %s", num(k.Got), num(k.Want))
	case *kind.MultipleOf:
		return fmt.Sprintf("is %s, expected a multiple of %s", num(k.Got), num(k.Want))
	case *kind.Not:
		return "matches a form that is not allowed (not)"
	default:
		return e.ErrorKind.LocalizedString(english)
	}
}

// firstMsg is the first problem of a subtree, without its location.
func (w wording) firstMsg(causes []*jsonschema.ValidationError) string {
	for _, c := range causes {
		var ps []Problem
		w.collect(c, &ps)
		if len(ps) > 0 {
			return ps[0].Msg
		}
	}
	return "not allowed"
}

// noneMatched words an anyOf or oneOf that no form matched. Forms whose
// type the value does not even have are left out when others remain: a
// string against [enum of strings, array] is about the enum. One form
// left gives its own problem; several give what each wanted, so the
// author of a oneOf with a const per form sees which came closest.
func (w wording) noneMatched(path, summary string, causes []*jsonschema.ValidationError, out *[]Problem) {
	var near, all []string
	var only []Problem
	for i, c := range causes {
		var ps []Problem
		w.collect(c, &ps)
		if len(ps) == 0 {
			continue
		}
		msg := ps[0].String()
		if ps[0].Path == path {
			msg = ps[0].Msg
		}
		part := fmt.Sprintf("form %d: %s", i+1, msg)
		all = append(all, part)
		if !wrongType(c, path) {
			near = append(near, part)
			only = ps[:1]
		}
	}
	switch {
	case len(near) == 1:
		*out = append(*out, only...)
		return
	case len(near) == 0:
		near = all
	}
	if len(near) == 0 {
		*out = append(*out, Problem{Path: path, Msg: summary})
		return
	}
	*out = append(*out, Problem{Path: path, Msg: summary + " (" + strings.Join(near, "; ") + ")"})
}

// wrongType reports whether a form failed on the type of the value at path
// itself.
func wrongType(e *jsonschema.ValidationError, path string) bool {
	if _, ok := e.ErrorKind.(*kind.Type); ok && pointer(e.InstanceLocation) == path {
		return true
	}
	for _, c := range e.Causes {
		if wrongType(c, path) {
			return true
		}
	}
	return false
}

// found names the type and value at a location: "a string \"7\"",
// "an array []", "null".
func (w wording) found(loc []string, typ string) string {
	v, ok := lookup(w.doc, loc)
	if !ok {
		return article(typ)
	}
	if n, ok := v.(json.Number); ok && !strings.ContainsAny(n.String(), ".eE") {
		typ = "integer" // the library says number for any json.Number
	}
	if typ == "null" {
		return "null"
	}
	return article(typ) + " " + show(v)
}

// objectWith corrects the location of a propertyNames error. v6.0.3 keeps
// the validator's location slice for it without a copy (validator.go:296),
// so a later sibling's name can overwrite its last tokens. The object is
// the one at that depth holding the key: the reported location when it
// does, else the only such object.
func (w wording) objectWith(loc []string, key string) []string {
	if v, ok := lookup(w.doc, loc); ok {
		if m, ok := v.(map[string]any); ok {
			if _, ok := m[key]; ok {
				return loc
			}
		}
	}
	var found [][]string
	var walk func(v any, at []string)
	walk = func(v any, at []string) {
		if len(at) == len(loc) {
			if m, ok := v.(map[string]any); ok {
				if _, ok := m[key]; ok {
					found = append(found, slices.Clone(at))
				}
			}
			return
		}
		switch d := v.(type) {
		case map[string]any:
			for k, c := range d {
				walk(c, append(at, k))
			}
		case []any:
			for i, c := range d {
				walk(c, append(at, strconv.Itoa(i)))
			}
		}
	}
	walk(w.doc, nil)
	if len(found) == 1 {
		return found[0]
	}
	return loc
}

func lookup(doc any, loc []string) (any, bool) {
	for _, t := range loc {
		switch d := doc.(type) {
		case map[string]any:
			v, ok := d[t]
			if !ok {
				return nil, false
			}
			doc = v
		case []any:
			i, err := strconv.Atoi(t)
			if err != nil || i < 0 || i >= len(d) {
				return nil, false
			}
			doc = d[i]
		default:
			return nil, false
		}
	}
	return doc, true
}

func article(typ string) string {
	switch typ {
	case "integer", "object", "array":
		return "an " + typ
	}
	return "a " + typ
}

func forms(idx []int) string {
	s := make([]string, len(idx))
	for i, n := range idx {
		s[i] = strconv.Itoa(n + 1)
	}
	return strings.Join(s, " and ")
}

// didYouMean suggests the closest of a list of strings for a string.
func didYouMean(got any, want []any) string {
	g, ok := got.(string)
	if !ok {
		return ""
	}
	var words []string
	for _, w := range want {
		if s, ok := w.(string); ok {
			words = append(words, s)
		}
	}
	return diag.DidYouMean(g, words)
}

// pointer renders an instance location as a JSON pointer.
func pointer(loc []string) string {
	var b strings.Builder
	for _, t := range loc {
		b.WriteString("/")
		b.WriteString(escape(t))
	}
	return b.String()
}

// escape and unescape turn a key into a JSON pointer token and back (RFC
// 6901). Their replacers are built once: schemas are walked key by key on
// every load, and building a replacer costs more than using it.
func escape(token string) string { return pointerEscaper.Replace(token) }

var pointerEscaper = strings.NewReplacer("~", "~0", "/", "~1")

// num prints a schema number as JSON would, 5 not 5/1.
func num(r *big.Rat) string {
	if r.IsInt() {
		return r.Num().String()
	}
	f, _ := r.Float64()
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// show prints a value as JSON, shortened for a one-line message.
func show(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	s := string(b)
	if len(s) > 60 {
		s = s[:57] + "..."
	}
	return s
}
