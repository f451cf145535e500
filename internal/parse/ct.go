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
	Protocol  string `json:"protocol" expr:"protocol"`   // TCP, UDP, ICMP, ICMPv6, SCTP, ... (Cilium's u8proto names)
	Direction string `json:"direction" expr:"direction"` // OUT, IN or SVC
	Related   bool   `json:"related" expr:"related"`     // "related" keyword (ICMP errors etc.)
	Service   bool   `json:"service" expr:"service"`     // "service" keyword of Cilium <= 1.11
	Src       Addr   `json:"src" expr:"src"`
	Dst       Addr   `json:"dst" expr:"dst"`

	Expires      int64 `json:"expires" expr:"expires"`           // expiry in the datapath clock (seconds or jiffies), not a duration
	Remaining    int64 `json:"remaining" expr:"remaining"`       // seconds left, only with `ct list -d`; 0 when HasRemaining is false
	HasRemaining bool  `json:"hasRemaining" expr:"hasRemaining"` // whether "(remaining: N sec(s))" was printed

	Packets      int64  `json:"packets" expr:"packets"`     // printed (1.16+) or RxPackets+TxPackets (<= 1.15)
	Bytes        int64  `json:"bytes" expr:"bytes"`         // printed (1.16+) or RxBytes+TxBytes (<= 1.15)
	RxPackets    *int64 `json:"rxPackets" expr:"rxPackets"` // <= 1.15; null otherwise
	RxBytes      *int64 `json:"rxBytes" expr:"rxBytes"`     // <= 1.15; null otherwise
	TxPackets    *int64 `json:"txPackets" expr:"txPackets"` // <= 1.15; null otherwise
	TxBytes      *int64 `json:"txBytes" expr:"txBytes"`     // <= 1.15; null otherwise
	RxFlagsSeen  int    `json:"rxFlagsSeen" expr:"rxFlagsSeen"`
	LastRxReport int64  `json:"lastRxReport" expr:"lastRxReport"`
	TxFlagsSeen  int    `json:"txFlagsSeen" expr:"txFlagsSeen"`
	LastTxReport int64  `json:"lastTxReport" expr:"lastTxReport"`
	// Flags is the raw flag word; FlagNames the names Cilium printed in
	// brackets (RxClosing, TxClosing, SeenNonSyn, NodePort, ...; an unknown
	// bit prints as "Unknown=0x0800").
	Flags            int      `json:"flags" expr:"flags"`
	FlagNames        []string `json:"flagNames" expr:"flagNames"`
	RevNAT           int      `json:"revNAT" expr:"revNAT"`
	SourceSecurityID int      `json:"sourceSecurityID" expr:"sourceSecurityID"`
	// BackendID is the entry's backend_id, a 64-bit field Cilium prints
	// with %d: always a JSON number (or null), with every digit. Cilium
	// allocates backend ids as 32-bit numbers, so readers that hold JSON
	// numbers as doubles (JavaScript, jq before 1.7), exact up to 2^53,
	// read real ids exactly. Printed from 2024 on; null otherwise.
	BackendID *uint64 `json:"backendID" expr:"backendID"`
	NatPort   *int    `json:"natPort" expr:"natPort"` // 1.20 on; null otherwise
	IfIndex   *int    `json:"ifIndex" expr:"ifIndex"` // <= 1.15; null otherwise
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
