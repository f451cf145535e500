package main

import (
	"fmt"
	"io"
	"strings"

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

Steps that name no namespace are placed where run and check place them:
in the namespace of the kubeconfig context they use (--kubeconfig,
--context, $KUBECONFIG, ~/.kube/config, in a pod its own namespace),
default when there is no kubeconfig; --namespace says it instead. No
server is asked. The header says which namespace it is and why.

Some steps need what no Role grants, of the machine labrun runs on; on
the lab's node it is there, and a pod has it only when its spec
provides it. The output lists each such need as a comment above the
Roles, with the steps that have it and what a pod needs for it:
  agent     the Cilium agent's API socket: a hostPath of its directory
            (/var/run/cilium), and root or the socket's group
  bpfmap    the node's bpffs (/sys/fs/bpf): a hostPath of it, on that
            node, with CAP_BPF and CAP_SYS_ADMIN or root
  run       the program, in the pod's image (labrun's own has none);
            node-level tools see the pod's network and processes unless
            the pod has hostNetwork and hostPID, or the step's via
            prefix enters the node (nsenter: hostPID, privileged) or
            reaches another machine (ssh: a key from a Secret)
  http      a network path from the pod (localhost is the pod's own
            unless hostNetwork), or the hostPath of a unixSocket
  write     the output directory: writable for run (files and the
            journal), the learner's files readable for check
Steps that exec in pods (cilium, exec) and read logs need only their
Roles.

A step whose kind or namespace is known only when it runs (it reads a
step's result), or whose kind labrun's table does not know, is an error
at that value: exit 2.

Flags:
`

// rbacCmd is labrun rbac: the permissions a playbook's steps need in a
// mode, printed as Roles, and beside them, as comments, what the steps
// need of the machine labrun runs on.
func rbacCmd(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("rbac", stderr, rbacUsage)
	var vf varFlags
	vf.register(fs)
	mode := fs.String("mode", "run", "the run the Roles are for: run (every step) or check (the steps labrun check runs)")
	namespace := fs.String("namespace", "", "the namespace of steps that name none (default: the kubeconfig context's, as run and check use it)")
	kubeconfig := fs.String("kubeconfig", "", "kubeconfig whose context gives the namespace of steps that name none, as for run and check (default: $KUBECONFIG, ~/.kube/config, in a pod its own namespace)")
	kubeContext := fs.String("context", "", "kubeconfig context whose namespace that is (default: its current context)")
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
	if *namespace != "" && (*kubeconfig != "" || *kubeContext != "") {
		fmt.Fprintln(stderr, "labrun rbac: --namespace and --kubeconfig/--context both say where steps that name no namespace go: give one")
		return exitInvalid
	}
	plan, err := runner.Load(fs.Arg(0), vf.options())
	if err != nil {
		return printLoadError(stderr, err)
	}
	ns, nsSource := *namespace, "--namespace says so"
	if ns == "" {
		if ns, nsSource, err = contextNamespace(*kubeconfig, *kubeContext); err != nil {
			fmt.Fprintf(stderr, "labrun rbac: the namespace of steps that name none: %v\n", err)
			return exitInvalid
		}
	}
	opts := access.Options{Mode: m, Namespace: ns, NoLock: *noLock}
	needs, err := access.Derive(plan, opts)
	if err != nil {
		return printLoadError(stderr, err)
	}
	host, err := access.HostNeeds(plan, opts)
	if err != nil {
		return printLoadError(stderr, err)
	}
	header := fmt.Sprintf("The permissions labrun %s of playbook %s (%s) needs,\nderived from its steps by labrun rbac. Steps that name no namespace\nare placed in %s: %s.", *mode, plan.Playbook.Name, plan.Playbook.File, ns, nsSource)
	header += "\n" + strings.Join(access.FormatHostNeeds(host, *mode, 72), "\n")
	if err := access.WriteRoles(stdout, needs, access.RoleName(plan.Playbook.Name, *mode), strings.TrimRight(header, "\n")); err != nil {
		fmt.Fprintln(stderr, "labrun rbac:", err)
		return exitFailed
	}
	return exitOK
}
