package actions

import (
	"context"
	"regexp"

	"github.com/labrun/labrun/internal/lang/diag"
	"github.com/labrun/labrun/internal/lang/eval"
)

// ComputeSpec names values derived from earlier steps, so a lab computes
// "the web Service's entry in the agent's list" once and reads it in many
// places as steps.<id>.<name>. Each value keeps its expression's type.
type ComputeSpec map[string]any

var identifier = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

func init() {
	Register(Def[ComputeSpec, map[string]any]{
		Name:          "compute",
		Cost:          InProcess,
		Doc:           "Evaluate named values once (name: ${{ expr }}); later steps read them as steps.<id>.<name>, typed as their expressions.",
		DynamicResult: true,
		Run: func(ctx context.Context, rt *Runtime, spec *ComputeSpec) (*map[string]any, error) {
			m := map[string]any(*spec)
			for k, v := range m {
				m[k] = eval.Plain(v)
			}
			return &m, nil
		},
		Check: func(spec *eval.Value, sc *StaticContext) diag.List {
			var errs diag.List
			if spec.Keys() == nil {
				errs.Add(spec.Pos, "compute needs a mapping of name: value")
			}
			for _, k := range spec.Keys() {
				if !identifier.MatchString(k) {
					errs.Add(spec.KeyPos(k), "compute name %q must be an identifier (letters, digits, _)", k)
				}
			}
			return errs
		},
	})
}
