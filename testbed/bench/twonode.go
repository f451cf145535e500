package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// twoNodeLab is a lab the bench solves on the two-node test cluster, with
// labrun and with a bash reference solution, taking turns.
type twoNodeLab struct {
	name   string          // the playbook, playbooks/NAME.yaml
	script string          // the bash solution, SCRIPT OUTDIR
	files  []string        // the files both must write
	perRun map[string]bool // "file key"s compared by type only
	dir    string          // the bench's scratch directory for the outputs
	// check, if set, checks a run's per-run values against the cluster
	// right after the run (either tool's)
	check func(ctx context.Context, b *bench, dir string) error
}

// solveTwoNode solves lab b.n times with labrun and with the bash
// solution in turn, after a first labrun run, not measured, that brings
// the cluster to the state every measured run starts from, and compares
// each pair's files key by key (and checks each run with lab.check). It returns no runs, saying so, unless the
// test cluster runs a two-node profile.
func (b *bench) solveTwoNode(ctx context.Context, lab twoNodeLab) (lr, br []labRun, err error) {
	if p, err := testbedProfile(); err != nil {
		return nil, nil, err
	} else if p != "tunnel" && p != "native" {
		fmt.Fprintf(os.Stderr, "   skipped: the test cluster runs profile %q; the lab needs two nodes (testbed/up --profile tunnel)\n", p)
		return nil, nil, nil
	}
	dir := func(name string) string { return filepath.Join(b.work, lab.dir, name) }
	if _, err := b.solvePlaybook(ctx, lab.name, dir("warm-up")); err != nil {
		return nil, nil, err
	}
	for i := 1; i <= b.n; i++ {
		l, err := b.solvePlaybook(ctx, lab.name, dir(fmt.Sprintf("labrun-%d", i)))
		if err != nil {
			return nil, nil, err
		}
		if err := lab.checkRun(ctx, b, "labrun", l); err != nil {
			return nil, nil, err
		}
		s, err := b.solveScript(ctx, lab.script, dir(fmt.Sprintf("bash-%d", i)))
		if err != nil {
			return nil, nil, err
		}
		if err := lab.checkRun(ctx, b, "the bash solution", s); err != nil {
			return nil, nil, err
		}
		diffs, err := compareFiles(lab.files, lab.perRun, l.dir, s.dir)
		if err != nil {
			return nil, nil, err
		}
		if len(diffs) > 0 {
			return nil, nil, fmt.Errorf("the bash solution's %s files differ from labrun's (%s vs %s):\n  %s", lab.name, s.dir, l.dir, strings.Join(diffs, "\n  "))
		}
		fmt.Fprintf(os.Stderr, "   run %d: labrun %.2f s (%.2f s outside its waits), bash %.2f s (%.2f s), same %d files\n",
			i, l.wall.Seconds(), (l.wall - l.waited).Seconds(), s.wall.Seconds(), (s.wall - s.waited).Seconds(), len(lab.files))
		lr, br = append(lr, l), append(br, s)
	}
	return lr, br, nil
}

func (lab twoNodeLab) checkRun(ctx context.Context, b *bench, who string, r labRun) error {
	if lab.check == nil {
		return nil
	}
	if err := lab.check(ctx, b, r.dir); err != nil {
		return fmt.Errorf("%s's %s files (%s): %w", who, lab.name, r.dir, err)
	}
	return nil
}

// testbedProfile is the profile the test cluster runs (its vars file).
func testbedProfile() (string, error) {
	data, err := os.ReadFile("/var/lib/labrun-testbed/vars.yaml")
	if err != nil {
		return "", err
	}
	var v struct {
		Profile string `yaml:"profile"`
	}
	if err := yaml.Unmarshal(data, &v); err != nil {
		return "", fmt.Errorf("/var/lib/labrun-testbed/vars.yaml: %v", err)
	}
	return v.Profile, nil
}

// rows are a two-node lab's rows: end to end (goal 2x), and outside the
// waits for Kubernetes objects (labrun's wait steps, the bash solution's
// wait_for loops), the waited-for objects named by waitsFor.
func (lab twoNodeLab) rows(lr, br []labRun, waitsFor, endNote, outsideNote string) []Row {
	wall := func(r labRun) time.Duration { return r.wall }
	outside := func(r labRun) time.Duration { return r.wall - r.waited }
	return []Row{
		compare(lab.name+" lab, end to end",
			durations("labrun", "s", each(lr, wall)), durations("bash + kubectl", "s", each(br, wall)), 2).
			withNote("%s", endNote),
		compare(lab.name+" lab, outside the waits for "+waitsFor,
			durations("labrun", "s", each(lr, outside)), durations("bash + kubectl", "s", each(br, outside)), 0).
			withNote("%s", outsideNote),
		beyondRow(lab.name, lr, "Its reads count as its own time: execs in pods, cilium-dbg in the agents, Helm."),
	}
}
