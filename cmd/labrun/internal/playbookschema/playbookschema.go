// Package playbookschema generates the JSON Schema of playbook files from
// the Go types that the loader and the actions decode into. Editors use it
// for completion and early errors; since it is generated, it says exactly
// what `labrun validate` accepts, key for key.
package playbookschema

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"time"

	"github.com/labrun/labrun/actions"
	"github.com/labrun/labrun/internal/lang/eval"
	"github.com/labrun/labrun/internal/lang/fields"
	"github.com/labrun/labrun/internal/lang/syntax"
)

// obj is a JSON object with keys in insertion order, so the generated file
// is stable and reads top-down.
type obj struct {
	keys []string
	vals map[string]any
}

func newObj(kv ...any) *obj {
	o := &obj{vals: map[string]any{}}
	for i := 0; i+1 < len(kv); i += 2 {
		o.set(kv[i].(string), kv[i+1])
	}
	return o
}

func (o *obj) set(k string, v any) *obj {
	if _, ok := o.vals[k]; !ok {
		o.keys = append(o.keys, k)
	}
	o.vals[k] = v
	return o
}

func (o *obj) MarshalJSON() ([]byte, error) {
	m := eval.NewMap()
	for _, k := range o.keys {
		m.Set(k, o.vals[k])
	}
	return m.MarshalJSON()
}

// SchemaURL is the schema's $id: the file as main of labrun's repository
// holds it, for a lab repository that would rather point at it than
// install a copy (labrun schema --install; docs/commands.md, "Editor schema").
const SchemaURL = "https://raw.githubusercontent.com/labrun/labrun/main/schemas/playbook.schema.json"

const idPattern = `^[A-Za-z_][A-Za-z0-9_]*$`

// Generate returns the playbook schema as indented JSON.
func Generate() ([]byte, error) {
	defs := newObj(
		"template", newObj("type", "string", "pattern", `^\s*\$\{\{[\s\S]*\}\}\s*$`, "description", "A ${{ expression }} whose value fills this field."),
		"duration", newObj("anyOf", []any{
			newObj("type", "string", "pattern", `^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$`),
			newObj("type", "number", "exclusiveMinimum", 0),
		}, "description", "A duration such as 500ms, 30s or 2m, or a number of seconds."),
		"assertion", assertionSchema(),
		"step", stepSchema(),
	)
	for _, a := range actions.All() {
		s := specSchema(a.Spec)
		if a.Spec.Kind() == reflect.Map {
			// a spec of free names (compute) is a mapping, not a template
			s = newObj("type", "object", "propertyNames", newObj("pattern", idPattern), "additionalProperties", specSchema(a.Spec.Elem()))
		}
		s.set("description", a.Doc)
		defs.set("action."+a.Name, s)
	}
	root := newObj(
		"$schema", "https://json-schema.org/draft/2020-12/schema",
		"$id", SchemaURL,
		"title", "labrun playbook",
		"description", "A lab as variables and ordered steps; see labrun's README.",
	)
	props, required := structProps(reflect.TypeOf(syntax.Playbook{}), func(key, doc string) any {
		switch key {
		case "vars":
			return newObj("type", "object", "propertyNames", newObj("pattern", idPattern), "description", doc)
		case "define":
			return newObj("type", "object", "propertyNames", newObj("pattern", idPattern), "additionalProperties", newObj("type", "string"), "description", doc)
		case "tasks":
			return newObj("type", "object", "minProperties", 1, "propertyNames", newObj("pattern", idPattern),
				"additionalProperties", newObj("type", "string", "pattern", `\S`), "description", doc)
		case "steps", "finally":
			s := newObj("type", "array", "items", newObj("$ref", "#/$defs/step"), "description", doc)
			if key == "steps" {
				s.set("minItems", 1)
			}
			return s
		}
		return nil
	})
	root.set("type", "object")
	root.set("required", required)
	root.set("additionalProperties", false)
	root.set("properties", props)
	root.set("$defs", defs)
	b, err := json.MarshalIndent(root, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// structProps builds properties and required keys from the keys the
// loader reads. fieldSchema gives the schema of keys that need more than
// their Go type says; it returns nil for the others, which are a string
// (syntax.Text) or a list of strings ([]syntax.Text, such as env and
// secret).
func structProps(t reflect.Type, fieldSchema func(key, doc string) any) (*obj, []string) {
	props := newObj()
	required := []string{}
	for _, f := range fields.Of(t) {
		s := fieldSchema(f.Key, f.Doc)
		if s == nil {
			s = newObj("type", "string", "description", f.Doc)
			if f.Type.Kind() == reflect.Slice {
				s = newObj("type", "array", "items", newObj("type", "string"), "description", f.Doc)
			}
		}
		props.set(f.Key, s)
		if f.Required {
			required = append(required, f.Key)
		}
	}
	return props, required
}

func assertionSchema() *obj {
	return conditionSchema(reflect.TypeOf(syntax.Assertion{}), "An expression that must be true.")
}

// conditionSchema is a condition written as an expression string or as a
// mapping of t's keys (that/message/hint).
func conditionSchema(t reflect.Type, doc string) *obj {
	props, required := structProps(t, func(key, doc string) any {
		return nil
	})
	return newObj("anyOf", []any{
		newObj("type", "string", "description", doc),
		newObj("type", "object", "required", required, "additionalProperties", false, "properties", props),
	})
}

func stepSchema() *obj {
	props, required := structProps(reflect.TypeOf(syntax.Step{}), func(key, doc string) any {
		switch key {
		case "id", "task":
			return newObj("type", "string", "pattern", idPattern, "description", doc)
		case "only":
			return newObj("enum", []string{syntax.OnlySolve, syntax.OnlyCheck}, "description", doc)
		case "timeout", "interval":
			return newObj("$ref", "#/$defs/duration", "description", doc)
		case "retries":
			return newObj("type", "integer", "minimum", 0, "description", doc)
		case "assert":
			return newObj("type", "array", "items", newObj("$ref", "#/$defs/assertion"), "description", doc)
		case "failWhen":
			s := conditionSchema(reflect.TypeOf(syntax.FailWhen{}), "An expression that, when true, fails the step at once.")
			s.set("description", doc)
			return s
		case "loop":
			return newObj("anyOf", []any{newObj("type", "array"), newObj("$ref", "#/$defs/template")}, "description", doc)
		}
		return nil
	})
	var actionKeys []string
	for _, a := range actions.All() {
		props.set(a.Name, newObj("$ref", "#/$defs/action."+a.Name))
		actionKeys = append(actionKeys, a.Name)
	}
	props.set(syntax.ParallelKey, newObj(
		"type", "object",
		"description", "Branches that run at the same time, each a list of steps run in order: branch name to steps. A step in one branch cannot read the steps of another; steps after this one read them all. Takes the place of an action; besides it a parallel step has only id, name, when, task and only.",
		"minProperties", 2,
		"propertyNames", newObj("pattern", idPattern),
		"additionalProperties", newObj("type", "array", "minItems", 1, "items", newObj("$ref", "#/$defs/step")),
	))
	actionKeys = append(actionKeys, syntax.ParallelKey)
	props.set(syntax.DuringKey, newObj(
		"type", "array",
		"description", "The steps the step's action runs around, in order (capture listens while they make traffic). They read what came before this step; the steps after it read them.",
		"minItems", 1,
		"items", newObj("$ref", "#/$defs/step"),
	))
	return newObj(
		"type", "object",
		"description", "One action (one of the action keys) plus control fields; a step with only assert checks conditions.",
		"required", required,
		"additionalProperties", false,
		"properties", props,
		"if", newObj("propertyNames", newObj("enum", props.keys)),
		"then", needsAction(actionKeys),
		"dependentSchemas", oneActionOnly(actionKeys),
	)
}

// needsAction says a step has an action key or assert. It is asked only
// of a step whose keys are all known (the step schema's if/then): editors
// report the first alternative of an anyOf that fails, so a misspelt
// action key ("rnu") would otherwise read as a missing "apply" instead of
// the unknown key it is. errorMessage is the message editors show in
// place of their own (yaml-language-server, VS Code).
func needsAction(keys []string) *obj {
	msg := "a step needs one action key (" + strings.Join(keys, ", ") + "), or assert alone"
	var alts []any
	for _, k := range append(keys, "assert") {
		alts = append(alts, newObj("required", []string{k}, "errorMessage", msg))
	}
	return newObj("anyOf", alts)
}

// oneActionOnly refuses a second action key beside each action key,
// naming the action the step already has at the other key.
func oneActionOnly(keys []string) *obj {
	deps := newObj()
	for _, k := range keys {
		others := newObj()
		for _, o := range keys {
			if o != k {
				others.set(o, false)
			}
		}
		deps.set(k, newObj("properties", others, "errorMessage", "one action per step: this step's action is "+k+"; put this one in a step of its own"))
	}
	return deps
}

var (
	durationType = reflect.TypeOf(time.Duration(0))
	looseType    = reflect.TypeOf((*actions.LoosePaths)(nil)).Elem()
)

// specSchema describes an action spec type. Every non-string field also
// accepts a whole ${{ }} expression, since the value may come from an
// earlier step.
func specSchema(t reflect.Type) *obj {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	withTemplate := func(s *obj) *obj {
		return newObj("anyOf", []any{s, newObj("$ref", "#/$defs/template")})
	}
	if t == durationType {
		return withTemplate(newObj("$ref", "#/$defs/duration"))
	}
	if t == looseType {
		return newObj("anyOf", []any{
			newObj("type", "array", "items", newObj("type", "string")),
			newObj("type", "object", "additionalProperties", newObj("type", "string", "minLength", 1)),
		})
	}
	switch t.Kind() {
	case reflect.String:
		return newObj("type", []string{"string", "number", "boolean"})
	case reflect.Bool:
		return withTemplate(newObj("type", "boolean"))
	case reflect.Int, reflect.Int32, reflect.Int64, reflect.Uint16, reflect.Uint32:
		return withTemplate(newObj("type", "integer"))
	case reflect.Float64:
		return withTemplate(newObj("type", "number"))
	case reflect.Slice:
		return withTemplate(newObj("type", "array", "items", specSchema(t.Elem())))
	case reflect.Map:
		return withTemplate(newObj("type", "object", "additionalProperties", specSchema(t.Elem())))
	case reflect.Struct:
		props := newObj()
		required := []string{}
		for _, f := range fields.Of(t) {
			s := specSchema(f.Type)
			if f.Doc != "" {
				s.set("description", f.Doc)
			}
			props.set(f.Key, s)
			if f.Required {
				required = append(required, f.Key)
			}
		}
		return newObj("type", "object", "required", required, "additionalProperties", false, "properties", props)
	}
	return newObj()
}

// FileName is the name the schema is installed under.
const FileName = "playbook.schema.json"

// Modeline is the first line a playbook in playbooksDir puts on its
// first line to use the schema installed at schemaPath: yaml-language-server
// reads the path of its $schema relative to the playbook's own directory,
// so it is schemaPath relative to playbooksDir (both made absolute from
// the working directory), in slashes; absolute when there is no relative
// path between them (another Windows volume).
func Modeline(playbooksDir, schemaPath string) (string, error) {
	from, err := filepath.Abs(playbooksDir)
	if err != nil {
		return "", err
	}
	to, err := filepath.Abs(schemaPath)
	if err != nil {
		return "", err
	}
	rel, err := filepath.Rel(from, to)
	if err != nil {
		rel = to
	}
	return "# yaml-language-server: $schema=" + filepath.ToSlash(rel), nil
}

// Install writes the schema into dir (made if missing) as FileName, for a
// lab repository whose playbooks point at it (docs/commands.md says how), and
// returns the file's path. It replaces the file atomically, so an editor
// reading it never sees half a schema.
func Install(dir string) (string, error) {
	b, err := Generate()
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	f, err := os.CreateTemp(dir, "."+FileName+".tmp-*")
	if err != nil {
		return "", err
	}
	defer os.Remove(f.Name())
	if _, err := f.Write(b); err != nil {
		f.Close()
		return "", err
	}
	if err := f.Chmod(0o644); err != nil {
		f.Close()
		return "", err
	}
	if err := f.Close(); err != nil {
		return "", err
	}
	path := filepath.Join(dir, FileName)
	return path, os.Rename(f.Name(), path)
}
