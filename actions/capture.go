package actions

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/labrun/labrun/internal/boundary/cluster"
	"github.com/labrun/labrun/internal/lang/diag"
	"github.com/labrun/labrun/internal/lang/eval"
	"github.com/labrun/labrun/internal/lang/scalar"
	"github.com/labrun/labrun/internal/parse"
)

// CaptureSpec listens to a stream of the datapath's events while the
// steps under the step's during list make traffic, and hands what it saw
// to the step's until and assert as result (docs/design.md says why a
// capture wraps those steps).
type CaptureSpec struct {
	Monitor *MonitorSource `yaml:"monitor" doc:"Listen with cilium-dbg monitor in the Cilium agent: its drops, policy verdicts and traces, parsed as they come (the one source so far)."`
	// The bounds: every capture has them, so a stream cannot grow without
	// end whatever the traffic.
	MaxEvents int           `yaml:"maxEvents" doc:"Stop reading after this many events (default 1000, at most 100000); result.truncated then says so and the during steps go on."`
	MaxBytes  int           `yaml:"maxBytes" doc:"Stop reading after this many bytes of output (default 4194304, 4 MiB; at most 67108864)."`
	Settle    time.Duration `yaml:"settle" doc:"Without until: how long to go on listening after the last during step, for events still on their way (default 1s, at most 1m)."`
}

// MonitorSource is cilium-dbg monitor in one node's agent.
type MonitorSource struct {
	Types     []string `yaml:"types" doc:"Event types to listen to, as cilium-dbg monitor --type takes them: drop, policy-verdict, trace (default [drop])."`
	RelatedTo []int    `yaml:"relatedTo" doc:"Only events to or from these endpoint ids (--related-to)."`
	Node      string   `yaml:"node" doc:"Listen in the agent on this node (default: the agent on the first node by name, as the cilium action)."`
	Namespace string   `yaml:"namespace" doc:"Namespace of the agent (default kube-system)."`
	Pod       string   `yaml:"pod" doc:"Agent pod or workload (default ds/cilium)."`
	Container string   `yaml:"container" doc:"Agent container (default cilium-agent)."`
}

// CaptureResult is what a capture saw: the events of the stream, parsed
// as `labrun parse cilium-monitor` parses them, and how the capture went.
type CaptureResult struct {
	parse.Monitor
	// Namespace, Pod and Container are where the stream ran; Argv the
	// command (the monitor in the script that stops it).
	Namespace string   `json:"namespace" expr:"namespace"`
	Pod       string   `json:"pod" expr:"pod"`
	Container string   `json:"container" expr:"container"`
	Argv      []string `json:"argv" expr:"argv"`
	// Stopped says what ended the capture: "until" (it held), "settle"
	// (the settle time after the during steps passed), "maxEvents" or
	// "maxBytes" (a bound; truncated is true), "failed" (a during step
	// failed), "timeout" (the step's time ran out), or "exited" (the
	// command ended by itself).
	Stopped string `json:"stopped" expr:"stopped"`
	// Truncated is true when maxEvents or maxBytes stopped the reading
	// before the capture ended: events after that were not read.
	Truncated bool `json:"truncated" expr:"truncated"`
	// Lines and Bytes count what the stream printed and was read.
	Lines int `json:"lines" expr:"lines"`
	Bytes int `json:"bytes" expr:"bytes"`
	// Seconds is how long the capture listened, from the stream being
	// ready to its end.
	Seconds float64 `json:"seconds" expr:"seconds"`
}

// The capture's bounds: defaults and the most a playbook may ask.
const (
	defaultCaptureEvents = 1000
	maxCaptureEvents     = 100000
	defaultCaptureBytes  = 4 << 20
	maxCaptureBytes      = 64 << 20
	defaultCaptureSettle = time.Second
	maxCaptureSettle     = time.Minute
)

// monitorReady is what cilium-dbg monitor prints on stderr just before
// it connects to the agent's monitor socket (cilium-dbg/cmd/monitor.go).
const monitorReady = "Press Ctrl-C to quit"

// monitorTypes are the event types the monitor's parser reads.
var monitorTypes = []string{"drop", "policy-verdict", "trace"}

func init() {
	Register(Def[CaptureSpec, CaptureResult]{
		Name: "capture",
		Cost: ContainerExec,
		Doc:  "Listen to cilium-dbg monitor in the Cilium agent while the steps under during make traffic; the result is the parsed events (drops with reason, identities, addresses and ports; policy verdicts; traces).",
		Run: func(ctx context.Context, rt *Runtime, spec *CaptureSpec) (*CaptureResult, error) {
			return nil, errors.New("capture runs around the steps of its during list")
		},
		Around: capture,
		Check:  checkCapture,
		Access: func(spec *CaptureSpec, ac *AccessContext) ([]cluster.Access, error) {
			if spec.Monitor == nil {
				return nil, nil
			}
			return execAccess(spec.Monitor.target(), ac)
		},
	})
}

// checkCapture is what the spec's types cannot say: a source, the event
// types the parser reads, and the bounds.
func checkCapture(spec *eval.Value, sc *StaticContext) diag.List {
	var errs diag.List
	if spec.Lookup("monitor") == nil {
		errs.Add(spec.Pos, "capture needs a source: monitor (cilium-dbg monitor in the Cilium agent)")
	}
	if m := spec.Lookup("monitor"); m != nil {
		if types := m.Lookup("types"); types != nil {
			for _, t := range types.Items() {
				if lit, ok := t.Literal(); ok {
					if s, ok := lit.(string); ok && !slices.Contains(monitorTypes, s) {
						errs.Add(t.Pos, "monitor type %q is not one labrun reads; use %s%s", s, strings.Join(monitorTypes, ", "), diag.DidYouMean(s, monitorTypes))
					}
				}
			}
		}
	}
	errs = append(errs, literalBound(spec, "maxEvents", 1, maxCaptureEvents)...)
	errs = append(errs, literalBound(spec, "maxBytes", 1, maxCaptureBytes)...)
	if v := spec.Lookup("settle"); v != nil {
		if lit, ok := v.Literal(); ok {
			if d, err := scalar.Duration(lit, v.Node.Value); err == nil && d > maxCaptureSettle {
				errs.Add(v.Pos, "settle is %s; expected at most %s", d, maxCaptureSettle)
			}
		}
	}
	return errs
}

// literalBound refuses a literal integer of key outside [lo, hi].
func literalBound(spec *eval.Value, key string, lo, hi int) diag.List {
	var errs diag.List
	v := spec.Lookup(key)
	if v == nil {
		return nil
	}
	lit, ok := v.Literal()
	if !ok {
		return nil
	}
	if n, ok := lit.(int); ok && (n < lo || n > hi) {
		errs.Add(v.Pos, "%s is %d; expected %d to %d", key, n, lo, hi)
	}
	return errs
}

// target is the agent's container the monitor runs in, as for the
// cilium action.
func (m *MonitorSource) target() cluster.PodTarget {
	return (&CiliumSpec{Namespace: m.Namespace, Pod: m.Pod, Container: m.Container, Node: m.Node}).target()
}

// captureBounds are a spec's bounds with their defaults, checked again
// here since an expression may have given them.
type captureBounds struct {
	events, bytes int
	settle        time.Duration
}

func (spec *CaptureSpec) bounds() (captureBounds, error) {
	b := captureBounds{events: spec.MaxEvents, bytes: spec.MaxBytes, settle: defaultCaptureSettle}
	if b.events == 0 {
		b.events = defaultCaptureEvents
	}
	if b.bytes == 0 {
		b.bytes = defaultCaptureBytes
	}
	if spec.Settle != 0 {
		b.settle = spec.Settle
	}
	switch {
	case b.events < 1 || b.events > maxCaptureEvents:
		return b, &SpecError{Key: "maxEvents", Text: strconv.Itoa(spec.MaxEvents), Err: fmt.Errorf("maxEvents is %d; expected 1 to %d", spec.MaxEvents, maxCaptureEvents)}
	case b.bytes < 1 || b.bytes > maxCaptureBytes:
		return b, &SpecError{Key: "maxBytes", Text: strconv.Itoa(spec.MaxBytes), Err: fmt.Errorf("maxBytes is %d; expected 1 to %d", spec.MaxBytes, maxCaptureBytes)}
	case b.settle > maxCaptureSettle:
		return b, &SpecError{Key: "settle", Text: b.settle.String(), Err: fmt.Errorf("settle is %s; expected at most %s", b.settle, maxCaptureSettle)}
	}
	return b, nil
}

// monitorScript runs the monitor ($@) until it ends or the script's
// standard input does: the capture ends its input to stop it, and kubelet
// ends it when the connection is cut (labrun killed, the API server
// gone), since a monitor with nothing to print would not notice its
// closed output until it next wrote. The shell waits for the monitor, so
// the command ends when the monitor does, by itself or killed, and then
// ends and waits for the reader of the input too: a process left behind
// would be reparented to the agent, which reaps no child it did not
// start. The reader writes nothing, so the output ends with the
// monitor's.
//
// An asynchronous list reads /dev/null unless told otherwise (POSIX sh
// without job control), so the input is kept as fd 3 for the reader. No
// timeout(1) bounds the monitor as well: busybox's (the testbed's agent
// image) leaves its watcher process behind for the agent to reap, and the
// end of the input already comes with the end of the connection.
const monitorScript = `exec 3<&0; "$@" </dev/null & m=$!; (read -r _ <&3; kill $m) >/dev/null 2>&1 & r=$!; wait $m; s=$?; kill $r 2>/dev/null; wait $r; exit $s`

// monitorArgv is the command the capture runs: cilium-dbg monitor with
// JSON and numeric identities, in monitorScript. Only words labrun
// checked reach the shell, as its arguments: the event types are from
// monitorTypes, the endpoint ids numbers.
func monitorArgv(m *MonitorSource) ([]string, error) {
	types := m.Types
	if len(types) == 0 {
		types = []string{"drop"}
	}
	argv := []string{"sh", "-c", monitorScript, "cilium-dbg", "cilium-dbg", "monitor", "-j", "-n"}
	for _, t := range types {
		if !slices.Contains(monitorTypes, t) {
			return nil, &SpecError{Key: "types", Text: t, Err: fmt.Errorf("monitor type %q is not one labrun reads; use %s", t, strings.Join(monitorTypes, ", "))}
		}
		argv = append(argv, "--type", t)
	}
	for _, id := range m.RelatedTo {
		argv = append(argv, "--related-to", strconv.Itoa(id))
	}
	return argv, nil
}

// capture runs the stream, then the during steps once it is ready, then
// reads on until the step's until holds (or, without until, for the
// settle time), within the step's timeout; the stream is closed on every
// way out.
func capture(ctx context.Context, rt *Runtime, spec *CaptureSpec, during Nested) (*CaptureResult, error) {
	if spec.Monitor == nil {
		return nil, &SpecError{Key: "monitor", Err: errors.New("capture needs a source: monitor")}
	}
	b, err := spec.bounds()
	if err != nil {
		return nil, err
	}
	argv, err := monitorArgv(spec.Monitor)
	if err != nil {
		return nil, err
	}
	c, err := rt.cluster()
	if err != nil {
		return nil, err
	}
	st := startStream(ctx, c, spec.Monitor.target(), argv)
	defer st.stop()
	res := &CaptureResult{Monitor: parse.NewMonitor(), Argv: argv}
	r := &captureReader{res: res, bounds: b}

	// 1. wait for the monitor to be listening
	select {
	case <-st.ready:
	case <-st.done:
		r.finish(st)
		res.Stopped = "exited"
		return res, st.endedEarly("before it was listening")
	case <-ctx.Done():
		r.finish(st)
		res.Stopped = "timeout"
		return res, fmt.Errorf("cilium-dbg monitor was not listening yet: %w", ctx.Err())
	}
	started := time.Now()
	defer func() { res.Seconds = time.Since(started).Seconds() }()

	// 2. the during steps, while the stream is read
	stepsDone := make(chan error, 1)
	go func() { stepsDone <- during.Run(ctx) }()
	done := st.done
	for running := true; running; {
		select {
		case line := <-st.lines:
			if err := r.add(line, st); err != nil {
				st.stop()
				<-stepsDone
				r.finish(st)
				return res, err
			}
		case err := <-stepsDone:
			if err != nil {
				r.finish(st)
				res.Stopped = "failed"
				if ctx.Err() != nil {
					res.Stopped = "timeout"
				}
				return res, err
			}
			running = false
		case <-done:
			done = nil
			if r.stoppedReading {
				continue // a bound closed it; the steps go on
			}
			// the command ended while the steps ran: they go on, but
			// the capture has failed
			if err := <-stepsDone; err != nil {
				r.finish(st)
				res.Stopped = "failed"
				return res, err
			}
			r.finish(st)
			res.Stopped = "exited"
			return res, st.endedEarly("while the during steps ran")
		}
	}

	// 3. after the steps: until, or the settle time
	if r.stoppedReading {
		r.finish(st)
		if during.Until != nil {
			if ok, err := r.holds(during.Until, st); ok || err != nil {
				return res, err
			}
			return res, fmt.Errorf("the capture stopped reading at its %s bound before until held", res.Stopped)
		}
		return res, nil
	}
	var settle <-chan time.Time
	if during.Until == nil {
		t := time.NewTimer(b.settle)
		defer t.Stop()
		settle = t.C
	} else if ok, err := r.holds(during.Until, st); ok || err != nil {
		return res, err
	}
	for {
		select {
		case line := <-st.lines:
			if err := r.add(line, st); err != nil {
				r.finish(st)
				return res, err
			}
			if r.stoppedReading {
				r.finish(st)
				if during.Until == nil {
					return res, nil
				}
				if ok, err := r.holds(during.Until, st); ok || err != nil {
					return res, err
				}
				return res, fmt.Errorf("the capture stopped reading at its %s bound before until held", res.Stopped)
			}
			if during.Until != nil {
				if ok, err := r.holds(during.Until, st); ok || err != nil {
					return res, err
				}
			}
		case <-settle:
			r.finish(st)
			res.Stopped = "settle"
			return res, nil
		case <-st.done:
			r.finish(st)
			if during.Until != nil {
				if ok, err := r.holds(during.Until, st); ok || err != nil {
					return res, err
				}
			}
			res.Stopped = "exited"
			return res, st.endedEarly("before the capture ended")
		case <-ctx.Done():
			r.finish(st)
			res.Stopped = "timeout"
			return res, ctx.Err()
		}
	}
}

// captureReader parses the stream's lines into the result, within the
// bounds.
type captureReader struct {
	res    *CaptureResult
	bounds captureBounds
	// stoppedReading: a bound was reached; lines are dropped, the
	// stream closed.
	stoppedReading bool
}

// add parses one line; a line the parser refuses fails the capture.
func (r *captureReader) add(line string, st *stream) error {
	if r.stoppedReading {
		return nil
	}
	if r.res.Bytes+len(line)+1 > r.bounds.bytes {
		r.truncate(st, "maxBytes")
		return nil
	}
	r.res.Lines++
	r.res.Bytes += len(line) + 1
	if strings.TrimSpace(line) == "" {
		return nil
	}
	if why := r.res.Add(line); why != "" {
		return fmt.Errorf("cilium-dbg monitor printed line %d, which labrun cannot read: %s: %q", r.res.Lines, why, shortLine(line))
	}
	if r.res.Events() >= r.bounds.events {
		r.truncate(st, "maxEvents")
	}
	return nil
}

// truncate stops reading at a bound (named by its key): the stream is
// closed, and what was read is the result.
func (r *captureReader) truncate(st *stream, bound string) {
	r.stoppedReading = true
	r.res.Truncated = true
	r.res.Stopped = bound
	st.requestStop()
}

// holds asks the step's until of the result so far; when it holds the
// stream is closed and the result is final.
func (r *captureReader) holds(until Condition, st *stream) (bool, error) {
	ok, err := until(r.res.snapshot())
	if ok || err != nil {
		r.finish(st)
		if ok {
			r.res.Stopped = "until"
		}
	}
	return ok, err
}

// snapshot is the result as it stands, for the until condition: the
// lists are cut to their current length, so later events do not change
// what the condition saw.
func (res *CaptureResult) snapshot() *CaptureResult {
	c := *res
	c.Drops = slices.Clip(c.Drops)
	c.Verdicts = slices.Clip(c.Verdicts)
	c.Traces = slices.Clip(c.Traces)
	c.Others = slices.Clip(c.Others)
	return &c
}

// finish stops the stream and reads the lines it still sends, so that
// the result holds every event that arrived before the end.
func (r *captureReader) finish(st *stream) {
	st.requestStop()
	for ended := false; ; {
		select {
		case line := <-st.lines:
			_ = r.add(line, st) // a refused line after the end is not read
			continue
		case <-st.done:
			ended = true
		}
		if ended && len(st.lines) == 0 {
			break
		}
	}
	if st.result != nil {
		r.res.Namespace, r.res.Pod, r.res.Container = st.result.Namespace, st.result.Pod, st.result.Container
	}
}

func shortLine(s string) string {
	if len(s) > 200 {
		return s[:200] + "..."
	}
	return s
}
