// Package fleet grades one playbook against many targets: a class of
// learners, each in a namespace of one cluster or in a kubeconfig
// context of their own. It reads the targets file; grades the targets,
// Parallel at a time, each by one function (Grader: labrun check
// --targets, and each pod of the Job over its shard), with the
// connections and each check's runner given by the command; turns a
// target's check into its result line; renders the Indexed Job of shards
// that grades the class inside the cluster (labrun fleet render); stores
// a shard's results where they outlast its pod (labrun fleet grade) and
// merges what the shards stored (labrun fleet collect).
package fleet

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/labrun/labrun/internal/lang/diag"
	"github.com/labrun/labrun/internal/lang/syntax"
	"github.com/labrun/labrun/internal/lang/yamlnode"
	"github.com/labrun/labrun/runner"
	"gopkg.in/yaml.v3"
)

// DefaultVar is the playbook variable a namespace target sets when the
// targets file names none.
const DefaultVar = "namespace"

// Targets is a targets file: what to grade, in order (a target's index
// is its place in the list, which a Job's pod is given).
type Targets struct {
	File string
	// Var is the playbook variable a namespace target sets to its
	// namespace.
	Var  string
	List []Target
	// OutputsVar and OutputsDir are --outputs VAR=DIR: each target's
	// variable OutputsVar is OutputsDir/<its name>, the directory of the
	// learner's files a playbook's write steps grade.
	OutputsVar, OutputsDir string
}

// Target is one learner's place to grade: a namespace of the cluster
// labrun reaches, or a kubeconfig context.
type Target struct {
	Name      string
	Namespace string
	Context   string
	// Set are more variables for this target, name=value as --set takes
	// them.
	Set []string
	Pos diag.Pos
}

// Options are the run's options for target t: base's, then t's
// namespace variable, its output directory (--outputs), then t's own Set
// (later wins, as --set does).
func (ts *Targets) Options(t Target, base runner.Options) runner.Options {
	o := base
	o.Set = slices.Clone(base.Set)
	if t.Namespace != "" {
		o.Set = append(o.Set, ts.Var+"="+t.Namespace)
	}
	if ts.OutputsVar != "" {
		o.Set = append(o.Set, ts.OutputsVar+"="+filepath.Join(ts.OutputsDir, t.Name))
	}
	o.Set = append(o.Set, t.Set...)
	return o
}

// dnsLabel is what a namespace name and a target's name may be.
var dnsLabel = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

// ReadTargets reads and checks a targets file:
//
//	var: namespace          # optional: the variable a namespace sets
//	targets:
//	  - namespace: learner-01
//	  - namespace: learner-02
//	    set: [replicas=3]   # optional: more variables for this one
//	  - context: lab-vm-3   # a kubeconfig context instead
//	    name: alice         # optional: the name reports use
//
// Every problem is returned at once, each at its place in the file.
func ReadTargets(path string) (*Targets, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, diag.Errorf(diag.Pos{File: path}, "cannot read targets file: %v", err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, yamlnode.SyntaxError(path, data, err)
	}
	ts := &Targets{File: path, Var: DefaultVar}
	var errs diag.List
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		errs.Add(diag.Pos{File: path, Line: 1, Col: 1}, "a targets file is a mapping with a list under targets:")
		return nil, errs.Err()
	}
	root := doc.Content[0]
	var list *yaml.Node
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		switch k.Value {
		case "var":
			if v.Kind != yaml.ScalarNode || v.Value == "" {
				errs.Add(syntax.Pos(path, v), "var: expected the name of a playbook variable, got %s", yamlnode.Describe(v))
			}
			ts.Var = v.Value
		case "targets":
			list = v
		default:
			errs.Add(syntax.Pos(path, k), "unknown key %q: expected var or targets%s", k.Value, diag.DidYouMean(k.Value, []string{"var", "targets"}))
		}
	}
	switch {
	case list == nil:
		errs.Add(syntax.Pos(path, root), "no targets: expected a list under targets:")
	case list.Kind != yaml.SequenceNode || len(list.Content) == 0:
		errs.Add(syntax.Pos(path, list), "targets: expected a list of at least one target, got %s", yamlnode.Describe(list))
	default:
		seen := map[string]diag.Pos{}
		for _, n := range list.Content {
			t := readTarget(path, n, &errs)
			if at, dup := seen[t.Name]; dup && t.Name != "" {
				errs.Add(t.Pos, "target %q is listed twice (first at line %d)", t.Name, at.Line)
			}
			seen[t.Name] = t.Pos
			ts.List = append(ts.List, t)
		}
	}
	if err := errs.Err(); err != nil {
		return nil, err
	}
	return ts, nil
}

// readTarget reads one entry of the targets list, adding its problems to
// errs.
func readTarget(path string, n *yaml.Node, errs *diag.List) Target {
	t := Target{Pos: syntax.Pos(path, n)}
	if n.Kind != yaml.MappingNode {
		errs.Add(t.Pos, "a target is a mapping with namespace: or context:, got %s", yamlnode.Describe(n))
		return t
	}
	keys := []string{"name", "namespace", "context", "set"}
	before := len(*errs)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Value == "set" {
			t.Set = readSet(path, v, errs)
			continue
		}
		if !slices.Contains(keys, k.Value) {
			errs.Add(syntax.Pos(path, k), "unknown key %q: expected one of %s%s", k.Value, strings.Join(keys, ", "), diag.DidYouMean(k.Value, keys))
			continue
		}
		if v.Kind != yaml.ScalarNode || v.Tag != "!!str" || !dnsLabel.MatchString(v.Value) && k.Value != "context" || v.Value == "" {
			errs.Add(syntax.Pos(path, v), "%s: expected a name of lower-case letters, digits and '-', got %s", k.Value, yamlnode.Describe(v))
			continue
		}
		switch k.Value {
		case "name":
			t.Name = v.Value
		case "namespace":
			t.Namespace = v.Value
		case "context":
			t.Context = v.Value
		}
	}
	if (t.Namespace == "") == (t.Context == "") && len(*errs) == before {
		errs.Add(t.Pos, "a target names exactly one of namespace: or context:")
	}
	t.Name = cmp.Or(t.Name, t.Namespace, t.Context)
	return t
}

// readSet reads a target's set: a list of name=value.
func readSet(path string, v *yaml.Node, errs *diag.List) []string {
	if v.Kind != yaml.SequenceNode {
		errs.Add(syntax.Pos(path, v), "set: expected a list of name=value, got %s", yamlnode.Describe(v))
		return nil
	}
	var out []string
	for _, s := range v.Content {
		if name, _, ok := strings.Cut(s.Value, "="); s.Kind != yaml.ScalarNode || !ok || name == "" {
			errs.Add(syntax.Pos(path, s), "set: expected name=value, got %s", yamlnode.Describe(s))
			continue
		}
		out = append(out, s.Value)
	}
	return out
}

// Pick is the target at index i, as a Job's pod is given it.
func (ts *Targets) Pick(i int) (Target, error) {
	if i < 0 || i >= len(ts.List) {
		return Target{}, fmt.Errorf("--index %d: %s lists %d targets (indexes 0 to %d)", i, ts.File, len(ts.List), len(ts.List)-1)
	}
	return ts.List[i], nil
}
