package runner

import (
	"fmt"
	"reflect"
	"sync"
	"unsafe"

	"github.com/labrun/labrun/internal/lang/eval"
	"github.com/labrun/labrun/internal/parse"
)

// DefaultFunctions is what expressions can call: labrun's helpers plus a
// typed parser per tool output format (parseCiliumStatus(text) and so on),
// whose declared result types let validate check every field a playbook
// reads from parsed output.
//
// file(path) reads from the playbook's directory, which DefaultFunctions
// does not know: it is listed, but reads nothing; Functions(dir) binds it.
func DefaultFunctions() []eval.Function { return Functions("") }

// Functions is DefaultFunctions with file(path) reading from dir, the
// playbook's directory.
func Functions(dir string) []eval.Function {
	funcs := append(eval.Builtins(), eval.FileFunction(dir))
	for _, p := range parse.All {
		funcs = append(funcs, parserFunction(p))
	}
	return funcs
}

// parserFunction wraps a parser as an expr function of type
// func(string) Result. Parsed results are memoised by the identity of the
// input string: a write step often reads several fields of one parsed
// output, and re-parsing 50 MB of conntrack dump per field would dominate.
func parserFunction(p parse.Parser) eval.Function {
	sig := reflect.FuncOf([]reflect.Type{reflect.TypeOf("")}, []reflect.Type{p.Result}, false)
	memo := &parseMemo{}
	return eval.Function{
		Name:  p.Func,
		Doc:   p.Doc,
		Types: []any{reflect.New(sig).Interface()},
		Fn: func(args ...any) (any, error) {
			text, ok := args[0].(string)
			if !ok {
				return nil, fmt.Errorf("%s: argument is %T, expected the text to parse", p.Func, args[0])
			}
			if v, ok := memo.get(text); ok {
				return v, nil
			}
			v, err := p.Parse(text)
			if err != nil {
				return nil, err
			}
			memo.put(text, v)
			return v, nil
		},
	}
}

// parseMemo remembers the last few results by (data pointer, length):
// the same step output string is the same memory every time it is read,
// and comparing identities costs nothing, unlike hashing the text.
type parseMemo struct {
	mu      sync.Mutex
	entries [4]memoEntry
	next    int
}

type memoEntry struct {
	ptr *byte
	n   int
	v   any
}

func (m *parseMemo) get(s string) (any, bool) {
	if len(s) == 0 {
		return nil, false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	p := unsafe.StringData(s)
	for _, e := range m.entries {
		if e.ptr == p && e.n == len(s) {
			return e.v, true
		}
	}
	return nil, false
}

func (m *parseMemo) put(s string, v any) {
	if len(s) == 0 {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.entries[m.next] = memoEntry{ptr: unsafe.StringData(s), n: len(s), v: v}
	m.next = (m.next + 1) % len(m.entries)
}
