// Package syntax reads the syntax of labrun playbooks: YAML files that
// declare variables, ordered steps and cleanup steps. It only parses and
// checks the shape of the document (keys, YAML types, duplicates,
// positions); it knows nothing about expressions or what an action does, so
// that it can be tested and fuzzed on its own and never needs a cluster.
// (The playbooks/ folder holds the labs; this package is their grammar.)
package syntax

import (
	"time"

	"github.com/labrun/labrun/internal/lang/diag"
	"gopkg.in/yaml.v3"
)

// Playbook is a loaded playbook file. Struct tags describe the YAML shape;
// the JSON Schema generator reads the same tags, so the schema an editor
// uses and the checks `labrun validate` runs cannot drift apart.
type Playbook struct {
	Schema      string     `yaml:"$schema" doc:"JSON Schema of this file, for editors; ignored by labrun."`
	Name        string     `yaml:"name" required:"true" doc:"Short name of the lab, used in reports."`
	Description string     `yaml:"description" doc:"What the lab teaches."`
	Vars        []*Var     `yaml:"vars" doc:"Variables with their defaults, in order; later values may use earlier ones. Override with --set name=value or --vars FILE. The YAML type of the default is the variable's type."`
	Define      []*Define  `yaml:"define" doc:"Named expressions, in order: name to a bare expression (steps, vars and env visible; earlier names usable). Any later expression may use the name where the expression would stand; each use is type-checked where it stands."`
	Env         []Text     `yaml:"env" doc:"Names of environment variables the playbook may read as env.NAME; no others are visible."`
	Secret      []Text     `yaml:"secret" doc:"Names of variables and env names whose values are secret: labrun writes [REDACTED] in their place in the journal, reports, progress and messages. Names holding TOKEN, PASSWORD, PASSWD, SECRET, CREDENTIAL, PRIVATE or the word KEY are secret without being listed."`
	OutputDir   Text       `yaml:"outputDir" doc:"Directory every written file must stay inside (may use expressions, e.g. ${{ vars.out }}). Relative write paths are taken from here."`
	Tasks       []*Task    `yaml:"tasks" doc:"The lab's tasks in the order the lab numbers them (1, 2, ...): task id to its title. Every step then names its task with task: ID; progress, reports and labrun check (--task N, --upto N) show and grade the lab task by task."`
	Steps       []*Step    `yaml:"steps" required:"true" doc:"The steps, run in order."`
	Finally     []*Step    `yaml:"finally" doc:"Cleanup steps that always run at the end, also after a failure or Ctrl-C."`
	Pos         diag.Pos   `yaml:"-"`
	File        string     `yaml:"-"`
	Source      []byte     `yaml:"-"` // the file's text, for positions inside scalars
	Root        *yaml.Node `yaml:"-"`
}

// Var is one declared variable. Value keeps the YAML node: its tag gives the
// variable's type and it may hold ${{ }} templates over earlier variables.
type Var struct {
	Name  string
	Pos   diag.Pos
	Value *yaml.Node
}

// Task is one task of the lab, as the learner sees it: a title and the
// steps that do it. Number is its place in tasks, from 1, which is how the
// lab's text and labrun check --task name it.
type Task struct {
	ID     string
	Title  string
	Number int
	Pos    diag.Pos
}

// Define is one named expression of the playbook's define block.
type Define struct {
	Name string
	Pos  diag.Pos
	Expr Text
}

// Text is a scalar string together with where it was written, so that
// errors found later (in an expression, say) can point back into the file.
type Text struct {
	Value string
	Pos   diag.Pos
	Node  *yaml.Node
}

// IsSet reports whether the text was present in the file.
func (t Text) IsSet() bool { return t.Node != nil }

// Duration is a YAML duration: "500ms", "2m", or a number of seconds.
type Duration struct {
	D   time.Duration
	Pos diag.Pos
	Set bool
}

// Step is one action plus its control fields. The action itself stays a raw
// YAML node: only the action's own spec type, known to the runner, can say
// what is valid inside it.
type Step struct {
	ID       Text         `yaml:"id" required:"true" doc:"Identifier, unique in the playbook; later expressions read this step's result as steps.<id>. Letters, digits and _ only."`
	Name     Text         `yaml:"name" doc:"Human description shown in progress and reports."`
	When     Text         `yaml:"when" doc:"Expression; the step runs only when it is true."`
	Loop     *yaml.Node   `yaml:"loop" doc:"A list, or a ${{ }} expression giving one; the action runs once per item, in order, with item and index (from 0) visible in its spec, until and assert. The step's result is the list of the items' results."`
	Until    Text         `yaml:"until" doc:"Expression over result (and steps, vars); the step is repeated every interval until it holds or timeout passes. Only for read-only actions."`
	FailWhen *FailWhen    `yaml:"failWhen" doc:"With until: an expression over result (and steps, vars) that, when true, fails the step at once instead of waiting on; a string, or a mapping with that/message/hint."`
	Timeout  Duration     `yaml:"timeout" doc:"Limit for the step, including all until/retries attempts (e.g. 30s, 2m)."`
	Interval Duration     `yaml:"interval" doc:"Pause between until polls or retries (default 250ms)."`
	Retries  int          `yaml:"retries" doc:"How many more times to try when the action fails with an error (not when an assertion fails). Only for read-only steps: a failed attempt of a step that changes the system may have done the change."`
	Assert   []*Assertion `yaml:"assert" doc:"Conditions that must hold after the step; each may carry a message and a learner hint."`
	Hint     Text         `yaml:"hint" doc:"Hint shown to the learner when this step fails."`
	TaskRef  Text         `yaml:"task" doc:"Id of the task (declared under tasks) this step belongs to; on a parallel step, the task of each branch step that names none."`
	Only     Text         `yaml:"only" doc:"solve or check: the step runs only when labrun solves the lab (labrun run), or only when it grades a learner's work (labrun check); in the other mode it is skipped and has no result (nil), which an expression that mode evaluates reads only behind a guard (mode == \"solve\" ? ... : ..., steps.ID?.field ?? default)."`

	// Action is the name of the one action key of the step ("" for an
	// assert-only step) and Spec its YAML value.
	Action    string     `yaml:"-"`
	ActionPos diag.Pos   `yaml:"-"`
	Spec      *yaml.Node `yaml:"-"`
	// RetriesPos is where the value of retries is, for a check that
	// needs the action to judge it.
	RetriesPos diag.Pos `yaml:"-"`
	Pos        diag.Pos `yaml:"-"`
	Cleanup    bool     `yaml:"-"` // declared under finally
	// Task is the task the step belongs to: the one it names, else its
	// parallel step's; nil in a playbook without tasks.
	Task *Task `yaml:"-"`

	// Parallel holds the branches of a parallel step (the key parallel
	// instead of an action): each branch runs its steps in order, all
	// branches at the same time. ParallelPos is where the key is.
	Parallel    []*Branch `yaml:"-"`
	ParallelPos diag.Pos  `yaml:"-"`
	// Group is the parallel step this step is a branch step of (nil at
	// the top level), and Branch the name of its branch.
	Group  *Step  `yaml:"-"`
	Branch string `yaml:"-"`

	// During holds the steps a step's action runs around (the key during
	// beside an action such as capture): they run in order while the
	// action listens, and the step ends after them. DuringPos is where
	// the key is. Around is the step whose during list holds this step
	// (nil elsewhere).
	During    []*Step  `yaml:"-"`
	DuringPos diag.Pos `yaml:"-"`
	Around    *Step    `yaml:"-"`
}

// Branch is one named list of steps of a parallel step.
type Branch struct {
	Name  string
	Pos   diag.Pos
	Steps []*Step
}

// Assertion is a condition checked after a step ran. In YAML it is either a
// bare expression string or a mapping with that/message/hint.
type Assertion struct {
	That    Text `yaml:"that" required:"true" doc:"Expression that must be true; result, steps, vars and env are visible."`
	Message Text `yaml:"message" doc:"What it means when the condition fails."`
	Hint    Text `yaml:"hint" doc:"What the learner could look at to fix it."`
	Pos     diag.Pos
}

// FailWhen is the condition that ends a step's until as a failure, when
// the state awaited can no longer come (a pod restarting, an error
// answer). In YAML it is either a bare expression string or a mapping with
// that/message/hint.
type FailWhen struct {
	That    Text `yaml:"that" required:"true" doc:"Expression that, when true, fails the step at once; result, steps, vars and env are visible."`
	Message Text `yaml:"message" doc:"What it means when the condition holds: the step's error."`
	Hint    Text `yaml:"hint" doc:"What the learner could look at to fix it (instead of the step's hint)."`
	Pos     diag.Pos
}

// The values of a step's only.
const (
	OnlySolve = "solve"
	OnlyCheck = "check"
)

// AllSteps returns the steps then the finally steps, the order in which
// ids are declared: a parallel step comes first, then its branches' steps,
// branch after branch; a step with during comes before its during steps.
func (p *Playbook) AllSteps() []*Step {
	var out []*Step
	var add func(steps []*Step)
	add = func(steps []*Step) {
		for _, s := range steps {
			out = append(out, s)
			for _, b := range s.Parallel {
				add(b.Steps)
			}
			add(s.During)
		}
	}
	add(p.Steps)
	add(p.Finally)
	return out
}
