package main

import (
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"github.com/labrun/labrun/runner"
	"github.com/labrun/labrun/runner/access"
	"github.com/labrun/labrun/runner/labtest"
)

// freshAuto is --fresh's default: the lab's cleanup playbook beside it,
// else its namespaces deleted, else none (labtest/fresh.go says why in
// that order).
const freshAuto = "auto"

// freshReset is the Reset of labrun test --repeat's --fresh how for the
// lab plan, loaded from path: nil when every run is on the lab as the
// run before it left it. note says which, for the output. ok false: how
// cannot be done, and code is the exit code (what was wrong is on
// stderr).
func freshReset(how, path string, plan *runner.Plan, rf *runFlags, newRunner func(*runner.Plan) *runner.Runner, stderr io.Writer) (reset *labtest.Reset, note string, code int, ok bool) {
	cleanup := ""
	switch how {
	case "none":
		return nil, "--fresh none: every run is on the lab as the run before it left it", 0, true
	case freshAuto:
		cleanup = labtest.CleanupBeside(path)
	case "namespaces":
	default:
		cleanup = how
	}
	if cleanup != "" {
		// The lab's --set and --vars: the cleanup takes those of its own
		// variables (the lab's namespace) and ignores the rest.
		cp, err := runner.Load(cleanup, runner.Options{Set: rf.set, VarsFiles: rf.vars, IgnoreUndeclared: true})
		if err != nil {
			return nil, "", printLoadError(stderr, err), false
		}
		what := "run the cleanup playbook " + cleanup
		return labtest.PlaybookReset(what, cp, newRunner), "each run of --repeat but the last starts from a fresh lab: " + what + " first", 0, true
	}
	names, err := labNamespaces(plan, rf)
	switch {
	case err != nil && how == freshAuto:
		return nil, fmt.Sprintf("every run is on the lab as the run before it left it: which namespaces the lab makes is not known before the run (%v)", err), 0, true
	case err != nil:
		fmt.Fprintf(stderr, "labrun test: --fresh namespaces: which namespaces the lab makes is not known before the run: %v\n", err)
		return nil, "", exitInvalid, false
	case len(names) == 0 && how == freshAuto:
		base := strings.TrimSuffix(strings.TrimSuffix(filepath.Base(path), ".yaml"), ".yml")
		return nil, fmt.Sprintf("every run is on the lab as the run before it left it: the lab makes no namespace of its own and has no cleanup playbook beside it (%s/cleanup.yaml)", base), 0, true
	case len(names) == 0:
		fmt.Fprintln(stderr, "labrun test: --fresh namespaces: the lab makes no namespace of its own (a Namespace object its solve applies, named before the run)")
		return nil, "", exitInvalid, false
	}
	cp, err := labtest.CleanupNamespaces(plan, names)
	if err != nil {
		fmt.Fprintf(stderr, "labrun test: %v\n", err)
		return nil, "", exitInvalid, false
	}
	what := "delete namespace " + names[0]
	if len(names) > 1 {
		what = "delete namespaces " + strings.Join(names, ", ")
	}
	return labtest.PlaybookReset(what, cp, newRunner), "each run of --repeat but the last starts from a fresh lab: " + what + " first", 0, true
}

// labNamespaces are the namespaces the lab's solve makes
// (access.Namespaces) but the one that holds the run's Lease: deleting
// that would take the Lease with it.
func labNamespaces(plan *runner.Plan, rf *runFlags) ([]string, error) {
	ns, _, err := contextNamespace(rf.kubeconfig, rf.kubeContext)
	if err != nil {
		ns = "default"
	}
	names, err := access.Namespaces(plan, access.Options{Namespace: ns})
	if err != nil || rf.noLock {
		return names, err
	}
	lease, err := access.LeaseNamespace(plan, access.Options{Namespace: ns})
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(names, func(n string) bool { return n == lease }), nil
}
