package runner

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/labrun/labrun/actions"
	"github.com/labrun/labrun/internal/boundary/cluster"
	"github.com/labrun/labrun/internal/boundary/cluster/clustertest"
	"github.com/labrun/labrun/internal/lang/syntax"
)

// fakeMonitor is cilium-dbg monitor as the capture sees it through the
// cluster: it says it is ready on stderr, then prints a drop for every
// line the during steps append to the trigger file, until its stream is
// closed. ended counts the streams that returned, so a test sees that
// none was left running.
type fakeMonitor struct {
	trigger  string
	extra    []string // lines printed at once after ready
	notReady string   // when set: print this on stderr and exit 1 instead
	hang     bool     // never say it is ready
	started  atomic.Int32
	ended    atomic.Int32
	early    atomic.Bool // a during step ran before the monitor was ready
	argv     atomic.Value
}

const fakeDrop = `{"type":"drop","mark":"0x1","reason":"Policy denied","source":7,"bytes":74,"srcLabel":5,"dstLabel":6,"dstID":7,"Ifindex":3,"summary":{"tcp":"TCP","l3":{"src":"10.0.0.1","dst":"10.0.0.2"},"l4":{"src":"40000","dst":"8080"}}}`

func (f *fakeMonitor) stream(ctx context.Context, t cluster.PodTarget, req cluster.StreamRequest) (*cluster.StreamResult, error) {
	f.started.Add(1)
	defer f.ended.Add(1)
	f.argv.Store(req.Argv)
	res := &cluster.StreamResult{Namespace: t.Namespace, Pod: "cilium-x", Container: t.Container}
	if f.hang {
		<-ctx.Done()
		res.Stopped = true
		return res, nil
	}
	if f.notReady != "" {
		fmt.Fprintln(req.Stderr, f.notReady)
		res.ExitCode = 1
		return res, nil
	}
	time.Sleep(20 * time.Millisecond) // time for a during step started too early to run
	if _, err := os.Stat(f.trigger); err == nil {
		f.early.Store(true)
	}
	// the capture's script ends the monitor when its input ends
	inputEnded := make(chan struct{})
	if req.Stdin != nil {
		go func() {
			io.Copy(io.Discard, req.Stdin)
			close(inputEnded)
		}()
	}
	fmt.Fprintln(req.Stderr, "Listening for events on 2 CPUs with 64x4096 of shared memory")
	fmt.Fprintln(req.Stderr, "Press Ctrl-C to quit")
	for _, l := range f.extra {
		fmt.Fprintln(req.Stdout, l)
	}
	printed := 0
	for {
		b, _ := os.ReadFile(f.trigger)
		for n := strings.Count(string(b), "\n"); printed < n; printed++ {
			if _, err := fmt.Fprintln(req.Stdout, fakeDrop); err != nil {
				res.Stopped = true
				return res, nil
			}
		}
		select {
		case <-ctx.Done():
			res.Stopped = true
			return res, nil
		case <-inputEnded:
			res.ExitCode = 143 // killed by the script
			return res, nil
		case <-time.After(2 * time.Millisecond):
		}
	}
}

const capturePlaybook = `
name: capture
vars: {trigger: x}
steps:
  - id: before
    run: {argv: ["true"]}
  - id: watch
    capture:
      monitor: {types: [drop]}
      SPEC
    during:
      - id: send
        run: {argv: [sh, -c, 'SEND', "${{ vars.trigger }}"]}
      - id: second
        run: {argv: ["true"]}
    UNTIL
    timeout: 2s
  - id: after
    assert: ['steps.send.exitCode == 0']
`

func TestCapture(t *testing.T) {
	cases := []struct {
		name, spec, send, until string
		extra                   []string
		notReady                string
		hang                    bool
		// want: status of watch, send, second; watch's stopped and drops
		want    string
		err     string
		stopped string
		drops   int
	}{
		{name: "a drop the during step causes ends the capture at until", send: `echo x >> "$0"`, until: "until: len(result.drops) > 0",
			want: "passed passed passed", stopped: "until", drops: 1},
		{name: "without until it listens for settle, and sees nothing when nothing is dropped", spec: "settle: 50ms", send: `touch "$0"`,
			want: "passed passed passed", stopped: "settle", drops: 0},
		{name: "a failed during step fails the capture and skips the rest", send: "exit 3", until: "until: len(result.drops) > 0",
			want: "failed failed skipped", err: "step send under during failed", stopped: "failed"},
		{name: "until that never holds ends at the timeout with what was seen", send: "true", until: "until: len(result.drops) > 0",
			want: "failed passed passed", err: "timed out after 2s waiting for until: len(result.drops) > 0; last seen: len(result.drops) = 0", stopped: "timeout"},
		{name: "maxEvents stops the reading, the steps go on", spec: "maxEvents: 2", send: `echo x >> "$0"`, extra: []string{fakeDrop, fakeDrop, fakeDrop},
			want: "passed passed passed", stopped: "maxEvents", drops: 2},
		{name: "a monitor that cannot start fails the step, its steps never run", notReady: "level=error msg=\"Cannot open monitor socket\"", send: "true",
			want: "failed skipped skipped", err: `cilium-dbg monitor ended before it was listening (exit code 1); it printed: level=error msg="Cannot open monitor socket"`},
		{name: "a monitor that never listens ends at the timeout, saying so", hang: true, send: "true", until: "until: len(result.drops) > 0",
			want: "failed skipped skipped", err: "step timed out after 2s: cilium-dbg monitor was not listening yet"},
		{name: "a line the parser refuses fails the capture", send: "true", extra: []string{"not a monitor line"}, spec: "settle: 50ms",
			want: "failed passed passed", err: `cilium-dbg monitor printed line 1, which labrun cannot read`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			trigger := filepath.Join(t.TempDir(), "trigger")
			f := &fakeMonitor{trigger: trigger, extra: c.extra, notReady: c.notReady, hang: c.hang}
			src := strings.NewReplacer("SPEC", c.spec, "SEND", c.send, "UNTIL", c.until).Replace(capturePlaybook)
			plan := compile(t, src, "trigger="+trigger)
			rt := &actions.Runtime{Cluster: func() (cluster.Cluster, error) { return &clustertest.Cluster{StreamFunc: f.stream}, nil }}
			o, err := (&Runner{Plan: plan, Runtime: rt}).Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			byID := map[string]*StepRecord{}
			var order []string
			for _, s := range o.Steps {
				byID[s.ID] = s
				order = append(order, s.ID)
			}
			if got := strings.Join(order, " "); got != "before watch send second after" {
				t.Errorf("records in order %s", got)
			}
			got := fmt.Sprintf("%s %s %s", byID["watch"].Status, byID["send"].Status, byID["second"].Status)
			if got != c.want {
				t.Errorf("status of watch, send, second: %s, want %s (watch: %s)", got, c.want, byID["watch"].Error)
			}
			if !strings.Contains(byID["watch"].Error, c.err) || (c.err == "") != (byID["watch"].Error == "") {
				t.Errorf("watch's error %q, want one containing %q", byID["watch"].Error, c.err)
			}
			if f.early.Load() {
				t.Error("a during step ran before the monitor said it was listening")
			}
			if f.started.Load() != f.ended.Load() || f.started.Load() != 1 {
				t.Errorf("%d streams started, %d ended", f.started.Load(), f.ended.Load())
			}
			argv := strings.Join(f.argv.Load().([]string), " ")
			if !strings.HasPrefix(argv, "sh -c ") || !strings.HasSuffix(argv, " cilium-dbg monitor -j -n --type drop") {
				t.Errorf("argv %s", argv)
			}
			res, _ := byID["watch"].Result.(*actions.CaptureResult)
			if c.stopped == "" {
				return
			}
			if res == nil {
				t.Fatalf("no capture result: %#v", byID["watch"].Result)
			}
			if res.Stopped != c.stopped || len(res.Drops) != c.drops || res.Truncated != (c.stopped == "maxEvents") {
				t.Errorf("stopped %q with %d drops (truncated %v), want %q with %d", res.Stopped, len(res.Drops), res.Truncated, c.stopped, c.drops)
			}
			if c.drops > 0 && (res.Drops[0].Reason != "Policy denied" || *res.Drops[0].DstPort != 8080 || res.Pod != "cilium-x") {
				t.Errorf("drop %+v from pod %q", res.Drops[0], res.Pod)
			}
		})
	}
}

// Ctrl-C while the during steps run ends them and the stream.
func TestCaptureInterrupted(t *testing.T) {
	trigger := filepath.Join(t.TempDir(), "trigger")
	f := &fakeMonitor{trigger: trigger}
	src := strings.NewReplacer("SPEC", "", "SEND", "sleep 30", "UNTIL", "").Replace(capturePlaybook)
	plan := compile(t, src, "trigger="+trigger)
	rt := &actions.Runtime{Cluster: func() (cluster.Cluster, error) { return &clustertest.Cluster{StreamFunc: f.stream}, nil }}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(300*time.Millisecond, cancel)
	start := time.Now()
	o, err := (&Runner{Plan: plan, Runtime: rt}).Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if time.Since(start) > 5*time.Second {
		t.Errorf("the interrupted capture took %s", time.Since(start))
	}
	if o.Status != Interrupted || f.started.Load() != 1 || f.ended.Load() != 1 {
		t.Errorf("run %s, %d streams started, %d ended", o.Status, f.started.Load(), f.ended.Load())
	}
}

// What validate refuses of during and capture, at the key.
func TestCaptureValidate(t *testing.T) {
	cases := []struct{ name, src, err string }{
		{"during without an action that runs around steps", `
  - id: a
    run: {argv: ["true"]}
    during:
      - id: b
        run: {argv: ["true"]}`, "during holds the steps an action runs around (capture); run runs no steps"},
		{"capture without during", `
  - id: a
    capture: {monitor: {}}`, "capture needs during: the steps to run while it listens"},
		{"capture without a source", `
  - id: a
    capture: {}
    during:
      - id: b
        run: {argv: ["true"]}`, "capture needs a source: monitor"},
		{"a type the parser does not read", `
  - id: a
    capture: {monitor: {types: [dorp]}}
    during:
      - id: b
        run: {argv: ["true"]}`, `monitor type "dorp" is not one labrun reads; use drop, policy-verdict, trace (did you mean "drop"?)`},
		{"a bound out of range", `
  - id: a
    capture: {monitor: {}, maxEvents: 1000000}
    during:
      - id: b
        run: {argv: ["true"]}`, "maxEvents is 1000000; expected 1 to 100000"},
		{"a settle beyond the bound", `
  - id: a
    capture: {monitor: {}, settle: 2h}
    during:
      - id: b
        run: {argv: ["true"]}`, "settle is 2h0m0s; expected at most 1m0s"},
		{"capture with loop", `
  - id: a
    loop: [1, 2]
    capture: {monitor: {}}
    during:
      - id: b
        run: {argv: ["true"]}`, "capture runs its during steps once; it takes no loop"},
		{"a during step reading its capture", `
  - id: a
    capture: {monitor: {}}
    during:
      - id: b
        assert: ['len(steps.a.drops) == 0']`, "steps.a is the step this step runs during; its result is known when it ends"},
		{"a capture reading its during step", `
  - id: a
    capture: {monitor: {}}
    during:
      - id: b
        run: {argv: ["true"]}
    assert: ['steps.b.exitCode == 0']`, `step "b" has not run yet at this point`},
		{"a capture in a parallel branch", `
  - id: p
    parallel:
      x:
        - id: a
          capture: {monitor: {}}
          during:
            - id: b
              run: {argv: ["true"]}
      y:
        - id: c
          run: {argv: ["true"]}`, "a step with during cannot run in a parallel branch"},
		{"nested during", `
  - id: a
    capture: {monitor: {}}
    during:
      - id: b
        capture: {monitor: {}}
        during:
          - id: c
            run: {argv: ["true"]}`, "during steps cannot be nested"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := compileErr(t, "name: v\nsteps:"+c.src+"\n")
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("got %v\nwant an error containing %q", err, c.err)
			}
		})
	}
	if err := compileErr(t, "name: v\nsteps:\n  - id: a\n    capture: {monitor: {}}\n    during:\n      - id: b\n        run: {argv: [\"true\"]}\n  - id: c\n    assert: ['len(steps.a.drops) == 0 && steps.b.exitCode == 0']\n"); err != nil {
		t.Errorf("a step after the capture reads it and its during steps: %v", err)
	}
	if err := compileErr(t, "name: v\nsteps:\n  - id: z\n    run: {argv: [\"true\"]}\nfinally:\n  - id: a\n    capture: {monitor: {}}\n    during:\n      - id: b\n        run: {argv: [\"true\"]}\n"); err == nil || !strings.Contains(err.Error(), "finally steps clean up; a step with during") {
		t.Errorf("capture in finally: %v", err)
	}
}

// compileErr loads and compiles src, returning the first error of either.
func compileErr(t *testing.T, src string) error {
	t.Helper()
	path := filepath.Join(t.TempDir(), "p.yaml")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	pb, err := syntax.Load(path, []byte(src), actions.Names())
	if err != nil {
		return err
	}
	_, err = Compile(pb, Options{})
	return err
}

// In a check, the same read before and after the traffic of a capture's
// during steps is made twice, not shared: a counter the traffic moves
// reads differently, inside the during list and after the capture alike.
func TestCaptureReadsNotSharedInCheck(t *testing.T) {
	dir := t.TempDir()
	trigger, counter := filepath.Join(dir, "trigger"), filepath.Join(dir, "counter")
	f := &fakeMonitor{trigger: trigger}
	src := `
name: capture-check
vars: {counter: x}
steps:
  - id: first
    run: {argv: [sh, -c, 'cat "$0" 2>/dev/null | wc -l', "${{ vars.counter }}"]}
  - id: watch
    capture: {monitor: {}, settle: 10ms}
    during:
      - id: before
        run: {argv: [sh, -c, 'cat "$0" 2>/dev/null | wc -l', "${{ vars.counter }}"]}
      - id: traffic
        run: {argv: [sh, -c, 'echo x >> "$0"', "${{ vars.counter }}"]}
      - id: after
        run: {argv: [sh, -c, 'cat "$0" 2>/dev/null | wc -l', "${{ vars.counter }}"]}
  - id: last
    run: {argv: [sh, -c, 'cat "$0" 2>/dev/null | wc -l', "${{ vars.counter }}"]}
  - id: moved
    assert:
      - trim(steps.before.stdout) == "0" && trim(steps.after.stdout) == "1" && trim(steps.last.stdout) == "1" && trim(steps.first.stdout) == "0"
`
	plan := compile(t, src, "counter="+counter)
	rt := &actions.Runtime{Mode: actions.Check, Cluster: func() (cluster.Cluster, error) { return &clustertest.Cluster{StreamFunc: f.stream}, nil }}
	o, err := (&Runner{Plan: plan, Runtime: rt, KeepGoing: true}).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if o.Status != Passed {
		for _, s := range o.Steps {
			t.Logf("%s %s %s %v", s.ID, s.Status, s.Error, s.Assertions)
		}
		t.Errorf("check %s", o.Status)
	}
}
