package runner

import (
	"path/filepath"
	"reflect"

	"github.com/labrun/labrun/actions"
	"github.com/labrun/labrun/internal/lang/eval"
	"github.com/labrun/labrun/internal/lang/syntax"
	"github.com/labrun/labrun/internal/lang/yamlnode"
	"github.com/labrun/labrun/internal/leaf/outdir"
)

// Compiling each step: its spec, loop, conditions and assertions, and
// the branches of parallel steps.

// builtSpec is a step's action spec, built and checked.
type builtSpec struct {
	spec   *eval.Value
	result reflect.Type // the step's result type
}

// buildSpec builds and checks step s's action spec; a step whose result
// type comes from its spec is declared again with that type.
func (c *compiler) buildSpec(index int, s *syntax.Step, info *actions.Info) builtSpec {
	spec, errs := eval.Build(c.ec, c.file, s.Spec, c.context(index, s, nil, reflect.Invalid))
	c.errs = append(c.errs, errs...)
	b := builtSpec{spec: spec, result: info.Result}
	if len(errs) > 0 {
		return b
	}
	sc := &actions.StaticContext{PlaybookDir: filepath.Dir(c.file), HasOutputDir: c.plan.OutputDir != nil, OutputDir: c.outputDirLiteral(),
		VarText: c.varText, ScalarPos: c.ec.ScalarPos, Kinds: c.kinds, NoManifests: c.opts.NoManifests}
	result, errs := info.CheckSpec(spec, sc)
	c.errs = append(c.errs, errs...)
	c.plan.Warnings = append(c.plan.Warnings, eval.Ambiguous(spec, info.Spec)...)
	if result != info.Result {
		b.result = result
		c.ec.DeclareStep(s.ID.Value, b.result, s.ID.Pos)
	}
	return b
}

// step compiles step s, declared at index, into its plan. Its parts are
// compiled in the order their expressions may depend on: the loop (item's
// type), the action (result's type), then the conditions reading them.
func (c *compiler) step(index int, s *syntax.Step) {
	sp := newStepPlan(index, s)
	c.planOf[s] = sp
	if s.Loop != nil {
		c.loop(index, s, sp)
	}
	result := c.action(index, s, sp)
	c.around(s, sp)
	sp.Result = result
	if sp.Result == nil {
		sp.Result = reflect.TypeOf(struct{}{})
	}
	if sp.Loop != nil && result != nil {
		sp.ItemResult, sp.Result = result, loopResult(result)
	}
	if s.When.IsSet() {
		// when decides once, before any item: it sees no item
		ctx := c.context(index, s, nil, reflect.Bool)
		ctx.Item = nil
		sp.When = c.condition(s.When, ctx)
		if sp.When != nil {
			sp.whenGuard = sp.When.Implies()
		}
	}
	c.until(index, s, sp, result)
	if s.Timeout.Set {
		sp.Timeout = s.Timeout.D
	}
	if s.Interval.Set {
		sp.Interval = s.Interval.D
	}
	c.asserts(index, s, sp, result)
	c.plan.Steps = append(c.plan.Steps, sp)
}

// newStepPlan is step s's plan before anything is compiled: what the step
// says as written, and the defaults for what it does not say.
func newStepPlan(index int, s *syntax.Step) *StepPlan {
	sp := &StepPlan{
		Index:    index,
		ID:       s.ID.Value,
		Name:     s.Name.Value,
		Pos:      s.Pos,
		Retries:  s.Retries,
		Hint:     s.Hint.Value,
		Cleanup:  s.Cleanup,
		Only:     s.Only.Value,
		Task:     s.Task,
		Branch:   s.Branch,
		Interval: DefaultInterval,
		Timeout:  DefaultTimeout,
	}
	if s.Parallel != nil {
		sp.Parallel = []*BranchPlan{}
	}
	return sp
}

// action fills in step s's action and spec (built now, or ahead of the
// other steps for a result type that comes from the spec) and returns the
// action's result type; nil for a step without an action.
func (c *compiler) action(index int, s *syntax.Step, sp *StepPlan) reflect.Type {
	if s.Action == "" {
		return nil
	}
	info, _ := actions.Lookup(s.Action)
	b, built := c.specs[s]
	if !built {
		b = c.buildSpec(index, s, info)
	}
	sp.Action, sp.Spec = info, b.spec
	sp.Mutates = info.StepMutates(b.spec)
	if sp.Mutates && s.Retries > 0 {
		// An attempt that failed may have changed the system all the
		// same (an exec whose stream broke after the command started,
		// a request whose answer was lost): running it again could
		// do the change twice.
		c.errs.Add(s.RetriesPos, "retries runs the step again after an error, but %s changes the system and a failed attempt may already have done so; drop retries, or make the step read-only", s.Action)
	}
	return b.result
}

// around refuses a during list where the step's action does not run
// around steps, and a step of such an action without one, with loop or
// with retries: it runs its during steps once.
func (c *compiler) around(s *syntax.Step, sp *StepPlan) {
	runsAround := sp.Action != nil && sp.Action.RunsAround()
	switch {
	case s.During != nil && sp.Action == nil && s.Action == "":
		c.errs.Add(s.DuringPos, "during holds the steps an action runs around, but this step has no action; add capture: with the stream to listen to")
	case s.During != nil && sp.Action != nil && !runsAround:
		c.errs.Add(s.DuringPos, "during holds the steps an action runs around (capture); %s runs no steps: put them before or after this step", s.Action)
	case runsAround && s.During == nil:
		c.errs.Add(s.ActionPos, "%s needs during: the steps to run while it listens (the steps that make the traffic)", s.Action)
	}
	if !runsAround {
		return
	}
	if s.Loop != nil {
		c.errs.Add(syntax.Pos(c.file, s.Loop), "%s runs its during steps once; it takes no loop (loop over the steps under during instead)", s.Action)
	}
	if s.Retries > 0 {
		c.errs.Add(s.RetriesPos, "%s runs its during steps once; retries would run them again", s.Action)
	}
}

// until compiles step s's until and failWhen, which read the action's
// result, and refuses a wait that cannot work: an action that needs until
// without it, until without an action, or polling an action that changes
// the system.
func (c *compiler) until(index int, s *syntax.Step, sp *StepPlan, result reflect.Type) {
	if sp.Action != nil && sp.Action.NeedsUntil && !s.Until.IsSet() {
		c.errs.Add(s.ActionPos, "%s needs until: the condition to wait for (e.g. until: result.ready == 2)", s.Action)
	}
	if !s.Until.IsSet() {
		return
	}
	if s.Action == "" {
		c.errs.Add(s.Until.Pos, "until needs an action to repeat")
	} else if sp.Mutates {
		c.errs.Add(s.Until.Pos, "until repeats the step, but %s changes the system; poll with a read-only step (get, exec, run) after it", s.Action)
	}
	sp.Until = c.condition(s.Until, c.context(index, s, result, reflect.Bool))
	sp.Timeout = DefaultUntilTimeout
	if f := s.FailWhen; f != nil && f.That.IsSet() {
		if e := c.condition(f.That, c.context(index, s, result, reflect.Bool)); e != nil {
			sp.FailWhen = &AssertPlan{That: e, Message: f.Message.Value, Hint: f.Hint.Value}
		}
	}
}

// asserts compiles step s's assertions, which read the action's result.
func (c *compiler) asserts(index int, s *syntax.Step, sp *StepPlan, result reflect.Type) {
	for _, a := range s.Assert {
		if !a.That.IsSet() {
			continue
		}
		e := c.condition(a.That, c.context(index, s, result, reflect.Bool))
		if e != nil {
			sp.Asserts = append(sp.Asserts, &AssertPlan{That: e, Message: a.Message.Value, Hint: a.Hint.Value})
		}
	}
}

// loopResult is the result type of a step with loop whose action returns
// result: one result per item, as the action returns them.
func loopResult(result reflect.Type) reflect.Type {
	return reflect.SliceOf(reflect.PointerTo(result))
}

// loop builds step s's list and records the type item has in the step's
// other expressions: the list's element type when an expression's type
// says it, else any value. Like an action's spec, and unlike a condition,
// the list is a value: a YAML list, or one ${{ }} expression.
func (c *compiler) loop(index int, s *syntax.Step, sp *StepPlan) {
	pos := syntax.Pos(c.file, s.Loop)
	if c.items == nil {
		c.items = map[*syntax.Step]reflect.Type{}
	}
	// When the list is wrong, item is any value in the step's other
	// expressions: a wrong loop is reported once, not again by every
	// expression reading item as if the step had no loop.
	defer func() {
		if _, ok := c.items[s]; !ok {
			c.items[s] = reflect.TypeOf((*any)(nil)).Elem()
		}
	}()
	switch info, _ := actions.Lookup(s.Action); {
	case s.Action == "":
		c.errs.Add(pos, "loop needs an action to repeat")
		return
	case info != nil && info.DynamicResult:
		c.errs.Add(pos, "%s computes its values once; map over the list inside its expressions instead of loop", s.Action)
		return
	}
	v, errs := eval.Build(c.ec, c.file, s.Loop, c.context(index, s, nil, reflect.Invalid))
	if len(errs) == 0 {
		errs = eval.CheckNumbers(v)
	}
	c.errs = append(c.errs, errs...)
	if len(errs) > 0 {
		return
	}
	item := reflect.TypeOf((*any)(nil)).Elem()
	switch e := v.WholeExpr(); {
	case e != nil && e.Type != nil:
		if e.Type.Kind() != reflect.Slice && e.Type.Kind() != reflect.Array {
			c.errs.Add(pos, "loop needs a list, but `%s` is %s", e.Src, eval.PlainTypes(e.Type.String()))
			return
		}
		item = e.Type.Elem()
	case e == nil && v.Items() == nil:
		c.errs.Add(pos, "loop needs a list or a ${{ }} expression giving one, found %s", yamlnode.Describe(s.Loop))
		return
	}
	n := uint64(len(v.Items()))
	if e := v.WholeExpr(); e != nil {
		n, _ = eval.RangeLen(e.Src)
	}
	if n > MaxLoopItems {
		c.errs.Add(pos, "%s", loopTooLong(n))
		return
	}
	sp.Loop, sp.Item = v, item
	c.items[s] = item
}

// linkBranches fills each parallel step's branches with their plans, and
// refuses two branches writing the same file: its content would depend on
// which branch finished last.
func (c *compiler) linkBranches() {
	for _, s := range c.pb.AllSteps() {
		g := c.planOf[s]
		if g == nil {
			continue
		}
		for _, d := range s.During {
			if dp := c.planOf[d]; dp != nil {
				dp.Around = g
				g.During = append(g.During, dp)
			}
		}
		if s.Parallel == nil {
			continue
		}
		writers := map[string]string{} // path -> branch
		for _, b := range s.Parallel {
			bp := &BranchPlan{Name: b.Name}
			for _, bs := range b.Steps {
				sp := c.planOf[bs]
				if sp == nil {
					continue
				}
				sp.Group = g
				bp.Steps = append(bp.Steps, sp)
				if w := sp.Writes(); w != "" {
					// a.json and ./sub/../a.json are one file
					if rel, err := outdir.Resolve(c.outputDirLiteral(), w); err == nil {
						w = rel
					}
					if other, ok := writers[w]; ok && other != b.Name {
						c.errs.Add(sp.Pos, "branches %s and %s of parallel step %s both write %s; the file would hold whichever finished last", other, b.Name, s.ID.Value, w)
					}
					writers[w] = b.Name
				}
			}
			g.Parallel = append(g.Parallel, bp)
		}
	}
}
