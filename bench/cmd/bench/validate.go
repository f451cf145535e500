package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// benchValidate times `labrun validate` as a whole process: on the lab's
// playbook, and on a generated 10,000-step playbook in which every step
// reads the one before (runner/compile_test.go's generated(n)).
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
	if err := os.WriteFile(big, generated(10000), 0o644); err != nil {
		return nil, err
	}
	bigWall, bigRSS, err := validate(big)
	if err != nil {
		return nil, err
	}
	return []Row{
		Row{Name: "`labrun validate playbooks/cca-datapath.yaml`, whole process", Labrun: durations("labrun", "ms", lab)}.withLimit(50),
		Row{Name: "`labrun validate` of a 10,000-step playbook, whole process", Labrun: durations("labrun", "s", bigWall)}.withLimit(2),
		Row{Name: "`labrun validate` of a 10,000-step playbook, max RSS", Labrun: newSeries("labrun", "MB", bigRSS)}.withLimit(200),
	}, nil
}

// generated is runner/compile_test.go's generated(n): n run steps, each
// reading the previous step's stdout and asserting on it.
func generated(n int) []byte {
	var b strings.Builder
	b.WriteString("name: big\nvars: {out: /tmp/big, n: 3}\noutputDir: ${{ vars.out }}\nsteps:\n  - id: s0\n    run: {argv: [echo, '0']}\n")
	for i := 1; i < n; i++ {
		fmt.Fprintf(&b, "  - id: s%d\n    run: {argv: [echo, \"${{ trim(steps.s%d.stdout) }}\", \"${{ vars.n }}\"]}\n    assert:\n      - that: result.exitCode == 0 and len(steps.s%d.stdout) >= 0\n", i, i-1, i-1)
	}
	return []byte(b.String())
}
