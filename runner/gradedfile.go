package runner

import (
	"fmt"

	"github.com/labrun/labrun/actions"
	"github.com/labrun/labrun/internal/lang/eval"
	"github.com/labrun/labrun/internal/lang/keypath"
	"github.com/labrun/labrun/internal/leaf/outdir"
)

// GradedFile is a file check graded, kept so that it can be graded again,
// the same way, on a changed copy (labrun test): the write step, its
// comparison, which holds the expected file check rendered from what it
// read, and the environment the step's assertions were checked in, which
// may read the learner's file as result.file. Nothing is read from the
// cluster again.
type GradedFile struct {
	Step       *StepPlan
	Comparison *actions.Comparison
	env        *eval.Env
}

// Grade grades the file in dir as check did: the comparison first, and
// when it finds nothing the step's assertions. A failed assertion names
// the values of result.file it reads (the whole file when it reads none
// by name).
func (f *GradedFile) Grade(dir *outdir.Dir) []actions.Problem {
	res, problems := f.Comparison.Result(dir)
	if len(problems) > 0 {
		return problems
	}
	env := f.env.WithResult(res)
	for _, a := range f.Step.Asserts {
		ok, err := a.That.EvalBool(env)
		if err == nil && ok {
			continue
		}
		text := fmt.Sprintf("%s: assertion %s failed", f.Comparison.Path, a.That.Src)
		if err != nil {
			text += ": " + err.Error()
		}
		paths := fileReads(a.That)
		if len(paths) == 0 {
			paths = []keypath.Path{nil}
		}
		for _, p := range paths {
			problems = append(problems, actions.Problem{Path: p, Text: text})
		}
	}
	return problems
}

// fileReads lists the values of result.file an expression reads by name
// (result.file.after.identity reads after.identity).
func fileReads(e *eval.Expr) []keypath.Path {
	var out []keypath.Path
	for _, names := range e.ReadsUnder(eval.RootResult, "file") {
		var p keypath.Path
		for _, k := range names {
			p = p.Key(k)
		}
		out = append(out, p)
	}
	return out
}

// handOver hands the file a write step's result graded in check mode to
// r.OnGradedFile.
func (r *Runner) handOver(s *StepPlan, result any, env *eval.Env) {
	if r.OnGradedFile == nil || r.Runtime.Mode != actions.Check {
		return
	}
	if c := actions.ComparisonOf(result); c != nil {
		r.OnGradedFile(&GradedFile{Step: s, Comparison: c, env: env})
	}
}
