package syntax

import (
	"bytes"
	"errors"
	"io"
	"math"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/labrun/labrun/internal/lang/diag"
	"github.com/labrun/labrun/internal/lang/fields"
	"github.com/labrun/labrun/internal/lang/yamlnode"
	"gopkg.in/yaml.v3"
)

// MaxFileSize bounds what the loader reads: playbooks are hand-written, and
// a bound keeps a stray binary or a generated monster from eating memory.
const MaxFileSize = 16 << 20

// idPattern keeps step ids usable as expr member names (steps.web_ready).
var idPattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// varPattern is the same rule for variable names (vars.out).
var varPattern = idPattern

// LoadFile reads and checks a playbook file. actions lists the action names
// that may appear as a step key. All shape errors are returned together.
func LoadFile(path string, actions []string) (*Playbook, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, diag.Errorf(diag.Pos{File: path}, "cannot read playbook: %v", unwrapPathError(err))
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, diag.Errorf(diag.Pos{File: path}, "cannot read playbook: %v", unwrapPathError(err))
	}
	return Load(path, data, actions)
}

func unwrapPathError(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// Load parses playbook text; file names the source in errors.
func Load(file string, data []byte, actions []string) (*Playbook, error) {
	root, err := parseDocument(file, data)
	if err != nil {
		return nil, err
	}
	d := newDecoder(file, actions)
	pb := &Playbook{File: file, Root: root, Pos: d.pos(root), Source: data}
	d.checkNoAliases(root)
	if len(d.errs) > 0 {
		return nil, d.errs.Sort()
	}
	d.decodeStruct(root, reflect.ValueOf(pb).Elem())
	d.checkPlaybook(pb)
	if len(d.errs) > 0 {
		return nil, d.errs.Sort()
	}
	return pb, nil
}

// parseDocument turns bytes into the one mapping node of a playbook,
// rejecting what is not a text YAML mapping before yaml.v3 sees it.
func parseDocument(file string, data []byte) (*yaml.Node, error) {
	at := func(line, col int, format string, args ...any) error {
		return diag.Errorf(diag.Pos{File: file, Line: line, Col: col}, format, args...)
	}
	if len(data) > MaxFileSize {
		return nil, at(1, 1, "playbook is larger than %d MiB; expected a hand-written YAML file", MaxFileSize>>20)
	}
	if i := bytes.IndexByte(data, 0); i >= 0 {
		line, col := lineCol(data, i)
		return nil, at(line, col, "not a YAML text file: NUL byte at offset %d", i)
	}
	if !utf8.Valid(data) {
		i := firstInvalidUTF8(data)
		line, col := lineCol(data, i)
		return nil, at(line, col, "not a YAML text file: invalid UTF-8 at offset %d", i)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, at(1, 1, "empty playbook: expected a mapping with name and steps")
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, at(1, 1, "empty playbook: expected a mapping with name and steps")
		}
		return nil, yamlError(file, err, data)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		return nil, at(extra.Line, extra.Column, "a playbook is one YAML document; found a second one (remove the --- separator)")
	} else if !errors.Is(err, io.EOF) {
		return nil, yamlError(file, err, data)
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		return nil, at(1, 1, "empty playbook: expected a mapping with name and steps")
	}
	root := doc.Content[0]
	if root.Kind == yaml.ScalarNode && root.Tag == "!!null" {
		return nil, at(root.Line, root.Column, "empty playbook: expected a mapping with name and steps")
	}
	if root.Kind != yaml.MappingNode {
		return nil, at(root.Line, root.Column, "a playbook must be a YAML mapping with name and steps, found %s", yamlnode.Describe(root))
	}
	return root, nil
}

var yamlLineRe = regexp.MustCompile(`^yaml: (?:line (\d+): )?(.*)$`)

// yamlError rewrites yaml.v3's "yaml: line N: msg" into file:N:1: msg.
func yamlError(file string, err error, data []byte) error {
	msg := err.Error()
	if m := yamlLineRe.FindStringSubmatch(msg); m != nil {
		line := 1
		if m[1] != "" {
			line, _ = strconv.Atoi(m[1])
		}
		if m[2] == "could not find expected ':'" {
			if n, col := longKey(data, line); n > 0 {
				return diag.Errorf(diag.Pos{File: file, Line: line, Col: col}, "this mapping key is %d characters long; YAML allows at most 1024 for a key on one line", n)
			}
		}
		if m[2] == "mapping values are not allowed in this context" {
			if col, ok := colonInPlainValue(data, line); ok {
				return diag.Errorf(diag.Pos{File: file, Line: line, Col: col}, `invalid YAML: %s: this unquoted value holds ": ", which YAML reads as the start of another key; quote the value ('...' or "...") or write it as a block scalar (|)`, m[2])
			}
		}
		return diag.Errorf(diag.Pos{File: file, Line: line, Col: 1}, "invalid YAML: %s", m[2])
	}
	return diag.Errorf(diag.Pos{File: file, Line: 1, Col: 1}, "invalid YAML: %s", msg)
}

// colonInPlainValue finds, on line (1-based) of data, the ": " inside a
// plain (unquoted) value after "key: " that makes yaml.v3 say "mapping
// values are not allowed in this context" (which it places at column 1 of
// the line), and returns its column.
func colonInPlainValue(data []byte, line int) (int, bool) {
	lines := strings.Split(string(data), "\n")
	if line < 1 || line > len(lines) {
		return 0, false
	}
	text := strings.TrimRight(lines[line-1], "\r")
	i := len(text) - len(strings.TrimLeft(text, " "))
	for strings.HasPrefix(text[i:], "- ") {
		i += 2
		for i < len(text) && text[i] == ' ' {
			i++
		}
	}
	sep := colonAt(text, i)
	if sep < 0 {
		return 0, false
	}
	v := sep + 1
	for v < len(text) && text[v] == ' ' {
		v++
	}
	if v >= len(text) || strings.ContainsRune("'\"{[|>&*!#", rune(text[v])) {
		return 0, false // not a plain scalar
	}
	at := colonAt(text, v)
	if at < 0 {
		return 0, false
	}
	return utf8.RuneCountInString(text[:at]) + 1, true
}

// colonAt is the index of the first ":" at or after from that is followed
// by a space or ends the line, as YAML reads a key's end; -1 when none is.
func colonAt(text string, from int) int {
	for j := from; j < len(text); j++ {
		if text[j] == ' ' && j+1 < len(text) && text[j+1] == '#' {
			return -1 // a comment
		}
		if text[j] == ':' && (j+1 == len(text) || text[j+1] == ' ') {
			return j
		}
	}
	return -1
}

// longKey finds a plain mapping key longer than YAML's 1024-character
// limit on line (1-based) of data: yaml.v3 then only says it could not
// find the ':'. It returns the key's length in characters and its column,
// or 0.
func longKey(data []byte, line int) (int, int) {
	lines := bytes.Split(data, []byte("\n"))
	if line < 1 || line > len(lines) {
		return 0, 0
	}
	text := string(lines[line-1])
	key, _, ok := strings.Cut(text, ": ")
	if !ok {
		key, ok = strings.CutSuffix(strings.TrimRight(text, " \r"), ":")
	}
	trimmed := strings.TrimLeft(key, " -")
	if !ok || utf8.RuneCountInString(trimmed) <= 1024 {
		return 0, 0
	}
	return utf8.RuneCountInString(trimmed), utf8.RuneCountInString(key) - utf8.RuneCountInString(trimmed) + 1
}

func lineCol(data []byte, off int) (int, int) {
	line := 1 + bytes.Count(data[:off], []byte{'\n'})
	col := off - bytes.LastIndexByte(data[:off], '\n')
	return line, col
}

func firstInvalidUTF8(data []byte) int {
	for i := 0; i < len(data); {
		r, size := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && size <= 1 {
			return i
		}
		i += size
	}
	return len(data)
}

// decoder walks YAML nodes into the structs of this package, collecting
// errors instead of stopping at the first one.
type decoder struct {
	file     string
	actions  []string
	errs     diag.List
	inBranch bool // decoding the steps of a parallel step's branch

	// What every step is decoded with, made once per playbook.
	stepFields map[string]fields.Field // control keys (id, when, ...)
	stepKeys   []string                // the same, in declaration order
	isAction   map[string]bool
}

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

func (d *decoder) pos(n *yaml.Node) diag.Pos {
	return diag.Pos{File: d.file, Line: n.Line, Col: n.Column}
}

// Pos returns the position of a node in file.
func Pos(file string, n *yaml.Node) diag.Pos {
	return diag.Pos{File: file, Line: n.Line, Col: n.Column}
}

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

// duration reads "250ms", "2m", "1h30m" or a plain number of seconds.
func (d *decoder) duration(n *yaml.Node) (Duration, bool) {
	if n.Kind != yaml.ScalarNode {
		d.errorf(n, "expected a duration such as 30s or 2m, found %s", yamlnode.Describe(n))
		return Duration{}, false
	}
	var dur time.Duration
	switch n.Tag {
	case "!!int", "!!float":
		f, err := strconv.ParseFloat(n.Value, 64)
		if err != nil {
			d.errorf(n, "expected a duration such as 30s or 2m, found %s", yamlnode.Describe(n))
			return Duration{}, false
		}
		if f*float64(time.Second) >= math.MaxInt64 {
			d.errorf(n, "duration %s is too long; the longest is %d seconds (about 292 years)", n.Value, int64(math.MaxInt64/time.Second))
			return Duration{}, false
		}
		dur = time.Duration(f * float64(time.Second))
	case "!!str":
		var err error
		dur, err = time.ParseDuration(n.Value)
		if err != nil {
			d.errorf(n, "expected a duration such as 30s or 2m, found %s", yamlnode.Describe(n))
			return Duration{}, false
		}
	default:
		d.errorf(n, "expected a duration such as 30s or 2m, found %s", yamlnode.Describe(n))
		return Duration{}, false
	}
	if dur <= 0 {
		d.errorf(n, "duration must be positive, found %s", n.Value)
		return Duration{}, false
	}
	return Duration{D: dur, Pos: d.pos(n), Set: true}, true
}

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
			d.errorf(k, "variable name %q must be an identifier (letters, digits, _; not starting with a digit) so expressions can say vars.%s", k.Value, strings.ReplaceAll(k.Value, "-", "_"))
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
		out = append(out, &Task{ID: k.Value, Title: val.Value, Number: len(out) + 1, Pos: d.pos(k)})
	}
	if len(n.Content) == 0 {
		d.errorf(n, "tasks is empty; declare the lab's tasks (id: title) or leave tasks out")
	}
	return out
}

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

func (d *decoder) steps(n *yaml.Node) []*Step {
	if n.Kind != yaml.SequenceNode {
		d.errorf(n, "expected a list of steps, found %s", yamlnode.Describe(n))
		return nil
	}
	var out []*Step
	for _, c := range n.Content {
		if s := d.step(c); s != nil {
			out = append(out, s)
		}
	}
	return out
}

// step decodes one step: its control keys through the struct tags, and the
// one remaining key that names an action.
func (d *decoder) step(n *yaml.Node) *Step {
	if n.Kind != yaml.MappingNode {
		d.errorf(n, "a step must be a mapping with an id and one action, found %s", yamlnode.Describe(n))
		return nil
	}
	s := &Step{Pos: d.pos(n)}
	keys := d.stepKeys
	unknown := false
	seen := map[string]bool{}
	v := reflect.ValueOf(s).Elem()
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		if !d.checkKey(k, seen) {
			continue
		}
		if f, ok := d.stepFields[k.Value]; ok {
			d.decodeValue(val, v.FieldByIndex(f.Index))
			if k.Value == "retries" {
				s.RetriesPos = d.pos(val)
			}
			continue
		}
		if k.Value == ParallelKey {
			s.ParallelPos = d.pos(k)
			s.Parallel = d.branches(k, val, s)
			continue
		}
		if d.isAction[k.Value] {
			if s.Action != "" {
				d.errorf(k, "step has two actions, %s and %s; a step does exactly one thing", s.Action, k.Value)
				continue
			}
			s.Action, s.ActionPos, s.Spec = k.Value, d.pos(k), val
			continue
		}
		all := append(append([]string{ParallelKey}, keys...), d.actions...)
		unknown = true
		d.errorf(k, "unknown step key %q%s; expected an action (%s), parallel, or one of: %s", k.Value, diag.DidYouMean(k.Value, all), strings.Join(d.actions, ", "), strings.Join(keys, ", "))
	}
	if !seen["id"] {
		d.errorf(n, "step has no id; add id: <name> so later steps can refer to it")
	} else if s.ID.Node != nil && d.nonASCII(s.ID.Node, "step id") {
	} else if s.ID.Node != nil && !idPattern.MatchString(s.ID.Value) {
		d.errorf(s.ID.Node, "step id %q must be an identifier (letters, digits, _; not starting with a digit) so expressions can say steps.%s", s.ID.Value, strings.ReplaceAll(s.ID.Value, "-", "_"))
	}
	if seen[ParallelKey] {
		d.checkParallelStep(n, s)
		return s
	}
	if s.Action == "" && len(s.Assert) == 0 && !seen["assert"] && !unknown {
		d.errorf(n, "step %q has no action; expected one of: %s (or only assert, or parallel)", s.ID.Value, strings.Join(d.actions, ", "))
	}
	return s
}

// ParallelKey is the step key that holds branches instead of an action.
const ParallelKey = "parallel"

// parallelKeys are the keys a parallel step may have besides parallel:
// it only groups steps, so polling, retries and assertions belong on the
// steps in its branches.
var parallelKeys = []string{"id", "name", "when", "task", "only"}

// checkParallelStep reports what a parallel step cannot have.
func (d *decoder) checkParallelStep(n *yaml.Node, s *Step) {
	if s.Action != "" {
		d.errs.Add(s.ActionPos, "step has both parallel and %s; a parallel step only groups steps, put %s in one of its branches", s.Action, s.Action)
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i].Value
		if k == ParallelKey || k == s.Action || slices.Contains(parallelKeys, k) || !slices.Contains(d.stepKeys, k) {
			continue
		}
		d.errorf(n.Content[i], "a parallel step takes only id, name, when, task and only besides parallel; put %s on the steps in its branches", k)
	}
}

// branches decodes the value of parallel: a mapping of branch name to a
// list of steps, at least two branches, no parallel step inside.
func (d *decoder) branches(k, n *yaml.Node, group *Step) []*Branch {
	if d.inBranch {
		d.errorf(k, "parallel steps cannot be nested; put the steps of this group as branches of the outer parallel step")
		return nil
	}
	if n.Kind != yaml.MappingNode {
		d.errorf(n, "parallel is a mapping of branch name to a list of steps, found %s", yamlnode.Describe(n))
		return nil
	}
	if len(n.Content) < 4 {
		d.errorf(n, "parallel needs at least two branches; a single list of steps needs no parallel")
	}
	seen := map[string]bool{}
	var out []*Branch
	d.inBranch = true
	defer func() { d.inBranch = false }()
	for i := 0; i+1 < len(n.Content); i += 2 {
		bk, bv := n.Content[i], n.Content[i+1]
		if !d.checkKey(bk, seen) {
			continue
		}
		if d.nonASCII(bk, "branch name") {
			continue
		}
		if !idPattern.MatchString(bk.Value) {
			d.errorf(bk, "branch name %q must be an identifier (letters, digits, _; not starting with a digit)", bk.Value)
			continue
		}
		if bv.Kind == yaml.SequenceNode && len(bv.Content) == 0 {
			d.errorf(bv, "branch %s has no steps", bk.Value)
			continue
		}
		b := &Branch{Name: bk.Value, Pos: d.pos(bk), Steps: d.steps(bv)}
		for _, s := range b.Steps {
			s.Group, s.Branch = group, b.Name
		}
		out = append(out, b)
	}
	return out
}

// checkPlaybook runs the cross-field checks of the whole document.
func (d *decoder) checkPlaybook(pb *Playbook) {
	if pb.Root != nil && len(pb.Steps) == 0 {
		for i := 0; i+1 < len(pb.Root.Content); i += 2 {
			if v := pb.Root.Content[i+1]; pb.Root.Content[i].Value == "steps" && v.Kind == yaml.SequenceNode && len(v.Content) == 0 {
				d.errorf(pb.Root.Content[i+1], "steps must list at least one step")
			}
		}
	}
	for _, s := range pb.Finally {
		s.Cleanup = true
		if s.Parallel != nil {
			d.errs.Add(s.ParallelPos, "finally steps run one after another; parallel is for steps")
		}
	}
	ids := map[string]diag.Pos{}
	for _, s := range pb.AllSteps() {
		if s.ID.Node == nil {
			continue
		}
		if first, dup := ids[s.ID.Value]; dup {
			d.errorf(s.ID.Node, "duplicate step id %q (first used at %s)", s.ID.Value, first)
			continue
		}
		ids[s.ID.Value] = s.ID.Pos
		if s.Interval.Set && !s.Until.IsSet() && s.Retries == 0 {
			d.errs.Add(s.Interval.Pos, "interval has no effect without until or retries")
		}
		if s.FailWhen != nil && !s.Until.IsSet() {
			d.errs.Add(s.FailWhen.Pos, "failWhen ends a wait early: it needs until (a step without until fails by its assert)")
		}
		if o := s.Only; o.IsSet() && o.Value != OnlySolve && o.Value != OnlyCheck {
			d.errs.Add(o.Pos, "only is %q; expected solve (the step runs only in labrun run) or check (only in labrun check)%s", o.Value, diag.DidYouMean(o.Value, []string{OnlySolve, OnlyCheck}))
		}
	}
	d.checkTasks(pb)
}

// checkTasks links every step to its task. Once a playbook declares tasks,
// every step under steps belongs to one (its own task:, or its parallel
// step's), so that each outcome is graded under a task; each task has a
// step; finally steps, which clean up after every task, name none.
func (d *decoder) checkTasks(pb *Playbook) {
	byID := map[string]*Task{}
	var ids []string
	for _, t := range pb.Tasks {
		byID[t.ID] = t
		ids = append(ids, t.ID)
	}
	used := map[*Task]bool{}
	for _, s := range pb.AllSteps() {
		ref := s.TaskRef
		switch {
		case s.Cleanup && ref.IsSet():
			d.errs.Add(ref.Pos, "a finally step belongs to no task: it cleans up after all of them; remove task")
			continue
		case s.Cleanup:
			continue
		case ref.IsSet() && len(pb.Tasks) == 0:
			d.errs.Add(ref.Pos, "task %q is not declared: the playbook has no tasks (add tasks: with %s: <title>)", ref.Value, ref.Value)
			continue
		case ref.IsSet():
			t := byID[ref.Value]
			if t == nil {
				d.errs.Add(ref.Pos, "unknown task %q%s; the tasks are: %s", ref.Value, diag.DidYouMean(ref.Value, ids), strings.Join(ids, ", "))
				continue
			}
			s.Task = t
		case s.Group != nil:
			s.Task = s.Group.Task
		}
		if s.Task != nil {
			used[s.Task] = true
		} else if len(pb.Tasks) > 0 && s.Parallel == nil && s.ID.IsSet() {
			d.errorf(s.ID.Node, "step %q belongs to no task; add task: with one of %s (on it, or on its parallel step)", s.ID.Value, strings.Join(ids, ", "))
		}
	}
	for _, t := range pb.Tasks {
		if !used[t] {
			d.errs.Add(t.Pos, "task %s has no steps; name it with task: %s on the steps that do it", t.ID, t.ID)
		}
	}
}
