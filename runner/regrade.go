package runner

import (
	"fmt"
	"regexp"

	"github.com/labrun/labrun/actions"
	"github.com/labrun/labrun/internal/lang/eval"
	"github.com/labrun/labrun/internal/lang/keypath"
	"github.com/labrun/labrun/internal/outdir"
)

// Regrade is how check graded one file, kept so that the same grading can
// be made again on a changed copy of it (labrun test): the write action's
// comparison, which holds the expected file check rendered from what it
// read, and the step's assertions, in the environment they were checked
// in, which may read the learner's file as result.file. Nothing is read
// from the cluster again.
type Regrade struct {
	Step    *StepPlan
	Grading *actions.Grading
	env     *eval.Env
}

// Grade grades the file in dir as check did: the comparison first, and
// when it finds nothing the step's assertions. A failed assertion names
// the values of result.file it reads (the whole file when it reads none
// by name).
func (g *Regrade) Grade(dir *outdir.Dir) []actions.Problem {
	res, problems := g.Grading.Result(dir)
	if len(problems) > 0 {
		return problems
	}
	env := g.env.WithResult(res)
	for _, a := range g.Step.Asserts {
		ok, err := a.That.EvalBool(env)
		if err == nil && ok {
			continue
		}
		text := fmt.Sprintf("%s: assertion %s failed", g.Grading.Path, a.That.Src)
		if err != nil {
			text += ": " + err.Error()
		}
		paths := fileReads(a.That.Src)
		if len(paths) == 0 {
			paths = []keypath.Path{nil}
		}
		for _, p := range paths {
			problems = append(problems, actions.Problem{Path: p, Text: text})
		}
	}
	return problems
}

var (
	fileRead = regexp.MustCompile(`\bresult\.file((?:\.[A-Za-z_][A-Za-z0-9_]*)*)`)
	ident    = regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_]*`)
)

// fileReads lists the values of result.file an expression reads by name
// (result.file.after.identity reads after.identity).
func fileReads(src string) []keypath.Path {
	var out []keypath.Path
	for _, m := range fileRead.FindAllStringSubmatch(src, -1) {
		var p keypath.Path
		for _, k := range ident.FindAllString(m[1], -1) {
			p = p.Key(k)
		}
		out = append(out, p)
	}
	return out
}

// regraded hands the grading behind a write step's result in check mode
// to r.Graded.
func (r *Runner) regraded(s *StepPlan, result any, env *eval.Env) {
	if r.Graded == nil || r.Runtime.Mode != actions.Check {
		return
	}
	if g := actions.GradingOf(result); g != nil {
		r.Graded(&Regrade{Step: s, Grading: g, env: env})
	}
}
