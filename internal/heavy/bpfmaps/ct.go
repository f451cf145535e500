package bpfmaps

import (
	"runtime"
	"strconv"
	"sync"

	"github.com/labrun/labrun/internal/boundary/bpfentries"
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

// Conntrack dumps cilium_ct4_global then cilium_ct_any4_global.
func (r *Reader) Conntrack() (bpfentries.CTEntries, error) {
	return r.ConntrackMaps(MapCTTCP, MapCTAny)
}

// ConntrackMaps dumps the given CT maps (MapCTTCP and/or MapCTAny) in order.
func (r *Reader) ConntrackMaps(names ...string) (bpfentries.CTEntries, error) {
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
	out []bpfentries.CTEntry
}

// decodeCTChunks decodes every chunk into one slice, spreading the chunks
// over the available CPUs: formatting the cilium-dbg lines is the biggest
// cost of a large dump after the syscalls themselves. Entries with nexthdr
// 0 are skipped, as CtKey4Global.Dump does.
func decodeCTChunks(chunks []ctChunk) bpfentries.CTEntries {
	total := 0
	for i := range chunks {
		for j := range chunks[i].keys {
			if chunks[i].keys[j][12] != 0 {
				total++
			}
		}
	}
	out := make(bpfentries.CTEntries, total)
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
func decodeCT(e *bpfentries.CTEntry, mapName string, k *rawCTTuple4, v *rawCTEntry, b []byte, cache flagNameCache) []byte {
	e.Map = mapName
	src, dst := decodeCTKey(e, k)
	decodeCTValue(e, v, cache)
	var at ctTupleSpans
	b, at = appendCTTuple(b, e, src, dst)
	b = appendCTValue(b, e)
	line := string(b)
	e.Line = line
	e.Src = line[at.src:at.srcEnd]
	e.SrcIP = line[at.src:at.srcIPEnd]
	e.Dst = line[at.dst:at.dstEnd]
	e.DstIP = line[at.dst:at.dstIPEnd]
	return b
}

// ctEndpoint is one side of a tuple as the line prints it.
type ctEndpoint struct {
	ip   []byte
	port uint16
}

// decodeCTKey fills the tuple's fields of e from the raw key and returns
// its two sides in the order cilium-dbg prints them, mirroring
// CtKey4Global.Dump(sb, reverse=true).
func decodeCTKey(e *bpfentries.CTEntry, k *rawCTTuple4) (src, dst ctEndpoint) {
	daddr, saddr := k[0:4], k[4:8]
	dport := netEndian.Uint16(k[8:10])
	sport := netEndian.Uint16(k[10:12])
	tf := k[13]

	e.Protocol = bpfentries.ProtoName(k[12])
	e.TupleFlags = tf
	e.Related = tf&tupleFRelated != 0
	switch {
	case tf&tupleFService != 0:
		e.Direction = "SVC"
		src, dst = ctEndpoint{saddr, dport}, ctEndpoint{daddr, sport}
	case tf&tupleFIn != 0:
		e.Direction = "IN"
		src, dst = ctEndpoint{daddr, sport}, ctEndpoint{saddr, dport}
	default:
		e.Direction = "OUT"
		src, dst = ctEndpoint{daddr, sport}, ctEndpoint{saddr, dport}
	}
	e.SrcPort, e.DstPort = src.port, dst.port
	return src, dst
}

// decodeCTValue fills the entry's counters and flags from the raw value,
// after decodeCTKey: an SVC entry has no NAT address.
func decodeCTValue(e *bpfentries.CTEntry, v *rawCTEntry, cache flagNameCache) {
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
	e.NatAddr = nil
	if e.Direction != "SVC" && (v[12]|v[13]|v[14]|v[15]) != 0 {
		a := ipv4String(v[12:16])
		e.NatAddr = &a
	}
}

// ctTupleSpans are the offsets in the line of the two sides, "ip:port",
// and of the end of their IPs, for the entry's substrings of Line.
type ctTupleSpans struct {
	src, srcIPEnd, srcEnd int
	dst, dstIPEnd, dstEnd int
}

// appendCTTuple appends the line's head, "%s %s %s:%d -> %s:%d " [+
// "related "], and tells where the two sides are.
func appendCTTuple(b []byte, e *bpfentries.CTEntry, src, dst ctEndpoint) ([]byte, ctTupleSpans) {
	var at ctTupleSpans
	b = append(b, e.Protocol...)
	b = append(b, ' ')
	b = append(b, e.Direction...)
	b = append(b, ' ')
	at.src = len(b)
	b = appendIPv4(b, src.ip)
	at.srcIPEnd = len(b)
	b = append(b, ':')
	b = strconv.AppendUint(b, uint64(src.port), 10)
	at.srcEnd = len(b)
	b = append(b, " -> "...)
	at.dst = len(b)
	b = appendIPv4(b, dst.ip)
	at.dstIPEnd = len(b)
	b = append(b, ':')
	b = strconv.AppendUint(b, uint64(dst.port), 10)
	at.dstEnd = len(b)
	b = append(b, ' ')
	if e.Related {
		b = append(b, "related "...)
	}
	return b, at
}

// appendCTValue appends CtEntry.StringWithTimeDiff(nil), minus the final
// "\n":
//
//	"expires=%d Packets=%d Bytes=%d RxFlagsSeen=%#02x LastRxReport=%d
//	 TxFlagsSeen=%#02x LastTxReport=%d %s RevNAT=%d SourceSecurityID=%d
//	 BackendID=%d NatPort=%d "
func appendCTValue(b []byte, e *bpfentries.CTEntry) []byte {
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
	return append(b, ' ')
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
