// Package access derives from a compiled playbook, without a cluster,
// the permissions of the Kubernetes API its steps need: `labrun rbac`
// prints them as Roles (roles.go), and run and check ask the API server
// for them before the first step (preflight.go), so that a missing one
// is named at once instead of failing step 14 with a 403.
//
// Each action says what a step of it asks (actions.Def.Access, in the
// words of cluster/access.go, which follows kube's requests). This
// package walks the steps a run in a mode runs, hands each action its
// spec as far as the playbook and its variables tell it, resolves kinds
// with a table (kinds.go) and reads the kinds an apply's manifests hold
// (manifests.go).
package access

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"github.com/labrun/labrun/actions"
	"github.com/labrun/labrun/internal/boundary/cluster"
	"github.com/labrun/labrun/internal/lang/diag"
	"github.com/labrun/labrun/internal/lang/eval"
	"github.com/labrun/labrun/internal/lang/fields"
	"github.com/labrun/labrun/internal/lang/syntax"
	"github.com/labrun/labrun/runner"
)

// Need is one permission and the steps that need it.
type Need struct {
	cluster.Access
	// Steps are the ids of the steps that need it, in the plan's order.
	Steps []string
}

// Options say which run the permissions are for.
type Options struct {
	// Mode is the run's: labrun run (actions.Solve) or check.
	Mode actions.Mode
	// Namespace is where requests that name no namespace go: the
	// kubeconfig context's.
	Namespace string
	// Getenv gives the values of the env names the playbook reads; nil
	// is os.Getenv.
	Getenv func(string) string
	// NoLock: the run takes no Lease on its target (--no-lock), so it
	// needs no permission on leases.
	NoLock bool
}

// Derive lists the permissions the steps of p that run in opts.Mode
// need, cluster-wide ones first, then by namespace, resource and verb.
// A step whose kind or namespace is only known when it runs, or whose
// kind the table does not know, is an error at that value in the
// playbook (or in the manifest file); every step's are returned
// together.
//
// Unless opts.NoLock, a run (not a check, which only reads and takes
// none) that calls the cluster also needs to hold its Lease
// (LeaseNamespace): get, create and update of leases, for the "step"
// LeaseStep.
func Derive(p *runner.Plan, opts Options) ([]Need, error) {
	needs, err := deriveSteps(p, opts)
	if err != nil || opts.NoLock || opts.Mode == actions.Check || len(needs) == 0 {
		return needs, err
	}
	ns, err := LeaseNamespace(p, opts)
	if err != nil {
		return nil, err
	}
	for _, a := range cluster.LeaseAccess(ns) {
		needs = append(needs, Need{Access: a, Steps: []string{LeaseStep}})
	}
	needs = foldIntoClusterWide(needs)
	slices.SortStableFunc(needs, func(a, b Need) int { return compareAccess(a.Access, b.Access) })
	return needs, nil
}

// LeaseStep names, among the steps that need a permission, the run's
// holding of its Lease.
const LeaseStep = "the run's lease"

// LeaseNamespace is where a run of p holds its Lease (cluster.LeaseName):
// the one namespace of a lab whose steps, in labrun run and in labrun
// check alike, ask for nothing outside it (a learner's namespace, where
// the fleet grades each learner apart), else cluster.ClusterLeaseNamespace
// for the whole cluster. Both modes count, so that a solve and a check
// of one target take the same Lease. "" when the plan calls no cluster.
func LeaseNamespace(p *runner.Plan, opts Options) (string, error) {
	seen := map[string]bool{}
	for _, mode := range []actions.Mode{actions.Solve, actions.Check} {
		o := opts
		o.Mode = mode
		needs, err := deriveSteps(p, o)
		if err != nil {
			return "", err
		}
		for _, n := range needs {
			seen[n.Namespace] = true
		}
	}
	switch {
	case len(seen) == 0:
		return "", nil
	case len(seen) == 1 && !seen[""]:
		for ns := range seen {
			return ns, nil
		}
	}
	return cluster.ClusterLeaseNamespace, nil
}

// deriveSteps is Derive without the run's Lease: what the steps ask.
func deriveSteps(p *runner.Plan, opts Options) ([]Need, error) {
	return deriveWith(p, opts, nil)
}

// deriveWith is deriveSteps, telling applied (when not nil) each object the
// steps that run apply.
func deriveWith(p *runner.Plan, opts Options, applied func(actions.ManifestObject)) ([]Need, error) {
	getenv := opts.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	env, err := p.Env(opts.Mode, getenv, nil)
	if err != nil {
		return nil, err
	}
	d := &deriver{opts: opts, env: env, dir: filepath.Dir(p.Playbook.File), kinds: newKinds(), index: map[cluster.Access]int{}, applied: applied}
	var errs diag.List
	for _, s := range p.Steps {
		switch {
		case runs(s, opts.Mode):
			if err := d.step(s, true); err != nil {
				errs.Append(err)
			}
		case s.Action != nil && s.Action.CallsCluster():
			// A step the mode skips still teaches the table the kinds of
			// the CRDs it applies, which the steps after may read: check
			// reads what the solve's apply defined. What it needs, and
			// what stops it from telling, do not count.
			d.step(s, false)
		}
	}
	if err := errs.Err(); err != nil {
		return nil, err
	}
	needs := foldIntoClusterWide(d.needs)
	slices.SortStableFunc(needs, func(a, b Need) int { return compareAccess(a.Access, b.Access) })
	return needs, nil
}

// foldIntoClusterWide drops a namespace's need that a cluster-wide need
// of the same verb and resource already grants (a ClusterRole bound
// cluster-wide covers every namespace), giving its steps to the
// cluster-wide one: a rule in a namespace's Role that the ClusterRole
// already grants is not needed, and taking it away would change nothing.
func foldIntoClusterWide(needs []Need) []Need {
	wide := map[cluster.Access]int{}
	for i, n := range needs {
		if n.Namespace == "" {
			wide[n.Access] = i
		}
	}
	folded := make([]bool, len(needs))
	for j, n := range needs {
		all := n.Access
		all.Namespace = ""
		if i, ok := wide[all]; ok && n.Namespace != "" {
			for _, st := range n.Steps {
				if !slices.Contains(needs[i].Steps, st) {
					needs[i].Steps = append(needs[i].Steps, st)
				}
			}
			folded[j] = true
		}
	}
	var out []Need
	for j, n := range needs {
		if !folded[j] {
			out = append(out, n)
		}
	}
	return out
}

// CallsCluster reports whether a run of p in mode may call the
// Kubernetes API: a step it runs is of an action that does.
func CallsCluster(p *runner.Plan, mode actions.Mode) bool {
	return slices.ContainsFunc(p.Steps, func(s *runner.StepPlan) bool { return runs(s, mode) })
}

// runs reports whether s is a step of an action that calls the cluster,
// and runs in mode: labrun check skips the steps that change the system
// and those only labrun run runs; labrun run those only check runs.
func runs(s *runner.StepPlan, mode actions.Mode) bool {
	return s.Action != nil && s.Action.CallsCluster() && inMode(s, mode)
}

// inMode reports whether s runs in mode: labrun check skips the steps
// that change the system and those only labrun run runs; labrun run those
// only check runs.
func inMode(s *runner.StepPlan, mode actions.Mode) bool {
	if mode == actions.Check {
		return !s.Mutates && s.Only != syntax.OnlySolve
	}
	return s.Only != syntax.OnlyCheck
}

// deriver collects the permissions of a plan's steps.
type deriver struct {
	opts  Options
	env   *eval.Env // the variables
	dir   string    // the playbook's, which relative manifest paths start from
	kinds *kinds
	needs []Need
	index map[cluster.Access]int // where each permission is in needs
	// applied, when set, is told each object an apply step applies
	// (Namespaces).
	applied func(actions.ManifestObject)
}

// step adds what s needs (when record): once, or once per item of its
// loop when the loop's list is known before the run.
func (d *deriver) step(s *runner.StepPlan, record bool) error {
	envs, itemKnown, err := d.loopEnvs(s)
	if err != nil {
		return err
	}
	for _, env := range envs {
		spec := s.Action.NewSpec()
		unknown, err := decodeKnown(s.Spec, env, itemKnown, reflect.ValueOf(spec).Elem())
		if err != nil {
			return err
		}
		ac := &actions.AccessContext{
			Spec: s.Spec,
			// a check reads once (runner/policy.go)
			Watch:     d.opts.Mode == actions.Solve && s.Until != nil && s.Action.CanWatch(),
			Namespace: d.opts.Namespace,
			Unknown:   func(key string) bool { return unknown[key] },
			Eval: func(v *eval.Value) (any, bool, error) {
				if !known(v, itemKnown) {
					return nil, false, nil
				}
				x, err := v.Eval(env)
				return x, true, err
			},
			Resource:  d.kinds.resolve,
			Manifests: d.manifests,
		}
		if record {
			ac.Applied = d.applied
		}
		needs, err := s.Action.Access(spec, ac)
		if err != nil {
			return err
		}
		if record {
			for _, a := range needs {
				d.add(a, s.ID)
			}
		}
	}
	return nil
}

// loopEnvs are the environments s runs in: one per item of its loop when
// the loop's list is known before the run (itemKnown), else the
// variables' alone, where a value that reads item is not known.
func (d *deriver) loopEnvs(s *runner.StepPlan) (envs []*eval.Env, itemKnown bool, err error) {
	if s.Loop == nil {
		return []*eval.Env{d.env}, true, nil
	}
	if !known(s.Loop, false) {
		return []*eval.Env{d.env}, false, nil
	}
	x, err := s.Loop.Eval(d.env)
	if err != nil {
		return nil, false, err
	}
	items := reflect.ValueOf(x)
	if x == nil || (items.Kind() != reflect.Slice && items.Kind() != reflect.Array) {
		return nil, false, diag.Errorf(s.Loop.Pos, "loop gave %s, expected a list", eval.Show(x))
	}
	for i := 0; i < items.Len(); i++ {
		env, err := d.env.WithItem(items.Index(i).Interface(), i, s.Item)
		if err != nil {
			return nil, false, diag.Errorf(s.Loop.Pos, "item %d: %v", i, err)
		}
		envs = append(envs, env)
	}
	return envs, true, nil
}

// add records that step needs a.
func (d *deriver) add(a cluster.Access, step string) {
	i, ok := d.index[a]
	if !ok {
		i = len(d.needs)
		d.index[a] = i
		d.needs = append(d.needs, Need{Access: a})
	}
	if !slices.Contains(d.needs[i].Steps, step) {
		d.needs[i].Steps = append(d.needs[i].Steps, step)
	}
}

// decodeKnown stores into target, the step's spec, the values of the
// keys of spec known before the run, and returns the keys whose values
// are not (they read a step's result, or the item of a loop whose list
// is not known).
func decodeKnown(spec *eval.Value, env *eval.Env, itemKnown bool, target reflect.Value) (map[string]bool, error) {
	unknown := map[string]bool{}
	for _, f := range fields.Of(target.Type()) {
		v := spec.Lookup(f.Key)
		switch {
		case v == nil:
		case !known(v, itemKnown):
			unknown[f.Key] = true
		default:
			if err := v.Decode(env, target.FieldByIndex(f.Index)); err != nil {
				return nil, err
			}
		}
	}
	return unknown, nil
}

// known reports whether v's value is known before the run: its
// expressions read variables, env names, the mode, and the loop's item
// when itemKnown, but no step's result.
func known(v *eval.Value, itemKnown bool) bool {
	for _, e := range v.Exprs() {
		if e.WholeSteps || slices.ContainsFunc(e.Refs, func(r string) bool { return strings.HasPrefix(r, eval.RootSteps+".") }) {
			return false
		}
		if !itemKnown && (len(e.ReadsUnder(eval.RootItem)) > 0 || len(e.ReadsUnder(eval.RootIndex)) > 0) {
			return false
		}
	}
	return true
}

// verbOrder is the order RBAC's documentation lists verbs in.
var verbOrder = []string{"get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"}

// compareAccess orders permissions cluster-wide first, then by namespace,
// group, resource, subresource and verb.
func compareAccess(a, b cluster.Access) int {
	return cmp.Or(
		cmp.Compare(a.Namespace, b.Namespace),
		cmp.Compare(a.Group, b.Group),
		cmp.Compare(a.Resource, b.Resource),
		cmp.Compare(a.Subresource, b.Subresource),
		cmp.Compare(slices.Index(verbOrder, a.Verb), slices.Index(verbOrder, b.Verb)),
	)
}

// String lists the permissions one a line, for tests and messages.
func String(needs []Need) string {
	var b strings.Builder
	for _, n := range needs {
		fmt.Fprintf(&b, "%s: %s\n", n.Access, strings.Join(n.Steps, ", "))
	}
	return b.String()
}
