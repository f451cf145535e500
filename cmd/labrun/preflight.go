package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/labrun/labrun/actions"
	"github.com/labrun/labrun/internal/lang/eval"
	"github.com/labrun/labrun/runner"
	"github.com/labrun/labrun/runner/access"
)

// preflight asks the cluster, before the first step of r, for every
// permission its steps need (access.Preflight), unless skip. A refused
// one ends the run at once, exit 2, naming each with the steps that need
// it; a preflight that cannot tell says why on stderr and lets the run
// go on, whose steps meet what the preflight could not see.
func preflight(ctx context.Context, r *runner.Runner, skip, noLock bool, stderr io.Writer) (code int, ok bool) {
	if skip {
		return 0, true
	}
	name, mode := "run", "run"
	if r.Runtime.Mode == actions.Check {
		name, mode = "check", "check"
	}
	err := access.PreflightWith(ctx, r.Plan, access.Options{Mode: r.Runtime.Mode, NoLock: noLock}, r.Runtime.Cluster)
	var refused *access.Refused
	switch {
	case err == nil:
		return 0, true
	case errors.As(err, &refused):
		fmt.Fprintf(stderr, "labrun %s: %v\nlabrun rbac --mode %s %s prints the Roles that grant them.\n", name, err, mode, r.Plan.Playbook.File)
		return exitInvalid, false
	}
	fmt.Fprintf(stderr, "labrun %s: the permissions were not checked before the first step: %s\n", name, eval.FirstLine(err.Error()))
	return 0, true
}
