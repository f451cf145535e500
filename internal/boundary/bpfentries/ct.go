package bpfentries

import (
	"strings"
)

// CTEntry is one conntrack entry, oriented the way `cilium-dbg bpf ct list
// global` prints it.
//
// Cilium's CT key stores the addresses swapped (struct ipv4_ct_tuple: the
// address field names are right for the reply direction, the port field
// names for the original direction), and cilium-dbg swaps them back when
// printing (CtKey4Global.Dump with reverse=true). Src/Dst here are what it
// prints:
//
//   - OUT / IN: Src = daddr:sport, Dst = saddr:dport of the raw key;
//   - SVC:      Src = saddr:dport, Dst = daddr:sport of the raw key, i.e.
//     client -> service VIP.
type CTEntry struct {
	// Map is cilium_ct4_global (TCP) or cilium_ct_any4_global (the rest).
	Map string `json:"map" expr:"map"`
	// Protocol is the u8proto name: TCP, UDP, ICMP, ... (decimal if unknown).
	Protocol string `json:"protocol" expr:"protocol"`
	// Direction is OUT, IN or SVC (TUPLE_F_SERVICE wins over TUPLE_F_IN).
	Direction string `json:"direction" expr:"direction"`
	// Related is TUPLE_F_RELATED ("related" in the cilium-dbg line).
	Related bool `json:"related" expr:"related"`
	// TupleFlags is the raw ipv4_ct_tuple.flags byte.
	TupleFlags uint8 `json:"tupleFlags" expr:"tupleFlags"`
	// Src and Dst are the two sides as the cilium-dbg line prints them,
	// "ip:port" (see the type's doc: the original direction, or client
	// -> service VIP for SVC).
	Src string `json:"src" expr:"src"`
	Dst string `json:"dst" expr:"dst"`
	// SrcIP, SrcPort, DstIP and DstPort are Src and Dst split into
	// address and port.
	SrcIP   string `json:"srcIp" expr:"srcIp"`
	SrcPort uint16 `json:"srcPort" expr:"srcPort"`
	DstIP   string `json:"dstIp" expr:"dstIp"`
	DstPort uint16 `json:"dstPort" expr:"dstPort"`
	// Lifetime is ct_entry.lifetime, printed as "expires=" by cilium-dbg. It
	// is in the datapath's clock (bpf_mono_now: CLOCK_MONOTONIC seconds, or
	// jiffies when Cilium runs with the jiffies clock source), not Unix time.
	Lifetime uint32 `json:"lifetime" expr:"lifetime"`
	// Packets and Bytes count the packets and bytes the entry saw, both
	// directions together (ct_entry.packets and bytes).
	Packets uint64 `json:"packets" expr:"packets"`
	Bytes   uint64 `json:"bytes" expr:"bytes"`
	// RxFlagsSeen and TxFlagsSeen are the OR of every TCP flag seen in
	// the reply (rx) and original (tx) direction: 0x02 SYN, 0x10 ACK,
	// 0x01 FIN, 0x04 RST, ...; 0 for other protocols.
	RxFlagsSeen uint8 `json:"rxFlagsSeen" expr:"rxFlagsSeen"`
	TxFlagsSeen uint8 `json:"txFlagsSeen" expr:"txFlagsSeen"`
	// LastRxReport and LastTxReport are when a monitor notification was
	// last sent for that direction, in the datapath's clock (as
	// Lifetime); 0 when none was.
	LastRxReport uint32 `json:"lastRxReport" expr:"lastRxReport"`
	LastTxReport uint32 `json:"lastTxReport" expr:"lastTxReport"`
	// Flags is the ct_entry flag bitfield; FlagNames its names as
	// cilium-dbg prints them (RxClosing, SeenNonSyn, ...). FlagNames slices
	// are shared between entries of one dump: do not modify them.
	Flags     uint16   `json:"flags" expr:"flags"`
	FlagNames []string `json:"flagNames" expr:"flagNames"`
	// RevNAT is the service ID (rev_nat_index, network order in the map).
	RevNAT uint16 `json:"revNat" expr:"revNat"`
	// SourceSecurityID is src_sec_id, the security identity of the
	// packet that made the entry (the sending endpoint's for OUT, the
	// remote peer's for IN); 0 when unknown.
	SourceSecurityID uint32 `json:"sourceSecurityId" expr:"sourceSecurityId"`
	// BackendID is the second u64 of the union, exactly what cilium-dbg
	// prints as BackendID= (meaningful on SVC entries).
	BackendID uint64 `json:"backendId" expr:"backendId"`
	// NatPort is nat_port, the port that goes with NatAddr on the
	// OUT/IN entries of NodePort connections that carry one (DSR: the
	// service port replies are translated back to); 0 when none.
	NatPort uint16 `json:"natPort" expr:"natPort"`
	// NatAddr is nat_addr.p4 (bytes 12..15 of the union) for OUT/IN entries
	// that carry one (NodePort wildcard services); null when zero and for
	// SVC entries, whose union holds the backend id there. cilium-dbg
	// does not print it.
	NatAddr *string `json:"natAddr" expr:"natAddr"`
	// Line is the entry exactly as `cilium-dbg bpf ct list global` prints
	// it (without --time-diff), minus the final newline: it keeps the
	// trailing space.
	Line string `json:"line" expr:"line"`
}

// String returns Line.
func (e CTEntry) String() string { return e.Line }

// CTEntries is a conntrack dump: the TCP map's entries, then the non-TCP
// map's, each in kernel map order.
type CTEntries []CTEntry

// Matching returns the entries whose source or destination port is port.
func (cs CTEntries) Matching(port int) CTEntries {
	return filter(cs, func(e CTEntry) bool { return int(e.SrcPort) == port || int(e.DstPort) == port })
}

// WithIP returns the entries whose source or destination IP is ip.
func (cs CTEntries) WithIP(ip string) CTEntries {
	return filter(cs, func(e CTEntry) bool { return e.SrcIP == ip || e.DstIP == ip })
}

// WithAddr returns the entries whose Src or Dst is addr ("ip:port").
func (cs CTEntries) WithAddr(addr string) CTEntries {
	return filter(cs, func(e CTEntry) bool { return e.Src == addr || e.Dst == addr })
}

// InDirection returns the entries with the given Direction (OUT, IN, SVC).
func (cs CTEntries) InDirection(dir string) CTEntries {
	return filter(cs, func(e CTEntry) bool { return strings.EqualFold(e.Direction, dir) })
}

// WithProtocol returns the entries of one protocol (TCP, UDP, ICMP, ...).
func (cs CTEntries) WithProtocol(proto string) CTEntries {
	return filter(cs, func(e CTEntry) bool { return strings.EqualFold(e.Protocol, proto) })
}

// Lines returns every entry's Line, for comparison with cilium-dbg output.
func (cs CTEntries) Lines() []string {
	out := make([]string, 0, len(cs))
	for _, e := range cs {
		out = append(out, e.Line)
	}
	return out
}
