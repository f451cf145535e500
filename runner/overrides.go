package runner

import (
	"os"
	"reflect"
	"strings"

	"github.com/labrun/labrun/internal/lang/diag"
	"github.com/labrun/labrun/internal/lang/syntax"
	"github.com/labrun/labrun/internal/lang/yamlnode"
	"gopkg.in/yaml.v3"
)

// Values for variables from outside the playbook (--set and --vars files),
// fitted to the type each variable's default gives it.

// override is a value for a variable from outside the playbook.
type override struct {
	node   *yaml.Node
	file   string // where it came from, for errors
	raw    string // the text after = for --set
	source string
}

// prefix names a --set override in messages; a vars file has positions.
func (o override) prefix() string {
	if o.source == "" {
		return ""
	}
	return o.source + ": "
}

// pos is the override's place: its key in a vars file, else nowhere.
func (o override) pos() diag.Pos {
	if o.node != nil && o.file != "" {
		return syntax.Pos(o.file, o.node)
	}
	return diag.Pos{}
}

// overrides collects the values given from outside the playbook, by
// variable name: those of the --vars files, then --set, the later winning.
func (c *compiler) overrides(opts Options) map[string]override {
	out := map[string]override{}
	for _, f := range opts.VarsFiles {
		data, err := os.ReadFile(f)
		if err != nil {
			c.errs.Add(diag.Pos{File: f}, "cannot read vars file: %v", err)
			continue
		}
		var doc yaml.Node
		if err := yaml.Unmarshal(data, &doc); err != nil {
			c.errs.Append(yamlnode.SyntaxError(f, data, err))
			continue
		}
		if len(doc.Content) == 0 {
			continue
		}
		if problems := yamlnode.Tags(&doc); len(problems) > 0 {
			for _, p := range problems {
				c.errs.Add(syntax.Pos(f, p.Node), "%s", p.Msg)
			}
			continue
		}
		m := doc.Content[0]
		if m.Kind != yaml.MappingNode {
			c.errs.Add(syntax.Pos(f, m), "a vars file must be a mapping of name: value")
			continue
		}
		for i := 0; i+1 < len(m.Content); i += 2 {
			out[m.Content[i].Value] = override{node: m.Content[i+1], file: f}
		}
	}
	for _, s := range opts.Set {
		name, raw, ok := strings.Cut(s, "=")
		if !ok || name == "" {
			c.errs.Add(diag.Pos{}, "--set %q: expected name=value", s)
			continue
		}
		var doc yaml.Node
		node := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: raw}
		if err := yaml.Unmarshal([]byte(raw), &doc); err == nil && len(doc.Content) > 0 {
			node = doc.Content[0]
		}
		out[name] = override{node: node, raw: raw, source: "--set " + name}
	}
	return out
}

// varType is the type a YAML default gives a variable.
func varType(n *yaml.Node) reflect.Type {
	switch n.Kind {
	case yaml.SequenceNode:
		return reflect.TypeOf([]any{})
	case yaml.MappingNode:
		return reflect.TypeOf(map[string]any{})
	case yaml.ScalarNode:
		switch n.Tag {
		case "!!int":
			return reflect.TypeOf(0)
		case "!!float":
			return reflect.TypeOf(0.0)
		case "!!bool":
			return reflect.TypeOf(false)
		case "!!null":
			return reflect.TypeOf((*any)(nil)).Elem()
		}
	}
	return reflect.TypeOf("")
}

// fitOverride makes a command-line value take the variable's declared type:
// --set port=8080 stays a number for a number variable and becomes the
// string "8080" for a string variable.
func (c *compiler) fitOverride(v *syntax.Var, o override) *yaml.Node {
	n := o.node
	want := varType(v.Value)
	got := varType(n)
	if want.Kind() != reflect.String || n.Kind != yaml.ScalarNode {
		// YAML's reading of the value is the value: what labrun would not
		// take as written is refused (a vars file's tags are checked when
		// it is read)
		var problems []yamlnode.Problem
		if o.file == "" {
			problems = yamlnode.Tags(n)
		}
		if msg := yamlnode.Number(n); msg != "" {
			problems = append(problems, yamlnode.Problem{Node: n, Msg: msg})
		}
		for _, p := range problems {
			pos := diag.Pos{}
			if o.file != "" {
				pos = syntax.Pos(o.file, p.Node)
			}
			c.errs.Add(pos, "%s%s", o.prefix(), p.Msg)
		}
		if len(problems) > 0 {
			return v.Value
		}
	}
	switch {
	case want == got, want.Kind() == reflect.Interface:
		return n
	case want.Kind() == reflect.String && n.Kind == yaml.ScalarNode:
		val := n.Value
		if o.raw != "" {
			val = o.raw
		}
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: val, Line: n.Line, Column: n.Column}
	case want.Kind() == reflect.Float64 && got.Kind() == reflect.Int:
		return n
	}
	pos := diag.Pos{}
	if o.file != "" {
		pos = syntax.Pos(o.file, n)
	}
	c.errs.Add(pos, "%svariable %s is %s (its default at %s), but the value given is %s", o.prefix(), v.Name, typeWord(want), v.Pos, yamlnode.Describe(n))
	return v.Value
}

// typeWord names a variable's type in messages, as a playbook author
// thinks of it.
func typeWord(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Int:
		return "a whole number"
	case reflect.Float64:
		return "a number"
	case reflect.Bool:
		return "a boolean"
	case reflect.Slice:
		return "a list"
	case reflect.Map:
		return "a mapping"
	}
	return "a string"
}
