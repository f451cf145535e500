package runner

import (
	"errors"
	"fmt"
	"os"

	"github.com/labrun/labrun/actions"
	"github.com/labrun/labrun/internal/lang/diag"
	"github.com/labrun/labrun/internal/lang/eval"
	"github.com/labrun/labrun/internal/leaf/outdir"
	"github.com/labrun/labrun/internal/leaf/secret"
)

// Recorded holds the results a run left in its output directory's
// journal, so that expressions can be tried on them afterwards, without a
// cluster and without running anything: `labrun eval`. A lab author runs
// the lab once, then works out `steps.ct.conntrack` filters against what
// the run saw.
type Recorded struct {
	r *Runner
	// Journal is the file the results came from.
	Journal string
	// Steps lists the steps the journal holds, in the plan's order;
	// Missing those it does not (they read as zero values).
	Steps, Missing []string
}

// OpenRecorded reads the journal of p's output directory. getenv reads
// the environment variables the playbook declares (os.Getenv when nil).
func OpenRecorded(p *Plan, getenv func(string) string) (*Recorded, error) {
	// Check mode makes prepare leave the output directory alone.
	r := &Runner{Plan: p, Runtime: &actions.Runtime{Mode: actions.Check}, Environ: getenv}
	if err := r.prepare(); err != nil {
		return nil, err
	}
	// the journal is a solve's (check keeps none): mode reads as it did,
	// and a step it lacks reads as in a solve (Runner.zero)
	r.env.SetMode(eval.ModeSolve)
	r.exprMode = eval.ModeSolve
	if r.Runtime.Out == nil {
		return nil, errors.New("the playbook declares no outputDir, so no run of it kept a journal")
	}
	defer r.Runtime.Out.Close()
	rc := &Recorded{r: r, Journal: r.Runtime.Out.Abs(outdir.JournalFile)}
	saved, _, err := readJournal(r.Runtime.Out)
	if err != nil {
		if os.IsNotExist(err) {
			return nil, fmt.Errorf("no journal at %s: run the playbook with this output directory first", rc.Journal)
		}
		return nil, err
	}
	for _, s := range p.Steps {
		e, ok := saved[s.ID]
		if !ok || s.Parallel != nil {
			if s.Parallel == nil {
				rc.Missing = append(rc.Missing, s.ID)
			}
			r.env.SetStep(s.ID, r.zero(s))
			continue
		}
		res, err := r.decodeEntry(s, e)
		if err != nil {
			return nil, err
		}
		if _, err := r.env.SetStep(s.ID, res); err != nil {
			return nil, err
		}
		rc.Steps = append(rc.Steps, s.ID)
	}
	return rc, nil
}

// Eval compiles src as if it stood after every step, checked against their
// types like any expression of the playbook, and evaluates it on the
// recorded results.
func (rc *Recorded) Eval(src string) (any, error) {
	e, err := rc.r.Plan.compiler.Compile(src, diag.Pos{File: "expression", Line: 1, Col: 1}, eval.Context{Step: eval.AllSteps})
	if err != nil {
		return nil, err
	}
	return e.Eval(rc.r.env)
}

// Secrets redacts the values of the plan's secret variables and env names.
func (rc *Recorded) Secrets() *secret.Redactor { return rc.r.Secrets }
