package actions

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/labrun/labrun/internal/lang/diag"
	"github.com/labrun/labrun/internal/lang/eval"
)

// SleepSpec pauses the playbook. Prefer until on a read-only step: a lab
// that waits for a condition should say which condition.
type SleepSpec struct {
	Duration time.Duration `yaml:"duration" required:"true" doc:"How long to pause (e.g. 2s)."`
}

// SleepResult records the pause.
type SleepResult struct {
	Seconds float64 `json:"seconds" expr:"seconds"`
}

func init() {
	Register(Def[SleepSpec, SleepResult]{
		Name: "sleep",
		Cost: InProcess,
		Doc:  "Pause for a fixed time; for the rare lab step that truly needs it (prefer until).",
		Check: func(spec *eval.Value, sc *StaticContext) diag.List {
			var errs diag.List
			if d := spec.Lookup("duration"); d != nil {
				if lit, ok := d.Literal(); ok && negative(lit) {
					errs.Add(d.Pos, "duration must not be negative, found %s", d.Node.Value)
				}
			}
			return errs
		},
		Run: func(ctx context.Context, rt *Runtime, spec *SleepSpec) (*SleepResult, error) {
			if spec.Duration < 0 {
				return nil, fmt.Errorf("duration must not be negative, found %s", spec.Duration)
			}
			start := time.Now()
			t := time.NewTimer(spec.Duration)
			defer t.Stop()
			select {
			case <-t.C:
			case <-ctx.Done():
				return &SleepResult{Seconds: time.Since(start).Seconds()}, ctx.Err()
			}
			return &SleepResult{Seconds: time.Since(start).Seconds()}, nil
		},
	})
}

// negative reports whether a literal duration (a number of seconds or a
// text such as -2s) is below zero.
func negative(lit any) bool {
	switch x := lit.(type) {
	case int:
		return x < 0
	case float64:
		return x < 0
	case string:
		d, err := time.ParseDuration(x)
		return err == nil && d < 0 || strings.HasPrefix(strings.TrimSpace(x), "-")
	}
	return false
}
