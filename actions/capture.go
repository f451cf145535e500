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
// capture wraps those steps). It has one source: the monitor, Hubble or
// tcpdump.
type CaptureSpec struct {
	Monitor *MonitorSource `yaml:"monitor" doc:"Listen with cilium-dbg monitor in the Cilium agent: its drops, policy verdicts and traces, parsed as they come."`
	Hubble  *HubbleSource  `yaml:"hubble" doc:"Listen to Hubble's flows where the agent serves them (hubble observe on its local socket, in the agent's container): verdicts, drop reasons, identities, pods, ports."`
	Tcpdump *TcpdumpSource `yaml:"tcpdump" doc:"Listen with tcpdump on a node (where labrun runs node commands: through via): the packets of an interface, as its filter picks them."`
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

// HubbleSource is hubble observe in one node's agent, against the Hubble
// server the agent serves on its local socket.
type HubbleSource struct {
	Filter    HubbleFilter `yaml:"filter" doc:"Which flows, as hubble observe's filter flags take them (each list: any of its values)."`
	Node      string       `yaml:"node" doc:"Listen in the agent on this node, to its own flows (default: the agent on the first node by name, as the cilium action)."`
	Namespace string       `yaml:"namespace" doc:"Namespace of the agent (default kube-system)."`
	Pod       string       `yaml:"pod" doc:"Agent pod or workload (default ds/cilium)."`
	Container string       `yaml:"container" doc:"Agent container (default cilium-agent); its image has the hubble CLI, with HUBBLE_SERVER the agent's socket."`
}

// HubbleFilter is what hubble observe's filter flags take.
type HubbleFilter struct {
	Verdict   []string `yaml:"verdict" doc:"Flows of these verdicts (--verdict): FORWARDED, DROPPED, AUDIT, REDIRECTED, ERROR, TRACED, TRANSLATED."`
	Type      []string `yaml:"type" doc:"Events of these types (--type TYPE[:SUBTYPE]): drop, policy-verdict, trace, trace-sock, l7, capture; e.g. trace:to-endpoint."`
	Namespace []string `yaml:"namespace" doc:"Flows from or to pods of these namespaces (--namespace)."`
	Pod       []string `yaml:"pod" doc:"Flows from or to these pods (--pod NAMESPACE/NAME, a name prefix; without NAMESPACE/ the CLI takes default's)."`
	IP        []string `yaml:"ip" doc:"Flows from or to these addresses or CIDRs (--ip)."`
	Protocol  []string `yaml:"protocol" doc:"Flows of these L4 or L7 protocols (--protocol): tcp, udp, icmp, http, dns, ..."`
	Port      []int    `yaml:"port" doc:"Flows with one of these ports as source or destination (--port)."`
}

// TcpdumpSource is tcpdump -l -n on a node: a program run where labrun
// runs a node's commands, as the run action runs them.
type TcpdumpSource struct {
	Via       []string `yaml:"via" doc:"Argv prefix that runs tcpdump on the node, as run's via: the test cluster's node shell ([/var/lib/labrun-testbed/bin/node-exec]), [nsenter, -t, '1', -n, --], [ssh, NODE]. Empty runs it where labrun runs."`
	Interface string   `yaml:"interface" doc:"Interface to listen on (-i): eth0, cilium_vxlan, a pod's lxc device (default any: every interface, each packet with its interface and direction)."`
	Filter    string   `yaml:"filter" doc:"Filter expression, as tcpdump takes it (pcap-filter: 'tcp port 8080 and host 10.42.1.7'); empty listens to every packet."`
}

// CaptureResult is what a capture saw: the events of its source, parsed
// as `labrun parse cilium-monitor`, `hubble-observe` or `tcpdump` parses
// them, and how the capture went.
type CaptureResult struct {
	// Source is what the capture listened to: "monitor", "hubble" or
	// "tcpdump".
	Source string `json:"source" expr:"source"`
	// Drops are the packets the datapath dropped, with why (the monitor's;
	// empty for the other sources).
	Drops []parse.MonitorDrop `json:"drops" expr:"drops"`
	// Verdicts are the monitor's policy verdicts (types:
	// [policy-verdict]).
	Verdicts []parse.PolicyVerdict `json:"verdicts" expr:"verdicts"`
	// Traces are the monitor's traces (types: [trace]).
	Traces []parse.MonitorTrace `json:"traces" expr:"traces"`
	// Flows are Hubble's flows (the hubble source's; empty for the
	// others).
	Flows []parse.HubbleFlow `json:"flows" expr:"flows"`
	// Packets are tcpdump's packets (the tcpdump source's; empty for the
	// others).
	Packets []parse.TcpdumpPacket `json:"packets" expr:"packets"`
	// Others are the lines of events of no kind read above, as printed:
	// the monitor's other events, Hubble's other responses, tcpdump's
	// packets of other link-layer protocols.
	Others []string `json:"others" expr:"others"`
	// Logs are cilium-dbg's own log lines, which Cilium 1.20 prints among
	// the monitor's events: not events.
	Logs []string `json:"logs" expr:"logs"`
	// Lost counts the events the source lost before they were read: the
	// monitor's lost-events lines, Hubble's lost_events, tcpdump's
	// "packets dropped by kernel" (which it prints when it ends). A
	// capture that lost some may have missed the one asserted on.
	Lost int `json:"lost" expr:"lost"`
	// Namespace, Pod and Container are where the stream ran: the agent's
	// pod (monitor, hubble); null for tcpdump, which runs where labrun
	// runs node commands.
	Namespace *string `json:"namespace" expr:"namespace"`
	Pod       *string `json:"pod" expr:"pod"`
	Container *string `json:"container" expr:"container"`
	// Argv is the command as run: the monitor or hubble in the script
	// that stops it, tcpdump after its via prefix.
	Argv []string `json:"argv" expr:"argv"`
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

// DropsTo returns the monitor's drops of packets to a destination IP and
// port (0: any port).
func (res CaptureResult) DropsTo(ip string, port int) []parse.MonitorDrop {
	return parse.Monitor{Drops: res.Drops}.DropsTo(ip, port)
}

// DropsFrom returns the monitor's drops of packets from a source IP.
func (res CaptureResult) DropsFrom(ip string) []parse.MonitorDrop {
	return parse.Monitor{Drops: res.Drops}.DropsFrom(ip)
}

// FlowsTo returns Hubble's flows to a destination IP and port (0: any
// port).
func (res CaptureResult) FlowsTo(ip string, port int) []parse.HubbleFlow {
	return parse.HubbleFlows{Flows: res.Flows}.FlowsTo(ip, port)
}

// FlowsFrom returns Hubble's flows from a source IP.
func (res CaptureResult) FlowsFrom(ip string) []parse.HubbleFlow {
	return parse.HubbleFlows{Flows: res.Flows}.FlowsFrom(ip)
}

// PacketsTo returns tcpdump's packets to a destination IP and port (0:
// any port), on the wire or inside a tunnel packet.
func (res CaptureResult) PacketsTo(ip string, port int) []parse.TcpdumpPacket {
	return parse.Tcpdump{Packets: res.Packets}.PacketsTo(ip, port)
}

// PacketsFrom returns tcpdump's packets from a source IP, on the wire or
// inside a tunnel packet.
func (res CaptureResult) PacketsFrom(ip string) []parse.TcpdumpPacket {
	return parse.Tcpdump{Packets: res.Packets}.PacketsFrom(ip)
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

func init() {
	Register(Def[CaptureSpec, CaptureResult]{
		Name: "capture",
		Cost: ContainerExec,
		Doc:  "Listen while the steps under during make traffic, to one source: cilium-dbg monitor in the Cilium agent (drops with reason, identities, addresses and ports; policy verdicts; traces), Hubble's flows in the agent (verdicts, drop reasons, identities, pods, ports), or tcpdump on a node (packets); the result is the parsed events.",
		Run: func(ctx context.Context, rt *Runtime, spec *CaptureSpec) (*CaptureResult, error) {
			return nil, errors.New("capture runs around the steps of its during list")
		},
		Around: capture,
		Check:  checkCapture,
		Host:   captureHost,
		Access: func(spec *CaptureSpec, ac *AccessContext) ([]cluster.Access, error) {
			switch {
			case spec.Monitor != nil:
				return execAccess(spec.Monitor.target(), ac)
			case spec.Hubble != nil:
				return execAccess(spec.Hubble.target(), ac)
			}
			return nil, nil // tcpdump runs where labrun runs node commands
		},
	})
}

// checkCapture is what the spec's types cannot say: one source, the
// words of each source that labrun or the tool reads, and the bounds.
func checkCapture(spec *eval.Value, sc *StaticContext) diag.List {
	var errs diag.List
	var given []string
	for _, key := range captureSourceKeys {
		v := spec.Lookup(key)
		if v == nil {
			continue
		}
		if lit, ok := v.Literal(); ok && lit == nil {
			errs.Add(spec.KeyPos(key), "%s has no value; write %s: {} to listen with its defaults", key, key)
			continue
		}
		if len(given) > 0 {
			errs.Add(spec.KeyPos(key), "capture listens to one source; %s and %s are two: keep one (another capture step can listen to the other, at another time)", given[0], key)
		}
		given = append(given, key)
	}
	if len(given) == 0 && len(errs) == 0 {
		errs.Add(spec.Pos, "capture needs a source: monitor (cilium-dbg monitor in the Cilium agent), hubble (Hubble's flows in the agent) or tcpdump (tcpdump where labrun runs node commands)")
	}
	errs = append(errs, literalWords(spec.Lookup("monitor").Lookup("types"), "monitor type", "labrun reads", monitorTypes, nil)...)
	filter := spec.Lookup("hubble").Lookup("filter")
	errs = append(errs, literalWords(filter.Lookup("verdict"), "hubble verdict", "hubble observe takes", hubbleVerdicts, nil)...)
	errs = append(errs, literalWords(filter.Lookup("type"), "hubble type", "hubble observe takes", hubbleTypes,
		func(s string) string { base, _, _ := strings.Cut(s, ":"); return base })...)
	for _, other := range []string{"namespace", "pod"} {
		if filter.Lookup("ip") != nil && filter.Lookup(other) != nil {
			errs.Add(filter.KeyPos("ip"), "filter ip cannot be combined with %s: hubble observe refuses --ip with --%s; filter by pod (or namespace) or by address", other, other)
		}
	}
	for _, p := range filter.Lookup("port").Items() {
		if lit, ok := p.Literal(); ok {
			if n, ok := lit.(int); ok && (n < 1 || n > 65535) {
				errs.Add(p.Pos, "port %d is not a port; expected 1 to 65535", n)
			}
		}
	}
	if t := spec.Lookup("tcpdump"); t != nil {
		errs = append(errs, nullArgs(t, "via")...)
		for _, key := range []string{"interface", "filter"} {
			if v := t.Lookup(key); v != nil {
				if lit, ok := v.Literal(); ok {
					if s, ok := lit.(string); ok && strings.IndexByte(s, 0) >= 0 {
						errs.Add(v.Pos, "%s holds a NUL byte, which no program can receive", key)
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

// literalWords refuses each literal item of list that is not one of
// words (after base, when given, takes the part the words name).
func literalWords(list *eval.Value, what, reader string, words []string, base func(string) string) diag.List {
	var errs diag.List
	for _, t := range list.Items() {
		lit, ok := t.Literal()
		s, isString := lit.(string)
		if !ok || !isString {
			continue
		}
		w := s
		if base != nil {
			w = base(s)
		}
		if !slices.Contains(words, w) {
			errs.Add(t.Pos, "%s %q is not one %s; use %s%s", what, s, reader, strings.Join(words, ", "), diag.DidYouMean(w, words))
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

// capture runs the stream, then the during steps once it is ready, then
// reads on until the step's until holds (or, without until, for the
// settle time), within the step's timeout; the stream is closed on every
// way out.
func capture(ctx context.Context, rt *Runtime, spec *CaptureSpec, during Nested) (*CaptureResult, error) {
	src, err := spec.source(rt)
	if err != nil {
		return nil, err
	}
	b, err := spec.bounds()
	if err != nil {
		return nil, err
	}
	st, err := src.start(ctx)
	if err != nil {
		return nil, err
	}
	defer st.stop()
	res := newCaptureResult(src)
	r := &captureReader{src: src, res: res, bounds: b}

	// 1. wait for the source to be listening
	select {
	case <-st.ready:
	case <-st.done:
		r.finish(st)
		res.Stopped = "exited"
		return res, st.endedEarly("before it was listening")
	case <-ctx.Done():
		r.finish(st)
		res.Stopped = "timeout"
		return res, fmt.Errorf("%s was not listening yet: %w", src.name, ctx.Err())
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

// newCaptureResult is the result of a capture of src before it read
// anything: every list empty, not null.
func newCaptureResult(src *captureSource) *CaptureResult {
	return &CaptureResult{Source: src.kind, Argv: src.argv,
		Drops: []parse.MonitorDrop{}, Verdicts: []parse.PolicyVerdict{}, Traces: []parse.MonitorTrace{},
		Flows: []parse.HubbleFlow{}, Packets: []parse.TcpdumpPacket{}, Others: []string{}, Logs: []string{}}
}

// captureReader parses the stream's lines into the result, within the
// bounds.
type captureReader struct {
	src    *captureSource
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
	if why := r.src.events.Add(line); why != "" {
		return fmt.Errorf("%s printed line %d, which labrun cannot read: %s: %q", r.src.name, r.res.Lines, why, shortLine(line))
	}
	if r.src.events.Events() >= r.bounds.events {
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
	snap := *r.res
	r.src.fill(&snap, st)
	ok, err := until(&snap)
	if ok || err != nil {
		r.finish(st)
		if ok {
			r.res.Stopped = "until"
		}
	}
	return ok, err
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
	r.src.fill(r.res, st)
	if w := st.where; w != nil {
		r.res.Namespace, r.res.Pod, r.res.Container = &w.Namespace, &w.Pod, &w.Container
	}
}

func shortLine(s string) string {
	if len(s) > 200 {
		return s[:200] + "..."
	}
	return s
}
