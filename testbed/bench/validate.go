package main

import (
	"context"
	"os"
	"path/filepath"
	"time"

	"github.com/labrun/labrun/runner/runnertest"
)

// benchValidate times `labrun validate` as a whole process: on the lab's
// playbook, and on a generated 10,000-step playbook in which every step
// reads the one before (runnertest.Generated, which runner's own test
// validates too).
func benchValidate(ctx context.Context, b *bench) ([]Row, error) {
	devnull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		return nil, err
	}
	defer devnull.Close()
	validate := func(path string) ([]time.Duration, []float64, error) {
		var walls []time.Duration
		var rss []float64
		for range b.n {
			p, err := runProc(ctx, []string{b.labrun, "validate", path}, procOpts{stdout: devnull, rss: true})
			if err != nil {
				return nil, nil, err
			}
			walls, rss = append(walls, p.wall), append(rss, mb(p.maxRSS))
		}
		return walls, rss, nil
	}

	lab, _, err := validate("playbooks/cca-datapath.yaml")
	if err != nil {
		return nil, err
	}
	big := filepath.Join(b.work, "validate-10k.yaml")
	if err := os.WriteFile(big, runnertest.Generated(10000), 0o644); err != nil {
		return nil, err
	}
	bigWall, bigRSS, err := validate(big)
	if err != nil {
		return nil, err
	}
	return []Row{
		Row{Name: "`labrun validate playbooks/cca-datapath.yaml`, whole process", Labrun: durations("labrun", "ms", lab)}.withLimit(50),
		Row{Name: "`labrun validate` of a 10,000-step playbook, whole process", Labrun: durations("labrun", "s", bigWall)}.withLimit(0.5),
		Row{Name: "`labrun validate` of a 10,000-step playbook, max RSS", Labrun: newSeries("labrun", "MB", bigRSS)}.withLimit(200),
	}, nil
}
