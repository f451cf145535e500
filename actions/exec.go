package actions

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/labrun/labrun/internal/boundary/cluster"
	"github.com/labrun/labrun/internal/lang/diag"
	"github.com/labrun/labrun/internal/lang/eval"
)

// ExecSpec runs a command in a container, as kubectl exec does.
type ExecSpec struct {
	cluster.PodTarget `yaml:",inline"`
	Argv              []string `yaml:"argv" required:"true" doc:"Command and arguments, run directly (no shell)."`
	Stdin             *string  `yaml:"stdin" doc:"Text sent to the command's standard input."`
	AllowFailure      bool     `yaml:"allowFailure" doc:"Treat a non-zero exit code as a result instead of a step failure."`
	Mutates           bool     `yaml:"mutates" doc:"The command changes the system: labrun check skips the step and until may not repeat it."`
	Reuse             bool     `yaml:"reuse" doc:"Run through one long-lived shell session in the container (same stdout, stderr and exit code as a separate exec, about 30x faster for many commands); needs sh in the container."`
}

// CiliumSpec runs cilium-dbg in the Cilium agent: the shorthand for the
// command every Cilium lab sends most.
type CiliumSpec struct {
	Args         []string `yaml:"args" required:"true" doc:"Arguments of cilium-dbg, e.g. [service, list, -o, json]."`
	Namespace    string   `yaml:"namespace" doc:"Namespace of the agent (default kube-system)."`
	Pod          string   `yaml:"pod" doc:"Agent pod or workload (default ds/cilium)."`
	Container    string   `yaml:"container" doc:"Agent container (default cilium-agent)."`
	Node         string   `yaml:"node" doc:"Use the agent on this node (default: the agent on the first node by name)."`
	AllowFailure bool     `yaml:"allowFailure" doc:"Treat a non-zero exit code as a result instead of a step failure."`
	Separate     bool     `yaml:"separate" doc:"Use a separate exec instead of the agent's shared shell session."`
}

func init() {
	Register(Def[ExecSpec, cluster.ExecResult]{
		Name:       "exec",
		Cost:       ContainerExec,
		Doc:        "Run a command in a pod's container (pod by name, selector or workload such as ds/cilium) and capture stdout, stderr and exit code.",
		Run:        execInPod,
		MutatesKey: "mutates",
		Access: func(spec *ExecSpec, ac *AccessContext) ([]cluster.Access, error) {
			return execAccess(spec.PodTarget, ac)
		},
		Check: func(spec *eval.Value, sc *StaticContext) diag.List {
			errs := nullArgs(spec, "argv")
			if spec.Lookup("pod") == nil && spec.Lookup("selector") == nil {
				errs.Add(spec.Pos, "exec needs pod (a name or a workload such as ds/cilium) or selector")
			}
			return errs
		},
	})
	Register(Def[CiliumSpec, cluster.ExecResult]{
		Name: "cilium",
		Cost: ContainerExec,
		Doc:  "Run cilium-dbg in the Cilium agent (kube-system, ds/cilium, container cilium-agent unless told otherwise).",
		Check: func(spec *eval.Value, sc *StaticContext) diag.List {
			return nullArgs(spec, "args")
		},
		Run: func(ctx context.Context, rt *Runtime, spec *CiliumSpec) (*cluster.ExecResult, error) {
			e := &ExecSpec{
				PodTarget:    spec.target(),
				Argv:         append([]string{"cilium-dbg"}, spec.Args...),
				AllowFailure: spec.AllowFailure,
				// A lab sends the agent many commands: one shell session
				// per container answers each in milliseconds instead of a
				// new exec's tens.
				Reuse: !spec.Separate,
			}
			res, err := execInPod(ctx, rt, e)
			if err != nil && res != nil && res.ExitCode != 0 && agentUnreachable(res.Stderr) {
				err = &cluster.TransientError{Err: err, Reason: "Cilium agent API unreachable"}
			}
			return res, err
		},
		Access: func(spec *CiliumSpec, ac *AccessContext) ([]cluster.Access, error) {
			return execAccess(spec.target(), ac)
		},
	})
}

// target is the agent's container the command runs in: kube-system's
// ds/cilium, container cilium-agent, unless the spec says otherwise.
func (spec *CiliumSpec) target() cluster.PodTarget {
	t := cluster.PodTarget{Namespace: spec.Namespace, Pod: spec.Pod, Container: spec.Container, Node: spec.Node}
	if t.Namespace == "" {
		t.Namespace = "kube-system"
	}
	if t.Pod == "" {
		t.Pod = "ds/cilium"
	}
	if t.Container == "" {
		t.Container = "cilium-agent"
	}
	return t
}

// execAccess is what a command in the pod t picks asks (Exec).
func execAccess(t cluster.PodTarget, ac *AccessContext) ([]cluster.Access, error) {
	t, ns, err := ac.Pods(t)
	if err != nil {
		return nil, err
	}
	return cluster.ExecAccess(t, ns), nil
}

// agentUnreachableMessages are what cilium-dbg prints when the agent's API
// socket does not answer (an agent starting or restarting): `status
// --brief`'s line, and the hint of every other command (Cilium's
// pkg/client Hint, cilium-dbg/cmd/status.go).
var agentUnreachableMessages = []string{
	"cilium: daemon unreachable",
	"Is the agent running?",
}

// agentUnreachable tells whether cilium-dbg failed because the agent did
// not answer, not because of what it answered: a failure the same command
// may not meet once the agent is up, as a refused connection to the API
// server.
func agentUnreachable(stderr string) bool {
	for _, m := range agentUnreachableMessages {
		if strings.Contains(stderr, m) {
			return true
		}
	}
	return false
}

func execInPod(ctx context.Context, rt *Runtime, spec *ExecSpec) (*cluster.ExecResult, error) {
	if len(spec.Argv) == 0 {
		return nil, errors.New("argv is empty")
	}
	c, err := rt.cluster()
	if err != nil {
		return nil, err
	}
	res, err := c.Exec(ctx, spec.PodTarget, cluster.ExecRequest{Argv: spec.Argv, Stdin: spec.Stdin, Reuse: spec.Reuse})
	if err != nil {
		return res, err
	}
	if res.ExitCode != 0 && !spec.AllowFailure {
		return res, fmt.Errorf("%s in %s/%s exited with code %d: %s", ShellQuote(spec.Argv), res.Namespace, res.Pod, res.ExitCode, tail(res.Stderr))
	}
	return res, nil
}
