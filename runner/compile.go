// Package runner turns a loaded playbook into a checked plan (Compile) and
// executes it (Run). Compile needs no cluster and no network: everything
// `labrun validate` reports comes from here.
package runner

import (
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"github.com/labrun/labrun/actions"
	"github.com/labrun/labrun/internal/lang/diag"
	"github.com/labrun/labrun/internal/lang/eval"
	"github.com/labrun/labrun/internal/lang/kubeschema"
	"github.com/labrun/labrun/internal/lang/syntax"
)

// Options changes how a playbook is compiled.
type Options struct {
	// Set holds --set name=value overrides, value as typed on the
	// command line (parsed as YAML, then fitted to the variable's type).
	Set []string
	// VarsFiles are YAML files of name: value overrides (--vars).
	VarsFiles []string
	// Functions are offered to expressions; nil means DefaultFunctions.
	Functions []eval.Function
	// NoManifests leaves out apply's check of the objects it sends
	// against their kinds' schemas (actions.StaticContext): labrun check
	// runs no step that changes the system, so on a learner's Check
	// button it need not read them.
	NoManifests bool
	// IgnoreUndeclared ignores the overrides of variables the playbook
	// does not declare instead of refusing them: labrun test --repeat
	// hands the lab's --set and --vars to its cleanup playbook, which
	// takes those of its own variables (the lab's namespace) and has no
	// use for the rest.
	IgnoreUndeclared bool
}

// Load reads and compiles a playbook file in one go.
func Load(path string, opts Options) (*Plan, error) {
	pb, err := syntax.LoadFile(path, actions.Names())
	if err != nil {
		return nil, err
	}
	return Compile(pb, opts)
}

// Compile checks a loaded playbook and compiles its expressions.
func Compile(pb *syntax.Playbook, opts Options) (*Plan, error) {
	funcs := opts.Functions
	if funcs == nil {
		dir, err := filepath.Abs(filepath.Dir(pb.File))
		if err != nil {
			return nil, err
		}
		funcs = Functions(dir)
	}
	c := &compiler{
		pb:    pb,
		file:  pb.File,
		ec:    eval.NewCompiler(funcs),
		plan:  &Plan{Playbook: pb, Tasks: pb.Tasks},
		kinds: kubeschema.NewRegistry(),
		opts:  opts,
	}
	c.plan.compiler = c.ec
	c.ec.SetSource(pb.File, pb.Source)
	overrides := c.overrides(opts)
	if opts.IgnoreUndeclared {
		for name := range overrides {
			if !slices.ContainsFunc(pb.Vars, func(v *syntax.Var) bool { return v.Name == name }) {
				delete(overrides, name)
			}
		}
	}
	// env first: a variable's default may read env.NAME
	c.env()
	c.vars(overrides)
	c.defines()
	c.secrets()
	c.outputDir()
	c.declareSteps()
	steps := pb.AllSteps()
	// Steps whose result type comes from their spec (compute) are built
	// first, in order: each new result type changes the environment's
	// layout, and once all are known every other expression compiles
	// against one final layout, with one expr configuration per result
	// type, instead of new ones after each compute step (a compute spec
	// gets a new layout only when it reads an earlier compute step).
	c.specs = map[*syntax.Step]builtSpec{}
	for i, s := range steps {
		if info, ok := actions.Lookup(s.Action); ok && info.DynamicResult {
			c.specs[s] = c.buildSpec(i, s, info)
		}
	}
	c.ec.Settle()
	for i, s := range steps {
		c.step(i, s)
	}
	c.linkBranches()
	c.missingReads()
	c.errs = append(c.errs, c.ec.CheckDefines()...)
	if len(c.errs) > 0 {
		return nil, c.errs.Sort()
	}
	c.plan.Warnings = append(c.plan.Warnings, c.ec.Warnings()...)
	return c.plan, nil
}

type compiler struct {
	pb   *syntax.Playbook
	file string
	ec   *eval.Compiler
	plan *Plan
	errs diag.List
	// byID finds a step's declaration, to tell which steps run at the
	// same time as the one being compiled.
	byID map[string]*syntax.Step
	// planOf maps declarations to their plans, to link branches.
	planOf map[*syntax.Step]*StepPlan
	// specs holds the specs built ahead of the other steps.
	specs map[*syntax.Step]builtSpec
	// items holds the item type of each step with loop, for the context
	// of its expressions.
	items map[*syntax.Step]reflect.Type
	// kinds holds the schemas of the kinds the playbook's apply steps
	// send, the CRDs its manifests define included (actions.StaticContext).
	kinds *kubeschema.Registry
	opts  Options
}

// declareSteps records every step's id and result type first, so that a
// reference to a later step gets "has not run yet" rather than "unknown".
func (c *compiler) declareSteps() {
	c.byID = map[string]*syntax.Step{}
	c.planOf = map[*syntax.Step]*StepPlan{}
	for _, s := range c.pb.AllSteps() {
		c.byID[s.ID.Value] = s
		var result reflect.Type
		if info, ok := actions.Lookup(s.Action); ok {
			result = info.Result
			if s.Loop != nil {
				result = loopResult(info.Result)
			}
		} else {
			result = reflect.TypeOf(struct{}{})
		}
		c.ec.DeclareStep(s.ID.Value, result, s.ID.Pos)
	}
}

// context is where an expression of step s (declared at index) stands.
func (c *compiler) context(index int, s *syntax.Step, result reflect.Type, want reflect.Kind) eval.Context {
	return eval.Context{Step: index, Result: result, Item: c.items[s], Want: want, Unavailable: func(id string) string {
		return c.unavailable(s, id)
	}}
}

// unavailable says why step s cannot read step id although id is declared
// before it: id is a parallel step (which has no result of its own), or id
// runs in another branch of the parallel step s runs in.
func (c *compiler) unavailable(s *syntax.Step, id string) string {
	t := c.byID[id]
	switch {
	case t == nil:
		return ""
	case t.Parallel != nil:
		return fmt.Sprintf("steps.%s is a parallel step and has no result of its own; read the steps in its branches", id)
	case s.Around != nil && t == s.Around:
		return fmt.Sprintf("steps.%s is the step this step runs during; its result is known when it ends: read it in a step after %s", id, id)
	case t.Group != nil && t.Group == s.Group && t.Branch != s.Branch:
		return fmt.Sprintf("step %q runs in branch %s of parallel step %s, at the same time as this step (branch %s); read it in a step after %s", id, t.Branch, t.Group.ID.Value, s.Branch, t.Group.ID.Value)
	}
	return ""
}

// condition compiles a bare expression; ${{ }} around it is accepted too,
// since authors write conditions both ways.
func (c *compiler) condition(t syntax.Text, ctx eval.Context) *eval.Expr {
	src, off := bareExpression(t)
	e, err := c.ec.CompileAt(src, c.ec.InScalar(t.Pos, t.Node, off), ctx)
	if err != nil {
		var de *diag.Error
		if n := t.Node; n != nil && n.LineComment != "" && n.Style == 0 && errors.As(err, &de) {
			// expr's # (the current element in all/filter) after a space
			// starts a YAML comment in an unquoted condition.
			de.Msg += fmt.Sprintf(`; YAML took %q as a comment: quote the condition`, n.LineComment)
		}
		c.errs.Append(err)
		return nil
	}
	return e
}

// bareExpression is the expression of a scalar written bare or as one
// ${{ }}, and the byte offset in the scalar's value it starts at.
func bareExpression(t syntax.Text) (string, int) {
	src := t.Value
	trimmed := strings.TrimSpace(src)
	if strings.HasPrefix(trimmed, "${{") && strings.HasSuffix(trimmed, "}}") && strings.Count(trimmed, "${{") == 1 {
		inner := trimmed[3 : len(trimmed)-2]
		lead := strings.Index(src, "${{") + 3
		lead += len(inner) - len(strings.TrimLeft(inner, " \t\n"))
		return strings.TrimSpace(inner), lead
	}
	return src, 0
}
