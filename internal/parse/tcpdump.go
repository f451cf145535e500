package parse

import (
	"net"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

const kindTcpdump = "tcpdump"

// Tcpdump is what `tcpdump -l -n` printed: the packets, in the order they
// came, one a line.
type Tcpdump struct {
	// Packets are the IPv4, IPv6 and ARP packets, each with what its line
	// printed of it.
	Packets []TcpdumpPacket `json:"packets" expr:"packets"`
	// Others are the lines of packets of other link-layer protocols
	// (LLDP, STP, an unknown ethertype), as printed.
	Others []string `json:"others" expr:"others"`
}

// TcpdumpPacket is one packet: when and where tcpdump saw it, its
// headers, and the packet it carried when it is a tunnel's (VXLAN,
// Cilium's 8472, which tcpdump names OTV; GRE), printed on the next line.
type TcpdumpPacket struct {
	// Time is the timestamp as printed: "06:53:42.629035" by default,
	// "2026-12-07 06:53:42.629035" with -tttt, "1796626468.921763" with
	// -tt.
	Time string `json:"time" expr:"time"`
	// Interface is the interface the packet crossed, which tcpdump prints
	// only when it listens on several (-i any); null otherwise.
	Interface *string `json:"interface" expr:"interface"`
	// Direction is "In", "Out", "B" (broadcast), "M" (multicast) or "P"
	// (to another host), printed with the interface (-i any); null
	// otherwise.
	Direction *string `json:"direction" expr:"direction"`
	TcpdumpHeaders
	// Inner is the packet a tunnel packet carried, as tcpdump printed it
	// on the line after (the packet of a pod on the node's underlay
	// device), then the one that carried, if it is a tunnel's too; empty
	// for a packet that is no tunnel's, or whose content tcpdump did not
	// print.
	Inner []TcpdumpHeaders `json:"inner" expr:"inner"`
}

// TcpdumpHeaders are what a line printed of a packet's network and
// transport headers; a field the line does not print is null.
type TcpdumpHeaders struct {
	// Network is the network protocol as printed: "IP", "IP6" or "ARP".
	Network string `json:"network" expr:"network"`
	// Protocol is the transport: "tcp" (Flags [...]), "udp" ("UDP,
	// length N", or a datagram tcpdump printed as its application, DNS or
	// a tunnel: of the transports that print ports only UDP does so
	// without naming itself), "icmp", "icmp6", "sctp"; null for another
	// (a fragment, GRE, ESP, ...) and for ARP.
	Protocol *string `json:"protocol" expr:"protocol"`
	// SrcIP and DstIP are the addresses (null for ARP, whose addresses
	// are in info).
	SrcIP *string `json:"srcIP" expr:"srcIP"`
	DstIP *string `json:"dstIP" expr:"dstIP"`
	// SrcPort and DstPort are the ports (TCP, UDP, SCTP); null for a
	// protocol without.
	SrcPort *int `json:"srcPort" expr:"srcPort"`
	DstPort *int `json:"dstPort" expr:"dstPort"`
	// TCPFlags are a TCP packet's flags as printed between the brackets of
	// Flags [...]: S (SYN), F (FIN), P (PUSH), R (RST), U (URG), E (ECE),
	// W (CWR), "." (ACK); "S." is a SYN-ACK. null for other protocols.
	TCPFlags *string `json:"tcpFlags" expr:"tcpFlags"`
	// Length is the "length N" of the line: a TCP or UDP packet's payload,
	// an ICMP or ARP message's length; null when the line prints none
	// (DNS prints its own, a tunnel header none).
	Length *int `json:"length" expr:"length"`
	// ICMPType is an ICMP or ICMPv6 message's type as tcpdump names it:
	// "echo request", "echo reply", "destination unreachable" (for each
	// of tcpdump's "... unreachable" lines), "time exceeded", "redirect",
	// "neighbor solicitation", ...; null for other protocols or a type
	// labrun does not know.
	ICMPType *string `json:"icmpType" expr:"icmpType"`
	// Info is the rest of the line, as printed: after "SRC > DST: " for
	// IP and IPv6 ("Flags [S], seq 1, win 64240, ..., length 0"), after
	// "ARP, " for ARP ("Request who-has 10.98.0.2 tell 10.98.0.1, length
	// 28").
	Info string `json:"info" expr:"info"`
}

// Events is the number of packets and other lines read.
func (t Tcpdump) Events() int { return len(t.Packets) + len(t.Others) }

// PacketsTo returns the packets to a destination IP and port (0: any
// port), on the wire or inside a tunnel packet (its inner packet).
func (t Tcpdump) PacketsTo(ip string, port int) []TcpdumpPacket {
	out := []TcpdumpPacket{}
	for _, p := range t.Packets {
		if p.TcpdumpHeaders.to(ip, port) || slices.ContainsFunc(p.Inner, func(h TcpdumpHeaders) bool { return h.to(ip, port) }) {
			out = append(out, p)
		}
	}
	return out
}

// PacketsFrom returns the packets from a source IP, on the wire or inside
// a tunnel packet.
func (t Tcpdump) PacketsFrom(ip string) []TcpdumpPacket {
	out := []TcpdumpPacket{}
	for _, p := range t.Packets {
		if p.TcpdumpHeaders.from(ip) || slices.ContainsFunc(p.Inner, func(h TcpdumpHeaders) bool { return h.from(ip) }) {
			out = append(out, p)
		}
	}
	return out
}

func (h *TcpdumpHeaders) to(ip string, port int) bool {
	return h.DstIP != nil && *h.DstIP == ip && (port == 0 || h.DstPort != nil && *h.DstPort == port)
}

func (h *TcpdumpHeaders) from(ip string) bool { return h.SrcIP != nil && *h.SrcIP == ip }

// ParseTcpdump reads what `tcpdump -l -n [-i IFACE] [EXPR]` (tcpdump 4.99)
// prints on its standard output, a packet a line:
//
//	06:53:42.629046 IP 10.98.0.1.42272 > 10.98.0.2.8080: Flags [S], seq 522599886, win 64240, options [...], length 0
//	06:53:42.629035 veth0 Out ARP, Request who-has 10.98.0.2 tell 10.98.0.1, length 28
//	06:54:23.961169 IP 10.98.0.1.51628 > 10.98.0.2.8472: OTV, flags [I] (0x08), overlay 0, instance 42
//	IP 10.97.0.1 > 10.97.0.2: ICMP echo request, id 5956, seq 0, length 64
//
// The interface and direction come with -i any; the line after a tunnel
// packet's is the packet it carried (Inner). Lines tcpdump prints with
// options labrun does not read are refused, naming the line and why:
// without -n (names instead of addresses), with -e (link-level headers)
// or -v (indented lines of more headers), or with -t (no timestamp).
// What tcpdump says on standard error ("listening on ...", the counts at
// its end) is not read here.
func ParseTcpdump(text string) (Tcpdump, error) {
	return parseStream(kindTcpdump, "packets", text, NewTcpdump(), ParseTcpdump)
}

// NewTcpdump is a Tcpdump with no packets, its lists empty (not null).
func NewTcpdump() Tcpdump {
	return Tcpdump{Packets: []TcpdumpPacket{}, Others: []string{}}
}

var (
	// the timestamps of the default, -tttt, -ttttt, -ttt (HH:MM:SS.frac,
	// with a date before it for -tttt) and -tt (seconds since the epoch)
	tcpdumpTime = regexp.MustCompile(`^(?:\d{4}-\d{2}-\d{2} )?\d{2}:\d{2}:\d{2}\.\d{6,9} |^\d+\.\d{6,9} `)
	// -i any (a Linux cooked header): "%-5s %-3s " of the interface and
	// the packet's type
	tcpdumpIface = regexp.MustCompile(`^(\S+) +(In|Out|B|M|P|\?) +(.*)$`)
	tcpdumpIP    = regexp.MustCompile(`^(IP6?) (\S+) > (\S+): (.*)$`)
	tcpdumpMAC   = regexp.MustCompile(`^[0-9a-f]{2}(?::[0-9a-f]{2}){5} > `)
	tcpdumpLen   = regexp.MustCompile(`(?:^|, )length (\d+)(?:[:,]|$)`)
)

// Add reads one line tcpdump printed into t, so that a stream is read as
// it comes; it says what is wrong with a line it cannot read.
func (t *Tcpdump) Add(line string) string {
	line = strings.TrimRight(line, " \t\r")
	if line != "" && (line[0] == ' ' || line[0] == '\t') {
		return "expected a packet line, not an indented one: tcpdump's verbose output (-v) is not read; run it without -v"
	}
	stamp := tcpdumpTime.FindString(line)
	if stamp == "" {
		return t.addInner(line)
	}
	p := TcpdumpPacket{Time: strings.TrimSuffix(stamp, " "), Inner: []TcpdumpHeaders{}}
	rest := line[len(stamp):]
	if sm := tcpdumpIface.FindStringSubmatch(rest); sm != nil {
		p.Interface, p.Direction = &sm[1], &sm[2]
		rest = sm[3]
	}
	if tcpdumpMAC.MatchString(rest) || p.Interface != nil && strings.HasPrefix(rest, "ifindex ") {
		return "expected the packet's network header, not a link-level one: tcpdump's -e output is not read; run it without -e"
	}
	h, known, why := readTcpdumpHeaders(rest)
	if why != "" {
		return why
	}
	if !known {
		t.Others = append(t.Others, line)
		return ""
	}
	p.TcpdumpHeaders = h
	t.Packets = append(t.Packets, p)
	return ""
}

// addInner reads a line without a timestamp: the packet the previous
// line's tunnel packet (or the tunnel packet it carried) carried.
func (t *Tcpdump) addInner(line string) string {
	h, known, why := readTcpdumpHeaders(line)
	switch {
	case why != "":
		return why
	case !known:
		return "expected a packet line: TIMESTAMP [INTERFACE DIRECTION] IP|IP6|ARP ... (tcpdump without -t), or the packet a tunnel packet carried on the line after it"
	case len(t.Packets) == 0:
		return "expected a packet line with its timestamp before the packet a tunnel carried (tcpdump without -t)"
	}
	last := &t.Packets[len(t.Packets)-1]
	last.Inner = append(last.Inner, h)
	return ""
}

// readTcpdumpHeaders reads what follows the timestamp (and interface) of
// a line: IP or IPv6 with its addresses, or ARP. known is false for
// another network protocol.
func readTcpdumpHeaders(s string) (h TcpdumpHeaders, known bool, why string) {
	if rest, ok := strings.CutPrefix(s, "ARP, "); ok {
		h = TcpdumpHeaders{Network: "ARP", Info: rest, Length: tcpdumpLength(rest)}
		return h, true, ""
	}
	if !strings.HasPrefix(s, "IP ") && !strings.HasPrefix(s, "IP6 ") {
		return h, false, ""
	}
	sm := tcpdumpIP.FindStringSubmatch(s)
	if sm == nil {
		if strings.HasPrefix(s[strings.IndexByte(s, ' ')+1:], "(") {
			return h, false, "expected IP|IP6 SRC > DST: tcpdump's verbose output (-v), the IP header in parentheses, is not read; run it without -v"
		}
		return h, false, `expected "IP|IP6 SRC > DST: ..."`
	}
	h = TcpdumpHeaders{Network: sm[1], Info: sm[4]}
	src, srcPort, ok := tcpdumpAddr(sm[2])
	if !ok {
		return h, false, "expected a numeric source address (tcpdump -n)"
	}
	dst, dstPort, ok := tcpdumpAddr(sm[3])
	if !ok {
		return h, false, "expected a numeric destination address (tcpdump -n)"
	}
	h.SrcIP, h.SrcPort, h.DstIP, h.DstPort = &src, srcPort, &dst, dstPort
	info := sm[4]
	h.Length = tcpdumpLength(info)
	switch {
	case strings.HasPrefix(info, "Flags ["):
		flags, _, ok := strings.Cut(info[len("Flags ["):], "]")
		if !ok {
			return h, false, `expected "Flags [FLAGS]" of a TCP packet`
		}
		h.Protocol, h.TCPFlags = tcpdumpWord("tcp"), &flags
	case strings.HasPrefix(info, "UDP, "):
		h.Protocol = tcpdumpWord("udp")
	case strings.HasPrefix(info, "ICMP "):
		h.Protocol = tcpdumpWord("icmp")
		h.ICMPType = icmpType(info[len("ICMP "):])
	case strings.HasPrefix(info, "ICMP6, ") || strings.HasPrefix(info, "HBH ICMP6, "):
		h.Protocol = tcpdumpWord("icmp6")
		_, text, _ := strings.Cut(info, "ICMP6, ")
		h.ICMPType = icmp6Type(text)
	case strings.HasPrefix(info, "sctp"):
		h.Protocol = tcpdumpWord("sctp")
	case srcPort != nil && dstPort != nil && !strings.HasPrefix(info, "DCCP"):
		h.Protocol = tcpdumpWord("udp")
	}
	if h.Protocol != nil && (*h.Protocol == "tcp" || *h.Protocol == "sctp") && (srcPort == nil || dstPort == nil) {
		return h, false, "expected SRC.PORT > DST.PORT for a " + *h.Protocol + " packet"
	}
	return h, true, ""
}

func tcpdumpWord(s string) *string { return &s }

// tcpdumpAddr reads "10.98.0.1", "10.98.0.1.42272", "fd98::1" or
// "fd98::1.49930": an address, then the port after a dot.
func tcpdumpAddr(s string) (string, *int, bool) {
	if net.ParseIP(s) != nil {
		return s, nil, true
	}
	i := strings.LastIndexByte(s, '.')
	if i < 0 || net.ParseIP(s[:i]) == nil {
		return "", nil, false
	}
	port, err := strconv.ParseUint(s[i+1:], 10, 16)
	if err != nil {
		return "", nil, false
	}
	n := int(port)
	return s[:i], &n, true
}

// tcpdumpLength is the first "length N" of a line's text after the
// addresses.
func tcpdumpLength(info string) *int {
	sm := tcpdumpLen.FindStringSubmatch(info)
	if sm == nil {
		return nil
	}
	n, err := strconv.Atoi(sm[1])
	if err != nil {
		return nil
	}
	return &n
}

// icmpTypes are the ICMP types as tcpdump's print-icmp.c names them, each
// the start of the text after "ICMP "; its unreachable lines name the
// address and port first ("10.98.0.2 udp port 9998 unreachable").
var icmpTypes = []string{"echo request", "echo reply", "time exceeded", "redirect", "source quench",
	"router advertisement", "router solicitation", "parameter problem", "time stamp request",
	"time stamp reply", "information request", "information reply", "address mask request"}

func icmpType(text string) *string {
	head, _, _ := strings.Cut(text, ", ")
	for _, t := range icmpTypes {
		if strings.HasPrefix(head, t) {
			return tcpdumpWord(t)
		}
	}
	if strings.Contains(head, " unreachable") || strings.HasSuffix(head, "unreachable") {
		return tcpdumpWord("destination unreachable")
	}
	return nil
}

// icmp6Types are the ICMPv6 types as tcpdump's print-icmp6.c names them,
// longest first where one starts another.
var icmp6Types = []string{"destination unreachable", "packet too big", "time exceeded", "parameter problem",
	"echo request", "echo reply", "multicast listener query v2", "multicast listener query", "multicast listener report v2",
	"multicast listener report", "multicast listener done", "router solicitation", "router advertisement",
	"neighbor solicitation", "neighbor advertisement", "redirect"}

func icmp6Type(text string) *string {
	head, _, _ := strings.Cut(text, ", ")
	for _, t := range icmp6Types {
		if head == t || strings.HasPrefix(head, t+" ") {
			return tcpdumpWord(t)
		}
	}
	return nil
}
