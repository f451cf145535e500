package parse

import (
	"strings"
)

const kindCTList = "cilium-bpf-ct-list"

// CTEntry is one line of `cilium-dbg bpf ct list global`:
//
//	TCP OUT 10.42.0.40:40404 -> 10.42.0.32:8080 expires=37600 Packets=12 Bytes=1733
//	  RxFlagsSeen=0x1a LastRxReport=16010 TxFlagsSeen=0x1a LastTxReport=16010
//	  Flags=0x0010 [ SeenNonSyn ] RevNAT=0 SourceSecurityID=30125 BackendID=0 NatPort=0
//
// (one line in the output). Src and Dst are as printed. For OUT and IN
// entries that is the connection's original direction. For SVC entries
// Cilium prints the client address with the client port first and the
// service VIP with the service port second ("TCP SVC client:cport ->
// vip:vport"), so Src is the client and Dst the frontend there too.
//
// Every Cilium version prints expires, the counters, the Rx/Tx flags and
// reports, Flags, RevNAT and SourceSecurityID; a line without one of them
// is incomplete and refused. Fields only some versions print are pointers,
// null when the line did not print them, never a made-up 0: the split
// counters RxPackets, RxBytes, TxPackets, TxBytes and IfIndex (up to 1.15),
// BackendID (2024 on) and NatPort (1.20). Packets and Bytes are printed
// since 1.16; for older lines they are the sum of the Rx and Tx counters,
// which is what the single counters of 1.16 count. key=value pairs this
// parser does not know are kept in Extra.
type CTEntry struct {
	// Protocol is the first word: TCP, UDP, ICMP, ICMPv6, SCTP, ...
	// (Cilium's u8proto names).
	Protocol string `json:"protocol" expr:"protocol"`
	// Direction is OUT (a connection an endpoint opened), IN (one it
	// accepted) or SVC (a service lookup: client -> frontend).
	Direction string `json:"direction" expr:"direction"`
	// Related is the "related" keyword: the entry tracks packets related
	// to another connection (ICMP errors).
	Related bool `json:"related" expr:"related"`
	// Service is the "service" keyword of Cilium <= 1.11; false since.
	Service bool `json:"service" expr:"service"`
	// Src and Dst are the two sides as printed, "ip:port" left and right
	// of "->" (the original direction; client and frontend for SVC).
	Src Addr `json:"src" expr:"src"`
	Dst Addr `json:"dst" expr:"dst"`

	// Expires is expires=, when the entry expires in the datapath's
	// clock (seconds or jiffies since boot), not a duration.
	Expires int64 `json:"expires" expr:"expires"`
	// Remaining is the seconds left, printed only by `ct list -d` as
	// "(remaining: N sec(s))"; null when not printed (HasRemaining
	// false).
	Remaining *int64 `json:"remaining" expr:"remaining"`
	// HasRemaining is whether "(remaining: N sec(s))" was printed.
	HasRemaining bool `json:"hasRemaining" expr:"hasRemaining"`

	// Packets and Bytes count what the entry saw, both directions:
	// printed by 1.16+, RxPackets+TxPackets and RxBytes+TxBytes before.
	Packets int64 `json:"packets" expr:"packets"`
	Bytes   int64 `json:"bytes" expr:"bytes"`
	// RxPackets, RxBytes, TxPackets and TxBytes are the per-direction
	// counters Cilium <= 1.15 printed; null otherwise.
	RxPackets *int64 `json:"rxPackets" expr:"rxPackets"`
	RxBytes   *int64 `json:"rxBytes" expr:"rxBytes"`
	TxPackets *int64 `json:"txPackets" expr:"txPackets"`
	TxBytes   *int64 `json:"txBytes" expr:"txBytes"`
	// RxFlagsSeen and TxFlagsSeen are the OR of every TCP flag seen in
	// the reply (rx) and original (tx) direction: 0x02 SYN, 0x10 ACK,
	// 0x01 FIN, 0x04 RST, ...; 0 for other protocols.
	RxFlagsSeen int `json:"rxFlagsSeen" expr:"rxFlagsSeen"`
	// LastRxReport and LastTxReport are when a monitor notification was
	// last sent for that direction, in the datapath's clock (as
	// Expires); 0 when none was.
	LastRxReport int64 `json:"lastRxReport" expr:"lastRxReport"`
	// TxFlagsSeen is the OR of every TCP flag seen in the original
	// direction, as RxFlagsSeen is for the reply direction.
	TxFlagsSeen int `json:"txFlagsSeen" expr:"txFlagsSeen"`
	// LastTxReport is LastRxReport for the original direction.
	LastTxReport int64 `json:"lastTxReport" expr:"lastTxReport"`
	// Flags is the raw flag word; FlagNames the names Cilium printed in
	// brackets (RxClosing, TxClosing, SeenNonSyn, NodePort, ...; an unknown
	// bit prints as "Unknown=0x0800").
	Flags     int      `json:"flags" expr:"flags"`
	FlagNames []string `json:"flagNames" expr:"flagNames"`
	// RevNAT is RevNAT=, the ID of the service the connection was
	// load-balanced for (the reverse NAT map's key); 0 when it went to
	// no service, as with socket LB, which translates at connect().
	RevNAT int `json:"revNAT" expr:"revNAT"`
	// SourceSecurityID is SourceSecurityID=, the security identity of
	// the packet that made the entry (the sending endpoint's for OUT,
	// the remote peer's for IN); 0 when unknown.
	SourceSecurityID int `json:"sourceSecurityID" expr:"sourceSecurityID"`
	// BackendID is the entry's backend_id, a 64-bit field Cilium prints
	// with %d: always a JSON number (or null), with every digit. Cilium
	// allocates backend ids as 32-bit numbers, so readers that hold JSON
	// numbers as doubles (JavaScript, jq before 1.7), exact up to 2^53,
	// read real ids exactly. Printed from 2024 on; null otherwise.
	BackendID *uint64 `json:"backendID" expr:"backendID"`
	// NatPort is NatPort=, the service port the replies of a DSR
	// connection are translated back to (0 when none); printed from 1.20
	// on, null otherwise.
	NatPort *int `json:"natPort" expr:"natPort"`
	// IfIndex is IfIndex=, the interface index Cilium <= 1.15 kept in
	// the entry; null for the versions that do not print it.
	IfIndex *int `json:"ifIndex" expr:"ifIndex"`
	// Extra holds key=value pairs this parser does not know (fields of a
	// newer Cilium), values as printed. Entries without any share one
	// empty map: treat it as read-only.
	Extra map[string]string `json:"extra" expr:"extra"`
}

// HasFlag reports whether name (e.g. "SeenNonSyn") is among FlagNames.
func (e CTEntry) HasFlag(name string) bool {
	for _, f := range e.FlagNames {
		if f == name {
			return true
		}
	}
	return false
}

// CTList is the parsed `cilium-dbg bpf ct list global`.
type CTList struct {
	// Entries are the entry lines of both maps (TCP, then the others),
	// in printed order; empty when the maps are empty.
	Entries []CTEntry `json:"entries" expr:"entries"`
	// Warnings are the "Unable to open <map>: ... Skipping." lines that
	// cilium-dbg prints (to stderr) for maps that do not exist, kept when
	// stderr was captured together with stdout.
	Warnings []string `json:"warnings" expr:"warnings"`
}

// Find returns the entries with the given direction ("OUT", "IN", "SVC";
// "" for any) whose source or destination matches addr ("ip:port",
// ":port", "ip"; "" for any).
func (l CTList) Find(direction, addr string) []CTEntry {
	out := []CTEntry{}
	q, ok := parseQuery(addr)
	if !ok {
		return out
	}
	for _, e := range l.Entries {
		if direction != "" && !strings.EqualFold(e.Direction, direction) {
			continue
		}
		if q.match(e.Src) || q.match(e.Dst) {
			out = append(out, e)
		}
	}
	return out
}

// Count returns len(Find(direction, addr)) without building the slice.
func (l CTList) Count(direction, addr string) int {
	q, ok := parseQuery(addr)
	if !ok {
		return 0
	}
	n := 0
	for i := range l.Entries {
		e := &l.Entries[i] // not a copy of every entry
		if direction != "" && e.Direction != direction && !strings.EqualFold(e.Direction, direction) {
			continue
		}
		if q.match(e.Src) || q.match(e.Dst) {
			n++
		}
	}
	return n
}
