package actions

import (
	"path/filepath"

	"github.com/labrun/labrun/internal/lang/eval"
)

// What a step needs of the machine labrun runs on that no Kubernetes
// permission grants: a node's socket or BPF filesystem, a program, a
// shell on another machine, a network path, the output directory. On a
// lab's own VM all of it is there; in a pod it is there only when the
// pod is set up for it (a hostPath volume, hostNetwork, root, the tools
// in its image). `labrun rbac` prints these needs beside the Roles, so
// that a grader pod is not set up to fail. An action declares them beside
// its spec (Def.Host); package runner/access hands each step's spec to
// it before the run, with what is known then.

// HostNeed is one thing a step needs of the machine labrun runs on.
type HostNeed struct {
	// What is the thing, on one line: "the Cilium agent's API socket
	// /var/run/cilium/cilium.sock", "programs run through nsenter -t 1".
	What string
	// Of is the one of several things of a kind (a program's name):
	// needs that differ only in it are listed as one, "programs run
	// here: ip, ss"; "" when What says it all.
	Of string
	// InPod says what a pod that runs labrun needs for it.
	InPod string
}

// HostContext is what an action's Host learns of a step besides the spec,
// which holds the values known before the run (a value that reads a
// step's result is not known then, and its field is zero).
type HostContext struct {
	// Mode is the run's: labrun run or check.
	Mode Mode
	// Spec is the step's spec as written.
	Spec *eval.Value
	// Unknown reports whether the value of a key of the spec is only
	// known when the step runs.
	Unknown func(key string) bool
	// Eval renders a value of the spec; known is false when it is only
	// known when the step runs.
	Eval func(v *eval.Value) (x any, known bool, err error)
	// OutputDir is the playbook's output directory, "" when it has none
	// or it is known only at the run.
	OutputDir string
}

// HasHostNeeds reports whether a step of the action may need something
// of the machine labrun runs on beyond the Kubernetes API.
func (i *Info) HasHostNeeds() bool { return i.host != nil }

// HostNeeds lists what a step with spec (decoded from what is known
// before the run) needs of the machine labrun runs on.
func (i *Info) HostNeeds(spec any, hc *HostContext) []HostNeed {
	if i.host == nil {
		return nil
	}
	return i.host(spec, hc)
}

// hostPathOf is the directory a pod mounts from the node (hostPath) to
// reach the Unix socket at path.
func hostPathOf(path string) string { return filepath.Dir(path) }
