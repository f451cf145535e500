package syntax

import (
	"errors"
	"math"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	"github.com/labrun/labrun/internal/lang/diag"
	"github.com/labrun/labrun/internal/lang/fields"
	"github.com/labrun/labrun/internal/lang/scalar"
	"github.com/labrun/labrun/internal/lang/yamlnode"
	"gopkg.in/yaml.v3"
)

// decoder walks YAML nodes into the structs of this package, collecting
// errors instead of stopping at the first one.
type decoder struct {
	file     string
	actions  []string
	errs     diag.List
	inBranch bool // decoding the steps of a parallel step's branch
	inDuring bool // decoding the steps of a during list

	// What every step is decoded with, made once per playbook.
	stepFields map[string]fields.Field // control keys (id, when, ...)
	stepKeys   []string                // the same, in declaration order
	isAction   map[string]bool
}

// newDecoder prepares a decoder for one file; actions are the action
// names a step may use as a key.
func newDecoder(file string, actions []string) *decoder {
	d := &decoder{file: file, actions: actions, stepFields: map[string]fields.Field{}, isAction: map[string]bool{}}
	for _, f := range fields.Of(stepType) {
		d.stepFields[f.Key] = f
	}
	d.stepKeys = fields.Keys(stepType)
	for _, a := range actions {
		d.isAction[a] = true
	}
	return d
}

// pos is where n stands in the decoder's file.
func (d *decoder) pos(n *yaml.Node) diag.Pos {
	return diag.Pos{File: d.file, Line: n.Line, Col: n.Column}
}

// Pos returns the position of a node in file.
func Pos(file string, n *yaml.Node) diag.Pos {
	return diag.Pos{File: file, Line: n.Line, Col: n.Column}
}

// errorf records a problem at n and lets decoding go on.
func (d *decoder) errorf(n *yaml.Node, format string, args ...any) {
	d.errs.Add(d.pos(n), format, args...)
}

// nonASCII refuses a name with a character outside ASCII, naming the
// character and pointing at it: a Cyrillic е prints like a Latin e, and
// the name would otherwise look right in the message.
func (d *decoder) nonASCII(n *yaml.Node, what string) bool {
	desc, col, found := diag.NonASCII(n.Value)
	if !found {
		return false
	}
	p := d.pos(n)
	if n.Style == 0 {
		p.Col += col - 1
	}
	d.errs.Add(p, "%s %q holds %s at character %d; names are ASCII letters, digits and _", what, n.Value, desc, col)
	return true
}

// exprName is the name a refused step id or variable name suggests for
// expressions (x-y as x_y), escaped as inside a Go string (x\ny): the
// message is one line, and a raw newline or NUL would break that line or
// reach the terminal.
func exprName(name string) string {
	q := strconv.Quote(strings.ReplaceAll(name, "-", "_"))
	return q[1 : len(q)-1]
}

// checkNoAliases rejects anchors' aliases and merge keys. They are the
// vector of "billion laughs" bombs, and vars already give reuse.
// Only the first alias is reported: a bomb has thousands.
func (d *decoder) checkNoAliases(n *yaml.Node) bool {
	if n.Kind == yaml.AliasNode {
		d.errorf(n, "YAML aliases (*%s) are not supported; use vars and ${{ }} for reuse", n.Value)
		return false
	}
	for _, c := range n.Content {
		if !d.checkNoAliases(c) {
			return false
		}
	}
	return true
}

var (
	textType     = reflect.TypeOf(Text{})
	durationType = reflect.TypeOf(Duration{})
	nodeType     = reflect.TypeOf(&yaml.Node{})
	varsType     = reflect.TypeOf([]*Var{})
	definesType  = reflect.TypeOf([]*Define{})
	assertsType  = reflect.TypeOf([]*Assertion{})
	failWhenType = reflect.TypeOf(&FailWhen{})
	stepsType    = reflect.TypeOf([]*Step{})
	tasksType    = reflect.TypeOf([]*Task{})
	stepType     = reflect.TypeOf(Step{})
)

// decodeStruct fills a struct from a mapping, reporting unknown keys with a
// suggestion, duplicate keys, and missing required keys.
func (d *decoder) decodeStruct(n *yaml.Node, v reflect.Value) {
	if n.Kind != yaml.MappingNode {
		d.errorf(n, "expected a mapping, found %s", yamlnode.Describe(n))
		return
	}
	fs := fields.Of(v.Type())
	byKey := map[string]fields.Field{}
	keys := fields.Keys(v.Type())
	for _, f := range fs {
		byKey[f.Key] = f
	}
	seen := map[string]bool{}
	suggested := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		if !d.checkKey(k, seen) {
			continue
		}
		f, ok := byKey[k.Value]
		if !ok {
			suggested[diag.Suggest(k.Value, keys)] = true
			d.errorf(k, "unknown key %q%s; expected one of: %s", k.Value, diag.DidYouMean(k.Value, keys), strings.Join(keys, ", "))
			continue
		}
		d.decodeValue(val, v.FieldByIndex(f.Index))
	}
	for _, f := range fs {
		// A misspelled required key is reported once, as the typo.
		if f.Required && !seen[f.Key] && !suggested[f.Key] {
			d.errorf(n, "missing required key %q", f.Key)
		}
	}
}

// checkKey validates a mapping key: a plain string, not seen before.
func (d *decoder) checkKey(k *yaml.Node, seen map[string]bool) bool {
	if k.Kind != yaml.ScalarNode || (k.Tag != "!!str" && k.Tag != "!!int" && k.Tag != "!!bool" && k.Tag != "!!float") {
		d.errorf(k, "mapping keys must be plain strings, found %s", yamlnode.Describe(k))
		return false
	}
	if seen[k.Value] {
		d.errorf(k, "duplicate key %q", k.Value)
		return false
	}
	seen[k.Value] = true
	return true
}

// decodeValue fills v from n by v's type: the package's own types
// (Text, Duration, steps, ...) by their decoders, then strings, whole
// numbers from 0 up, and lists.
func (d *decoder) decodeValue(n *yaml.Node, v reflect.Value) {
	switch v.Type() {
	case textType:
		if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
			d.errorf(n, "expected a string, found %s", yamlnode.Describe(n))
			return
		}
		v.Set(reflect.ValueOf(Text{Value: n.Value, Pos: d.pos(n), Node: n}))
		return
	case durationType:
		dur, ok := d.duration(n)
		if ok {
			v.Set(reflect.ValueOf(dur))
		}
		return
	case nodeType:
		v.Set(reflect.ValueOf(n))
		return
	case varsType:
		v.Set(reflect.ValueOf(d.vars(n)))
		return
	case definesType:
		v.Set(reflect.ValueOf(d.defines(n)))
		return
	case assertsType:
		v.Set(reflect.ValueOf(d.asserts(n)))
		return
	case failWhenType:
		if f := d.failWhen(n); f != nil {
			v.Set(reflect.ValueOf(f))
		}
		return
	case stepsType:
		v.Set(reflect.ValueOf(d.steps(n)))
		return
	case tasksType:
		v.Set(reflect.ValueOf(d.tasks(n)))
		return
	}
	switch v.Kind() {
	case reflect.String:
		if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
			d.errorf(n, "expected a string, found %s", yamlnode.Describe(n))
			return
		}
		v.SetString(n.Value)
	case reflect.Int:
		if n.Kind == yaml.ScalarNode && digits.MatchString(n.Value) {
			// YAML reads a whole number too large for an int64 as a float
			if _, err := strconv.Atoi(n.Value); errors.Is(err, strconv.ErrRange) {
				d.errorf(n, "%s is too large; expected a whole number up to %d", n.Value, math.MaxInt)
				return
			}
		}
		if n.Kind != yaml.ScalarNode || n.Tag != "!!int" {
			d.errorf(n, "expected a whole number, found %s", yamlnode.Describe(n))
			return
		}
		i, err := strconv.Atoi(n.Value)
		if err != nil || i < 0 {
			d.errorf(n, "expected a whole number from 0 up, found %s", yamlnode.Describe(n))
			return
		}
		v.SetInt(int64(i))
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			d.errorf(n, "expected a list, found %s", yamlnode.Describe(n))
			return
		}
		s := reflect.MakeSlice(v.Type(), len(n.Content), len(n.Content))
		for i, c := range n.Content {
			d.decodeValue(c, s.Index(i))
		}
		v.Set(s)
	default:
		panic("syntax: unsupported field type " + v.Type().String())
	}
}

// digits is a whole number as written, with an optional sign.
var digits = regexp.MustCompile(`^[-+]?[0-9]+$`)

// duration reads a step key's duration by the rule every duration in a
// playbook follows (scalar.Duration): "250ms", "2m", "1h30m" or a plain
// number of seconds, positive.
func (d *decoder) duration(n *yaml.Node) (Duration, bool) {
	var x any // what the rule reads; nil for a node that cannot be one
	if n.Kind == yaml.ScalarNode {
		switch n.Tag {
		case "!!int", "!!float":
			if f, err := strconv.ParseFloat(n.Value, 64); err == nil {
				x = f
			}
		case "!!str":
			x = n.Value
		}
	}
	dur, err := scalar.Duration(x, n.Value)
	switch {
	case errors.Is(err, scalar.ErrNotDuration):
		d.errorf(n, "%v, found %s", err, yamlnode.Describe(n))
		return Duration{}, false
	case err != nil:
		d.errorf(n, "%v", err)
		return Duration{}, false
	}
	return Duration{D: dur, Pos: d.pos(n), Set: true}, true
}
