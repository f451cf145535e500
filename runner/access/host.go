package access

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"github.com/labrun/labrun/actions"
	"github.com/labrun/labrun/internal/lang/diag"
	"github.com/labrun/labrun/internal/lang/eval"
	"github.com/labrun/labrun/runner"
)

// HostNeed is something the steps that run in a mode need of the machine
// labrun runs on that no Kubernetes permission grants (actions.HostNeed),
// and the steps that need it.
type HostNeed struct {
	// What and InPod are the action's words (actions.HostNeed); Of the
	// things of the kind What names, each once, in the order met.
	What, InPod string
	Of          []string
	// Steps are the ids of the steps that need it, in the plan's order.
	Steps []string
}

// HostNeeds lists what the steps of p that run in opts.Mode need of the
// machine labrun runs on, beside the permissions Derive lists: each
// action says what a step of it needs (actions.Def.Host), from the values
// of its spec known before the run. A need several steps share is listed
// once, in the order first met.
func HostNeeds(p *runner.Plan, opts Options) ([]HostNeed, error) {
	getenv := opts.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	env, err := p.Env(opts.Mode, getenv, nil)
	if err != nil {
		return nil, err
	}
	d := &deriver{opts: opts, env: env}
	outputDir := knownOutputDir(p, env)
	var out []HostNeed
	var errs diag.List
	for _, s := range p.Steps {
		if s.Action == nil || !s.Action.HasHostNeeds() || !inMode(s, opts.Mode) {
			continue
		}
		envs, itemKnown, err := d.loopEnvs(s)
		if err != nil {
			errs.Append(err)
			continue
		}
		for _, env := range envs {
			spec := s.Action.NewSpec()
			unknown, err := decodeKnown(s.Spec, env, itemKnown, reflect.ValueOf(spec).Elem())
			if err != nil {
				errs.Append(err)
				break
			}
			hc := &actions.HostContext{
				Mode:    opts.Mode,
				Spec:    s.Spec,
				Unknown: func(key string) bool { return unknown[key] },
				Eval: func(v *eval.Value) (any, bool, error) {
					if !known(v, itemKnown) {
						return nil, false, nil
					}
					x, err := v.Eval(env)
					return x, true, err
				},
				OutputDir: outputDir,
			}
			for _, n := range s.Action.HostNeeds(spec, hc) {
				out = addHostNeed(out, n, s.ID)
			}
		}
	}
	if err := errs.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// addHostNeed records that step needs n: with the needs of the same What
// and InPod, its Of among theirs.
func addHostNeed(needs []HostNeed, n actions.HostNeed, step string) []HostNeed {
	i := slices.IndexFunc(needs, func(h HostNeed) bool { return h.What == n.What && h.InPod == n.InPod })
	if i < 0 {
		i = len(needs)
		needs = append(needs, HostNeed{What: n.What, InPod: n.InPod})
	}
	if n.Of != "" && !slices.Contains(needs[i].Of, n.Of) {
		needs[i].Of = append(needs[i].Of, n.Of)
	}
	if !slices.Contains(needs[i].Steps, step) {
		needs[i].Steps = append(needs[i].Steps, step)
	}
	return needs
}

// knownOutputDir is the playbook's output directory, absolute, when it is
// known before the run; "" otherwise.
func knownOutputDir(p *runner.Plan, env *eval.Env) string {
	if p.OutputDir == nil || !known(p.OutputDir, false) {
		return ""
	}
	x, err := p.OutputDir.Eval(env)
	dir, ok := x.(string)
	if err != nil || !ok || dir == "" {
		return ""
	}
	if abs, err := filepath.Abs(dir); err == nil {
		return abs
	}
	return dir
}

// FormatHostNeeds is what `labrun rbac` prints beside the Roles: each need
// the run in mode has of the machine labrun runs on, with the steps that
// have it and what a pod needs for it, as lines of at most width columns
// (a need's own words may run longer); nil without needs.
func FormatHostNeeds(needs []HostNeed, mode string, width int) []string {
	if len(needs) == 0 {
		return nil
	}
	lines := []string{
		"",
		fmt.Sprintf("Beside these permissions, labrun %s of this playbook needs of the", mode),
		"machine it runs on what no Role grants. On the lab's node it is there;",
		"a pod has it only when its spec provides it:",
	}
	for _, n := range needs {
		lines = append(lines, "")
		what := n.What
		if len(n.Of) > 0 {
			what += ": " + strings.Join(n.Of, ", ")
		}
		lines = append(lines, wrap("- "+what+" (steps: "+strings.Join(n.Steps, ", ")+")", "  ", width)...)
		lines = append(lines, wrap("  in a pod: "+n.InPod, "    ", width)...)
	}
	return lines
}

// wrap breaks s at spaces into lines of at most width columns, the lines
// after the first indented by indent; a word longer than a line stays
// whole.
func wrap(s, indent string, width int) []string {
	var lines []string
	line := ""
	lead := len(s) - len(strings.TrimLeft(s, " "))
	for _, w := range strings.Fields(s) {
		switch {
		case line == "":
			line = s[:lead] + w
		case len(line)+1+len(w) > width:
			lines = append(lines, line)
			line = indent + w
		default:
			line += " " + w
		}
	}
	return append(lines, line)
}
