package syntax

import (
	"reflect"
	"slices"
	"strings"

	"github.com/labrun/labrun/internal/lang/diag"
	"github.com/labrun/labrun/internal/lang/yamlnode"
	"gopkg.in/yaml.v3"
)

// Decoding steps: control keys, the one action key, and parallel steps'
// branches.

// steps decodes a list of steps, keeping those that decode at all so
// that later checks see as many as possible.
func (d *decoder) steps(n *yaml.Node) []*Step {
	if n.Kind != yaml.SequenceNode {
		d.errorf(n, "expected a list of steps, found %s", yamlnode.Describe(n))
		return nil
	}
	var out []*Step
	for _, c := range n.Content {
		if s := d.step(c); s != nil {
			out = append(out, s)
		}
	}
	return out
}

// step decodes one step: its control keys through the struct tags, and the
// one remaining key that names an action.
func (d *decoder) step(n *yaml.Node) *Step {
	if n.Kind != yaml.MappingNode {
		d.errorf(n, "a step must be a mapping with an id and one action, found %s", yamlnode.Describe(n))
		return nil
	}
	s := &Step{Pos: d.pos(n)}
	keys := d.stepKeys
	unknown := false
	seen := map[string]bool{}
	v := reflect.ValueOf(s).Elem()
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		if !d.checkKey(k, seen) {
			continue
		}
		if f, ok := d.stepFields[k.Value]; ok {
			d.decodeValue(val, v.FieldByIndex(f.Index))
			if k.Value == "retries" {
				s.RetriesPos = d.pos(val)
			}
			continue
		}
		if k.Value == ParallelKey {
			s.ParallelPos = d.pos(k)
			s.Parallel = d.branches(k, val, s)
			continue
		}
		if k.Value == DuringKey {
			s.DuringPos = d.pos(k)
			s.During = d.during(k, val, s)
			continue
		}
		if d.isAction[k.Value] {
			if s.Action != "" {
				d.errorf(k, "step has two actions, %s and %s; a step does exactly one thing", s.Action, k.Value)
				continue
			}
			s.Action, s.ActionPos, s.Spec = k.Value, d.pos(k), val
			continue
		}
		all := append(append([]string{ParallelKey, DuringKey}, keys...), d.actions...)
		unknown = true
		d.errorf(k, "unknown step key %q%s; expected an action (%s), parallel, during, or one of: %s", k.Value, diag.DidYouMean(k.Value, all), strings.Join(d.actions, ", "), strings.Join(keys, ", "))
	}
	if !seen["id"] {
		d.errorf(n, "step has no id; add id: <name> so later steps can refer to it")
	} else if s.ID.Node != nil && d.nonASCII(s.ID.Node, "step id") {
	} else if s.ID.Node != nil && !idPattern.MatchString(s.ID.Value) {
		d.errorf(s.ID.Node, "step id %q must be an identifier (letters, digits, _; not starting with a digit) so expressions can say steps.%s", s.ID.Value, exprName(s.ID.Value))
	}
	if seen[ParallelKey] {
		d.checkParallelStep(n, s)
		return s
	}
	if s.Action == "" && len(s.Assert) == 0 && !seen["assert"] && !unknown {
		d.errorf(n, "step %q has no action; expected one of: %s (or only assert, or parallel)", s.ID.Value, strings.Join(d.actions, ", "))
	}
	return s
}

// ParallelKey is the step key that holds branches instead of an action.
const ParallelKey = "parallel"

// DuringKey is the step key that holds the steps an action runs around
// (capture listens while they make traffic).
const DuringKey = "during"

// parallelKeys are the keys a parallel step may have besides parallel:
// it only groups steps, so polling, retries and assertions belong on the
// steps in its branches.
var parallelKeys = []string{"id", "name", "when", "task", "only"}

// checkParallelStep reports what a parallel step cannot have.
func (d *decoder) checkParallelStep(n *yaml.Node, s *Step) {
	if s.Action != "" {
		d.errs.Add(s.ActionPos, "step has both parallel and %s; a parallel step only groups steps, put %s in one of its branches", s.Action, s.Action)
	}
	if s.During != nil {
		d.errs.Add(s.DuringPos, "step has both parallel and during; during belongs to a step whose action runs around steps (capture)")
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i].Value
		if k == ParallelKey || k == s.Action || slices.Contains(parallelKeys, k) || !slices.Contains(d.stepKeys, k) {
			continue
		}
		d.errorf(n.Content[i], "a parallel step takes only id, name, when, task and only besides parallel; put %s on the steps in its branches", k)
	}
}

// branches decodes the value of parallel: a mapping of branch name to a
// list of steps, at least two branches, no parallel step inside.
func (d *decoder) branches(k, n *yaml.Node, group *Step) []*Branch {
	if d.inBranch {
		d.errorf(k, "parallel steps cannot be nested; put the steps of this group as branches of the outer parallel step")
		return nil
	}
	if d.inDuring {
		d.errorf(k, "a during step cannot be a parallel step: the steps under during run in order while their step listens")
		return nil
	}
	if n.Kind != yaml.MappingNode {
		d.errorf(n, "parallel is a mapping of branch name to a list of steps, found %s", yamlnode.Describe(n))
		return nil
	}
	if len(n.Content) < 4 {
		d.errorf(n, "parallel needs at least two branches; a single list of steps needs no parallel")
	}
	seen := map[string]bool{}
	var out []*Branch
	d.inBranch = true
	defer func() { d.inBranch = false }()
	for i := 0; i+1 < len(n.Content); i += 2 {
		bk, bv := n.Content[i], n.Content[i+1]
		if !d.checkKey(bk, seen) {
			continue
		}
		if d.nonASCII(bk, "branch name") {
			continue
		}
		if !idPattern.MatchString(bk.Value) {
			d.errorf(bk, "branch name %q must be an identifier (letters, digits, _; not starting with a digit)", bk.Value)
			continue
		}
		if bv.Kind == yaml.SequenceNode && len(bv.Content) == 0 {
			d.errorf(bv, "branch %s has no steps", bk.Value)
			continue
		}
		b := &Branch{Name: bk.Value, Pos: d.pos(bk), Steps: d.steps(bv)}
		for _, s := range b.Steps {
			s.Group, s.Branch = group, b.Name
		}
		out = append(out, b)
	}
	return out
}

// during decodes the value of during: the list of steps the step's action
// runs around, in order. They are ordinary steps, but none may hold steps
// itself (a parallel step or another during), and a step with during
// cannot be a parallel branch's step: it is one unit that starts, runs its
// steps and ends.
func (d *decoder) during(k, n *yaml.Node, around *Step) []*Step {
	switch {
	case d.inDuring:
		d.errorf(k, "during steps cannot be nested; put these steps in the outer step's during list")
		return nil
	case d.inBranch:
		d.errorf(k, "a step with during cannot run in a parallel branch; put it before or after the parallel step")
		return nil
	case n.Kind != yaml.SequenceNode || len(n.Content) == 0:
		d.errorf(n, "during is a list of at least one step (the steps to run while the step listens), found %s", yamlnode.Describe(n))
		return nil
	}
	d.inDuring = true
	defer func() { d.inDuring = false }()
	steps := d.steps(n)
	for _, s := range steps {
		s.Around = around
	}
	return steps
}
