package kubeschema

import (
	"bytes"
	"encoding/json"
	"maps"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/labrun/labrun/internal/lang/diag"
	yaml11 "go.yaml.in/yaml/v2"
	"gopkg.in/yaml.v3"
)

// Node is a manifest's value as checked: a scalar, a mapping or a list
// as written, or a value computed only at run time, of which a type may
// be known. Pos is where it is written (zero for a value rendered at run
// time, which the caller places by its Path).
type Node struct {
	Pos   diag.Pos
	Kind  NodeKind
	Value any // a Scalar's: string, int64, float64, bool or nil (null)
	// A Map's keys, where each is written, and values, in order.
	Keys   []string
	KeyPos []diag.Pos
	Vals   []*Node
	// A List's items.
	Items []*Node
	// A Computed value's JSON type ("string", "integer", "number",
	// "boolean", "array", "object"; "" when not known) and the
	// expression it comes from (`vars.port`, the text inside ${{ }}),
	// for messages.
	Type string
	Src  string
	// Text is a Scalar as written (0644 for 420), when it is known.
	Text string
	// YAML11 marks a plain scalar that YAML 1.1, which manifests are
	// read with, gives another type than the string YAML 1.2 would (yes,
	// on, y: true).
	YAML11 bool
}

// NodeKind says what a Node holds.
type NodeKind int

// The kinds of Node.
const (
	Scalar NodeKind = iota
	Map
	List
	Computed
)

// Lookup returns the value of key in a Map, or nil.
func (n *Node) Lookup(key string) *Node {
	if n == nil || n.Kind != Map {
		return nil
	}
	for i, k := range n.Keys {
		if k == key {
			return n.Vals[i]
		}
	}
	return nil
}

// keyPos is where key is written in a Map (the Map's own position when it
// has no such key).
func (n *Node) keyPos(key string) diag.Pos {
	for i, k := range n.Keys {
		if k == key && i < len(n.KeyPos) {
			return n.KeyPos[i]
		}
	}
	return n.Pos
}

// text is a Scalar string's value; ok is false for anything else.
func (n *Node) text() (string, bool) {
	if n == nil || n.Kind != Scalar {
		return "", false
	}
	s, ok := n.Value.(string)
	return s, ok
}

// TypeOf is the JSON type of an expression's static type: what a value
// of it becomes in the object sent ("" when the type says nothing, an
// interface or nil).
func TypeOf(t reflect.Type) string {
	if t == nil {
		return ""
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "integer"
	case reflect.Float32, reflect.Float64:
		return "number"
	case reflect.Slice, reflect.Array:
		return "array"
	case reflect.Map, reflect.Struct:
		return "object"
	}
	return ""
}

// FromGo makes the Node of a value rendered at run time (a spec's
// objects): the JSON it is sent as (apply marshals it), so that any Go
// value an expression gives (an ordered mapping, a result's struct, a
// typed slice) is checked as the API server receives it. It has no
// positions.
func FromGo(v any) *Node {
	data, err := json.Marshal(v)
	if err != nil {
		return &Node{Kind: Computed}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var x any
	if err := dec.Decode(&x); err != nil {
		return &Node{Kind: Computed}
	}
	return fromJSON(x)
}

// fromJSON makes the Node of decoded JSON (numbers as json.Number).
func fromJSON(v any) *Node {
	switch v := v.(type) {
	case map[string]any:
		n := &Node{Kind: Map}
		for _, k := range slices.Sorted(maps.Keys(v)) {
			n.Keys = append(n.Keys, k)
			n.Vals = append(n.Vals, fromJSON(v[k]))
		}
		return n
	case []any:
		n := &Node{Kind: List, Items: []*Node{}}
		for _, x := range v {
			n.Items = append(n.Items, fromJSON(x))
		}
		return n
	case json.Number:
		if i, err := v.Int64(); err == nil {
			return &Node{Kind: Scalar, Value: i}
		}
		f, _ := v.Float64()
		return &Node{Kind: Scalar, Value: f}
	}
	return &Node{Kind: Scalar, Value: v}
}

// FromYAML makes the Node of a YAML document as labrun's apply decodes a
// manifest file or text (kube.DecodeText, with sigs.k8s.io/yaml): a plain
// scalar has the type YAML 1.1 gives it, so `value: yes` is the boolean
// true and `port: 1e3` a number, as the API server receives them. at
// gives the position of a line and column of the document.
func FromYAML(n *yaml.Node, at func(line, col int) diag.Pos) *Node {
	pos := at(n.Line, n.Column)
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return &Node{Pos: pos, Kind: Scalar}
		}
		return FromYAML(n.Content[0], at)
	case yaml.MappingNode:
		m := &Node{Pos: pos, Kind: Map}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Value == "<<" && k.Tag == "!!merge" {
				continue // a merge key: its keys are not checked
			}
			m.Keys = append(m.Keys, k.Value)
			m.KeyPos = append(m.KeyPos, at(k.Line, k.Column))
			m.Vals = append(m.Vals, FromYAML(v, at))
		}
		return m
	case yaml.SequenceNode:
		l := &Node{Pos: pos, Kind: List, Items: []*Node{}}
		for _, item := range n.Content {
			l.Items = append(l.Items, FromYAML(item, at))
		}
		return l
	case yaml.AliasNode:
		if n.Alias != nil {
			return FromYAML(n.Alias, at)
		}
	}
	v := scalar11(n)
	_, isText := v.(string)
	return &Node{Pos: pos, Kind: Scalar, Value: v, Text: n.Value, YAML11: !isText && n.Tag == "!!str"}
}

// scalar11 is a scalar's value as YAML 1.1 reads it, which sigs.k8s.io/yaml
// (go.yaml.in/yaml/v2) does: a quoted or block scalar is a string, a plain
// one is what go.yaml.in/yaml/v2 makes of it.
func scalar11(n *yaml.Node) any {
	if n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle|yaml.LiteralStyle|yaml.FoldedStyle) != 0 || n.Tag == "!!str" && n.Style != 0 {
		return n.Value
	}
	if n.Tag != "" && n.Tag != "!!str" && n.Tag != "!!int" && n.Tag != "!!float" && n.Tag != "!!bool" && n.Tag != "!!null" && n.Tag != "!!timestamp" && n.Tag != "!!binary" {
		return n.Value // a local tag (!foo): its text
	}
	var v any
	if err := yaml11.Unmarshal([]byte(n.Value), &v); err != nil {
		return n.Value
	}
	switch v := v.(type) {
	case int:
		return int64(v)
	case int64, float64, bool, nil:
		return v
	case uint64:
		return float64(v)
	case string:
		return v
	}
	return n.Value
}

// Path names a value inside an object: keys (string) and list indexes
// (int), as spec.template.spec.containers[0].command[0].
type Path []any

// identKey is a key a path writes bare; others are quoted in brackets
// (metadata.labels["app.kubernetes.io/name"]).
var identKey = regexp.MustCompile(`^[A-Za-z_$][A-Za-z0-9_$-]*$`)

func (p Path) String() string {
	var b strings.Builder
	for _, s := range p {
		switch s := s.(type) {
		case int:
			b.WriteString("[" + strconv.Itoa(s) + "]")
		case string:
			if !identKey.MatchString(s) {
				b.WriteString("[" + strconv.Quote(s) + "]")
				continue
			}
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(s)
		}
	}
	return b.String()
}
