package runner

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"reflect"
	"sort"
	"time"

	"github.com/labrun/labrun/actions"
	"github.com/labrun/labrun/internal/lang/diag"
	"github.com/labrun/labrun/internal/lang/eval"
	"github.com/labrun/labrun/internal/lang/syntax"
)

// The plan Compile hands to Run: steps with their expressions compiled,
// and what each step reads and writes.

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
	// whenGuard is what holds wherever When is true (a test of mode
	// in it, a test that a step has a result), for RunsIn.
	whenGuard eval.Guard
	Until     *eval.Expr
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
	// During holds the steps the step's action runs around (capture);
	// Around is the step whose during list holds this step.
	During []*StepPlan
	Around *StepPlan
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

// Digest names the playbook's text: "sha256:" and the hex SHA-256 of the
// file as read. A report carries it, so that a report is only taken as
// that of the playbook it was written by, in that version (check
// --rerun-failed); the variables a run was given do not change it.
func (p *Plan) Digest() string {
	sum := sha256.Sum256(p.Playbook.Source)
	return "sha256:" + hex.EncodeToString(sum[:])
}
