package labtest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/labrun/labrun/actions"
	"github.com/labrun/labrun/internal/lang/syntax"
	"github.com/labrun/labrun/runner"
)

// A fresh lab for each run of Repeat. What "fresh" can mean depends on the
// lab, and labrun takes the first that applies (docs/check.md):
//
//  1. the lab's cleanup playbook, beside it as docs/labs.md places it
//     (playbooks/LAB/cleanup.yaml): its author's word for what the lab
//     leaves behind (cca-identity's removes its namespace and the node
//     labels it sets);
//  2. the Namespaces the lab's solve makes (runner/access.Namespaces),
//     deleted, and waited for until gone: whatever the lab made in them
//     goes with them (cca-datapath's cca-dp: its Deployments, pods and
//     Services);
//  3. none: the lab works in a namespace it does not make (the
//     classroom lab, in the learner's), or makes nothing a namespace
//     holds, so each run is on the lab as the run before it left it.
//
// Both resets are playbooks run by labrun run: the cleanup playbook
// itself, or one that CleanupNamespaces writes, so a reset's steps are
// shown, classed and timed as any run's.

// CleanupBeside is the cleanup playbook beside the lab at path
// (DIR/LAB.yaml: DIR/LAB/cleanup.yaml), or "" when there is none.
func CleanupBeside(path string) string {
	base := strings.TrimSuffix(strings.TrimSuffix(filepath.Base(path), ".yaml"), ".yml")
	p := filepath.Join(filepath.Dir(path), base, "cleanup.yaml")
	if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
		return p
	}
	return ""
}

// namespaceName is what Kubernetes takes as a Namespace's name (a DNS
// label): nothing a YAML scalar could read otherwise.
var namespaceName = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

// CleanupNamespaces is a playbook that deletes the namespaces names of
// the lab lab, each waited for until gone (a namespace already gone is
// fine), for Reset. It stands beside the lab's playbook, so relative
// paths would mean what they mean there (it has none).
func CleanupNamespaces(lab *runner.Plan, names []string) (*runner.Plan, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "name: %q\nsteps:\n", lab.Playbook.Name+" (fresh)")
	for i, ns := range names {
		if !namespaceName.MatchString(ns) {
			return nil, fmt.Errorf("namespace %q is not a namespace's name", ns)
		}
		fmt.Fprintf(&b, "  - id: namespace_%d\n    name: delete namespace %s\n    delete: {kind: Namespace, name: %s, wait: true, ignoreNotFound: true}\n    timeout: 5m\n", i+1, ns, ns)
	}
	file := filepath.Join(filepath.Dir(lab.Playbook.File), "(fresh)")
	pb, err := syntax.Load(file, []byte(b.String()), actions.Names())
	if err != nil {
		return nil, err
	}
	return runner.Compile(pb, runner.Options{})
}

// PlaybookReset is a Reset that runs plan (a cleanup playbook) with the
// runner newRunner makes: what says what it does.
func PlaybookReset(what string, plan *runner.Plan, newRunner func(*runner.Plan) *runner.Runner) *Reset {
	return &Reset{What: what, Run: func(ctx context.Context) error {
		out, dir, err := run(ctx, newRunner(plan))
		dir.Close()
		if err != nil {
			return err
		}
		if out.Status == runner.Failed {
			return &FailedError{Class: out.Class, Msg: fmt.Sprintf("%s failed, so the next run would not start from a fresh lab: %s", what, firstFailure(out))}
		}
		return nil
	}}
}
