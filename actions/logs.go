package actions

import (
	"context"
	"time"

	"github.com/labrun/labrun/internal/boundary/cluster"
)

// LogsSpec reads a container's log.
type LogsSpec struct {
	cluster.PodTarget `yaml:",inline"`
	Tail              int           `yaml:"tail" doc:"Only the last N lines."`
	Since             time.Duration `yaml:"since" doc:"Only lines newer than this (e.g. 5m)."`
	Previous          bool          `yaml:"previous" doc:"The log of the previous, crashed instance."`
}

func init() {
	Register(Def[LogsSpec, cluster.LogsResult]{
		Name: "logs",
		Cost: RoundTrip,
		Doc:  "Read a pod container's log (pod by name, selector or workload such as deploy/web).",
		Run: func(ctx context.Context, rt *Runtime, spec *LogsSpec) (*cluster.LogsResult, error) {
			c, err := rt.cluster()
			if err != nil {
				return nil, err
			}
			return c.Logs(ctx, spec.PodTarget, cluster.LogRequest{TailLines: spec.Tail, Since: spec.Since, Previous: spec.Previous})
		},
		Access: func(spec *LogsSpec, ac *AccessContext) ([]cluster.Access, error) {
			t, ns, err := ac.Pods(spec.PodTarget)
			if err != nil {
				return nil, err
			}
			return cluster.LogsAccess(t, ns), nil
		},
	})
}
