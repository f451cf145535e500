package syntax

import (
	"reflect"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/labrun/labrun/internal/lang/yamlnode"
	"gopkg.in/yaml.v3"
)

// Decoding the playbook's sections that are not plain fields: variables,
// named expressions, tasks, and conditions (assert, failWhen).

// idPattern keeps step ids usable as expr member names (steps.web_ready).
var idPattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// varPattern is the same rule for variable names (vars.out).
var varPattern = idPattern

// vars reads the variables: a mapping of name to default value, each
// name an identifier expressions can spell as vars.NAME.
func (d *decoder) vars(n *yaml.Node) []*Var {
	if n.Kind != yaml.MappingNode {
		if n.Tag == "!!null" {
			return nil
		}
		d.errorf(n, "vars must be a mapping of name: default value, found %s", yamlnode.Describe(n))
		return nil
	}
	seen := map[string]bool{}
	var out []*Var
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		if !d.checkKey(k, seen) {
			continue
		}
		if d.nonASCII(k, "variable name") {
			continue
		}
		if !varPattern.MatchString(k.Value) {
			d.errorf(k, "variable name %q must be an identifier (letters, digits, _; not starting with a digit) so expressions can say vars.%s", k.Value, exprName(k.Value))
			continue
		}
		out = append(out, &Var{Name: k.Value, Pos: d.pos(k), Value: val})
	}
	return out
}

// defines reads the named expressions: a mapping of name to expression.
func (d *decoder) defines(n *yaml.Node) []*Define {
	if n.Kind != yaml.MappingNode {
		d.errorf(n, "define must be a mapping of name: expression, found %s", yamlnode.Describe(n))
		return nil
	}
	seen := map[string]bool{}
	var out []*Define
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		if !d.checkKey(k, seen) || d.nonASCII(k, "name") {
			continue
		}
		if val.Kind != yaml.ScalarNode || val.Tag == "!!null" {
			d.errorf(val, "define %s: expected an expression string, found %s", k.Value, yamlnode.Describe(val))
			continue
		}
		out = append(out, &Define{Name: k.Value, Pos: d.pos(k), Expr: Text{Value: val.Value, Pos: d.pos(val), Node: val}})
	}
	return out
}

// tasks reads the lab's tasks: a mapping of task id to title, numbered
// from 1 in the order written.
func (d *decoder) tasks(n *yaml.Node) []*Task {
	if n.Kind != yaml.MappingNode {
		d.errorf(n, "tasks must be a mapping of task id to its title, in the lab's order, found %s", yamlnode.Describe(n))
		return nil
	}
	seen := map[string]bool{}
	titles := map[string]*Task{} // by title as a learner reads it
	var out []*Task
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		if !d.checkKey(k, seen) || d.nonASCII(k, "task id") {
			continue
		}
		if !idPattern.MatchString(k.Value) {
			d.errorf(k, "task id %q must be an identifier (letters, digits, _; not starting with a digit): labrun check --task takes the id or the task's number", k.Value)
			continue
		}
		if val.Kind != yaml.ScalarNode || val.Tag == "!!null" || strings.TrimSpace(val.Value) == "" {
			d.errorf(val, "task %s needs a title, the line the learner sees (e.g. %s: Scale web to 4 replicas), found %s", k.Value, k.Value, yamlnode.Describe(val))
			continue
		}
		t := &Task{ID: k.Value, Title: val.Value, Number: len(out) + 1, Pos: d.pos(k)}
		title := strings.ToLower(strings.Join(strings.Fields(val.Value), " "))
		if first := titles[title]; first != nil {
			d.errorf(val, "task %s has the same title as task %s (line %d), %q: a learner could not tell the two apart; give each its own title", k.Value, first.ID, first.Pos.Line, val.Value)
		} else {
			titles[title] = t
		}
		out = append(out, t)
	}
	if len(n.Content) == 0 {
		d.errorf(n, "tasks is empty; declare the lab's tasks (id: title) or leave tasks out")
	}
	return out
}

// asserts reads a step's assertions: a list of conditions.
func (d *decoder) asserts(n *yaml.Node) []*Assertion {
	if n.Kind != yaml.SequenceNode {
		d.errorf(n, "assert must be a list of conditions, found %s", yamlnode.Describe(n))
		return nil
	}
	var out []*Assertion
	for _, c := range n.Content {
		a := &Assertion{Pos: d.pos(c)}
		if d.condition(c, &a.That, reflect.ValueOf(a).Elem(), "an assertion") {
			out = append(out, a)
		}
	}
	return out
}

// condition reads a condition written as an expression string (into that)
// or as a mapping of that/message/hint (into v, the struct holding that).
// what names it in the error for any other node.
func (d *decoder) condition(n *yaml.Node, that *Text, v reflect.Value, what string) bool {
	switch {
	case n.Kind == yaml.ScalarNode && n.Tag == "!!str":
		*that = Text{Value: n.Value, Pos: d.pos(n), Node: n}
	case n.Kind == yaml.MappingNode && len(n.Content) == 2 && looksLikeExpression(n.Content[0]):
		// "- partialMatch(result, {"a": 1})": the ": " made YAML read a
		// mapping whose key is the condition's start
		k := n.Content[0]
		p := d.pos(k)
		p.Col += utf8.RuneCountInString(k.Value)
		d.errs.Add(p, `YAML read %s as a mapping because it holds ": " unquoted: quote the whole condition ('...' or "...")`, what)
		return false
	case n.Kind == yaml.MappingNode:
		d.decodeStruct(n, v)
	default:
		d.errorf(n, "%s is an expression string or a mapping with that/message/hint, found %s", what, yamlnode.Describe(n))
		return false
	}
	return true
}

// looksLikeExpression tells a mapping key that is the start of an
// expression (a call, a comparison, a quote) from a key such as "that".
func looksLikeExpression(k *yaml.Node) bool {
	return k.Kind == yaml.ScalarNode && k.Style == 0 && strings.ContainsAny(k.Value, "()[]{}\"'=<>!&| .")
}

// failWhen reads a step's failWhen: an expression string, or a mapping
// with that/message/hint like an assertion's.
func (d *decoder) failWhen(n *yaml.Node) *FailWhen {
	f := &FailWhen{Pos: d.pos(n)}
	if !d.condition(n, &f.That, reflect.ValueOf(f).Elem(), "failWhen") {
		return nil
	}
	return f
}
