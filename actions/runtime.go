package actions

import (
	"fmt"
	"path/filepath"
	"strings"
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
	Mode        Mode
	PlaybookDir string // relative fixture paths are taken from here
	OutputDir   string // absolute; every written file stays inside
	// Progress receives short status lines during long operations (a
	// wait's last observed state); it may be nil.
	Progress func(msg string)
	// Cluster connects to Kubernetes on first use (and returns the same
	// connection afterwards); nil when no cluster can be reached.
	Cluster func() (Cluster, error)
}

// ResolveInput turns a path from a spec into an absolute one, taken from
// the playbook's directory when relative.
func (rt *Runtime) ResolveInput(p string) string {
	if filepath.IsAbs(p) || rt.PlaybookDir == "" {
		return p
	}
	return filepath.Join(rt.PlaybookDir, p)
}

// ResolveOutput turns a write path into an absolute one inside OutputDir,
// refusing anything that would land outside it (.. or an absolute path
// elsewhere). Symbolic links are checked when the file is written.
func (rt *Runtime) ResolveOutput(p string) (string, error) {
	if rt.OutputDir == "" {
		return "", fmt.Errorf("the playbook declares no outputDir, so it cannot write %s", p)
	}
	root := filepath.Clean(rt.OutputDir)
	full := p
	if !filepath.IsAbs(full) {
		full = filepath.Join(root, p)
	}
	full = filepath.Clean(full)
	if !Within(root, full) {
		return "", fmt.Errorf("output path %s is outside the output directory %s", p, root)
	}
	return full, nil
}

// Within reports whether path is root or below it (both cleaned).
func Within(root, path string) bool {
	rel, err := filepath.Rel(root, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../") && !filepath.IsAbs(rel)
}
