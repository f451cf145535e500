// Package eval compiles and evaluates the expressions of a playbook: bare
// conditions (when, until, assert) and ${{ }} templates inside any string.
// Every expression is type-checked once, when the playbook is validated,
// against the declared types of variables and step results, so a
// misspelled field or a string compared with a number is reported before
// anything runs; its bytecode is made when it first runs.
//
// One file per job: compile.go checks expressions against the declared
// layout, refs.go checks what they read, guards.go finds the reads of a
// step's result that no guard covers (for a step a mode never runs),
// shape.go lets an expression take
// the check of another that differs only in the steps it names, and
// program.go makes a checked tree's bytecode; template.go splits ${{ }}
// templates; value.go builds an action's spec into a Value, check.go checks
// it against the spec's Go type and decode.go renders and stores it when the
// step runs; env.go holds the run's values (Env.SetStep is the one
// conversion of a result into them); structtype.go types compute's results;
// orderedmap.go keeps mapping keys in the order written; funcs.go and
// match.go are the functions expressions call; limits.go bounds what an
// expression builds (ranges, repeat, replace); messages.go rewords
// expr-lang's errors and closures.go warns of # in nested closures.
package eval

import (
	"reflect"
	"strconv"
	"strings"
	"sync"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/conf"
	"github.com/expr-lang/expr/file"
	"github.com/expr-lang/expr/parser"
	"github.com/expr-lang/expr/vm"
	"github.com/labrun/labrun/internal/lang/diag"
)

// Root names visible in every expression.
const (
	RootVars   = "vars"
	RootSteps  = "steps"
	RootEnv    = "env"
	RootResult = "result"
	// RootItem and RootIndex are the current item of a step with loop and
	// its position in the list (from 0).
	RootItem  = "item"
	RootIndex = "index"
	// RootMode is the run's mode: ModeSolve (labrun run) or ModeCheck
	// (labrun check), so an expression can tell them apart.
	RootMode = "mode"
)

// The values of mode.
const (
	ModeSolve = "solve"
	ModeCheck = "check"
)

// stepInfo is what the compiler knows of a step when checking references.
type stepInfo struct {
	index  int
	result reflect.Type
	pos    diag.Pos
}

// Compiler holds the typed scope of a playbook and compiles expressions
// against it.
//
// Expressions see one environment value, a struct built with reflect from
// the declarations: vars, steps and env are structs whose fields carry the
// declared names in expr tags, result has the step's own result type, and
// in a step with loop item has the list's element type. Typed structs let
// expr check every member access at validation time; one expr
// configuration per scope (result and item types) is kept, because its
// type cache is what keeps compiling thousands of expressions fast.
type Compiler struct {
	funcs     []Function
	varTypes  map[string]reflect.Type
	varOrder  []string
	laterVars map[string]diag.Pos // variables declared further down, not yet readable
	sources   map[string][]string // file -> its lines, for positions inside scalars
	steps     map[string]stepInfo
	stepOrder []string
	envNames  []string

	layout  *layout                // nil when declarations changed since it was built
	configs map[scope]*conf.Config // per scope, for the current layout
	// stale holds the steps whose type changed since the layout was built
	// (compute steps learn theirs from their spec). An expression that
	// reads none of them compiles against the layout as it is, and runs
	// on a copy of the environment in that layout (Env.root); one that
	// reads one of them gets a new layout. That saves a layout and its
	// configurations per compute step while the compute steps are built.
	stale map[string]bool

	// shapes keeps, by shape (shape.go), expressions checked in full
	// that gave no warning: result.exitCode == 0 and vars.ns in step
	// after step, and len(steps.X.stdout) > 0 of one step after another,
	// type-check the same wherever their configuration does. What they
	// may read besides steps does not depend on where they stand: the
	// variables and env names they can see change only with a new
	// configuration (DeclareVar, DeclareEnv), which empties this.
	shapes map[shapeKey]*shaped

	// defines are the playbook's named expressions, in order, and
	// laterDefines every name of them, for "defined further down".
	defines, laterDefines []define
	// broken maps the definitions that failed to where they are named,
	// so that a use says so.
	broken map[string]diag.Pos
	// expanded maps where a definition was used, in the expression being
	// compiled, to its name.
	expanded map[file.Location]string
	// keyOrders maps a key set to the order a map literal wrote it in
	// (keyorder.go); read while a run renders values, so a sync.Map.
	keyOrders sync.Map

	// warnings are what compiling points out without refusing (# in a
	// nested closure); validate prints them.
	warnings diag.List

	// mu serialises compiling: a run compiles too, when a failed condition
	// is explained, and the branches of a parallel step may do that at
	// the same time on the same configurations (expr's checker writes
	// into a configuration's type cache).
	mu sync.Mutex
}

// layout is the environment's shape for one set of declarations.
type layout struct {
	vars, steps, env reflect.Type // struct types
	varField         map[string]int
	stepField        map[string]int
	envField         map[string]int
	envTypes         map[scope]reflect.Type // scope -> env struct type
}

// scope is what an expression sees besides vars, steps and env: the step's
// own result (in until and assert) and, in a step with loop, the current
// item and its index. Each scope has its own environment type.
type scope struct {
	result reflect.Type // nil where there is no result
	item   reflect.Type // nil outside a step with loop
}

// NewCompiler returns a compiler that offers funcs to expressions.
func NewCompiler(funcs []Function) *Compiler {
	return &Compiler{
		funcs:    funcs,
		varTypes: map[string]reflect.Type{},
		steps:    map[string]stepInfo{},
	}
}

// Functions lists the functions expressions can call.
func (c *Compiler) Functions() []Function { return c.funcs }

func (c *Compiler) changed() { c.layout, c.configs, c.stale, c.shapes = nil, nil, nil, nil }

// Settle drops a layout that has stale steps, so that expressions compiled
// from now on, and environments made, use the final one.
func (c *Compiler) Settle() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.settle()
}

func (c *Compiler) settle() {
	if len(c.stale) > 0 {
		c.changed()
	}
}

// DeclareVar adds a variable of type t; expressions compiled afterwards may
// read it.
func (c *Compiler) DeclareVar(name string, t reflect.Type) {
	if _, ok := c.varTypes[name]; !ok {
		c.varOrder = append(c.varOrder, name)
	}
	c.varTypes[name] = t
	c.changed()
}

// DeclareLaterVar records a variable that is declared further down the
// playbook, so that reading it before its declaration is named as such.
func (c *Compiler) DeclareLaterVar(name string, pos diag.Pos) {
	if c.laterVars == nil {
		c.laterVars = map[string]diag.Pos{}
	}
	c.laterVars[name] = pos
}

// DeclareEnv makes environment variables readable as env.NAME.
func (c *Compiler) DeclareEnv(names []string) {
	c.envNames = append(c.envNames, names...)
	c.changed()
}

// DeclareStep records step id, in order, with its result type (a struct
// type; the environment holds a pointer to it).
// Declaring an id again changes its type and keeps its place: compute
// steps learn their result type only once their spec is compiled. The
// layout is rebuilt only when an expression reads the step (see stale).
func (c *Compiler) DeclareStep(id string, result reflect.Type, pos diag.Pos) {
	if s, ok := c.steps[id]; ok {
		s.result = result
		c.steps[id] = s
		if c.layout != nil {
			if c.stale == nil {
				c.stale = map[string]bool{}
			}
			c.stale[id] = true
		}
		return
	}
	c.steps[id] = stepInfo{index: len(c.stepOrder), result: result, pos: pos}
	c.stepOrder = append(c.stepOrder, id)
	c.changed()
}

// Context says where an expression stands: which step (by declaration
// index) it belongs to, so references to later steps are errors, and what
// `result` is, if anything.
type Context struct {
	// Step is the index of the step the expression belongs to; steps at
	// this index or later are not yet available. -1 means before any step
	// (variables, outputDir); AllSteps means every step has run.
	Step   int
	Result reflect.Type
	// Item is the type of the current item in a step with loop (an
	// interface type when the list's element type is only known at run
	// time); nil elsewhere.
	Item reflect.Type
	// Want is the kind the value must have (reflect.Bool for conditions),
	// or reflect.Invalid for any.
	Want reflect.Kind
	// Unavailable, when set, says why an earlier step cannot be read here
	// ("" when it can): a step running at the same time in another branch
	// of a parallel step has no result yet, however early it is declared.
	Unavailable func(step string) string
}

// AllSteps is a Context.Step value for expressions that may see every step.
const AllSteps = int(^uint(0) >> 1)

// Expr is a compiled expression.
type Expr struct {
	Src  string
	Pos  diag.Pos
	Type reflect.Type // static type; nil when only known at run time
	// Refs lists the steps.X and vars.X the expression reads, for plans.
	Refs []string
	// WholeSteps says the expression reads steps other than as
	// steps.NAME (steps[name], or steps itself), so it may read any
	// earlier step.
	WholeSteps bool
	// ResultFields lists the fields of result the expression reads
	// (result.file.x: "file"), so that a step can tell which assertions
	// grade the file it writes.
	ResultFields []string
	// prog is the bytecode, made the first time the expression runs:
	// validating a playbook type-checks every expression, and a run or
	// check evaluates only some of them (a check skips every step no
	// graded task needs), so compiling them all up front cost validate a
	// fifth of its time for programs most runs never use. Copies of a
	// cached Expr share it.
	prog *lazyProgram
	// what Explain needs to compile sub-expressions the same way
	compiler *Compiler
	scope    scope
	envType  reflect.Type
}

// resultField is the type `result` has in the environment: a pointer for
// struct results, since actions return pointers.
func resultField(t reflect.Type) reflect.Type {
	if t.Kind() == reflect.Struct {
		return reflect.PointerTo(t)
	}
	return t
}

func structOf(names []string, typeOf func(string) reflect.Type) (reflect.Type, map[string]int) {
	fields := make([]reflect.StructField, len(names))
	index := make(map[string]int, len(names))
	for i, n := range names {
		fields[i] = reflect.StructField{
			Name: "F" + strconv.Itoa(i),
			Type: typeOf(n),
			Tag:  reflect.StructTag(`expr:` + strconv.Quote(n) + ` json:` + strconv.Quote(n)),
		}
		index[n] = i
	}
	return reflect.StructOf(fields), index
}

// getLayout returns the layout as it is, stale steps and all.
func (c *Compiler) getLayout() *layout {
	if c.layout != nil {
		return c.layout
	}
	l := &layout{envTypes: map[scope]reflect.Type{}}
	l.vars, l.varField = structOf(c.varOrder, func(n string) reflect.Type { return c.varTypes[n] })
	l.steps, l.stepField = structOf(c.stepOrder, func(n string) reflect.Type { return resultField(c.steps[n].result) })
	l.env, l.envField = structOf(c.envNames, func(string) reflect.Type { return reflect.TypeOf("") })
	c.layout = l
	return l
}

// envType is the root struct for expressions in scope sc.
func (l *layout) envType(sc scope) reflect.Type {
	if t, ok := l.envTypes[sc]; ok {
		return t
	}
	fields := []reflect.StructField{
		{Name: "Vars", Type: l.vars, Tag: `expr:"vars"`},
		{Name: "Steps", Type: reflect.PointerTo(l.steps), Tag: `expr:"steps"`},
		{Name: "Env", Type: l.env, Tag: `expr:"env"`},
		{Name: "Mode", Type: reflect.TypeOf(""), Tag: `expr:"mode"`},
	}
	if sc.result != nil {
		fields = append(fields, reflect.StructField{Name: "Result", Type: resultField(sc.result), Tag: `expr:"result"`})
	}
	if sc.item != nil {
		fields = append(fields,
			reflect.StructField{Name: "Item", Type: sc.item, Tag: `expr:"item"`},
			reflect.StructField{Name: "Index", Type: reflect.TypeOf(0), Tag: `expr:"index"`})
	}
	t := reflect.StructOf(fields)
	l.envTypes[sc] = t
	return t
}

func (c *Compiler) config(sc scope) (*conf.Config, reflect.Type) {
	l := c.getLayout()
	et := l.envType(sc)
	if cfg, ok := c.configs[sc]; ok {
		return cfg, et
	}
	cfg := conf.CreateNew()
	cfg.WithEnv(reflect.Zero(et).Interface())
	for _, f := range c.funcs {
		expr.Function(f.Name, f.Fn, f.Types...)(cfg)
	}
	equalityPatches(cfg)
	if c.configs == nil {
		c.configs = map[scope]*conf.Config{}
	}
	c.configs[sc] = cfg
	return cfg, et
}

// Compile checks and compiles src, an expression written at pos as it is
// (not inside a YAML scalar whose text differs from its value).
func (c *Compiler) Compile(src string, pos diag.Pos, ctx Context) (*Expr, error) {
	return c.CompileAt(src, At(src, pos), ctx)
}

// CompileAt checks and compiles src, written where at says: each error
// points at the place in the file of the text it is about.
func (c *Compiler) CompileAt(src string, at Where, ctx Context) (*Expr, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	pos := at(0)
	sc := scope{result: ctx.Result, item: ctx.Item}
	cfg, _ := c.config(sc)
	shape, names, shapeOK := exprShape(src)
	key := shapeKey{shape, cfg, ctx.Want}
	if shapeOK {
		if e := c.reuseShape(key, src, names, ctx); e != nil {
			e.Pos = pos
			return e, nil
		}
	}
	if err := nonASCIIName(src, at); err != nil {
		return nil, err
	}
	tree, err := parser.ParseWithConfig(src, cfg)
	if err != nil {
		return nil, exprError(src, at, syntaxError(src, err))
	}
	if err := c.expandDefines(tree); err != nil {
		return nil, exprError(src, at, err)
	}
	refs, wholeSteps, results, err := c.checkRefs(src, at, tree.Node, ctx)
	if err != nil {
		return nil, err
	}
	if err := checkConstRegexps(tree); err != nil {
		return nil, exprError(src, at, err)
	}
	if err := checkConstSizes(tree); err != nil {
		return nil, exprError(src, at, err)
	}
	if err := c.checkConstArgs(tree); err != nil {
		return nil, exprError(src, at, err)
	}
	warnings := len(c.warnings)
	c.nestedPointers(src, at, tree.Node)
	c.recordKeyOrders(tree.Node)
	if c.readsStale(refs, wholeSteps) {
		c.changed()
	}
	// checked against the configuration of the layout as it is now: the
	// one cfg was taken from is gone when the expression reads a step
	// redeclared since (readsStale)
	checked, et, err := c.checkTree(tree, sc, ctx.Want)
	if err != nil {
		return nil, exprError(src, at, c.signatureError(memberError(tree, err)))
	}
	e := &Expr{Src: src, Pos: pos, prog: &lazyProgram{tree: tree, cfg: checked, want: ctx.Want}, Refs: refs, WholeSteps: wholeSteps, ResultFields: results, compiler: c, scope: sc, envType: et}
	if t := preciseType(*tree.Node.Nature()); t != nil && t.Kind() != reflect.Interface {
		e.Type = t
	}
	if shapeOK && len(c.warnings) == warnings && c.configs[sc] == cfg {
		c.keepShape(key, names, e)
	}
	return e, nil
}

func (c *Compiler) compile(src string, sc scope, want reflect.Kind) (*vm.Program, reflect.Type, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.settle()
	cfg, _ := c.config(sc)
	tree, err := c.parse(src, cfg)
	if err != nil {
		return nil, nil, err
	}
	return c.compileTree(tree, sc, want)
}

// parse parses src and expands the definitions it uses.
func (c *Compiler) parse(src string, cfg *conf.Config) (*parser.Tree, error) {
	tree, err := parser.ParseWithConfig(src, cfg)
	if err != nil {
		return nil, err
	}
	if err := c.expandDefines(tree); err != nil {
		return nil, err
	}
	return tree, nil
}

// readsStale tells whether an expression reading refs (and steps as a
// whole, or by a computed name, when wholeSteps) reads a stale step.
func (c *Compiler) readsStale(refs []string, wholeSteps bool) bool {
	if len(c.stale) == 0 {
		return false
	}
	if wholeSteps {
		return true
	}
	for _, r := range refs {
		if id, ok := strings.CutPrefix(r, RootSteps+"."); ok && c.stale[id] {
			return true
		}
	}
	return false
}
