package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// captureRequests is how many requests the traffic of the capture
// section makes: a lab's capture wraps a few.
const captureRequests = 5

// benchCapture times what a capture step adds to the traffic it listens
// to: the same playbook, a loop of wget requests from the testbed's echo
// pod to its Service (execs in the pod, as a lab's client makes them),
// run with the loop under a capture (cilium-dbg monitor in the agent,
// until true once the requests are done, so no settle time is added)
// and without it, each as a whole labrun process. The difference is the
// capture's own cost: the monitor's exec and its start, and the stream's
// end.
func benchCapture(ctx context.Context, b *bench) ([]Row, error) {
	// the same step, at the top level and under during
	// (the test cluster has no DNS: the Service by its ClusterIP)
	step := fmt.Sprintf(`- id: ask
  loop: ${{ 1..%d }}
  exec: {namespace: labrun-testbed, pod: deploy/echo, argv: [wget, -q, -O, /dev/null, "http://${{ steps.svc.object.spec.clusterIP }}/"]}
`, captureRequests)
	const svc = "  - id: svc\n    get: {kind: Service, namespace: labrun-testbed, name: echo}\n"
	indent := func(n int) string {
		pad := strings.Repeat(" ", n)
		return pad + strings.ReplaceAll(strings.TrimSuffix(step, "\n"), "\n", "\n"+pad) + "\n"
	}
	plain := filepath.Join(b.work, "capture-plain.yaml")
	if err := os.WriteFile(plain, []byte("name: capture-bench-plain\nsteps:\n"+svc+indent(2)), 0o644); err != nil {
		return nil, err
	}
	captured := filepath.Join(b.work, "capture.yaml")
	if err := os.WriteFile(captured, []byte(`name: capture-bench
steps:
`+svc+`  - id: watch
    capture: {monitor: {types: [drop]}}
    during:
`+indent(6)+`    until: result.lines >= 0
    assert: ['result.stopped == "until"']
`), 0o644); err != nil {
		return nil, err
	}
	run := func(p string) []string {
		return []string{b.labrun, "run", "--no-progress", "--kubeconfig", b.kubeconfig, p}
	}
	// one run of each first, not measured: images, the agent's caches
	for _, p := range []string{plain, captured} {
		if _, err := timeProc(ctx, run(p))(); err != nil {
			return nil, err
		}
	}
	var with, without []float64
	for range b.n {
		d, err := timeProc(ctx, run(captured))()
		if err != nil {
			return nil, err
		}
		with = append(with, d.Seconds()*1000)
		d, err = timeProc(ctx, run(plain))()
		if err != nil {
			return nil, err
		}
		without = append(without, d.Seconds()*1000)
	}
	w, wo := newSeries("labrun with capture", "ms", with), newSeries("the same without it", "ms", without)
	return []Row{
		newRow(fmt.Sprintf("a capture (cilium-dbg monitor) around %d wget execs, whole process, vs the same execs without it", captureRequests), w, wo).
			withNote("The capture's overhead is the difference of the medians, %.0f ms: its exec in the agent, the monitor's start until it listens, and the stream's end (until holds at once after the requests; no settle time). A ratio below 1 is that cost, not a comparison with another tool.", w.Median-wo.Median),
	}, nil
}
