package actions

import (
	"fmt"
	"path/filepath"

	"github.com/labrun/labrun/internal/boundary/bpfentries"
	"github.com/labrun/labrun/internal/boundary/cluster"
	"github.com/labrun/labrun/internal/leaf/outdir"
)

// Mode says what a run is for.
type Mode int

const (
	// Solve performs every step: the lab is done by labrun.
	Solve Mode = iota
	// Check grades what a learner did: mutating steps are skipped and write
	// steps compare the learner's files with what they would have written.
	Check
)

// Runtime is what actions may use while running, shared by all steps.
type Runtime struct {
	Mode Mode
	// Support marks a step labrun check runs only because a task it
	// grades reads its result, a step of a task it does not grade: a
	// write renders what it would write and compares no learner file.
	Support     bool
	PlaybookDir string // relative fixture paths are taken from here
	// Out is the playbook's output directory: every file a step writes,
	// or a learner's file check reads, goes through it. Nil when the
	// playbook declares none.
	Out *outdir.Dir
	// Progress receives short status lines during long operations (a
	// wait's last observed state); it may be nil.
	Progress func(msg string)
	// Cluster connects to Kubernetes on first use (and returns the same
	// connection afterwards); nil when no cluster can be reached.
	Cluster func() (cluster.Cluster, error)
	// BPFMaps opens the reader of Cilium's BPF maps under a bpffs root
	// (the same reader for the same root); nil when labrun cannot read
	// them.
	BPFMaps func(root string) (bpfentries.Reader, error)
	// Releases connects Helm to the cluster of Cluster on first use (and
	// returns the same one afterwards, which keeps the charts it loaded);
	// nil when labrun cannot reach Helm releases.
	Releases func() (cluster.Releases, error)
}

// ResolveInput turns a path from a spec into an absolute one, taken from
// the playbook's directory when relative.
func (rt *Runtime) ResolveInput(p string) string {
	if filepath.IsAbs(p) || rt.PlaybookDir == "" {
		return p
	}
	return filepath.Join(rt.PlaybookDir, p)
}

// ResolveOutput turns a write path into one relative to the output
// directory, refusing anything that cannot name a file of the lab inside
// it. Links are resolved inside the directory when the file is opened.
func (rt *Runtime) ResolveOutput(p string) (string, error) {
	if rt.Out == nil {
		return "", fmt.Errorf("the playbook declares no outputDir, so it cannot write %s", p)
	}
	return rt.Out.Resolve(p)
}
