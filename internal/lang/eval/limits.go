package eval

import (
	"fmt"
	"math"
	"strings"
	"unicode/utf8"

	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/builtin"
	"github.com/expr-lang/expr/file"
	"github.com/expr-lang/expr/parser"
	"github.com/expr-lang/expr/vm/runtime"
)

// What one evaluation of an expression may build (docs/language.md,
// Limits). A playbook may come from someone else: `1..2000000000` or
// `repeat(x, 9000000000000000000)` must be refused, not run the machine
// out of memory. A constant one is refused when the expression is
// compiled; one that depends on the run's values, when it is evaluated,
// before the memory is taken.

// MemoryBudget is expr-lang's memory budget of one evaluation of an
// expression: the list items it builds (a range, a list literal, map,
// filter, concat, ...), its map entries and the bytes of repeat's text
// count toward it, and the evaluation fails with "memory budget exceeded"
// once they reach it.
// (expr-lang's conf.DefaultMemoryBudget; a test holds the two equal).
const MemoryBudget = 1_000_000

// MaxReplaceBytes bounds the text replace builds when it is longer than
// the text it was given (expr-lang counts none of it): as much as file()
// reads. A replace that shortens its text (of a long command output, say)
// is not bounded: it builds no more than it was given.
const MaxReplaceBytes = maxFileSize

// limitsDoc is where the limits are documented, for messages.
const limitsDoc = "labrun's limit, docs/language.md#limits"

func init() {
	guardRepeat()
	guardReplace()
}

// guardRepeat makes expr-lang's repeat refuse text of MemoryBudget bytes
// or more before building it. repeat counts its bytes toward the budget
// only once it has built them (repeat(s, 999999) of a 16 MiB s took 16 TB
// first), and expr-lang has no hook for a builtin: its table is a package
// variable the compiler reads, so the entry itself is wrapped.
func guardRepeat() {
	f := builtin.Builtins[builtin.Index["repeat"]]
	safe := f.Safe
	f.Safe = func(args ...any) (any, uint, error) {
		if len(args) == 2 {
			if s, ok := args[0].(string); ok {
				if err := repeatSize(len(s), runtime.ToInt(args[1])); err != nil {
					return nil, 0, err
				}
			}
		}
		return safe(args...)
	}
}

// repeatSize refuses repeat's text of n copies of size bytes when it
// would reach the budget.
func repeatSize(size, n int) error {
	if n <= 0 || size == 0 || size <= (MemoryBudget-1)/n {
		return nil
	}
	return fmt.Errorf("repeat would build %s; %s", repeatBytes(size, int64(n)), repeatLimit)
}

// repeatLimit is the limit repeat's messages name.
var repeatLimit = fmt.Sprintf("an expression builds fewer than %d list items, map entries and bytes of repeat in all (%s)", MemoryBudget, limitsDoc)

// repeatBytes says how long n copies of size bytes are.
func repeatBytes(size int, n int64) string {
	if size > 0 && n > math.MaxInt64/int64(size) {
		return fmt.Sprintf("%d copies of %d bytes, more than %d bytes", n, size, int64(math.MaxInt64))
	}
	return fmt.Sprintf("%d bytes", int64(size)*n)
}

// guardReplace makes expr-lang's replace refuse, before building it, a
// text longer than its input and than MaxReplaceBytes: replace(s, "a", t)
// makes len(t) bytes of each a in s, and expr-lang counts none of them.
func guardReplace() {
	f := builtin.Builtins[builtin.Index["replace"]]
	fn := f.Func
	f.Func = func(args ...any) (any, error) {
		if len(args) == 3 || len(args) == 4 {
			s, ok1 := args[0].(string)
			old, ok2 := args[1].(string)
			repl, ok3 := args[2].(string)
			limit := -1
			if len(args) == 4 {
				limit = runtime.ToInt(args[3])
			}
			if ok1 && ok2 && ok3 {
				if size, big := replaceSize(s, old, repl, limit); big {
					return nil, fmt.Errorf("replace would build a text of %d bytes from one of %d; a replace that lengthens its text builds at most %d bytes, 16 MiB (%s)", size, len(s), MaxReplaceBytes, limitsDoc)
				}
			}
		}
		return fn(args...)
	}
}

// replaceSize is the length of strings.Replace(s, old, repl, limit), and
// whether it is both longer than s and longer than MaxReplaceBytes.
func replaceSize(s, old, repl string, limit int) (uint64, bool) {
	if len(repl) <= len(old) {
		return uint64(len(s)), false
	}
	n := strings.Count(s, old)
	if old == "" {
		n = utf8.RuneCountInString(s) + 1
	}
	if limit >= 0 && limit < n {
		n = limit
	}
	size := uint64(len(s)) + uint64(n)*uint64(len(repl)-len(old))
	return size, size > MaxReplaceBytes
}

// checkConstSizes refuses what an expression would build from its
// constants alone beyond the limits: a range of MemoryBudget numbers or
// more (1..2000000000), repeat of MemoryBudget bytes or more.
func checkConstSizes(tree *parser.Tree) error {
	var err *file.Error
	ast.Find(tree.Node, func(n ast.Node) bool {
		if err != nil {
			return false
		}
		switch n := n.(type) {
		case *ast.BinaryNode:
			if count, ok := constRange(n); ok && count >= MemoryBudget {
				err = &file.Error{Location: n.Location(), Message: fmt.Sprintf("%s is a list of %d numbers; an expression builds fewer than %d list items in all (%s)", n, count, MemoryBudget, limitsDoc)}
			}
		case *ast.BuiltinNode:
			if n.Name != "repeat" || len(n.Arguments) != 2 {
				return false
			}
			count, ok := constInt(n.Arguments[1])
			if !ok {
				return false
			}
			s, isConst := n.Arguments[0].(*ast.StringNode)
			switch {
			case isConst && count > 0 && repeatSize(len(s.Value), int(count)) != nil:
				err = &file.Error{Location: n.Location(), Message: fmt.Sprintf("repeat would build %s; %s", repeatBytes(len(s.Value), count), repeatLimit)}
			case !isConst && count >= MemoryBudget:
				err = &file.Error{Location: n.Location(), Message: fmt.Sprintf("repeat would build %d copies of its text; %s", count, repeatLimit)}
			}
		}
		return false
	})
	if err != nil {
		return err.Bind(tree.Source)
	}
	return nil
}

// constRange is the number of items of a range whose ends are written as
// whole numbers (1..6, -3..3).
func constRange(n *ast.BinaryNode) (uint64, bool) {
	if n.Operator != ".." {
		return 0, false
	}
	from, ok1 := constInt(n.Left)
	to, ok2 := constInt(n.Right)
	if !ok1 || !ok2 || to < from {
		return 0, ok1 && ok2
	}
	// in two's complement, so that -9e18..9e18 does not overflow
	return uint64(to) - uint64(from) + 1, true
}

// constInt is the value of a whole number written in an expression, with
// its sign.
func constInt(n ast.Node) (int64, bool) {
	switch n := n.(type) {
	case *ast.IntegerNode:
		return int64(n.Value), true
	case *ast.UnaryNode:
		if v, ok := constInt(n.Node); ok && n.Operator == "-" {
			return -v, true
		}
	}
	return 0, false
}

// RangeLen is the number of items of an expression that is exactly a
// range with constant ends (1..6), so that a loop over it can be held to
// its limit when the playbook is validated.
func RangeLen(src string) (uint64, bool) {
	tree, err := parser.Parse(src)
	if err != nil {
		return 0, false
	}
	if b, ok := tree.Node.(*ast.BinaryNode); ok {
		return constRange(b)
	}
	return 0, false
}

// overBudget names labrun's limit in expr-lang's message for an evaluation
// that built too much (a range 1..vars.n with a huge n). expr-lang panics
// with a plain string there, no error value, so its words are all there is
// to recognise it by.
func overBudget(msg string) string {
	if !strings.Contains(msg, "memory budget exceeded") {
		return msg
	}
	return msg + fmt.Sprintf(" (an expression may build fewer than %d list items, map entries and bytes of repeat in all: docs/language.md#limits)", MemoryBudget)
}

// MaxTextBytes bounds the text + joins: reduce(1..60, #acc + #acc) would
// double a string sixty times, and expr-lang's memory budget counts list
// items and map entries, not the bytes of strings.
const MaxTextBytes = maxFileSize

// plus is + where either side may be text: two strings are joined when
// the result stays within MaxTextBytes; anything else is expr-lang's +.
func plus(a, b any) (any, error) {
	if x, ok := a.(string); ok {
		if y, ok := b.(string); ok {
			if len(x)+len(y) > MaxTextBytes {
				return nil, fmt.Errorf("text joined with + would be %d bytes; an expression may build at most %d (docs/language.md#limits)", len(x)+len(y), MaxTextBytes)
			}
			return x + y, nil
		}
	}
	return runtime.Add(a, b), nil
}
