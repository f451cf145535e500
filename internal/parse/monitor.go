package parse

import (
	"encoding/json"
	"net"
	"regexp"
	"strconv"
	"strings"
)

const kindMonitor = "cilium-monitor"

// Monitor is what `cilium-dbg monitor` printed: the datapath's events,
// by type, in the order they came.
type Monitor struct {
	// Drops are the packets the datapath dropped, with why.
	Drops []MonitorDrop `json:"drops" expr:"drops"`
	// Verdicts are the policy verdicts (monitor --type policy-verdict):
	// a connection's first packet, allowed or denied, and by what match.
	Verdicts []PolicyVerdict `json:"verdicts" expr:"verdicts"`
	// Traces are the packets the datapath traced (--type trace, JSON).
	Traces []MonitorTrace `json:"traces" expr:"traces"`
	// Others are the lines of any other event, as printed (debug,
	// capture and agent events, an event cilium-dbg could not decode).
	Others []string `json:"others" expr:"others"`
	// Logs are cilium-dbg's own log lines, which Cilium 1.20 prints on
	// stdout among the events (`time=... level=info msg="Initializing
	// dissection cache..."`): not events.
	Logs []string `json:"logs" expr:"logs"`
	// Lost counts the events the kernel's ring buffer lost before the
	// monitor read them ("CPU 01: Lost 7 events"): a capture that lost
	// some may have missed the one asserted on.
	Lost int `json:"lost" expr:"lost"`
}

// Events is the number of events read, of every type (lost ones aside).
func (m Monitor) Events() int {
	return len(m.Drops) + len(m.Verdicts) + len(m.Traces) + len(m.Others)
}

// DropsTo returns the drops of packets to a destination IP and port (0:
// any port).
func (m Monitor) DropsTo(ip string, port int) []MonitorDrop {
	out := []MonitorDrop{}
	for _, d := range m.Drops {
		if d.DstIP == ip && (port == 0 || d.DstPort != nil && *d.DstPort == port) {
			out = append(out, d)
		}
	}
	return out
}

// DropsFrom returns the drops of packets from a source IP.
func (m Monitor) DropsFrom(ip string) []MonitorDrop {
	out := []MonitorDrop{}
	for _, d := range m.Drops {
		if d.SrcIP == ip {
			out = append(out, d)
		}
	}
	return out
}

// PacketSummary is the packet an event is about, as cilium-dbg dissected
// it: addresses, ports and protocol; a field the event does not give is
// null ("" for the addresses of a packet that was not IP).
type PacketSummary struct {
	// SrcIP is the packet's source address ("10.42.0.7"); "" for a
	// packet that was not IP.
	SrcIP string `json:"srcIP" expr:"srcIP"`
	// DstIP is the packet's destination address; "" for a packet that
	// was not IP.
	DstIP string `json:"dstIP" expr:"dstIP"`
	// SrcPort is the TCP, UDP or SCTP source port; null for other
	// protocols.
	SrcPort *int `json:"srcPort" expr:"srcPort"`
	// DstPort is the TCP, UDP or SCTP destination port; null for other
	// protocols.
	DstPort *int `json:"dstPort" expr:"dstPort"`
	// Protocol is "tcp", "udp", "sctp", "icmp", "icmpv6", ... ("" when
	// not known).
	Protocol string `json:"protocol" expr:"protocol"`
	// TCPFlags are the flags of a TCP packet as the text form prints
	// them ("SYN", "SYN, ACK"); null in JSON, which does not print them.
	TCPFlags *string `json:"tcpFlags" expr:"tcpFlags"`
}

// MonitorDrop is one drop notification.
type MonitorDrop struct {
	// Reason is why, as Cilium names it ("Policy denied", "Policy denied
	// by denylist", "Stale or unroutable IP", ...).
	Reason string `json:"reason" expr:"reason"`
	// Flow is the packet's hash, as printed ("0x3e2a..."; the JSON's
	// mark).
	Flow string `json:"flow" expr:"flow"`
	// Endpoint is the endpoint that reported the drop (JSON's source);
	// null in the text form, which does not print it.
	Endpoint *int `json:"endpoint" expr:"endpoint"`
	// DstEndpoint is the destination endpoint's id (0 when not a local
	// endpoint, or not known where the packet was dropped).
	DstEndpoint int `json:"dstEndpoint" expr:"dstEndpoint"`
	// SrcIdentity and DstIdentity are the security identities of the
	// packet's source and destination (0 when not known).
	SrcIdentity int `json:"srcIdentity" expr:"srcIdentity"`
	DstIdentity int `json:"dstIdentity" expr:"dstIdentity"`
	// Bytes is the packet's length (JSON only; null in text).
	Bytes *int `json:"bytes" expr:"bytes"`
	// Ifindex is the interface the packet was dropped on (null before
	// Cilium 1.13's text form, which does not print it).
	Ifindex *int `json:"ifindex" expr:"ifindex"`
	PacketSummary
}

// PolicyVerdict is one policy verdict notification ("Policy verdict
// log: ..."), which cilium-dbg prints as text even with --json.
type PolicyVerdict struct {
	// Flow is the packet's hash, as printed ("0x9c7b5c2d"), the same as
	// the drop's or trace's of that packet.
	Flow string `json:"flow" expr:"flow"`
	// Endpoint is the local endpoint the policy belongs to.
	Endpoint int `json:"endpoint" expr:"endpoint"`
	// RemoteIdentity is the peer's security identity.
	RemoteIdentity int `json:"remoteIdentity" expr:"remoteIdentity"`
	// Proto is the IP protocol number.
	Proto int `json:"proto" expr:"proto"`
	// Direction is "ingress" or "egress".
	Direction string `json:"direction" expr:"direction"`
	// Action is "allow", "deny", "redirect" or "audit".
	Action string `json:"action" expr:"action"`
	// Auth is the authentication type ("disabled", ...).
	Auth string `json:"auth" expr:"auth"`
	// Match is what matched: "L3-Only", "L3-L4", "L4-Only", "all",
	// "none", "L3-Proto", "Proto-Only".
	Match string `json:"match" expr:"match"`
	PacketSummary
}

// MonitorTrace is one trace notification (JSON form).
type MonitorTrace struct {
	// ObservationPoint is where the packet was seen ("to-endpoint",
	// "from-endpoint", "to-stack", ...).
	ObservationPoint string `json:"observationPoint" expr:"observationPoint"`
	// State is the connection tracking state ("new", "established",
	// "reply", ...; "" when not given).
	State string `json:"state" expr:"state"`
	// Flow is the packet's hash, as printed ("0x3e2a...", the JSON's
	// mark).
	Flow string `json:"flow" expr:"flow"`
	// Endpoint is the endpoint that reported the trace (JSON's source).
	Endpoint int `json:"endpoint" expr:"endpoint"`
	// DstEndpoint is the destination endpoint's id (0 when not a local
	// endpoint).
	DstEndpoint int `json:"dstEndpoint" expr:"dstEndpoint"`
	// SrcIdentity is the security identity of the packet's source (0
	// when not known).
	SrcIdentity int `json:"srcIdentity" expr:"srcIdentity"`
	// DstIdentity is the security identity of the packet's destination
	// (0 when not known).
	DstIdentity int `json:"dstIdentity" expr:"dstIdentity"`
	// Bytes is the packet's length.
	Bytes int `json:"bytes" expr:"bytes"`
	PacketSummary
}

// ParseMonitor reads the output of `cilium-dbg monitor [-j] [-n] [--type
// T]` (Cilium 1.20.1's pkg/monitor): with -j each drop and trace is a
// line of JSON (DropNotifyVerbose, TraceNotifyVerbose); policy verdicts
// and lost events are text lines in both modes, and drops are text lines
// without -j:
//
//	{"cpu":"CPU 01:","type":"drop","mark":"0x9c7b5c2d","reason":"Policy denied","source":1203,"bytes":74,"srcLabel":51234,"dstLabel":17897,"dstID":1203,"Line":2149,"File":5,"ExtError":0,"Ifindex":12,"summary":{...}}
//	Policy verdict log: flow 0x9c7b5c2d local EP ID 1203, remote ID 51234, proto 6, ingress, action deny, auth: disabled, match none, 10.42.0.7:40312 -> 10.42.0.9:8080 tcp SYN
//	xx drop (Policy denied) flow 0x9c7b5c2d to endpoint 1203, ifindex 12, file bpf_lxc.c:2149, , identity 51234->17897: 10.42.0.7:40312 -> 10.42.0.9:8080 tcp SYN
//	CPU 01: Lost 7 events
//
// cilium-dbg's own log lines (slog's text form, `time=... level=...
// msg=...`), which 1.20 prints on stdout too, are kept apart in Logs.
// Identities printed by name (without -n) are read for the reserved
// identities 0 to 10. A text line of another event (a trace without -j,
// a debug message) is refused, naming the line: the text forms are not
// all read, and a capture runs the monitor with -j.
func ParseMonitor(text string) (Monitor, error) {
	return parseStream(kindMonitor, "events", text, NewMonitor(), ParseMonitor)
}

// NewMonitor is a Monitor with no events, its lists empty (not null).
func NewMonitor() Monitor {
	return Monitor{Drops: []MonitorDrop{}, Verdicts: []PolicyVerdict{}, Traces: []MonitorTrace{}, Others: []string{}, Logs: []string{}}
}

// Add reads one line the monitor printed into m, so that a stream is
// read as it comes; it says what is wrong with a line it cannot read.
func (m *Monitor) Add(line string) string {
	line = strings.TrimRight(line, " \t\r")
	switch {
	case strings.HasPrefix(line, "{"):
		return m.addJSON(line)
	case strings.HasPrefix(line, "Policy verdict log: "):
		v, why := parseVerdictLine(line)
		if why == "" {
			m.Verdicts = append(m.Verdicts, v)
		}
		return why
	case strings.HasPrefix(line, "xx drop ("):
		d, why := parseDropLine(line)
		if why == "" {
			m.Drops = append(m.Drops, d)
		}
		return why
	}
	if logLine.MatchString(line) {
		m.Logs = append(m.Logs, line)
		return ""
	}
	if sm := lostLine.FindStringSubmatch(line); sm != nil {
		n, err := strconv.Atoi(sm[1])
		if err != nil {
			return "expected a number of lost events"
		}
		m.Lost += n
		return ""
	}
	if strings.HasPrefix(line, "cannot decode message type") || strings.HasPrefix(line, "Unknown payload type") || unknownEventLine.MatchString(line) {
		m.Others = append(m.Others, line)
		return ""
	}
	return "expected a JSON event, a policy verdict, a drop or a lost-events line of cilium-dbg monitor (other text forms are read only as JSON: run it with -j)"
}

var (
	lostLine = regexp.MustCompile(`^CPU \d+: Lost (\d+) events$`)
	// slog's text handler, which cilium-dbg logs with (on stdout)
	logLine          = regexp.MustCompile(`^time=\S+ level=[A-Za-z]+ msg=`)
	unknownEventLine = regexp.MustCompile(`^CPU \d+: Unknown event: `)
	// the text drop of Cilium 1.13-1.20, and the shorter one before
	// (no ifindex, no file)
	dropLine    = regexp.MustCompile(`^xx drop \((.*)\) flow (0x[0-9a-f]+) to endpoint (\d+),(?: ifindex (\d+),)?(?: file [^ ,]+:\d+, )?(?: \[ ip-trace-id = \d+ \])?,? identity ([^ ]+)->([^ :]+): (.*)$`)
	verdictLine = regexp.MustCompile(`^Policy verdict log: flow (0x[0-9a-f]+) local EP ID (\d+), remote ID ([^,]+), proto (\d+), (ingress|egress), action ([a-z]+), auth: ([^,]+), match ([^,]+), (.*)$`)
)

func parseDropLine(line string) (MonitorDrop, string) {
	sm := dropLine.FindStringSubmatch(line)
	if sm == nil {
		return MonitorDrop{}, `expected "xx drop (REASON) flow 0xN to endpoint N, [ifindex N, file F:N, ], identity A->B: SUMMARY"`
	}
	d := MonitorDrop{Reason: sm[1], Flow: sm[2]}
	d.DstEndpoint, _ = strconv.Atoi(sm[3])
	if sm[4] != "" {
		n, _ := strconv.Atoi(sm[4])
		d.Ifindex = &n
	}
	var ok bool
	if d.SrcIdentity, ok = identityNumber(sm[5]); !ok {
		return d, "expected a numeric or reserved source identity"
	}
	if d.DstIdentity, ok = identityNumber(sm[6]); !ok {
		return d, "expected a numeric or reserved destination identity"
	}
	var why string
	d.PacketSummary, why = parseConnSummary(sm[7])
	return d, why
}

func parseVerdictLine(line string) (PolicyVerdict, string) {
	sm := verdictLine.FindStringSubmatch(line)
	if sm == nil {
		return PolicyVerdict{}, `expected "Policy verdict log: flow 0xN local EP ID N, remote ID N, proto N, ingress|egress, action A, auth: T, match M, SUMMARY"`
	}
	v := PolicyVerdict{Flow: sm[1], Direction: sm[5], Action: sm[6], Auth: sm[7], Match: sm[8]}
	v.Endpoint, _ = strconv.Atoi(sm[2])
	var ok bool
	if v.RemoteIdentity, ok = identityNumber(sm[3]); !ok {
		return v, "expected a numeric or reserved remote identity"
	}
	v.Proto, _ = strconv.Atoi(sm[4])
	var why string
	v.PacketSummary, why = parseConnSummary(sm[9])
	return v, why
}

// reservedIdentities are the names NumericIdentity.String prints for the
// reserved identities (pkg/identity/numericidentity.go).
var reservedIdentities = map[string]int{
	"unknown": 0, "host": 1, "world": 2, "unmanaged": 3, "health": 4, "init": 5,
	"remote-node": 6, "kube-apiserver": 7, "ingress": 8, "world-ipv4": 9, "world-ipv6": 10,
}

func identityNumber(s string) (int, bool) {
	if n, err := strconv.Atoi(s); err == nil && n >= 0 {
		return n, true
	}
	n, ok := reservedIdentities[s]
	return n, ok
}

// parseConnSummary reads GetConnectionSummary's text: "A:P -> B:Q tcp
// SYN, ACK", "A:P -> B:Q udp", "A -> B icmp CODE", "A -> B", with IPv6
// addresses in brackets before a port. A packet it could not dissect
// ("[unknown]", "[error]", an Ethernet-only summary) leaves the fields
// empty.
func parseConnSummary(s string) (PacketSummary, string) {
	var p PacketSummary
	if strings.HasPrefix(s, "[") && !strings.Contains(s, " -> ") {
		return p, ""
	}
	src, rest, ok := strings.Cut(s, " -> ")
	if !ok {
		return p, ""
	}
	dst, tail, _ := strings.Cut(rest, " ")
	var why string
	if p.SrcIP, p.SrcPort, why = hostPort(src); why != "" {
		return p, why
	}
	if p.DstIP, p.DstPort, why = hostPort(dst); why != "" {
		return p, why
	}
	proto, flags, _ := strings.Cut(tail, " ")
	p.Protocol = proto
	if proto == "tcp" {
		p.TCPFlags = &flags
	}
	return p, ""
}

// hostPort reads "IP:PORT", "[IPv6]:PORT" or a bare IP (no port); the
// MAC address of an Ethernet-only summary gives no IP.
func hostPort(s string) (string, *int, string) {
	if net.ParseIP(s) != nil {
		return s, nil, ""
	}
	if _, err := net.ParseMAC(s); err == nil {
		return "", nil, ""
	}
	h, portText, err := net.SplitHostPort(s)
	if err != nil || net.ParseIP(h) == nil {
		return "", nil, "expected an address IP:PORT in the packet's summary"
	}
	port, err := strconv.ParseUint(portText, 10, 16)
	if err != nil {
		return "", nil, "expected a port number in the packet's summary"
	}
	n := int(port)
	return h, &n, ""
}

// monitorJSON is a JSON event: DropNotifyVerbose or TraceNotifyVerbose
// (pkg/monitor), whose fields this reads.
type monitorJSON struct {
	Type             string          `json:"type"`
	Mark             string          `json:"mark"`
	Reason           string          `json:"reason"`
	Source           *int            `json:"source"`
	Bytes            *int            `json:"bytes"`
	SrcLabel         *int            `json:"srcLabel"`
	DstLabel         *int            `json:"dstLabel"`
	DstID            *int            `json:"dstID"`
	Ifindex          json.RawMessage `json:"Ifindex"`
	TraceIfindex     string          `json:"ifindex"`
	State            string          `json:"state"`
	ObservationPoint string          `json:"observationPoint"`
	Summary          *struct {
		TCP    string `json:"tcp"`
		UDP    string `json:"udp"`
		SCTP   string `json:"sctp"`
		ICMPv4 string `json:"icmpv4"`
		ICMPv6 string `json:"icmpv6"`
		L3     *struct {
			Src string `json:"src"`
			Dst string `json:"dst"`
		} `json:"l3"`
		L4 *struct {
			Src string `json:"src"`
			Dst string `json:"dst"`
		} `json:"l4"`
	} `json:"summary"`
}

func (m *Monitor) addJSON(line string) string {
	var j monitorJSON
	if err := json.Unmarshal([]byte(line), &j); err != nil {
		return "invalid JSON: " + err.Error()
	}
	switch j.Type {
	case "drop":
		if j.Source == nil || j.DstID == nil || j.SrcLabel == nil || j.DstLabel == nil || j.Bytes == nil {
			return "expected a drop event with source, dstID, srcLabel, dstLabel and bytes"
		}
		d := MonitorDrop{Reason: j.Reason, Flow: j.Mark, Endpoint: j.Source, DstEndpoint: *j.DstID,
			SrcIdentity: *j.SrcLabel, DstIdentity: *j.DstLabel, Bytes: j.Bytes}
		if len(j.Ifindex) > 0 {
			n, err := strconv.Atoi(string(j.Ifindex))
			if err != nil {
				return "expected a numeric Ifindex"
			}
			d.Ifindex = &n
		}
		var why string
		if d.PacketSummary, why = j.summary(); why != "" {
			return why
		}
		m.Drops = append(m.Drops, d)
	case "trace":
		if j.Source == nil || j.DstID == nil || j.SrcLabel == nil || j.DstLabel == nil || j.Bytes == nil {
			return "expected a trace event with source, dstID, srcLabel, dstLabel and bytes"
		}
		t := MonitorTrace{ObservationPoint: j.ObservationPoint, State: j.State, Flow: j.Mark, Endpoint: *j.Source,
			DstEndpoint: *j.DstID, SrcIdentity: *j.SrcLabel, DstIdentity: *j.DstLabel, Bytes: *j.Bytes}
		var why string
		if t.PacketSummary, why = j.summary(); why != "" {
			return why
		}
		m.Traces = append(m.Traces, t)
	case "":
		return `expected a JSON event with a "type"`
	default:
		m.Others = append(m.Others, line)
	}
	return ""
}

// summary reads a JSON event's dissected packet: l3 and l4 give the
// addresses and ports, the layer present the protocol.
func (j *monitorJSON) summary() (PacketSummary, string) {
	var p PacketSummary
	s := j.Summary
	if s == nil {
		return p, ""
	}
	switch {
	case s.TCP != "":
		p.Protocol = "tcp"
	case s.UDP != "":
		p.Protocol = "udp"
	case s.SCTP != "":
		p.Protocol = "sctp"
	case s.ICMPv4 != "":
		p.Protocol = "icmp"
	case s.ICMPv6 != "":
		p.Protocol = "icmpv6"
	}
	if s.L3 != nil {
		p.SrcIP, p.DstIP = s.L3.Src, s.L3.Dst
	}
	if s.L4 != nil {
		for i, text := range []string{s.L4.Src, s.L4.Dst} {
			n, err := strconv.ParseUint(text, 10, 16)
			if err != nil {
				return p, "expected numeric ports in the summary's l4"
			}
			port := int(n)
			if i == 0 {
				p.SrcPort = &port
			} else {
				p.DstPort = &port
			}
		}
	}
	return p, ""
}
