package bpfmaps

import (
	"runtime"
	"strconv"
	"strings"
	"sync"
)

// Tuple flags (bpf/lib/common.h L346-349; ctmap.go L64-67).
const (
	tupleFIn      = 1
	tupleFRelated = 2
	tupleFService = 4
)

// CT entry flag names in bit order, as ctmap's CtEntry.flagsString prints
// them (pkg/maps/ctmap/types.go L330-400). Bit 9 (Reserved1) has no name
// and, being below MaxFlags, is not reported as Unknown either: this
// mirrors cilium-dbg exactly.
var ctFlagNames = [...]struct {
	bit  uint16
	name string
}{
	{1 << 0, "RxClosing"},
	{1 << 1, "TxClosing"},
	{1 << 2, "Nat64"},
	{1 << 3, "LBLoopback"},
	{1 << 4, "SeenNonSyn"},
	{1 << 5, "NodePort"},
	{1 << 6, "ProxyRedirect"},
	{1 << 7, "DSRInternal"},
	{1 << 8, "FromL7LB"},
	{1 << 10, "FromTunnel"},
}

// ctMaxFlags is ctmap's MaxFlags (1<<11): bits at or above it are Unknown.
const ctMaxFlags = 1 << 11

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
	TupleFlags uint8  `json:"tupleFlags" expr:"tupleFlags"`
	Src        string `json:"src" expr:"src"`
	Dst        string `json:"dst" expr:"dst"`
	SrcIP      string `json:"srcIp" expr:"srcIp"`
	SrcPort    uint16 `json:"srcPort" expr:"srcPort"`
	DstIP      string `json:"dstIp" expr:"dstIp"`
	DstPort    uint16 `json:"dstPort" expr:"dstPort"`
	// Lifetime is ct_entry.lifetime, printed as "expires=" by cilium-dbg. It
	// is in the datapath's clock (bpf_mono_now: CLOCK_MONOTONIC seconds, or
	// jiffies when Cilium runs with the jiffies clock source), not Unix time.
	Lifetime     uint32 `json:"lifetime" expr:"lifetime"`
	Packets      uint64 `json:"packets" expr:"packets"`
	Bytes        uint64 `json:"bytes" expr:"bytes"`
	RxFlagsSeen  uint8  `json:"rxFlagsSeen" expr:"rxFlagsSeen"`
	TxFlagsSeen  uint8  `json:"txFlagsSeen" expr:"txFlagsSeen"`
	LastRxReport uint32 `json:"lastRxReport" expr:"lastRxReport"`
	LastTxReport uint32 `json:"lastTxReport" expr:"lastTxReport"`
	// Flags is the ct_entry flag bitfield; FlagNames its names as
	// cilium-dbg prints them (RxClosing, SeenNonSyn, ...). FlagNames slices
	// are shared between entries of one dump: do not modify them.
	Flags     uint16   `json:"flags" expr:"flags"`
	FlagNames []string `json:"flagNames" expr:"flagNames"`
	// RevNAT is the service ID (rev_nat_index, network order in the map).
	RevNAT           uint16 `json:"revNat" expr:"revNat"`
	SourceSecurityID uint32 `json:"sourceSecurityId" expr:"sourceSecurityId"`
	// BackendID is the second u64 of the union, exactly what cilium-dbg
	// prints as BackendID= (meaningful on SVC entries).
	BackendID uint64 `json:"backendId" expr:"backendId"`
	NatPort   uint16 `json:"natPort" expr:"natPort"`
	// NatAddr is nat_addr.p4 (bytes 12..15 of the union) for OUT/IN entries
	// that carry one (NodePort wildcard services); "" when zero. cilium-dbg
	// does not print it.
	NatAddr string `json:"natAddr" expr:"natAddr"`
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

// Conntrack dumps cilium_ct4_global then cilium_ct_any4_global.
func (r *Reader) Conntrack() (CTEntries, error) {
	return r.ConntrackMaps(MapCTTCP, MapCTAny)
}

// ConntrackMaps dumps the given CT maps (MapCTTCP and/or MapCTAny) in order.
func (r *Reader) ConntrackMaps(names ...string) (CTEntries, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var chunks []ctChunk
	for _, name := range names {
		if name != MapCTTCP && name != MapCTAny {
			return nil, &mapError{kind: ErrUnsupportedLayout,
				msg: "bpfmaps: " + name + " is not a conntrack map this reader decodes"}
		}
		om, err := r.get(name)
		if err != nil {
			return nil, err
		}
		// Keep the raw batches (a memcpy each) and decode afterwards into
		// one exactly sized slice: 200k entries are ~45 MiB of structs,
		// which we do not want to grow by doubling.
		err = dumpChunks(om, func(ks []rawCTTuple4, vs []rawCTEntry) {
			chunks = append(chunks, ctChunk{mapName: name, keys: ks, vals: vs})
		})
		if err != nil {
			return nil, err
		}
	}
	return decodeCTChunks(chunks), nil
}

// ctChunk is one batch of raw CT entries from one map.
type ctChunk struct {
	mapName string
	keys    []rawCTTuple4
	vals    []rawCTEntry
	// out is where the chunk's decoded entries go.
	out []CTEntry
}

// decodeCTChunks decodes every chunk into one slice, spreading the chunks
// over the available CPUs: formatting the cilium-dbg lines is the biggest
// cost of a large dump after the syscalls themselves. Entries with nexthdr
// 0 are skipped, as CtKey4Global.Dump does.
func decodeCTChunks(chunks []ctChunk) CTEntries {
	total := 0
	for i := range chunks {
		for j := range chunks[i].keys {
			if chunks[i].keys[j][12] != 0 {
				total++
			}
		}
	}
	out := make(CTEntries, total)
	pos := 0
	for i := range chunks {
		n := 0
		for j := range chunks[i].keys {
			if chunks[i].keys[j][12] != 0 {
				n++
			}
		}
		chunks[i].out = out[pos : pos+n]
		pos += n
	}

	workers := min(runtime.GOMAXPROCS(0), len(chunks), 8)
	if total < 4096 || workers < 2 {
		cache := newFlagNameCache()
		for i := range chunks {
			decodeCTRange(&chunks[i], cache)
		}
		return out
	}
	var wg sync.WaitGroup
	next := make(chan int, len(chunks))
	for i := range chunks {
		next <- i
	}
	close(next)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cache := newFlagNameCache()
			for i := range next {
				decodeCTRange(&chunks[i], cache)
			}
		}()
	}
	wg.Wait()
	return out
}

type flagNameCache map[uint16][]string

func newFlagNameCache() flagNameCache { return flagNameCache{} }

func (c flagNameCache) get(f uint16) []string {
	if names, ok := c[f]; ok {
		return names
	}
	names := []string{}
	for _, fn := range ctFlagNames {
		if f&fn.bit != 0 {
			names = append(names, fn.name)
		}
	}
	c[f] = names
	return names
}

func decodeCTRange(c *ctChunk, cache flagNameCache) {
	buf := make([]byte, 0, 512)
	j := 0
	for i := range c.keys {
		if c.keys[i][12] == 0 {
			continue
		}
		buf = decodeCT(&c.out[j], c.mapName, &c.keys[i], &c.vals[i], buf[:0], cache)
		j++
	}
}

// decodeCT fills e from one raw key/value. The cilium-dbg line is built
// with append-style formatting (not fmt) because a 200k-entry dump formats
// 200k lines; TestCTLineMatchesCiliumFormat checks it against the original
// fmt.Sprintf format strings. Src/Dst/SrcIP/DstIP are substrings of Line,
// so an entry costs one string allocation.
func decodeCT(e *CTEntry, mapName string, k *rawCTTuple4, v *rawCTEntry, b []byte, cache flagNameCache) []byte {
	daddr, saddr := k[0:4], k[4:8]
	dport := netEndian.Uint16(k[8:10])
	sport := netEndian.Uint16(k[10:12])
	proto := k[12]
	tf := k[13]

	e.Map = mapName
	e.Protocol = protoName(proto)
	e.TupleFlags = tf
	e.Related = tf&tupleFRelated != 0

	// Orientation, mirroring CtKey4Global.Dump(sb, reverse=true).
	var srcA, dstA []byte
	var srcP, dstP uint16
	switch {
	case tf&tupleFService != 0:
		e.Direction = "SVC"
		srcA, srcP, dstA, dstP = saddr, dport, daddr, sport
	case tf&tupleFIn != 0:
		e.Direction = "IN"
		srcA, srcP, dstA, dstP = daddr, sport, saddr, dport
	default:
		e.Direction = "OUT"
		srcA, srcP, dstA, dstP = daddr, sport, saddr, dport
	}
	e.SrcPort, e.DstPort = srcP, dstP

	e.BackendID = hostEndian.Uint64(v[8:16])
	e.Packets = hostEndian.Uint64(v[16:24])
	e.Bytes = hostEndian.Uint64(v[24:32])
	e.Lifetime = hostEndian.Uint32(v[32:36])
	e.Flags = hostEndian.Uint16(v[36:38])
	e.RevNAT = netEndian.Uint16(v[38:40])
	e.NatPort = netEndian.Uint16(v[40:42])
	e.TxFlagsSeen = v[42]
	e.RxFlagsSeen = v[43]
	e.SourceSecurityID = hostEndian.Uint32(v[44:48])
	e.LastTxReport = hostEndian.Uint32(v[48:52])
	e.LastRxReport = hostEndian.Uint32(v[52:56])
	e.FlagNames = cache.get(e.Flags)
	e.NatAddr = ""
	if e.Direction != "SVC" && (v[12]|v[13]|v[14]|v[15]) != 0 {
		e.NatAddr = ipv4String(v[12:16])
	}

	// "%s %s %s:%d -> %s:%d " [+ "related "]
	b = append(b, e.Protocol...)
	b = append(b, ' ')
	b = append(b, e.Direction...)
	b = append(b, ' ')
	srcStart := len(b)
	b = appendIPv4(b, srcA)
	srcIPEnd := len(b)
	b = append(b, ':')
	b = strconv.AppendUint(b, uint64(srcP), 10)
	srcEnd := len(b)
	b = append(b, " -> "...)
	dstStart := len(b)
	b = appendIPv4(b, dstA)
	dstIPEnd := len(b)
	b = append(b, ':')
	b = strconv.AppendUint(b, uint64(dstP), 10)
	dstEnd := len(b)
	b = append(b, ' ')
	if e.Related {
		b = append(b, "related "...)
	}

	// CtEntry.StringWithTimeDiff(nil), minus the final "\n":
	// "expires=%d Packets=%d Bytes=%d RxFlagsSeen=%#02x LastRxReport=%d
	//  TxFlagsSeen=%#02x LastTxReport=%d %s RevNAT=%d SourceSecurityID=%d
	//  BackendID=%d NatPort=%d "
	b = append(b, "expires="...)
	b = strconv.AppendUint(b, uint64(e.Lifetime), 10)
	b = append(b, " Packets="...)
	b = strconv.AppendUint(b, e.Packets, 10)
	b = append(b, " Bytes="...)
	b = strconv.AppendUint(b, e.Bytes, 10)
	b = append(b, " RxFlagsSeen="...)
	b = appendHex(b, uint64(e.RxFlagsSeen), 2)
	b = append(b, " LastRxReport="...)
	b = strconv.AppendUint(b, uint64(e.LastRxReport), 10)
	b = append(b, " TxFlagsSeen="...)
	b = appendHex(b, uint64(e.TxFlagsSeen), 2)
	b = append(b, " LastTxReport="...)
	b = strconv.AppendUint(b, uint64(e.LastTxReport), 10)
	// flagsString: "Flags=%#04x [ " + "Name " ... + ["Unknown=%#04x "] + "]"
	b = append(b, " Flags="...)
	b = appendHex(b, uint64(e.Flags), 4)
	b = append(b, " [ "...)
	for _, n := range e.FlagNames {
		b = append(b, n...)
		b = append(b, ' ')
	}
	if unknown := e.Flags &^ (ctMaxFlags - 1); unknown != 0 {
		b = append(b, "Unknown="...)
		b = appendHex(b, uint64(unknown), 4)
		b = append(b, ' ')
	}
	b = append(b, ']')
	b = append(b, " RevNAT="...)
	b = strconv.AppendUint(b, uint64(e.RevNAT), 10)
	b = append(b, " SourceSecurityID="...)
	b = strconv.AppendUint(b, uint64(e.SourceSecurityID), 10)
	b = append(b, " BackendID="...)
	b = strconv.AppendUint(b, e.BackendID, 10)
	b = append(b, " NatPort="...)
	b = strconv.AppendUint(b, uint64(e.NatPort), 10)
	b = append(b, ' ')

	line := string(b)
	e.Line = line
	e.Src = line[srcStart:srcEnd]
	e.SrcIP = line[srcStart:srcIPEnd]
	e.Dst = line[dstStart:dstEnd]
	e.DstIP = line[dstStart:dstIPEnd]
	return b
}

// appendHex appends v like fmt's %#0Nx: "0x" then at least digits
// lower-case hex digits.
func appendHex(b []byte, v uint64, digits int) []byte {
	const hexdigits = "0123456789abcdef"
	var tmp [16]byte
	i := len(tmp)
	for v != 0 || len(tmp)-i < digits {
		i--
		tmp[i] = hexdigits[v&0xf]
		v >>= 4
	}
	b = append(b, '0', 'x')
	return append(b, tmp[i:]...)
}
