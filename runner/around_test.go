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
	ready    string   // the line on stderr that says it listens (default: the monitor's)
	event    string   // the line printed per trigger line (default: fakeDrop)
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
	ready, event := "Press Ctrl-C to quit", fakeDrop
	if f.ready != "" {
		ready, event = f.ready, f.event
	}
	fmt.Fprintln(req.Stderr, "Listening for events on 2 CPUs with 64x4096 of shared memory")
	fmt.Fprintln(req.Stderr, ready)
	for _, l := range f.extra {
		fmt.Fprintln(req.Stdout, l)
	}
	printed := 0
	for {
		b, _ := os.ReadFile(f.trigger)
		for n := strings.Count(string(b), "\n"); printed < n; printed++ {
			if _, err := fmt.Fprintln(req.Stdout, event); err != nil {
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
			if c.drops > 0 && (res.Drops[0].Reason != "Policy denied" || *res.Drops[0].DstPort != 8080 || res.Pod == nil || *res.Pod != "cilium-x") {
				t.Errorf("drop %+v from pod %v", res.Drops[0], res.Pod)
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
		{"two sources, refused at the second", `
  - id: a
    capture:
      monitor: {}
      hubble: {}
    during:
      - id: b
        run: {argv: ["true"]}`, "p.yaml:6:7: capture listens to one source; monitor and hubble are two: keep one (another capture step can listen to the other, at another time)"},
		{"a source with no value", `
  - id: a
    capture: {tcpdump: }
    during:
      - id: b
        run: {argv: ["true"]}`, "tcpdump has no value; write tcpdump: {} to listen with its defaults"},
		{"a hubble verdict the CLI does not take", `
  - id: a
    capture: {hubble: {filter: {verdict: [DROPED]}}}
    during:
      - id: b
        run: {argv: ["true"]}`, `hubble verdict "DROPED" is not one hubble observe takes; use FORWARDED, DROPPED, AUDIT, REDIRECTED, ERROR, TRACED, TRANSLATED (did you mean "DROPPED"?)`},
		{"a hubble type the CLI does not take", `
  - id: a
    capture: {hubble: {filter: {type: ["drops:x"]}}}
    during:
      - id: b
        run: {argv: ["true"]}`, `hubble type "drops:x" is not one hubble observe takes`},
		{"filters hubble observe refuses together", `
  - id: a
    capture: {hubble: {filter: {ip: [10.42.0.7], namespace: [lab]}}}
    during:
      - id: b
        run: {argv: ["true"]}`, "filter ip cannot be combined with namespace: hubble observe refuses --ip with --namespace"},
		{"a port that is none", `
  - id: a
    capture: {hubble: {filter: {port: [0]}}}
    during:
      - id: b
        run: {argv: ["true"]}`, "port 0 is not a port; expected 1 to 65535"},
		{"a tcpdump via item YAML reads as no value", `
  - id: a
    capture: {tcpdump: {via: [node-exec, ~]}}
    during:
      - id: b
        run: {argv: ["true"]}`, "via item 2 is ~, which YAML reads as no value"},
		{"a key of no source", `
  - id: a
    capture: {tcpdump: {iface: eth0}}
    during:
      - id: b
        run: {argv: ["true"]}`, `unknown key "iface"`},
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

const fakeFlow = `{"flow":{"time":"2026-01-01T00:00:00.1Z","verdict":"DROPPED","IP":{"source":"10.0.0.1","destination":"10.0.0.2","ipVersion":"IPv4"},"l4":{"TCP":{"source_port":40000,"destination_port":8080,"flags":{"SYN":true}}},"source":{"identity":5,"namespace":"lab","pod_name":"intruder"},"destination":{"identity":6},"drop_reason_desc":"POLICY_DENIED","traffic_direction":"INGRESS","is_reply":false},"node_name":"n1"}`

// A capture of Hubble's flows runs hubble observe in the agent, with the
// spec's filters, and ends at its until on the flow the during step
// caused, typed.
func TestCaptureHubble(t *testing.T) {
	trigger := filepath.Join(t.TempDir(), "trigger")
	f := &fakeMonitor{trigger: trigger, ready: "labrun: hubble flows since 2026-01-01T00:00:00.000000Z", event: fakeFlow}
	src := `
name: capture
vars: {trigger: x}
steps:
  - id: watch
    capture:
      hubble: {filter: {verdict: [DROPPED], port: [8080]}}
    during:
      - id: send
        run: {argv: [sh, -c, 'echo x >> "$0"', "${{ vars.trigger }}"]}
    until: len(result.FlowsTo("10.0.0.2", 8080)) > 0
    timeout: 5s
    assert:
      - result.source == "hubble" && result.flows[0].verdict == "DROPPED" && result.flows[0].dropReason == "POLICY_DENIED"
      - result.flows[0].srcIdentity == 5 && result.flows[0].srcPod == "intruder" && result.flows[0].tcpFlags == "SYN" && result.flows[0].isReply == false
      - len(result.drops) == 0 && len(result.packets) == 0 && result.pod == "cilium-x"
`
	plan := compile(t, src, "trigger="+trigger)
	rt := &actions.Runtime{Cluster: func() (cluster.Cluster, error) { return &clustertest.Cluster{StreamFunc: f.stream}, nil }}
	o, err := (&Runner{Plan: plan, Runtime: rt}).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if o.Status != Passed {
		for _, s := range o.Steps {
			t.Logf("%s %s %s %v", s.ID, s.Status, s.Error, s.Assertions)
		}
		t.Fatalf("run %s", o.Status)
	}
	argv := strings.Join(f.argv.Load().([]string), " ")
	if !strings.HasPrefix(argv, "bash -c ") || !strings.HasSuffix(argv, " hubble observe --follow -o jsonpb --verdict=DROPPED --port=8080") {
		t.Errorf("argv %s", argv)
	}
	if f.started.Load() != 1 || f.ended.Load() != 1 {
		t.Errorf("%d streams started, %d ended", f.started.Load(), f.ended.Load())
	}
}

// fakeTcpdump is tcpdump as the capture runs it, through a via prefix:
// it records its arguments and pid, says it listens (or, told to fail,
// that the interface does not exist), prints a packet for each line the
// during steps add to the trigger file, and on SIGINT prints its counts
// and exits, as tcpdump does.
const fakeTcpdump = `echo "$*" > "$DIR/args"; echo $$ > "$DIR/pid"
[ -e "$DIR/fail" ] && { echo "tcpdump: eth9: No such device exists" >&2; exit 1; }
trap 'echo "3 packets captured" >&2; echo "3 packets dropped by kernel" >&2; exit 0' INT
echo "listening on any, link-type LINUX_SLL2 (Linux cooked v2), snapshot length 262144 bytes" >&2
n=0
while :; do
  m=$(cat "$DIR/trigger" 2>/dev/null | wc -l)
  while [ "$n" -lt "$m" ]; do
    n=$((n+1))
    echo "06:53:42.62904$n eth0 Out IP 10.0.0.1.4000$n > 10.0.0.2.8080: Flags [S], seq 1, win 64240, length 0"
  done
  sleep 0.02
done
`

// A capture with tcpdump runs it through the via prefix where labrun
// runs node commands, waits until it listens, reads its packets typed,
// ends it with SIGINT and reads the kernel's drops it then prints; one
// that cannot start fails the step before its during steps, and Ctrl-C
// leaves nothing running.
func TestCaptureTcpdump(t *testing.T) {
	type result struct {
		run  *Outcome
		dir  string
		took time.Duration
	}
	run := func(t *testing.T, send, until string, fail bool, ctx context.Context) result {
		t.Helper()
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "fake.sh"), []byte(fakeTcpdump), 0o755); err != nil {
			t.Fatal(err)
		}
		if fail {
			os.WriteFile(filepath.Join(dir, "fail"), nil, 0o644)
		}
		src := `
name: capture
vars: {dir: x}
steps:
  - id: watch
    capture:
      tcpdump: {via: [env, "DIR=${{ vars.dir }}", sh, "${{ vars.dir }}/fake.sh"], interface: eth0, filter: tcp port 8080}
      settle: 100ms
    during:
      - id: send
        run: {argv: [sh, -c, 'SEND', "${{ vars.dir }}/trigger"]}
    UNTIL
    timeout: 5s
    assert:
      - result.source == "tcpdump" && result.packets[0].interface == "eth0" && result.packets[0].tcpFlags == "S"
      - result.packets[0].dstPort == 8080 && result.namespace == nil && len(result.flows) == 0
      - result.lost == 3
`
		src = strings.NewReplacer("SEND", send, "UNTIL", until).Replace(src)
		plan := compile(t, src, "dir="+dir)
		start := time.Now()
		o, err := (&Runner{Plan: plan, Runtime: &actions.Runtime{}}).Run(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return result{o, dir, time.Since(start)}
	}
	gone := func(t *testing.T, dir string) {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(dir, "pid"))
		if err != nil {
			t.Fatal(err)
		}
		pid := strings.TrimSpace(string(b))
		for range 50 {
			if _, err := os.Stat("/proc/" + pid); err != nil {
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
		t.Errorf("the fake tcpdump (pid %s) is still running", pid)
	}
	t.Run("until", func(t *testing.T) {
		r := run(t, `echo x >> "$0"`, `until: len(result.PacketsTo("10.0.0.2", 8080)) > 0`, false, context.Background())
		if r.run.Status != Passed {
			t.Fatalf("run %s: %s", r.run.Status, stepErrors(r.run))
		}
		args, _ := os.ReadFile(filepath.Join(r.dir, "args"))
		if got := strings.TrimSpace(string(args)); got != "tcpdump -l -n --immediate-mode -i eth0 -- tcp port 8080" {
			t.Errorf("tcpdump ran with %q", got)
		}
		gone(t, r.dir)
	})
	t.Run("cannot start", func(t *testing.T) {
		r := run(t, `echo x >> "$0"`, "", true, context.Background())
		byID := map[string]*StepRecord{}
		for _, s := range r.run.Steps {
			byID[s.ID] = s
		}
		if byID["watch"].Status != "failed" || byID["send"].Status != "skipped" ||
			!strings.Contains(byID["watch"].Error, "tcpdump ended before it was listening (exit code 1); it printed: tcpdump: eth9: No such device exists") {
			t.Errorf("watch %s (%s), send %s", byID["watch"].Status, byID["watch"].Error, byID["send"].Status)
		}
	})
	t.Run("interrupted", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(500*time.Millisecond, cancel)
		r := run(t, "sleep 30", "", false, ctx)
		if r.run.Status != Interrupted || r.took > 5*time.Second {
			t.Errorf("run %s after %s", r.run.Status, r.took)
		}
		gone(t, r.dir)
	})
}

func stepErrors(o *Outcome) string {
	var b strings.Builder
	for _, s := range o.Steps {
		fmt.Fprintf(&b, "%s %s %s %v; ", s.ID, s.Status, s.Error, s.Assertions)
	}
	return b.String()
}
