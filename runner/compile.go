// Package runner turns a loaded playbook into a checked plan (Compile) and
// executes it (Run). Compile needs no cluster and no network: everything
// `labrun validate` reports comes from here.
package runner

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/labrun/labrun/actions"
	"github.com/labrun/labrun/internal/lang/diag"
	"github.com/labrun/labrun/internal/lang/eval"
	"github.com/labrun/labrun/internal/lang/syntax"
	"github.com/labrun/labrun/internal/lang/yamlnode"
	"github.com/labrun/labrun/internal/outdir"
	"github.com/labrun/labrun/internal/secret"
	"gopkg.in/yaml.v3"
)

// Defaults for steps that do not say.
const (
	DefaultTimeout      = 5 * time.Minute  // any step
	DefaultUntilTimeout = 60 * time.Second // a step with until
	DefaultInterval     = 250 * time.Millisecond
)

// Plan is a playbook with every expression compiled and checked.
type Plan struct {
	Playbook *syntax.Playbook
	Vars     []*VarPlan
	EnvNames []string
	// Secret lists the variables and env names whose values are
	// redacted from everything labrun writes or prints: those the
	// playbook lists under secret and those named like a secret.
	Secret    []string
	OutputDir *eval.Value // nil when the playbook writes nothing
	// Warnings are what validate points out without refusing: YAML that
	// can be read two ways.
	Warnings diag.List
	Steps    []*StepPlan // main steps, then finally steps
	// Tasks are the lab's tasks, numbered from 1; nil when the playbook
	// declares none.
	Tasks    []*syntax.Task
	compiler *eval.Compiler
}

// VarPlan is a variable with its (possibly overridden) value.
type VarPlan struct {
	Name  string
	Type  reflect.Type
	Value *eval.Value
}

// StepPlan is one step ready to run.
type StepPlan struct {
	Index  int
	ID     string
	Name   string
	Pos    diag.Pos
	Action *actions.Info // nil for an assert-only step
	Spec   *eval.Value
	When   *eval.Expr
	Until  *eval.Expr
	// FailWhen, with Until, ends the wait as a failure when it holds.
	FailWhen *AssertPlan
	// Loop, when set, gives the list the action runs once per item of;
	// Item is the type item has (an interface type when the list's
	// element type is only known at run time).
	Loop     *eval.Value
	Item     reflect.Type
	Timeout  time.Duration
	Interval time.Duration
	Retries  int
	Asserts  []*AssertPlan
	Hint     string
	Mutates  bool
	Cleanup  bool
	// Only is syntax.OnlySolve or syntax.OnlyCheck for a step that runs
	// in that mode only; "" for one that runs in both.
	Only string
	// Task is the lab's task the step belongs to (nil without tasks).
	Task *syntax.Task
	// Parallel holds a parallel step's branches; nil for other steps.
	Parallel []*BranchPlan
	// Group is the parallel step this step runs in (nil at the top
	// level), and Branch the name of its branch.
	Group  *StepPlan
	Branch string
	// Result is the type of the step's result: the action's (a struct),
	// derived from the spec for compute, or for a step with loop a list
	// of ItemResult, one per item.
	Result     reflect.Type
	ItemResult reflect.Type
}

// AssertPlan is a compiled assertion.
type AssertPlan struct {
	That    *eval.Expr
	Message string
	Hint    string
}

// BranchPlan is one branch of a parallel step: steps run in order.
type BranchPlan struct {
	Name  string
	Steps []*StepPlan
}

// ActionName is the step's action, "assert" for an assert-only step and
// "parallel" for a parallel step.
func (s *StepPlan) ActionName() string {
	switch {
	case s.Parallel != nil:
		return syntax.ParallelKey
	case s.Action == nil:
		return "assert"
	}
	return s.Action.Name
}

// Label is the name shown in progress: the step's name, else its id.
func (s *StepPlan) Label() string {
	if s.Name != "" {
		return s.Name
	}
	return s.ID
}

// Options changes how a playbook is compiled.
type Options struct {
	// Set holds --set name=value overrides, value as typed on the
	// command line (parsed as YAML, then fitted to the variable's type).
	Set []string
	// VarsFiles are YAML files of name: value overrides (--vars).
	VarsFiles []string
	// Functions are offered to expressions; nil means DefaultFunctions.
	Functions []eval.Function
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
		pb:   pb,
		file: pb.File,
		ec:   eval.NewCompiler(funcs),
		plan: &Plan{Playbook: pb, Tasks: pb.Tasks},
	}
	c.plan.compiler = c.ec
	c.ec.SetSource(pb.File, pb.Source)
	overrides := c.overrides(opts)
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
}

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
	sc := &actions.StaticContext{PlaybookDir: filepath.Dir(c.file), HasOutputDir: c.plan.OutputDir != nil, OutputDir: c.outputDirLiteral()}
	result, errs := info.CheckSpec(spec, sc)
	c.errs = append(c.errs, errs...)
	c.plan.Warnings = append(c.plan.Warnings, eval.Ambiguous(spec, info.Spec)...)
	if result != info.Result {
		b.result = result
		c.ec.DeclareStep(s.ID.Value, b.result, s.ID.Pos)
	}
	return b
}

// override is a value for a variable from outside the playbook.
type override struct {
	node   *yaml.Node
	file   string // where it came from, for errors
	raw    string // the text after = for --set
	source string
}

// prefix names a --set override in messages; a vars file has positions.
func (o override) prefix() string {
	if o.source == "" {
		return ""
	}
	return o.source + ": "
}

// pos is the override's place: its key in a vars file, else nowhere.
func (o override) pos() diag.Pos {
	if o.node != nil && o.file != "" {
		return syntax.Pos(o.file, o.node)
	}
	return diag.Pos{}
}

func (c *compiler) overrides(opts Options) map[string]override {
	out := map[string]override{}
	for _, f := range opts.VarsFiles {
		data, err := os.ReadFile(f)
		if err != nil {
			c.errs.Add(diag.Pos{File: f}, "cannot read vars file: %v", err)
			continue
		}
		var doc yaml.Node
		if err := yaml.Unmarshal(data, &doc); err != nil {
			c.errs.Add(diag.Pos{File: f, Line: 1, Col: 1}, "invalid YAML: %v", strings.TrimPrefix(err.Error(), "yaml: "))
			continue
		}
		if len(doc.Content) == 0 {
			continue
		}
		m := doc.Content[0]
		if m.Kind != yaml.MappingNode {
			c.errs.Add(syntax.Pos(f, m), "a vars file must be a mapping of name: value")
			continue
		}
		for i := 0; i+1 < len(m.Content); i += 2 {
			out[m.Content[i].Value] = override{node: m.Content[i+1], file: f}
		}
	}
	for _, s := range opts.Set {
		name, raw, ok := strings.Cut(s, "=")
		if !ok || name == "" {
			c.errs.Add(diag.Pos{}, "--set %q: expected name=value", s)
			continue
		}
		var doc yaml.Node
		node := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: raw}
		if err := yaml.Unmarshal([]byte(raw), &doc); err == nil && len(doc.Content) > 0 {
			node = doc.Content[0]
		}
		out[name] = override{node: node, raw: raw, source: "--set " + name}
	}
	return out
}

// varType is the type a YAML default gives a variable.
func varType(n *yaml.Node) reflect.Type {
	switch n.Kind {
	case yaml.SequenceNode:
		return reflect.TypeOf([]any{})
	case yaml.MappingNode:
		return reflect.TypeOf(map[string]any{})
	case yaml.ScalarNode:
		switch n.Tag {
		case "!!int":
			return reflect.TypeOf(0)
		case "!!float":
			return reflect.TypeOf(0.0)
		case "!!bool":
			return reflect.TypeOf(false)
		case "!!null":
			return reflect.TypeOf((*any)(nil)).Elem()
		}
	}
	return reflect.TypeOf("")
}

func (c *compiler) vars(overrides map[string]override) {
	var names []string
	for _, v := range c.pb.Vars {
		names = append(names, v.Name)
	}
	for name, o := range overrides {
		if !slices.Contains(names, name) {
			c.errs.Add(o.pos(), "%sthe playbook has no variable %q%s", o.prefix(), name, diag.DidYouMean(name, names))
		}
	}
	for _, v := range c.pb.Vars {
		c.ec.DeclareLaterVar(v.Name, v.Pos)
	}
	for _, v := range c.pb.Vars {
		t := varType(v.Value)
		node, file := v.Value, c.file
		if o, ok := overrides[v.Name]; ok {
			node = c.fitOverride(v, o)
			if o.file != "" {
				file = o.file
			} else {
				file = "--set"
			}
		}
		val, errs := eval.Build(c.ec, file, node, eval.Context{Step: -1})
		c.errs = append(c.errs, errs...)
		if val != nil && len(errs) == 0 {
			if vt := exprType(val); vt != nil {
				t = vt
			}
		}
		c.ec.DeclareVar(v.Name, t)
		c.plan.Vars = append(c.plan.Vars, &VarPlan{Name: v.Name, Type: t, Value: val})
	}
}

// exprType is the static type of a value that is one whole expression.
func exprType(v *eval.Value) reflect.Type {
	if e := v.WholeExpr(); e != nil {
		return e.Type
	}
	return nil
}

// fitOverride makes a command-line value take the variable's declared type:
// --set port=8080 stays a number for a number variable and becomes the
// string "8080" for a string variable.
func (c *compiler) fitOverride(v *syntax.Var, o override) *yaml.Node {
	n := o.node
	want := varType(v.Value)
	got := varType(n)
	switch {
	case want == got, want.Kind() == reflect.Interface:
		return n
	case want.Kind() == reflect.String && n.Kind == yaml.ScalarNode:
		val := n.Value
		if o.raw != "" {
			val = o.raw
		}
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: val, Line: n.Line, Column: n.Column}
	case want.Kind() == reflect.Float64 && got.Kind() == reflect.Int:
		return n
	}
	pos := diag.Pos{}
	if o.file != "" {
		pos = syntax.Pos(o.file, n)
	}
	c.errs.Add(pos, "%svariable %s is %s (its default at %s), but the value given is %s", o.prefix(), v.Name, typeWord(want), v.Pos, yamlnode.Describe(n))
	return v.Value
}

func typeWord(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Int:
		return "a whole number"
	case reflect.Float64:
		return "a number"
	case reflect.Bool:
		return "a boolean"
	case reflect.Slice:
		return "a list"
	case reflect.Map:
		return "a mapping"
	}
	return "a string"
}

func (c *compiler) env() {
	first := map[string]diag.Pos{}
	for _, e := range c.pb.Env {
		if !envNameRe.MatchString(e.Value) {
			c.errs.Add(e.Pos, "env name %q can never be read as env.NAME: expected letters, digits and _, not starting with a digit", e.Value)
			continue
		}
		if p, dup := first[e.Value]; dup {
			c.errs.Add(e.Pos, "env name %s is declared twice (first at %s)", e.Value, p)
			continue
		}
		first[e.Value] = e.Pos
		c.plan.EnvNames = append(c.plan.EnvNames, e.Value)
	}
	c.ec.DeclareEnv(c.plan.EnvNames)
}

// envNameRe is what env.NAME can read: an identifier.
var envNameRe = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// secrets collects the secret names: those listed, which must be declared
// variables or env names, and those secret.Name recognises.
func (c *compiler) secrets() {
	var declared []string
	for _, v := range c.pb.Vars {
		declared = append(declared, v.Name)
	}
	declared = append(declared, c.plan.EnvNames...)
	for _, s := range c.pb.Secret {
		if !slices.Contains(declared, s.Value) {
			c.errs.Add(s.Pos, "secret %q is neither a variable nor an env name of this playbook%s", s.Value, diag.DidYouMean(s.Value, declared))
		}
	}
	for _, name := range declared {
		if secret.Name(name) || slices.ContainsFunc(c.pb.Secret, func(t syntax.Text) bool { return t.Value == name }) {
			c.plan.Secret = append(c.plan.Secret, name)
		}
	}
}

func (c *compiler) outputDir() {
	od := c.pb.OutputDir
	if !od.IsSet() {
		return
	}
	node := od.Node
	if node.Kind == yaml.ScalarNode && node.Tag != "!!str" {
		// a path is a string: outputDir: 2024 is the directory 2024,
		// as written, like any string field
		n := *node
		n.Tag = "!!str"
		node = &n
	}
	v, errs := eval.Build(c.ec, c.file, node, eval.Context{Step: -1})
	c.errs = append(c.errs, errs...)
	if lit, ok := v.Literal(); ok && lit == "" {
		c.errs.Add(od.Pos, "outputDir is empty; expected a directory path")
	}
	if e := v.WholeExpr(); e != nil && e.Type != nil && e.Type.Kind() != reflect.String && e.Type.Kind() != reflect.Interface {
		c.errs.Add(e.Pos, "outputDir must be a directory path, but `%s` is %s", e.Src, eval.PlainTypes(e.Type.String()))
	}
	c.plan.OutputDir = v
}

// outputDirLiteral is the output directory when the playbook writes it
// without expressions, made absolute as the run will; "" otherwise.
func (c *compiler) outputDirLiteral() string {
	if c.plan.OutputDir == nil {
		return ""
	}
	lit, ok := c.plan.OutputDir.Literal()
	s, _ := lit.(string)
	if !ok || s == "" {
		return ""
	}
	abs, err := filepath.Abs(s)
	if err != nil {
		return ""
	}
	return abs
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

func (c *compiler) step(index int, s *syntax.Step) {
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
		Interval: DefaultInterval,
		Timeout:  DefaultTimeout,
	}
	c.planOf[s] = sp
	sp.Branch = s.Branch
	var result reflect.Type
	if s.Parallel != nil {
		sp.Parallel = []*BranchPlan{}
	}
	if s.Loop != nil {
		c.loop(index, s, sp)
	}
	if s.Action != "" {
		info, _ := actions.Lookup(s.Action)
		b, built := c.specs[s]
		if !built {
			b = c.buildSpec(index, s, info)
		}
		sp.Action, sp.Spec, result = info, b.spec, b.result
		sp.Mutates = info.StepMutates(b.spec)
		if sp.Mutates && s.Retries > 0 {
			// An attempt that failed may have changed the system all the
			// same (an exec whose stream broke after the command started,
			// a request whose answer was lost): running it again could
			// do the change twice.
			c.errs.Add(s.RetriesPos, "retries runs the step again after an error, but %s changes the system and a failed attempt may already have done so; drop retries, or make the step read-only", s.Action)
		}
	}
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
	}
	if sp.Action != nil && sp.Action.NeedsUntil && !s.Until.IsSet() {
		c.errs.Add(s.ActionPos, "%s needs until: the condition to wait for (e.g. until: result.ready == 2)", s.Action)
	}
	if s.Until.IsSet() {
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
	if s.Timeout.Set {
		sp.Timeout = s.Timeout.D
	}
	if s.Interval.Set {
		sp.Interval = s.Interval.D
	}
	for _, a := range s.Assert {
		if !a.That.IsSet() {
			continue
		}
		e := c.condition(a.That, c.context(index, s, result, reflect.Bool))
		if e != nil {
			sp.Asserts = append(sp.Asserts, &AssertPlan{That: e, Message: a.Message.Value, Hint: a.Hint.Value})
		}
	}
	c.plan.Steps = append(c.plan.Steps, sp)
}

// context is where an expression of step s (declared at index) stands.
func (c *compiler) context(index int, s *syntax.Step, result reflect.Type, want reflect.Kind) eval.Context {
	return eval.Context{Step: index, Result: result, Item: c.items[s], Want: want, Unavailable: func(id string) string {
		return c.unavailable(s, id)
	}}
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
	sp.Loop, sp.Item = v, item
	c.items[s] = item
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
	case t.Group != nil && t.Group == s.Group && t.Branch != s.Branch:
		return fmt.Sprintf("step %q runs in branch %s of parallel step %s, at the same time as this step (branch %s); read it in a step after %s", id, t.Branch, t.Group.ID.Value, s.Branch, t.Group.ID.Value)
	}
	return ""
}

// linkBranches fills each parallel step's branches with their plans, and
// refuses two branches writing the same file: its content would depend on
// which branch finished last.
func (c *compiler) linkBranches() {
	for _, s := range c.pb.AllSteps() {
		g := c.planOf[s]
		if g == nil || s.Parallel == nil {
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

// condition compiles a bare expression; ${{ }} around it is accepted too,
// since authors write conditions both ways.
func (c *compiler) condition(t syntax.Text, ctx eval.Context) *eval.Expr {
	src, pos := bareExpression(t)
	e, err := c.ec.Compile(src, pos, ctx)
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
// ${{ }}, and where it starts in the file.
func bareExpression(t syntax.Text) (string, diag.Pos) {
	src, pos := t.Value, t.Pos
	trimmed := strings.TrimSpace(src)
	if strings.HasPrefix(trimmed, "${{") && strings.HasSuffix(trimmed, "}}") && strings.Count(trimmed, "${{") == 1 {
		inner := trimmed[3 : len(trimmed)-2]
		lead := strings.Index(src, "${{") + 3
		lead += len(inner) - len(strings.TrimLeft(inner, " "))
		src = strings.TrimSpace(inner)
		if t.Node != nil && t.Node.Style == 0 {
			pos.Col += lead
		}
	}
	if t.Node != nil && t.Node.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) != 0 {
		pos.Col++
	}
	return src, pos
}

// defines declares the playbook's named expressions, after the variables
// they may read and before the steps that use them.
func (c *compiler) defines() {
	var names []string
	var at []diag.Pos
	for _, d := range c.pb.Define {
		names, at = append(names, d.Name), append(at, d.Pos)
	}
	c.ec.DeclareDefines(names, at)
	for _, d := range c.pb.Define {
		src, pos := bareExpression(d.Expr)
		if err := c.ec.Define(d.Name, d.Pos, src, pos); err != nil {
			c.errs.Append(err)
		}
	}
}

// Reads lists the steps and variables a step's expressions read.
func (s *StepPlan) Reads() []string {
	seen := map[string]bool{}
	var out []string
	for _, e := range s.exprs() {
		for _, r := range e.Refs {
			if !seen[r] {
				seen[r] = true
				out = append(out, r)
			}
		}
	}
	sort.Strings(out)
	return out
}

// ReadsAllSteps says one of the step's expressions reads steps other than
// by name (steps[x]), so it may read any step before it.
func (s *StepPlan) ReadsAllSteps() bool {
	for _, e := range s.exprs() {
		if e.WholeSteps {
			return true
		}
	}
	return false
}

// exprs are all the step's expressions: spec, loop, when, until,
// failWhen and assertions.
func (s *StepPlan) exprs() []*eval.Expr {
	var exprs []*eval.Expr
	if s.Spec != nil {
		exprs = append(exprs, s.Spec.Exprs()...)
	}
	if s.Loop != nil {
		exprs = append(exprs, s.Loop.Exprs()...)
	}
	for _, e := range []*eval.Expr{s.When, s.Until} {
		if e != nil {
			exprs = append(exprs, e)
		}
	}
	if s.FailWhen != nil {
		exprs = append(exprs, s.FailWhen.That)
	}
	for _, a := range s.Asserts {
		exprs = append(exprs, a.That)
	}
	return exprs
}

// Writes describes the file the step produces, as written in the playbook
// (it may hold expressions): the value of the key its action declares as
// WritesKey.
func (s *StepPlan) Writes() string {
	if s.Action == nil || s.Action.WritesKey == "" || s.Spec == nil {
		return ""
	}
	p := s.Spec.Lookup(s.Action.WritesKey)
	if p == nil {
		return ""
	}
	if lit, ok := p.Literal(); ok {
		return fmt.Sprint(lit)
	}
	return p.Node.Value
}
