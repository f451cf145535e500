package actions

import (
	"context"
	"time"
)

// SleepSpec pauses the playbook. Prefer until on a read-only step: a lab
// that waits for a condition should say which condition.
//
// The duration is held to the rule of every duration in a playbook
// (scalar.Duration): a literal zero or negative one is refused when the
// playbook is validated, and one an expression gives, when the spec is
// decoded, so Run only ever sees a positive duration.
type SleepSpec struct {
	Duration time.Duration `yaml:"duration" required:"true" doc:"How long to pause (e.g. 2s)."`
}

// SleepResult records the pause.
type SleepResult struct {
	// Seconds is how long the step slept: its duration, or less when
	// the run was interrupted.
	Seconds float64 `json:"seconds" expr:"seconds"`
}

func init() {
	Register(Def[SleepSpec, SleepResult]{
		Name: "sleep",
		Cost: InProcess,
		Doc:  "Pause for a fixed time; for the rare lab step that truly needs it (prefer until).",
		Run: func(ctx context.Context, rt *Runtime, spec *SleepSpec) (*SleepResult, error) {
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
