package eval

import (
	"fmt"
	"net"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/labrun/labrun/internal/lang/yamlnode"
	"gopkg.in/yaml.v3"
)

// Function is a function offered to expressions, with the Go signature the
// checker uses (a pointer to a func value, as expr.Function expects).
type Function struct {
	Name  string
	Doc   string
	Fn    func(args ...any) (any, error)
	Types []any
	// CheckConst, when set, checks a constant first argument when the
	// expression is compiled (file's path must exist), so validate
	// refuses what the step would fail on.
	CheckConst func(arg string) error
}

// Signature renders the function's declared types for `labrun actions`.
func (f Function) Signature() string {
	var sigs []string
	for _, t := range f.Types {
		ft := reflect.TypeOf(t)
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		sigs = append(sigs, f.Name+strings.TrimPrefix(ft.String(), "func"))
	}
	return strings.Join(sigs, "; ")
}

// Usage renders the function's signatures in a playbook author's words,
// for messages: countLines(string, string) int; a function declared for
// several list types once per distinct rendering.
func (f Function) Usage() string {
	var sigs []string
	for _, t := range f.Types {
		ft := reflect.TypeOf(t)
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		var in, out []string
		for i := 0; i < ft.NumIn(); i++ {
			in = append(in, plainType(ft.In(i)))
		}
		for i := 0; i < ft.NumOut(); i++ {
			out = append(out, plainType(ft.Out(i)))
		}
		sig := f.Name + "(" + strings.Join(in, ", ") + ") " + strings.Join(out, ", ")
		if len(f.Types) > 1 {
			// one function for each mix of list types reads as one of lists
			sig = strings.ReplaceAll(sig, "list of string", "list")
		}
		if !slices.Contains(sigs, sig) {
			sigs = append(sigs, sig)
		}
	}
	return strings.Join(sigs, "; ")
}

// plainType names a parameter's type as Usage shows it.
func plainType(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Interface:
		return "any"
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Interface {
			return "list"
		}
		return "list of " + plainType(t.Elem())
	case reflect.Map:
		return "map"
	case reflect.Pointer:
		return plainType(t.Elem())
	case reflect.Struct:
		return t.Name()
	}
	return t.String()
}

// HostPort is an address split into host and numeric port.
type HostPort struct {
	Host string `json:"host" expr:"host"` // the address, without IPv6's brackets ("fd00::1")
	Port int    `json:"port" expr:"port"` // the port as a number (8080)
}

// Unary builds a typed one-argument Function from a Go function.
func Unary[A, R any](name, doc string, f func(A) (R, error)) Function {
	return Function{Name: name, Doc: doc, Types: []any{new(func(A) R)}, Fn: func(args ...any) (any, error) {
		a, err := coerce[A](name, 1, args[0])
		if err != nil {
			return nil, err
		}
		return f(a)
	}}
}

// Binary builds a typed two-argument Function from a Go function.
func Binary[A, B, R any](name, doc string, f func(A, B) (R, error)) Function {
	return Function{Name: name, Doc: doc, Types: []any{new(func(A, B) R)}, Fn: func(args ...any) (any, error) {
		a, err := coerce[A](name, 1, args[0])
		if err != nil {
			return nil, err
		}
		b, err := coerce[B](name, 2, args[1])
		if err != nil {
			return nil, err
		}
		return f(a, b)
	}}
}

// coerce converts a run-time argument to the declared parameter type. The
// checker lets an argument of unknown type (from fromJSON, say) through, so
// the conversion is checked here rather than left to panic.
func coerce[T any](fn string, pos int, v any) (T, error) {
	var zero T
	if t, ok := v.(T); ok {
		return t, nil
	}
	want := reflect.TypeOf(&zero).Elem()
	if want.Kind() == reflect.Slice && v != nil {
		rv := reflect.ValueOf(v)
		if rv.Kind() == reflect.Slice {
			out := reflect.MakeSlice(want, rv.Len(), rv.Len())
			for i := 0; i < rv.Len(); i++ {
				e := rv.Index(i)
				if e.Kind() == reflect.Interface {
					e = e.Elem()
				}
				if !e.IsValid() || !e.Type().AssignableTo(want.Elem()) {
					if want.Elem().Kind() == reflect.Interface {
						continue
					}
					return zero, fmt.Errorf("%s: argument %d: element %d is %s, not %s", fn, pos, i, typeName(e), want.Elem())
				}
				out.Index(i).Set(e)
			}
			return out.Interface().(T), nil
		}
	}
	if want.Kind() == reflect.Int {
		switch n := v.(type) {
		case float64:
			if n == float64(int(n)) {
				return any(int(n)).(T), nil
			}
		case int64:
			return any(int(n)).(T), nil
		}
	}
	return zero, fmt.Errorf("%s: argument %d is %s, not %s", fn, pos, typeName(reflect.ValueOf(v)), want)
}

func typeName(v reflect.Value) string {
	if !v.IsValid() {
		return "nil"
	}
	return v.Type().String()
}

// regexpArgs are the functions whose argument at that index is a regular
// expression: a constant one is compiled when the expression is checked,
// so that validate refuses it instead of the step that runs it.
var regexpArgs = map[string]int{"grepRe": 1, "capture": 1, "captureAll": 1}

var regexps sync.Map // pattern -> *regexp.Regexp; patterns are few and reused in polls

func compileRegexp(pattern string) (*regexp.Regexp, error) {
	if re, ok := regexps.Load(pattern); ok {
		return re.(*regexp.Regexp), nil
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		return nil, fmt.Errorf("bad regular expression %q: %w", pattern, err)
	}
	regexps.Store(pattern, re)
	return re, nil
}

// Lines splits command output into lines, without the empty line a final
// newline would produce, so that len(lines(x)) counts what a person sees.
func Lines(text string) []string {
	text = strings.TrimSuffix(text, "\n")
	if text == "" {
		return []string{}
	}
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(l, "\r")
	}
	return lines
}

// Grep returns the lines that contain substr, like grep -F.
func Grep(text, substr string) []string {
	out := []string{}
	for _, l := range Lines(text) {
		if strings.Contains(l, substr) {
			out = append(out, l)
		}
	}
	return out
}

// Difference returns the items of a that are not in b, in a's order.
func Difference(a, b []any) []any {
	inB := map[string]bool{}
	for _, x := range b {
		inB[Key(x)] = true
	}
	out := []any{}
	for _, x := range a {
		if !inB[Key(x)] {
			out = append(out, x)
		}
	}
	return out
}

// FromYAML is fromYAML(text): the value YAML text holds. What labrun
// would not take as written is an error naming its line and column, as in
// a playbook: a tag whose meaning labrun drops (!!binary, !Ref), one the
// value does not fit, a number labrun cannot hold (1e400, .inf).
func FromYAML(s string) (any, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(s), &doc); err != nil {
		return nil, fmt.Errorf("fromYAML: %w", err)
	}
	problems := yamlnode.Tags(&doc)
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		if msg := yamlnode.Number(n); msg != "" {
			problems = append(problems, yamlnode.Problem{Node: n, Msg: msg})
		}
		for i, c := range n.Content {
			if n.Kind != yaml.MappingNode || i%2 == 1 { // keys are text
				walk(c)
			}
		}
	}
	walk(&doc)
	if len(problems) > 0 {
		p := problems[0]
		return nil, fmt.Errorf("fromYAML: line %d, column %d: %s", p.Node.Line, p.Node.Column, p.Msg)
	}
	var v any
	if err := doc.Decode(&v); err != nil {
		return nil, fmt.Errorf("fromYAML: %w", err)
	}
	return v, nil
}

// Builtins returns labrun's helper functions, on top of expr-lang's own
// (len, filter, map, split, upper, toJSON, fromJSON, sort, uniq, ...).
func Builtins() []Function {
	return []Function{
		Unary("lines", "Split text into lines (no trailing empty line).", func(s string) ([]string, error) { return Lines(s), nil }),
		Binary("countLines", "Number of lines of text that contain substr, like grep -c -F.", func(s, sub string) (int, error) { return len(Grep(s, sub)), nil }),
		Binary("grep", "Lines of text that contain substr, like grep -F.", func(s, sub string) ([]string, error) { return Grep(s, sub), nil }),
		Binary("grepRe", "Lines of text that match a regular expression (RE2).", func(s, pattern string) ([]string, error) {
			re, err := compileRegexp(pattern)
			if err != nil {
				return nil, err
			}
			out := []string{}
			for _, l := range Lines(s) {
				if re.MatchString(l) {
					out = append(out, l)
				}
			}
			return out, nil
		}),
		Binary("capture", "Groups of the first match of a regular expression (index 0 is the whole match); empty when nothing matches.", func(s, pattern string) ([]string, error) {
			re, err := compileRegexp(pattern)
			if err != nil {
				return nil, err
			}
			m := re.FindStringSubmatch(s)
			if m == nil {
				return []string{}, nil
			}
			return m, nil
		}),
		Binary("captureAll", "Groups of every match of a regular expression.", func(s, pattern string) ([][]string, error) {
			re, err := compileRegexp(pattern)
			if err != nil {
				return nil, err
			}
			m := re.FindAllStringSubmatch(s, -1)
			if m == nil {
				return [][]string{}, nil
			}
			return m, nil
		}),
		Unary("fields", "Split a string on runs of white space.", func(s string) ([]string, error) { return strings.Fields(s), nil }),
		Unary("fromYAML", "Decode YAML text into maps, lists and scalars; a tag other than !!str, !!int, !!float, !!bool, !!null, !!map and !!seq, or a number out of range, is an error.", FromYAML),
		Unary("splitHostPort", "Split \"ip:port\" or \"[v6]:port\" into host and numeric port.", func(s string) (HostPort, error) {
			h, p, err := net.SplitHostPort(s)
			if err != nil {
				return HostPort{}, fmt.Errorf("splitHostPort(%q): %w", s, err)
			}
			port, err := strconv.Atoi(p)
			if err != nil {
				return HostPort{}, fmt.Errorf("splitHostPort(%q): port %q is not a number", s, p)
			}
			return HostPort{Host: h, Port: port}, nil
		}),
		Binary("joinHostPort", "Join host and port as \"ip:port\", bracketing IPv6.", func(h string, p int) (string, error) {
			return net.JoinHostPort(h, strconv.Itoa(p)), nil
		}),
		{Name: "partialMatch", Doc: "Whether actual holds everything expected holds (a partial object: extra keys in actual are fine, lists match item by item, numbers by value); a failed assertion names the first difference.",
			Types: []any{new(func(any, any) bool)}, Fn: func(args ...any) (any, error) { return Mismatch(args[0], args[1]) == "", nil }},
		{Name: "mismatch", Doc: "The first difference between actual and a partial object expected, as partialMatch sees it (\".status.readyReplicas is 1, expected 2\"); empty when they match.",
			Types: []any{new(func(any, any) string)}, Fn: func(args ...any) (any, error) { return Mismatch(args[0], args[1]), nil }},
		setFunc("difference", "Items of a that are not in b, in a's order.", func(a, b []any) any { return Difference(a, b) }),
		setFunc("intersection", "Items of a that are also in b, in a's order.", func(a, b []any) any { return Difference(a, Difference(a, b)) }),
		setFunc("sameSet", "Whether a and b hold the same items, ignoring order and repeats.", func(a, b []any) any {
			return len(Difference(a, b)) == 0 && len(Difference(b, a)) == 0
		}),
	}
}

// setFunc declares a function of two lists for every mix of []any and
// []string, the two list types expressions produce (split and lines give
// []string, JSON and literals []any), so no conversion is needed in YAML.
func setFunc(name, doc string, f func(a, b []any) any) Function {
	ret := reflect.TypeOf([]any{})
	if name == "sameSet" {
		ret = reflect.TypeOf(true)
	}
	lists := []reflect.Type{reflect.TypeOf([]any{}), reflect.TypeOf([]string{})}
	var types []any
	for _, a := range lists {
		for _, b := range lists {
			types = append(types, reflect.New(reflect.FuncOf([]reflect.Type{a, b}, []reflect.Type{ret}, false)).Interface())
		}
	}
	return Function{Name: name, Doc: doc, Types: types, Fn: func(args ...any) (any, error) {
		a, err := coerce[[]any](name, 1, args[0])
		if err != nil {
			return nil, err
		}
		b, err := coerce[[]any](name, 2, args[1])
		if err != nil {
			return nil, err
		}
		return f(a, b), nil
	}}
}
