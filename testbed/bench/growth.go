package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"golang.org/x/sys/unix"

	"github.com/labrun/labrun/internal/parse"
	"github.com/labrun/labrun/internal/parse/parsetest"
	"github.com/labrun/labrun/runner/runnertest"
)

// growthScales are the three sizes every growth measurement is taken at:
// x1, x10 and x100 of its base size.
var growthScales = []int{1, 10, 100}

// maxExponent is the fitted exponent above which a measurement grows
// faster than linearly (with room for noise at the small sizes).
const maxExponent = 1.15

// benchGrowth measures four things at three sizes each, in one run, and
// fits time = c * size^k over the medians: validate (the exit-code chain
// playbook, 1,000 to 100,000 steps, whole process, with its peak memory),
// conntrack text parsing (2,000 to 200,000 lines, in process), the
// conntrack map read (synthetic maps of 2,000 to 200,000 entries in
// private bpffs) and `labrun check` grading 10 to 1,000 files (whole
// process; no cluster). Linear growth fits k = 1; a process's start-up
// makes the small sizes dearer, so k < 1 there; k above maxExponent is a
// defect.
func benchGrowth(ctx context.Context, b *bench) ([]Row, error) {
	var rows []Row
	for _, g := range []struct {
		name string
		base int
		unit string
		run  func(ctx context.Context, b *bench, size int) ([]time.Duration, []float64, error)
	}{
		{"`labrun validate`, run steps echoing the previous step's exit code", 1000, "steps", growValidate},
		{"conntrack text: ParseCTList + Count, in process", 2000, "lines", growCTParse},
		{"conntrack map read (bpfmaps, synthetic map)", 2000, "entries", growBPF},
		{"`labrun check` grading JSON files, whole process", 10, "files", growCheck},
	} {
		var sizes, medians []float64
		for _, scale := range growthScales {
			size := g.base * scale
			fmt.Fprintf(os.Stderr, "   %s: %d %s\n", g.name, size, g.unit)
			walls, rss, err := g.run(ctx, b, size)
			if err != nil {
				return nil, fmt.Errorf("%s at %d %s: %w", g.name, size, g.unit, err)
			}
			unit := "ms"
			if walls[0] > 2*time.Second {
				unit = "s"
			}
			t := durations("labrun", unit, walls)
			r := Row{Name: fmt.Sprintf("%s, %s %s (x%d)", g.name, fmtCount(size), g.unit, scale), Labrun: t}
			rows = append(rows, r)
			if rss != nil {
				rows = append(rows, Row{Name: fmt.Sprintf("%s, %s %s (x%d), max RSS", g.name, fmtCount(size), g.unit, scale), Labrun: newSeries("labrun", "MB", rss)})
			}
			sizes = append(sizes, float64(size))
			medians = append(medians, float64(median(walls)))
		}
		k := fitExponent(sizes, medians)
		met := k <= maxExponent
		rows = append(rows, Row{
			Name:   fmt.Sprintf("%s: fitted growth, time ∝ size^k (x1 to x100)", g.name),
			Labrun: newSeries("k =", "", []float64{k}),
			Goal:   fmt.Sprintf("k ≤ %g (linear)", maxExponent),
			Met:    &met,
		})
	}
	return rows, nil
}

// fitExponent is the least-squares slope of log(t) over log(size).
func fitExponent(sizes, times []float64) float64 {
	var sx, sy, sxx, sxy float64
	n := float64(len(sizes))
	for i := range sizes {
		x, y := math.Log(sizes[i]), math.Log(times[i])
		sx, sy, sxx, sxy = sx+x, sy+y, sxx+x*x, sxy+x*y
	}
	return (n*sxy - sx*sy) / (n*sxx - sx*sx)
}

func median(ds []time.Duration) time.Duration {
	s := durations("", "ms", ds)
	return time.Duration(s.Median * float64(time.Millisecond))
}

func fmtCount(n int) string {
	if n >= 1000 && n%1000 == 0 {
		return fmt.Sprintf("%d,000", n/1000)
	}
	return fmt.Sprint(n)
}

func growValidate(ctx context.Context, b *bench, steps int) ([]time.Duration, []float64, error) {
	path := filepath.Join(b.work, fmt.Sprintf("chain-%d.yaml", steps))
	if err := os.WriteFile(path, runnertest.ExitCodeChain(steps), 0o644); err != nil {
		return nil, nil, err
	}
	devnull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		return nil, nil, err
	}
	defer devnull.Close()
	var walls []time.Duration
	var rss []float64
	for range b.n {
		p, err := runProc(ctx, []string{b.labrun, "validate", "-q", path}, procOpts{stdout: devnull, rss: true})
		if err != nil {
			return nil, nil, err
		}
		walls, rss = append(walls, p.wall), append(rss, mb(p.maxRSS))
	}
	return walls, rss, nil
}

func growCTParse(_ context.Context, b *bench, lines int) ([]time.Duration, []float64, error) {
	text := parsetest.CTLines(lines)
	d, err := timeN(b.n, func() (time.Duration, error) {
		runtime.GC()
		start := time.Now()
		l, err := parse.ParseCTList(text)
		if err != nil {
			return 0, err
		}
		_ = l.Count(ctQueryDir, ctQueryPort)
		d := time.Since(start)
		if len(l.Entries) != lines {
			return 0, fmt.Errorf("ParseCTList: %d entries, want %d", len(l.Entries), lines)
		}
		return d, nil
	})
	return d, nil, err
}

func growBPF(_ context.Context, b *bench, entries int) ([]time.Duration, []float64, error) {
	if os.Geteuid() != 0 {
		return nil, nil, errors.New("reading and creating BPF maps needs root")
	}
	root := filepath.Join(b.work, fmt.Sprintf("bpffs-%d", entries))
	if err := os.MkdirAll(root, 0o700); err != nil {
		return nil, nil, err
	}
	if err := unix.Mount("bpf", root, "bpf", 0, "mode=0700"); err != nil {
		return nil, nil, fmt.Errorf("mount a private bpffs on %s: %w", root, err)
	}
	defer unix.Unmount(root, unix.MNT_DETACH)
	if err := fillCT(root, entries); err != nil {
		return nil, nil, err
	}
	d, _, err := readConntrack(b.n, root, entries)
	return d, nil, err
}

func growCheck(ctx context.Context, b *bench, files int) ([]time.Duration, []float64, error) {
	dir := filepath.Join(b.work, fmt.Sprintf("files-%d", files))
	if err := os.RemoveAll(dir); err != nil {
		return nil, nil, err
	}
	path := dir + ".yaml"
	if err := os.WriteFile(path, runnertest.Files(files, dir), 0o644); err != nil {
		return nil, nil, err
	}
	// the learner's files: what a run writes, which check then grades as right
	if _, err := runProc(ctx, []string{b.labrun, "run", "--no-progress", path}, procOpts{}); err != nil {
		return nil, nil, err
	}
	d, err := timeN(b.n, timeProc(ctx, []string{b.labrun, "check", "--no-progress", path}))
	return d, nil, err
}
