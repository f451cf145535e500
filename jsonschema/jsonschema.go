// Package jsonschema checks JSON values against the subset of JSON Schema
// (2020-12 vocabulary) that lab output files and labrun's own playbook
// schema need: types, properties, required, items, enums, patterns,
// numeric and size bounds, and references into the schema's own $defs. A
// schema that uses a keyword outside this subset is rejected when it is
// loaded, so a constraint is never silently ignored.
package jsonschema

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"regexp"
	"sort"
	"strings"
	"unicode/utf8"
)

// Schema is a compiled schema node.
type Schema struct {
	Types                []string
	Properties           map[string]*Schema
	PropertyOrder        []string
	Required             []string
	AdditionalProperties *Schema // nil: allowed; False: forbidden
	Items                *Schema
	MinItems, MaxItems   *int
	UniqueItems          bool
	Enum                 []any
	Const                any
	HasConst             bool
	Pattern              *regexp.Regexp
	MinLength, MaxLength *int
	Minimum, Maximum     *float64
	ExclusiveMinimum     *float64
	ExclusiveMaximum     *float64
	AnyOf, OneOf, AllOf  []*Schema
	Not                  *Schema
	Ref                  *Schema // $ref to one of the root's $defs
	PropertyNames        *Schema
	MinProperties        *int
	MaxProperties        *int
	False                bool // the schema `false`: nothing is valid
	Description          string
}

var annotations = map[string]bool{
	"$schema": true, "$id": true, "$comment": true, "title": true, "description": true,
	"examples": true, "default": true, "format": true, "markdownDescription": true,
	"deprecated": true, "readOnly": true, "writeOnly": true, "$defs": true,
}

// Load reads and compiles a schema file.
func Load(path string) (*Schema, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	s, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// Parse compiles a schema from JSON text.
func Parse(data []byte) (*Schema, error) {
	var raw any
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.UseNumber()
	if err := dec.Decode(&raw); err != nil {
		return nil, fmt.Errorf("not valid JSON: %v", err)
	}
	l := &loader{defs: map[string]*Schema{}}
	if root, ok := raw.(map[string]any); ok {
		l.rawDefs, _ = root["$defs"].(map[string]any)
	}
	return l.compile(raw, "#")
}

// loader compiles one schema document; refs to the same definition share
// one compiled node, which also lets definitions refer to themselves.
type loader struct {
	rawDefs map[string]any
	defs    map[string]*Schema
}

func (l *loader) compile(raw any, at string) (*Schema, error) {
	s := &Schema{}
	return s, l.fill(s, raw, at)
}

// fill compiles raw into s.
func (l *loader) fill(s *Schema, raw any, at string) error {
	switch r := raw.(type) {
	case bool:
		s.False = !r
		return nil
	case map[string]any:
		return l.compileObject(s, r, at)
	}
	return fmt.Errorf("%s: a schema must be an object or a boolean", at)
}

// ref resolves "#/$defs/NAME", compiling the definition on first use.
func (l *loader) ref(v any, where string) (*Schema, error) {
	ref, _ := v.(string)
	name, ok := strings.CutPrefix(ref, "#/$defs/")
	if !ok {
		return nil, fmt.Errorf("%s: only references to the schema's own $defs (#/$defs/NAME) are supported, found %s", where, show(v))
	}
	if s, ok := l.defs[name]; ok {
		return s, nil
	}
	raw, ok := l.rawDefs[name]
	if !ok {
		return nil, fmt.Errorf("%s: no definition %q in $defs", where, name)
	}
	s := &Schema{}
	l.defs[name] = s // before compiling: the definition may refer to itself
	return s, l.fill(s, raw, "#/$defs/"+name)
}

func (l *loader) compileObject(s *Schema, m map[string]any, at string) error {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var err error
	for _, k := range keys {
		v := m[k]
		where := at + "/" + k
		switch k {
		case "type":
			switch t := v.(type) {
			case string:
				s.Types = []string{t}
			case []any:
				for _, x := range t {
					str, ok := x.(string)
					if !ok {
						return fmt.Errorf("%s: type names must be strings", where)
					}
					s.Types = append(s.Types, str)
				}
			default:
				return fmt.Errorf("%s: must be a string or a list of strings", where)
			}
			for _, t := range s.Types {
				switch t {
				case "object", "array", "string", "number", "integer", "boolean", "null":
				default:
					return fmt.Errorf("%s: unknown type %q", where, t)
				}
			}
		case "properties":
			props, ok := v.(map[string]any)
			if !ok {
				return fmt.Errorf("%s: must be an object", where)
			}
			s.Properties = map[string]*Schema{}
			for name, p := range props {
				if s.Properties[name], err = l.compile(p, where+"/"+name); err != nil {
					return err
				}
				s.PropertyOrder = append(s.PropertyOrder, name)
			}
			sort.Strings(s.PropertyOrder)
		case "required":
			list, ok := v.([]any)
			if !ok {
				return fmt.Errorf("%s: must be a list of names", where)
			}
			for _, x := range list {
				name, ok := x.(string)
				if !ok {
					return fmt.Errorf("%s: must be a list of names", where)
				}
				s.Required = append(s.Required, name)
			}
		case "additionalProperties":
			if s.AdditionalProperties, err = l.compile(v, where); err != nil {
				return err
			}
		case "items":
			if s.Items, err = l.compile(v, where); err != nil {
				return err
			}
		case "minItems", "maxItems", "minLength", "maxLength":
			n, err := wholeNumber(v, where)
			if err != nil {
				return err
			}
			switch k {
			case "minItems":
				s.MinItems = &n
			case "maxItems":
				s.MaxItems = &n
			case "minLength":
				s.MinLength = &n
			case "maxLength":
				s.MaxLength = &n
			}
		case "uniqueItems":
			b, ok := v.(bool)
			if !ok {
				return fmt.Errorf("%s: must be a boolean", where)
			}
			s.UniqueItems = b
		case "enum":
			list, ok := v.([]any)
			if !ok {
				return fmt.Errorf("%s: must be a list", where)
			}
			s.Enum = list
		case "const":
			s.Const, s.HasConst = v, true
		case "pattern":
			p, ok := v.(string)
			if !ok {
				return fmt.Errorf("%s: must be a string", where)
			}
			if s.Pattern, err = regexp.Compile(p); err != nil {
				return fmt.Errorf("%s: %v", where, err)
			}
		case "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum":
			f, err := number(v, where)
			if err != nil {
				return err
			}
			switch k {
			case "minimum":
				s.Minimum = &f
			case "maximum":
				s.Maximum = &f
			case "exclusiveMinimum":
				s.ExclusiveMinimum = &f
			case "exclusiveMaximum":
				s.ExclusiveMaximum = &f
			}
		case "anyOf", "oneOf", "allOf":
			list, ok := v.([]any)
			if !ok || len(list) == 0 {
				return fmt.Errorf("%s: must be a non-empty list of schemas", where)
			}
			var subs []*Schema
			for i, x := range list {
				sub, err := l.compile(x, fmt.Sprintf("%s/%d", where, i))
				if err != nil {
					return err
				}
				subs = append(subs, sub)
			}
			switch k {
			case "anyOf":
				s.AnyOf = subs
			case "oneOf":
				s.OneOf = subs
			case "allOf":
				s.AllOf = subs
			}
		case "not":
			if s.Not, err = l.compile(v, where); err != nil {
				return err
			}
		case "$ref":
			if s.Ref, err = l.ref(v, where); err != nil {
				return err
			}
		case "propertyNames":
			if s.PropertyNames, err = l.compile(v, where); err != nil {
				return err
			}
		case "minProperties", "maxProperties":
			n, err := wholeNumber(v, where)
			if err != nil {
				return err
			}
			if k == "minProperties" {
				s.MinProperties = &n
			} else {
				s.MaxProperties = &n
			}
		default:
			if annotations[k] {
				if k == "description" {
					s.Description, _ = v.(string)
				}
				continue
			}
			return fmt.Errorf("%s: keyword %q is not supported by labrun's schema checker", where, k)
		}
	}
	return nil
}

func number(v any, where string) (float64, error) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, fmt.Errorf("%s: must be a number", where)
	}
	return n.Float64()
}

func wholeNumber(v any, where string) (int, error) {
	f, err := number(v, where)
	if err != nil || f < 0 || f != math.Trunc(f) {
		return 0, fmt.Errorf("%s: must be a whole number from 0 up", where)
	}
	return int(f), nil
}

// Problem is one way a value breaks the schema, at a JSON pointer path.
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

// Validate checks a value decoded from JSON (numbers may be float64,
// json.Number or Go ints) and returns every problem.
func (s *Schema) Validate(v any) []Problem {
	var out []Problem
	s.validate(normalize(v), "", &out)
	return out
}

// normalize turns Go values into JSON's data model by a JSON round trip,
// so ordered maps and typed results validate like the file they become.
func normalize(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return v
	}
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.UseNumber()
	var out any
	if err := dec.Decode(&out); err != nil {
		return v
	}
	return out
}

func jsonType(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case json.Number:
		if f, err := x.Float64(); err == nil && f == math.Trunc(f) && !strings.ContainsAny(x.String(), ".eE") {
			return "integer"
		}
		return "number"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

func (s *Schema) validate(v any, path string, out *[]Problem) {
	add := func(format string, args ...any) {
		*out = append(*out, Problem{Path: path, Msg: fmt.Sprintf(format, args...)})
	}
	if s.False {
		add("no value is allowed here")
		return
	}
	t := jsonType(v)
	if len(s.Types) > 0 {
		ok := false
		for _, want := range s.Types {
			if want == t || (want == "number" && t == "integer") {
				ok = true
			}
		}
		if !ok {
			add("is %s, expected %s", strings.TrimSpace(article(t)+" "+show(v)), strings.Join(s.Types, " or "))
			return
		}
	}
	if s.HasConst && !equal(v, s.Const) {
		add("is %s, expected %s", show(v), show(s.Const))
	}
	if len(s.Enum) > 0 {
		found := false
		for _, e := range s.Enum {
			if equal(v, e) {
				found = true
			}
		}
		if !found {
			var opts []string
			for _, e := range s.Enum {
				opts = append(opts, show(e))
			}
			add("is %s, expected one of %s", show(v), strings.Join(opts, ", "))
		}
	}
	if s.Ref != nil {
		s.Ref.validate(v, path, out)
	}
	switch x := v.(type) {
	case map[string]any:
		if s.MinProperties != nil && len(x) < *s.MinProperties {
			add("has %d keys, expected at least %d", len(x), *s.MinProperties)
		}
		if s.MaxProperties != nil && len(x) > *s.MaxProperties {
			add("has %d keys, expected at most %d", len(x), *s.MaxProperties)
		}
		if s.PropertyNames != nil {
			names := make([]string, 0, len(x))
			for k := range x {
				names = append(names, k)
			}
			sort.Strings(names)
			for _, k := range names {
				var probs []Problem
				s.PropertyNames.validate(k, path, &probs)
				if len(probs) > 0 {
					add("key %q: %s", k, probs[0].Msg)
				}
			}
		}
		for _, name := range s.Required {
			if _, ok := x[name]; !ok {
				add("missing key %q", name)
			}
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if p, ok := s.Properties[k]; ok {
				p.validate(x[k], path+"/"+k, out)
			} else if s.AdditionalProperties != nil {
				if s.AdditionalProperties.False {
					*out = append(*out, Problem{Path: path + "/" + k, Msg: "is not an allowed key"})
				} else {
					s.AdditionalProperties.validate(x[k], path+"/"+k, out)
				}
			}
		}
	case []any:
		if s.MinItems != nil && len(x) < *s.MinItems {
			add("has %d items, expected at least %d", len(x), *s.MinItems)
		}
		if s.MaxItems != nil && len(x) > *s.MaxItems {
			add("has %d items, expected at most %d", len(x), *s.MaxItems)
		}
		if s.UniqueItems {
			for i := range x {
				for j := 0; j < i; j++ {
					if equal(x[i], x[j]) {
						add("items %d and %d are equal, expected unique items", j, i)
					}
				}
			}
		}
		if s.Items != nil {
			for i, item := range x {
				s.Items.validate(item, fmt.Sprintf("%s/%d", path, i), out)
			}
		}
	case string:
		n := utf8.RuneCountInString(x)
		if s.MinLength != nil && n < *s.MinLength {
			add("is %d characters long, expected at least %d", n, *s.MinLength)
		}
		if s.MaxLength != nil && n > *s.MaxLength {
			add("is %d characters long, expected at most %d", n, *s.MaxLength)
		}
		if s.Pattern != nil && !s.Pattern.MatchString(x) {
			add("%s does not match pattern %s", show(x), s.Pattern)
		}
	case json.Number:
		f, _ := x.Float64()
		if s.Minimum != nil && f < *s.Minimum {
			add("is %s, expected at least %v", x, *s.Minimum)
		}
		if s.Maximum != nil && f > *s.Maximum {
			add("is %s, expected at most %v", x, *s.Maximum)
		}
		if s.ExclusiveMinimum != nil && f <= *s.ExclusiveMinimum {
			add("is %s, expected more than %v", x, *s.ExclusiveMinimum)
		}
		if s.ExclusiveMaximum != nil && f >= *s.ExclusiveMaximum {
			add("is %s, expected less than %v", x, *s.ExclusiveMaximum)
		}
	}
	for _, sub := range s.AllOf {
		sub.validate(v, path, out)
	}
	if len(s.AnyOf) > 0 {
		ok := false
		for _, sub := range s.AnyOf {
			var tmp []Problem
			sub.validate(v, path, &tmp)
			if len(tmp) == 0 {
				ok = true
				break
			}
		}
		if !ok {
			add("matches none of the allowed forms (anyOf)")
		}
	}
	if len(s.OneOf) > 0 {
		n := 0
		for _, sub := range s.OneOf {
			var tmp []Problem
			sub.validate(v, path, &tmp)
			if len(tmp) == 0 {
				n++
			}
		}
		if n != 1 {
			add("matches %d of the forms in oneOf, expected exactly 1", n)
		}
	}
	if s.Not != nil {
		var tmp []Problem
		s.Not.validate(v, path, &tmp)
		if len(tmp) == 0 {
			add("matches a form that is not allowed (not)")
		}
	}
}

func article(t string) string {
	switch t {
	case "integer", "object", "array":
		return "an " + t
	case "null":
		return ""
	}
	return "a " + t
}

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

func equal(a, b any) bool {
	na, nb := normalize(a), normalize(b)
	if x, ok := na.(json.Number); ok {
		if y, ok := nb.(json.Number); ok {
			fx, _ := x.Float64()
			fy, _ := y.Float64()
			return fx == fy
		}
		return false
	}
	ja, _ := json.Marshal(na)
	jb, _ := json.Marshal(nb)
	return string(ja) == string(jb)
}
