package runner

import "github.com/labrun/labrun/eval"

// DefaultFunctions is what expressions can call: labrun's helpers plus a
// typed parser per tool output format.
func DefaultFunctions() []eval.Function {
	return eval.Builtins()
}
