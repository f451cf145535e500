// Package actions holds what a playbook step can do. Each action lives in
// its own file and declares its spec type (the YAML under the action key),
// its result type (what later expressions read as steps.<id>), whether it
// changes the system, and how it runs. The runner and `labrun validate`
// learn everything about an action from this registry by reflection, so
// adding an action is adding one file.
//
// One rule for heavy dependencies: a heavy library (client-go, cilium/ebpf)
// is reached only through an interface, and spec and result types never
// import one. The interface and the types that cross it live in a leaf
// package (cluster for Kubernetes, bpfmaps/entries for Cilium's BPF maps);
// the implementation (kube, bpfmaps) is handed over in Runtime by the
// command's run path. So validation, which needs every action's spec and
// result but runs none, links no heavy library: cmd/labrun's dependency
// test follows every import of validate's path and prints the chain that
// breaks the rule. A new Kubernetes read is a method of cluster.Cluster
// (kube implements it, clustertest fakes it); a new BPF map is a method of
// bpfentries.Reader.
package actions

import (
	"context"
	"fmt"
	"reflect"
	"sort"
	"strings"

	"github.com/labrun/labrun/internal/boundary/cluster"
	"github.com/labrun/labrun/internal/lang/diag"
	"github.com/labrun/labrun/internal/lang/eval"
	"github.com/labrun/labrun/internal/lang/kubeschema"
)

// Info describes a registered action without generics, for the runner.
type Info struct {
	Name    string
	Doc     string
	Spec    reflect.Type // struct type of the YAML spec
	Result  reflect.Type // struct type of the result
	Mutates bool         // changes the system: not polled by until, skipped by check
	// Cost is how long a call typically takes (cost.go).
	Cost Cost
	// Changes says what a step of the action changes, for `labrun
	// actions` ("the cluster: deletes objects"); "" for one that changes
	// nothing.
	Changes string
	// NeedsUntil: the action only makes sense with a step-level until.
	NeedsUntil bool
	// DynamicResult: the result type is derived from each step's spec.
	DynamicResult bool
	// WritesKey names the spec key that holds the path of the file the
	// action writes ("" for actions that write no file). The compiler
	// proves with it that parallel branches do not write the same file,
	// and validate's plan shows it.
	WritesKey string

	mutatesKey   string
	mutatingKeys []string
	access       func(spec any, ac *AccessContext) ([]cluster.Access, error)
	host         func(spec any, hc *HostContext) []HostNeed
	run          func(ctx context.Context, rt *Runtime, spec any) (any, error)
	around       func(ctx context.Context, rt *Runtime, spec any, during Nested) (any, error)
	watch        func(ctx context.Context, rt *Runtime, spec any, cond Condition) (any, error)
	check        func(spec *eval.Value, sc *StaticContext) diag.List
}

// Condition is an until expression handed to actions that can wait for it
// themselves (a watch sees changes as they happen, instead of polling).
// It reports whether the result satisfies the condition.
type Condition func(result any) (bool, error)

// Nested is what an action whose step holds steps (its during list) is
// handed: the way to run them, and the step's until.
type Nested struct {
	// Run runs the during steps in order, each with its own records; it
	// returns an error when one of them failed (the rest are skipped)
	// or ctx ended.
	Run func(ctx context.Context) error
	// Until is the step's until, nil without one. The action asks it
	// once the during steps have run, and again on each new result,
	// and ends when it holds.
	Until Condition
}

// Def is the typed definition an action file registers.
type Def[S, R any] struct {
	Name    string
	Doc     string
	Mutates bool
	// Cost is how long a call typically takes, by where its work
	// happens; required.
	Cost Cost
	// Changes says what the action changes when Mutates ("the cluster:
	// deletes objects").
	Changes string
	Run     func(ctx context.Context, rt *Runtime, spec *S) (*R, error)
	// Watch, when set, is used instead of polling Run for steps with until.
	Watch func(ctx context.Context, rt *Runtime, spec *S, cond Condition) (*R, error)
	// Around makes a step of the action one that holds steps (the step
	// key during): the runner calls it instead of Run, and it calls
	// during.Run once, when it is ready for them (capture, once its
	// stream is open), and returns once they and it are done. Its step
	// needs during, and only such a step may have during.
	Around func(ctx context.Context, rt *Runtime, spec *S, during Nested) (*R, error)
	// Check adds static checks that the spec's Go type cannot express,
	// e.g. "exactly one of json, text, kv".
	Check func(spec *eval.Value, sc *StaticContext) diag.List
	// NeedsUntil makes a step without until an error (wait).
	NeedsUntil bool
	// DynamicResult: the result is a struct whose fields are the spec's
	// keys, typed by their values (compute); R is then map[string]any.
	DynamicResult bool
	// MutatesKey names a boolean spec key by which a step declares that it
	// changes the system although the action usually does not (run).
	MutatesKey string
	// MutatingKeys name spec keys whose presence makes a step one that
	// changes the system (helm's upgrade and rollback; without them the
	// step reads the release).
	MutatingKeys []string
	// WritesKey names the spec key that holds the path of the file the
	// action writes (write's path).
	WritesKey string
	// Access lists the permissions a step with this spec needs of the
	// Kubernetes API (access.go); nil for an action that does not call
	// the cluster.
	Access func(spec *S, ac *AccessContext) ([]cluster.Access, error)
	// Host lists what a step with this spec needs of the machine labrun
	// runs on that no Kubernetes permission grants (host.go): a node's
	// socket or BPF filesystem, a program, a shell elsewhere; nil for an
	// action that needs none.
	Host func(spec *S, hc *HostContext) []HostNeed
}

// StaticContext is what an action's static check may look at.
type StaticContext struct {
	PlaybookDir  string
	HasOutputDir bool
	// OutputDir is the output directory, absolute, when the playbook
	// gives it without expressions; "" otherwise.
	OutputDir string
	// VarText is the value of a variable when it is a string known before
	// the run (written, or given with --set or --vars), so that a path
	// such as ${{ vars.fixtures }}/web.yaml can be read at validate; nil
	// or ok false otherwise.
	VarText func(name string) (string, bool)
	// ScalarPos is where byte off of a scalar's text is written (a
	// manifest's line inside a block scalar); nil places it at the
	// scalar.
	ScalarPos func(v *eval.Value, off int) diag.Pos
	// Kinds holds the schemas apply checks manifests against: the
	// built-in kinds, and the CRDs of the playbook's manifests, added as
	// its steps are checked, in order. nil: the built-in kinds only.
	Kinds *kubeschema.Registry
	// NoManifests: leave the objects apply sends unchecked (labrun check,
	// which runs no apply step).
	NoManifests bool
}

var registry = map[string]*Info{}

// Register adds an action. It is called from the init function of each
// action's file; a duplicate name is a programming error.
func Register[S, R any](d Def[S, R]) {
	if _, dup := registry[d.Name]; dup {
		panic("actions: duplicate action " + d.Name)
	}
	if d.Cost == costUnset {
		panic("actions: action " + d.Name + " declares no Cost")
	}
	info := &Info{
		Name:    d.Name,
		Doc:     d.Doc,
		Spec:    reflect.TypeOf((*S)(nil)).Elem(),
		Result:  reflect.TypeOf((*R)(nil)).Elem(),
		Mutates: d.Mutates,
		Cost:    d.Cost,
		Changes: d.Changes,
		check:   d.Check,

		mutatesKey:   d.MutatesKey,
		mutatingKeys: d.MutatingKeys,
		NeedsUntil:   d.NeedsUntil,

		DynamicResult: d.DynamicResult,
		WritesKey:     d.WritesKey,
	}
	info.run = func(ctx context.Context, rt *Runtime, spec any) (any, error) {
		r, err := d.Run(ctx, rt, spec.(*S))
		if r == nil {
			return nil, err
		}
		return r, err
	}
	if d.Access != nil {
		info.access = func(spec any, ac *AccessContext) ([]cluster.Access, error) {
			return d.Access(spec.(*S), ac)
		}
	}
	if d.Host != nil {
		info.host = func(spec any, hc *HostContext) []HostNeed {
			return d.Host(spec.(*S), hc)
		}
	}
	if d.Around != nil {
		info.around = func(ctx context.Context, rt *Runtime, spec any, during Nested) (any, error) {
			r, err := d.Around(ctx, rt, spec.(*S), during)
			if r == nil {
				return nil, err
			}
			return r, err
		}
	}
	if d.Watch != nil {
		info.watch = func(ctx context.Context, rt *Runtime, spec any, cond Condition) (any, error) {
			r, err := d.Watch(ctx, rt, spec.(*S), cond)
			if r == nil {
				return nil, err
			}
			return r, err
		}
	}
	registry[d.Name] = info
}

// Lookup returns the action registered under name.
func Lookup(name string) (*Info, bool) {
	i, ok := registry[name]
	return i, ok
}

// Names lists every action name, sorted.
func Names() []string {
	names := make([]string, 0, len(registry))
	for n := range registry {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// All returns every action, sorted by name.
func All() []*Info {
	var out []*Info
	for _, n := range Names() {
		out = append(out, registry[n])
	}
	return out
}

// NewSpec returns a pointer to a zero spec of the action.
func (i *Info) NewSpec() any { return reflect.New(i.Spec).Interface() }

// ZeroResult returns a pointer to a zero result, the value later steps see
// for a step that was skipped.
func (i *Info) ZeroResult() any { return reflect.New(i.Result).Interface() }

// Run executes the action once.
func (i *Info) Run(ctx context.Context, rt *Runtime, spec any) (any, error) {
	return i.run(ctx, rt, spec)
}

// StepMutates reports whether a step with this spec changes the system.
func (i *Info) StepMutates(spec *eval.Value) bool {
	if i.Mutates {
		return true
	}
	for _, k := range i.mutatingKeys {
		if spec.Lookup(k) != nil {
			return true
		}
	}
	if i.mutatesKey == "" {
		return false
	}
	v, ok := spec.Lookup(i.mutatesKey).Literal()
	return ok && v == true
}

// Effect says in a few words what a step of the action changes, for
// `labrun actions`: the system (check skips such a step), nothing unless
// the step declares it (run, exec, http with mutates: true), a file in the
// output directory (write), or nothing.
func (i *Info) Effect() string {
	switch {
	case i.Mutates && i.Changes == "":
		return "changes the system; check skips it"
	case i.Mutates:
		return "changes " + i.Changes + "; check skips it"
	case len(i.mutatingKeys) > 0:
		return "read-only unless it has " + strings.Join(i.mutatingKeys, " or ") + ", which change the system; check skips it then"
	case i.mutatesKey != "":
		return "read-only unless " + i.mutatesKey + ": true says it changes the system; check skips it then"
	case i.WritesKey != "":
		return "writes a file in the output directory; check compares the learner's file instead"
	}
	return "read-only"
}

// RunsAround reports whether a step of the action holds steps (during)
// that the action runs around.
func (i *Info) RunsAround() bool { return i.around != nil }

// Around runs the action around its step's during steps.
func (i *Info) Around(ctx context.Context, rt *Runtime, spec any, during Nested) (any, error) {
	if i.around == nil {
		return nil, fmt.Errorf("action %s does not run around steps", i.Name)
	}
	return i.around(ctx, rt, spec, during)
}

// CanWatch reports whether the action waits for conditions itself.
func (i *Info) CanWatch() bool { return i.watch != nil }

// Watch runs the action until cond holds.
func (i *Info) Watch(ctx context.Context, rt *Runtime, spec any, cond Condition) (any, error) {
	if i.watch == nil {
		return nil, fmt.Errorf("action %s cannot watch", i.Name)
	}
	return i.watch(ctx, rt, spec, cond)
}

// CheckSpec is all that makes a step's spec valid for the action, in one
// place: its keys and types against the Go spec type (eval.Check), then
// what the type cannot express (the action's own Check). It also returns
// the step's result type: the action's, or for an action whose result is
// its spec's keys (compute), a struct of them typed by their values. The
// playbook's own keys are the loader's (package syntax); what a spec may
// read is the compiler's.
func (i *Info) CheckSpec(spec *eval.Value, sc *StaticContext) (reflect.Type, diag.List) {
	errs := eval.Check(spec, i.Spec)
	errs = append(errs, i.Check(spec, sc)...)
	result := i.Result
	if i.DynamicResult && spec.Keys() != nil {
		result = eval.StructType(spec)
	}
	return result, errs
}

// Check runs the action's own static checks.
func (i *Info) Check(spec *eval.Value, sc *StaticContext) diag.List {
	if i.check == nil || spec == nil {
		return nil
	}
	return i.check(spec, sc)
}

// exactlyOne is a static check helper for specs whose keys are alternatives.
func exactlyOne(spec *eval.Value, keys ...string) diag.List {
	for _, k := range keys {
		if spec.Lookup(k) != nil {
			return atMostOne(spec, keys...)
		}
	}
	var errs diag.List
	errs.Add(spec.Pos, "expected one of the keys %v", keys)
	return errs
}

// atMostOne is a static check helper for optional keys that exclude each
// other.
func atMostOne(spec *eval.Value, keys ...string) diag.List {
	var found []string
	for _, k := range keys {
		if spec.Lookup(k) != nil {
			found = append(found, k)
		}
	}
	var errs diag.List
	if len(found) > 1 {
		errs.Add(spec.Lookup(found[1]).Pos, "%s and %s cannot be used together; use one of %v", found[0], found[1], keys)
	}
	return errs
}

// literalString returns the value of key when the playbook writes it as a
// plain string (no ${{ }}), for static checks of what only the string can
// say; ok is false when the key is missing, templated or not a string.
func literalString(spec *eval.Value, key string) (v *eval.Value, s string, ok bool) {
	if v = spec.Lookup(key); v == nil {
		return nil, "", false
	}
	lit, isLit := v.Literal()
	if !isLit {
		return nil, "", false
	}
	s, ok = lit.(string)
	return v, s, ok
}

// SpecError is a problem with one value of a step's spec that only the
// rendered spec shows (a loose path the rendered file does not have). Key
// is the spec key holding the value and Text the value as written; the
// runner places the error there in the playbook. At, when set, is the
// value's path inside Key's value instead (mapping keys and list indexes:
// apply's objects[1].spec.replicas is At [1, "spec", "replicas"]); Pos,
// when set, is where the value is written outside the playbook (a line
// of a manifest file the step reads).
type SpecError struct {
	Key, Text string
	At        []any
	Pos       diag.Pos
	Err       error
}

func (e *SpecError) Error() string { return e.Err.Error() }

func (e *SpecError) Unwrap() error { return e.Err }
