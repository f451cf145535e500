package runner

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/labrun/labrun/actions"
	"github.com/labrun/labrun/internal/lang/eval"
	"github.com/labrun/labrun/internal/leaf/outdir"
	"github.com/labrun/labrun/internal/leaf/secret"
)

// startRun starts the run manifest of a run that writes an output
// directory (a fresh run removes the previous run's files there). check
// reads the manifest instead: files a run left that did not finish are
// graded all the same, with a warning, and the report carries the
// manifest for the platform.
func (r *Runner) startRun(out *Outcome) error {
	d := r.Runtime.Out
	switch {
	case d == nil:
		return nil
	case r.Runtime.Mode != actions.Check:
		return d.StartRun(r.Plan.Playbook.File, r.From)
	}
	st, err := d.ReadStatus()
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		out.Warnings = append(out.Warnings, err.Error())
	default:
		out.OutputRun = st
		if why := st.Stale(); why != "" {
			out.Warnings = append(out.Warnings, "the output directory holds the files of a run that did not pass: "+why)
		}
	}
	return nil
}

// DefaultCleanupTimeout is CleanupTimeout when it is not set.
const DefaultCleanupTimeout = 30 * time.Second

// cleanupContext is the context of the finally steps. They run whatever
// happened, with a context of their own: Ctrl-C has cancelled ctx, and
// the cleanup must still get to talk to the cluster. Once ctx ends,
// before the finally steps or while they run, they get CleanupTimeout
// more and no longer: an interrupted learner never waits on a cleanup
// without end.
func (r *Runner) cleanupContext(ctx context.Context) (context.Context, context.CancelFunc) {
	limit := r.CleanupTimeout
	if limit == 0 {
		limit = DefaultCleanupTimeout
	}
	cctx, cancel := context.WithCancelCause(context.Background())
	var mu sync.Mutex
	var timer *time.Timer
	stop := context.AfterFunc(ctx, func() {
		mu.Lock()
		defer mu.Unlock()
		timer = time.AfterFunc(limit, func() { cancel(&cleanupTimeout{limit: limit}) })
	})
	return cctx, func() {
		stop()
		mu.Lock()
		defer mu.Unlock()
		if timer != nil {
			timer.Stop()
		}
		cancel(nil)
	}
}

// cleanupTimeout ends the finally steps' context when the time they have
// after an interrupt passes.
type cleanupTimeout struct{ limit time.Duration }

func (e *cleanupTimeout) Error() string {
	return fmt.Sprintf("the cleanup's time limit of %s passed", e.limit)
}

// prepare evaluates variables and the output directory.
func (r *Runner) prepare() error {
	getenv := r.Environ
	if getenv == nil {
		getenv = os.Getenv
	}
	if r.Secrets == nil {
		r.Secrets = &secret.Redactor{}
	}
	env, err := r.Plan.Env(r.Runtime.Mode, getenv, r.Secrets)
	if err != nil {
		return err
	}
	r.env = env
	if r.Plan.OutputDir != nil {
		x, err := r.Plan.OutputDir.Eval(r.env)
		if err != nil {
			return fmt.Errorf("outputDir: %w", err)
		}
		dir, ok := x.(string)
		if !ok || dir == "" {
			return fmt.Errorf("%s: outputDir must be a non-empty path, got %s", r.Plan.OutputDir.Pos, eval.Show(x))
		}
		if r.Runtime.Mode == actions.Check {
			// check writes nothing: the learner's directory is read
			// as it is.
			d, err := outdir.Open(dir)
			if err != nil {
				return err
			}
			r.Runtime.Out = d
		} else {
			d, err := outdir.Create(dir)
			if err != nil {
				return err
			}
			r.Runtime.Out = d
			j, err := OpenJournal(d, r.From != "")
			if err != nil {
				return err
			}
			j.redact = r.Secrets
			r.journal = j
		}
	}
	if r.Runtime.PlaybookDir == "" {
		r.Runtime.PlaybookDir = filepath.Dir(r.Plan.Playbook.File)
	}
	return nil
}

// addSecret records every scalar inside a secret variable's value.
func addSecret(r *secret.Redactor, x any) {
	switch v := x.(type) {
	case nil:
	case []any:
		for _, e := range v {
			addSecret(r, e)
		}
	case map[string]any:
		for _, e := range v {
			addSecret(r, e)
		}
	default:
		r.Add(eval.Format(v))
	}
}
