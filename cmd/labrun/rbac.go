package main

import (
	"fmt"
	"io"

	"github.com/labrun/labrun/actions"
	"github.com/labrun/labrun/runner"
	"github.com/labrun/labrun/runner/access"
)

const rbacUsage = `Usage: labrun rbac PLAYBOOK [flags]

Prints the Roles that grant exactly the Kubernetes permissions the
playbook's steps need, as YAML kubectl applies: a ClusterRole for
cluster-scoped kinds and reads over all namespaces, a Role in each
namespace the steps use. They are derived from the steps alone, with no
cluster: the kinds each step reads, watches, applies, scales, labels or
deletes, the pods it execs in or reads the log of. With --mode check,
only the steps labrun check runs (none that changes the system). Bind
them to the account labrun runs as; run and check ask the API server
for the same permissions before the first step. They include get, create
and update of leases where the run holds its Lease (the one namespace
the steps stay in, else kube-system), unless --no-lock.

A step whose kind or namespace is known only when it runs (it reads a
step's result), or whose kind labrun's table does not know, is an error
at that value: exit 2.

Flags:
`

// rbacCmd is labrun rbac: the permissions a playbook's steps need in a
// mode, printed as Roles.
func rbacCmd(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("rbac", stderr, rbacUsage)
	var vf varFlags
	vf.register(fs)
	mode := fs.String("mode", "run", "the run the Roles are for: run (every step) or check (the steps labrun check runs)")
	namespace := fs.String("namespace", "default", "the namespace of steps that name none (the kubeconfig context's)")
	noLock := fs.Bool("no-lock", false, "for runs with --no-lock: no permission on leases")
	if code, ok := parseFlags(fs, args, stderr); !ok {
		return code
	}
	if fs.NArg() != 1 {
		fmt.Fprintf(stderr, "labrun rbac: expected exactly one playbook, got %d\n", fs.NArg())
		return exitInvalid
	}
	m := actions.Solve
	switch *mode {
	case "run":
	case "check":
		m = actions.Check
	default:
		fmt.Fprintf(stderr, "labrun rbac: --mode %q: expected run or check\n", *mode)
		return exitInvalid
	}
	plan, err := runner.Load(fs.Arg(0), vf.options())
	if err != nil {
		return printLoadError(stderr, err)
	}
	needs, err := access.Derive(plan, access.Options{Mode: m, Namespace: *namespace, NoLock: *noLock})
	if err != nil {
		return printLoadError(stderr, err)
	}
	header := fmt.Sprintf("The permissions labrun %s of playbook %s (%s) needs,\nderived from its steps by labrun rbac.", *mode, plan.Playbook.Name, plan.Playbook.File)
	if err := access.WriteRoles(stdout, needs, access.RoleName(plan.Playbook.Name, *mode), header); err != nil {
		fmt.Fprintln(stderr, "labrun rbac:", err)
		return exitFailed
	}
	return exitOK
}
