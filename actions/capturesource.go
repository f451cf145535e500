package actions

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/labrun/labrun/internal/boundary/cluster"
	"github.com/labrun/labrun/internal/lang/eval"
	"github.com/labrun/labrun/internal/parse"
)

// The capture's sources (capture.go is the action): what each runs, what
// it says once it listens, and the parser of its lines.

// captureSource is what a capture listens to.
type captureSource struct {
	kind string // the spec's key: result.source
	name string // the command, as messages name it
	argv []string
	// start starts the command.
	start func(ctx context.Context) (*stream, error)
	// events reads a line of the command's output into the parser's
	// result, saying what is wrong with one it cannot read.
	events interface {
		Add(line string) string
		Events() int
	}
	// fill puts what the parser read into res, its lists cut to their
	// current length (a snapshot that later events do not change); st,
	// once ended, adds what the command said at its end.
	fill func(res *CaptureResult, st *stream)
}

// captureSourceKeys are the spec's keys of the sources, one of which a
// capture has.
var captureSourceKeys = []string{"monitor", "hubble", "tcpdump"}

// source is the spec's one source.
func (spec *CaptureSpec) source(rt *Runtime) (*captureSource, error) {
	var given []string
	for i, set := range []bool{spec.Monitor != nil, spec.Hubble != nil, spec.Tcpdump != nil} {
		if set {
			given = append(given, captureSourceKeys[i])
		}
	}
	switch {
	case len(given) == 0:
		return nil, &SpecError{Key: "monitor", Err: errors.New("capture needs a source: monitor, hubble or tcpdump")}
	case len(given) > 1:
		return nil, &SpecError{Key: given[1], Err: fmt.Errorf("capture listens to one source; %s and %s are two: keep one (another capture step can listen to the other, at another time)", given[0], given[1])}
	case spec.Monitor != nil:
		return monitorCapture(rt, spec.Monitor)
	case spec.Hubble != nil:
		return hubbleCapture(rt, spec.Hubble)
	}
	return tcpdumpCapture(rt, spec.Tcpdump)
}

// ---- monitor ---------------------------------------------------------------

// monitorReady is what cilium-dbg monitor prints on stderr just before
// it connects to the agent's monitor socket (cilium-dbg/cmd/monitor.go).
const monitorReady = "Press Ctrl-C to quit"

// monitorTypes are the event types the monitor's parser reads.
var monitorTypes = []string{"drop", "policy-verdict", "trace"}

// target is the agent's container the monitor runs in, as for the
// cilium action.
func (m *MonitorSource) target() cluster.PodTarget {
	return (&CiliumSpec{Namespace: m.Namespace, Pod: m.Pod, Container: m.Container, Node: m.Node}).target()
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

func monitorCapture(rt *Runtime, m *MonitorSource) (*captureSource, error) {
	argv, err := monitorArgv(m)
	if err != nil {
		return nil, err
	}
	ev := parse.NewMonitor()
	const name = "cilium-dbg monitor"
	return &captureSource{kind: "monitor", name: name, argv: argv, events: &ev,
		start: func(ctx context.Context) (*stream, error) {
			c, err := rt.cluster()
			if err != nil {
				return nil, err
			}
			return startStream(ctx, c, m.target(), name, monitorReady, argv), nil
		},
		fill: func(res *CaptureResult, _ *stream) {
			res.Drops, res.Verdicts, res.Traces = slices.Clip(ev.Drops), slices.Clip(ev.Verdicts), slices.Clip(ev.Traces)
			res.Others, res.Logs, res.Lost = slices.Clip(ev.Others), slices.Clip(ev.Logs), ev.Lost
		}}, nil
}

// ---- hubble ----------------------------------------------------------------

// hubbleReady is what hubbleScript prints on stderr once Hubble answered
// and the time its flows are asked from is fixed.
const hubbleReady = "labrun: hubble flows since"

// hubbleScript runs hubble observe ($@) as monitorScript runs the monitor
// (until it ends or the script's input does, reaping what it started),
// after three things that make "ready" true, so that a capture that
// cannot listen fails before any during step runs: the CLI took the
// filters (--print-raw-filters: it refuses some together, --ip with
// --namespace), hubble status has answered (the server is there), and
// the time the flows are asked from (--since) is taken before the script
// says it is ready. Flows from then on are in Hubble's ring buffer
// however late the stream itself is set up, and none from before are
// sent. bash, for $EPOCHREALTIME: busybox's date prints no fraction of a
// second. TZ is UTC for printf's date, which the CLI reads as RFC 3339.
const hubbleScript = `export TZ=UTC0; exec 3<&0; "$@" --print-raw-filters >/dev/null </dev/null || exit; hubble status >&2 </dev/null || exit; t=$EPOCHREALTIME; ` +
	`printf -v since '%(%Y-%m-%dT%H:%M:%S)T.%sZ' "${t%[.,]*}" "${t#*[.,]}"; echo "` + hubbleReady + ` $since" >&2; ` +
	`"$@" --since "$since" </dev/null & m=$!; (read -r _ <&3; kill $m) >/dev/null 2>&1 & r=$!; wait $m; s=$?; kill $r 2>/dev/null; wait $r; exit $s`

// hubbleVerdicts and hubbleTypes are the values hubble observe's
// --verdict and --type take (hubble/cmd/observe, Cilium 1.20.1); a type
// may name a subtype after a colon (trace:to-endpoint).
var (
	hubbleVerdicts = []string{"FORWARDED", "DROPPED", "AUDIT", "REDIRECTED", "ERROR", "TRACED", "TRANSLATED"}
	hubbleTypes    = []string{"drop", "policy-verdict", "trace", "trace-sock", "l7", "capture"}
)

// target is the agent's container hubble runs in, as for the cilium
// action.
func (h *HubbleSource) target() cluster.PodTarget {
	return (&CiliumSpec{Namespace: h.Namespace, Pod: h.Pod, Container: h.Container, Node: h.Node}).target()
}

// hubbleArgv is the command the capture runs: hubble observe --follow
// -o jsonpb with the spec's filters, in hubbleScript, which adds --since.
// Each value is an argument of its own (--verdict=DROPPED), so none is
// read as another flag; verdicts and types are from the CLI's lists.
func hubbleArgv(h *HubbleSource) ([]string, error) {
	argv := []string{"bash", "-c", hubbleScript, "hubble", "hubble", "observe", "--follow", "-o", "jsonpb"}
	f := h.Filter
	for _, v := range f.Verdict {
		if !slices.Contains(hubbleVerdicts, v) {
			return nil, &SpecError{Key: "verdict", Text: v, Err: fmt.Errorf("hubble verdict %q is not one hubble observe takes; use %s", v, strings.Join(hubbleVerdicts, ", "))}
		}
		argv = append(argv, "--verdict="+v)
	}
	for _, t := range f.Type {
		if base, _, _ := strings.Cut(t, ":"); !slices.Contains(hubbleTypes, base) {
			return nil, &SpecError{Key: "type", Text: t, Err: fmt.Errorf("hubble type %q is not one hubble observe takes; use %s (TYPE[:SUBTYPE])", t, strings.Join(hubbleTypes, ", "))}
		}
		argv = append(argv, "--type="+t)
	}
	for _, kv := range []struct {
		flag   string
		values []string
	}{{"namespace", f.Namespace}, {"pod", f.Pod}, {"ip", f.IP}, {"protocol", f.Protocol}} {
		for _, v := range kv.values {
			if v == "" {
				return nil, &SpecError{Key: kv.flag, Err: fmt.Errorf("hubble %s filter is empty", kv.flag)}
			}
			argv = append(argv, "--"+kv.flag+"="+v)
		}
	}
	for _, p := range f.Port {
		if p < 1 || p > 65535 {
			return nil, &SpecError{Key: "port", Text: strconv.Itoa(p), Err: fmt.Errorf("port %d is not a port; expected 1 to 65535", p)}
		}
		argv = append(argv, "--port="+strconv.Itoa(p))
	}
	return argv, nil
}

func hubbleCapture(rt *Runtime, h *HubbleSource) (*captureSource, error) {
	argv, err := hubbleArgv(h)
	if err != nil {
		return nil, err
	}
	ev := parse.NewHubbleFlows()
	const name = "hubble observe"
	return &captureSource{kind: "hubble", name: name, argv: argv, events: &ev,
		start: func(ctx context.Context) (*stream, error) {
			c, err := rt.cluster()
			if err != nil {
				return nil, err
			}
			return startStream(ctx, c, h.target(), name, hubbleReady, argv), nil
		},
		fill: func(res *CaptureResult, _ *stream) {
			res.Flows, res.Others, res.Lost = slices.Clip(ev.Flows), slices.Clip(ev.Others), ev.Lost
		}}, nil
}

// ---- tcpdump ---------------------------------------------------------------

// tcpdumpReady is what tcpdump prints on stderr once its capture is open
// and its filter set: "listening on eth0, link-type EN10MB (Ethernet),
// snapshot length 262144 bytes".
const tcpdumpReady = "listening on "

// tcpdumpKernelDrops is the count tcpdump prints on stderr when it ends.
var tcpdumpKernelDrops = regexp.MustCompile(`(?m)^(\d+) packets? dropped by kernel$`)

// tcpdumpArgv is the command the capture runs: the via prefix, then
// tcpdump with line-buffered output (-l), numbers for addresses and ports
// (-n), each packet handed over as it comes (--immediate-mode: without
// it, a packet can wait a second in the kernel's buffer), the interface,
// and the filter after --, so that no word of it is read as an option.
func tcpdumpArgv(t *TcpdumpSource) ([]string, error) {
	iface := t.Interface
	if iface == "" {
		iface = "any"
	}
	argv := append(slices.Clone(t.Via), "tcpdump", "-l", "-n", "--immediate-mode", "-i", iface)
	if strings.TrimSpace(t.Filter) != "" {
		argv = append(argv, "--", t.Filter)
	}
	for i, a := range argv {
		if strings.IndexByte(a, 0) >= 0 {
			return nil, fmt.Errorf("argument %d of %s holds a NUL byte, which no program can receive", i+1, ShellQuote(argv[:1]))
		}
	}
	return argv, nil
}

func tcpdumpCapture(rt *Runtime, t *TcpdumpSource) (*captureSource, error) {
	argv, err := tcpdumpArgv(t)
	if err != nil {
		return nil, err
	}
	ev := parse.NewTcpdump()
	return &captureSource{kind: "tcpdump", name: "tcpdump", argv: argv, events: &ev,
		start: func(ctx context.Context) (*stream, error) {
			return startLocalStream(ctx, "tcpdump", tcpdumpReady, rt.PlaybookDir, argv), nil
		},
		fill: func(res *CaptureResult, st *stream) {
			res.Packets, res.Others = slices.Clip(ev.Packets), slices.Clip(ev.Others)
			res.Lost = 0
			if st != nil && st.ended() {
				if sm := tcpdumpKernelDrops.FindAllStringSubmatch(st.stderr.String(), -1); sm != nil {
					res.Lost, _ = strconv.Atoi(sm[len(sm)-1][1])
				}
			}
		}}, nil
}

// captureHost: a tcpdump capture runs a program where labrun runs node
// commands, as the run action does, and the program needs the right to
// capture packets; the monitor and Hubble run in the agent's pod, which
// the Roles cover.
func captureHost(_ *CaptureSpec, hc *HostContext) []HostNeed {
	t := hc.Spec.Lookup("tcpdump")
	if t == nil {
		return nil
	}
	via, viaKnown := knownStrings(hc, t.Lookup("via"))
	return []HostNeed{
		programNeed(via, !viaKnown, "tcpdump"),
		{
			What:  "capturing packets (tcpdump): root, or CAP_NET_RAW and CAP_NET_ADMIN",
			InPod: "securityContext.capabilities.add [NET_RAW, NET_ADMIN] (or runAsUser: 0), and the node's interfaces: hostNetwork: true, unless via enters the node's network namespace",
		},
	}
}

// knownStrings is the list of strings v holds, when it is known before
// the run (a missing list is known and empty).
func knownStrings(hc *HostContext, v *eval.Value) ([]string, bool) {
	if v == nil {
		return nil, true
	}
	x, known, err := hc.Eval(v)
	if !known || err != nil {
		return nil, false
	}
	var out []string
	switch items := x.(type) {
	case []string:
		out = items
	case []any:
		for _, item := range items {
			s, ok := item.(string)
			if !ok {
				return nil, false
			}
			out = append(out, s)
		}
	default:
		return nil, false
	}
	return out, true
}
