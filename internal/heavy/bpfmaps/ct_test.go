package bpfmaps

import (
	"encoding/binary"
	"fmt"
	"math/rand"
	"net/netip"
	"reflect"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/labrun/labrun/internal/boundary/bpfentries"
)

// ctFixture is one CT entry as Cilium's Go types hold it, plus what
// cilium-dbg prints for it (hand-written from types.go Dump/String).
type ctFixture struct {
	name string
	k    ciliumTupleKey4
	v    ciliumCtEntry
	want bpfentries.CTEntry
}

func ctKey(daddr, saddr [4]byte, dport, sport uint16, proto, flags uint8) ciliumTupleKey4 {
	return ciliumTupleKey4{DestAddr: daddr, SourceAddr: saddr, DestPort: htons(dport), SourcePort: htons(sport), NextHeader: proto, Flags: flags}
}

func ctFixtures() (tcp, any []ctFixture) {
	tcp = []ctFixture{
		{
			// Pod 10.42.0.23:45678 connects to backend 10.42.0.51:8080. The
			// key holds the addresses reversed: daddr = original source.
			name: "tcp out",
			k:    ctKey(ip4(10, 42, 0, 23), ip4(10, 42, 0, 51), 8080, 45678, protoTCP, 0),
			v: ciliumCtEntry{Packets: 12, Bytes: 3456, Lifetime: 21600, Flags: 0x0010,
				TxFlagsSeen: 0x1b, RxFlagsSeen: 0x1a, SourceSecurityID: 12345, LastTxReport: 1000, LastRxReport: 1001},
			want: bpfentries.CTEntry{Map: MapCTTCP, Protocol: "TCP", Direction: "OUT",
				Src: "10.42.0.23:45678", Dst: "10.42.0.51:8080", SrcIP: "10.42.0.23", SrcPort: 45678, DstIP: "10.42.0.51", DstPort: 8080,
				Lifetime: 21600, Packets: 12, Bytes: 3456, RxFlagsSeen: 0x1a, TxFlagsSeen: 0x1b, LastRxReport: 1001, LastTxReport: 1000,
				Flags: 0x10, FlagNames: []string{"SeenNonSyn"}, SourceSecurityID: 12345,
				Line: "TCP OUT 10.42.0.23:45678 -> 10.42.0.51:8080 expires=21600 Packets=12 Bytes=3456 RxFlagsSeen=0x1a LastRxReport=1001 TxFlagsSeen=0x1b LastTxReport=1000 Flags=0x0010 [ SeenNonSyn ] RevNAT=0 SourceSecurityID=12345 BackendID=0 NatPort=0 "},
		},
		{
			name: "tcp in closing",
			k:    ctKey(ip4(10, 42, 0, 23), ip4(10, 42, 0, 51), 8080, 45678, protoTCP, tupleFIn),
			v:    ciliumCtEntry{Packets: 1, Bytes: 60, Lifetime: 100, Flags: 0x0013, RevNAT: htons(2), SourceSecurityID: 2},
			want: bpfentries.CTEntry{Map: MapCTTCP, Protocol: "TCP", Direction: "IN", TupleFlags: 1,
				Src: "10.42.0.23:45678", Dst: "10.42.0.51:8080", SrcIP: "10.42.0.23", SrcPort: 45678, DstIP: "10.42.0.51", DstPort: 8080,
				Lifetime: 100, Packets: 1, Bytes: 60, Flags: 0x13, FlagNames: []string{"RxClosing", "TxClosing", "SeenNonSyn"},
				RevNAT: 2, SourceSecurityID: 2,
				Line: "TCP IN 10.42.0.23:45678 -> 10.42.0.51:8080 expires=100 Packets=1 Bytes=60 RxFlagsSeen=0x00 LastRxReport=0 TxFlagsSeen=0x00 LastTxReport=0 Flags=0x0013 [ RxClosing TxClosing SeenNonSyn ] RevNAT=2 SourceSecurityID=2 BackendID=0 NatPort=0 "},
		},
		{
			// Service entry: client 10.42.0.23:45678 -> VIP 10.43.0.5:80. The
			// lb tuple keeps daddr = VIP, saddr = client, and the ports in
			// reverse order (lb4_fill_key: key->dport = tuple->sport).
			name: "tcp svc",
			k:    ctKey(ip4(10, 43, 0, 5), ip4(10, 42, 0, 23), 45678, 80, protoTCP, tupleFService),
			v:    ciliumCtEntry{Union0: [2]uint64{0, 7}, Packets: 0, Bytes: 0, Lifetime: 21700, RevNAT: htons(2)},
			want: bpfentries.CTEntry{Map: MapCTTCP, Protocol: "TCP", Direction: "SVC", TupleFlags: 4,
				Src: "10.42.0.23:45678", Dst: "10.43.0.5:80", SrcIP: "10.42.0.23", SrcPort: 45678, DstIP: "10.43.0.5", DstPort: 80,
				Lifetime: 21700, FlagNames: []string{}, RevNAT: 2, BackendID: 7,
				Line: "TCP SVC 10.42.0.23:45678 -> 10.43.0.5:80 expires=21700 Packets=0 Bytes=0 RxFlagsSeen=0x00 LastRxReport=0 TxFlagsSeen=0x00 LastTxReport=0 Flags=0x0000 [ ] RevNAT=2 SourceSecurityID=0 BackendID=7 NatPort=0 "},
		},
		{
			// Unknown bit 12 and the unnamed reserved bit 9, plus NodePort NAT
			// info: nat_addr.p4 lives in the last 4 bytes of the union, so
			// cilium-dbg's BackendID shows it as the high half of a u64.
			name: "tcp out nat unknown flags",
			k:    ctKey(ip4(192, 168, 1, 20), ip4(10, 42, 0, 51), 8080, 50000, protoTCP, 0),
			v: ciliumCtEntry{Union0: [2]uint64{0, uint64(binary.NativeEndian.Uint32([]byte{192, 168, 1, 10})) << 32},
				Lifetime: 5, Flags: 1<<12 | 1<<9 | 1<<5, NatPort: htons(30780)},
			want: bpfentries.CTEntry{Map: MapCTTCP, Protocol: "TCP", Direction: "OUT",
				Src: "192.168.1.20:50000", Dst: "10.42.0.51:8080", SrcIP: "192.168.1.20", SrcPort: 50000, DstIP: "10.42.0.51", DstPort: 8080,
				Lifetime: 5, Flags: 1<<12 | 1<<9 | 1<<5, FlagNames: []string{"NodePort"},
				BackendID: uint64(binary.NativeEndian.Uint32([]byte{192, 168, 1, 10})) << 32, NatPort: 30780, NatAddr: ptr("192.168.1.10"),
				Line: fmt.Sprintf("TCP OUT 192.168.1.20:50000 -> 10.42.0.51:8080 expires=5 Packets=0 Bytes=0 RxFlagsSeen=0x00 LastRxReport=0 TxFlagsSeen=0x00 LastTxReport=0 Flags=0x1220 [ NodePort Unknown=0x1000 ] RevNAT=0 SourceSecurityID=0 BackendID=%d NatPort=30780 ",
					uint64(binary.NativeEndian.Uint32([]byte{192, 168, 1, 10}))<<32)},
		},
		{
			// nexthdr 0: cilium-dbg's Dump returns false and prints nothing.
			name: "skipped",
			k:    ctKey(ip4(1, 1, 1, 1), ip4(2, 2, 2, 2), 1, 2, 0, 0),
			v:    ciliumCtEntry{Lifetime: 1},
		},
	}
	any = []ctFixture{
		{
			name: "udp out related",
			k:    ctKey(ip4(10, 42, 0, 23), ip4(10, 43, 0, 10), 53, 33333, protoUDP, tupleFRelated),
			v:    ciliumCtEntry{Packets: 2, Bytes: 140, Lifetime: 60, SourceSecurityID: 12345},
			want: bpfentries.CTEntry{Map: MapCTAny, Protocol: "UDP", Direction: "OUT", Related: true, TupleFlags: 2,
				Src: "10.42.0.23:33333", Dst: "10.43.0.10:53", SrcIP: "10.42.0.23", SrcPort: 33333, DstIP: "10.43.0.10", DstPort: 53,
				Lifetime: 60, Packets: 2, Bytes: 140, FlagNames: []string{}, SourceSecurityID: 12345,
				Line: "UDP OUT 10.42.0.23:33333 -> 10.43.0.10:53 related expires=60 Packets=2 Bytes=140 RxFlagsSeen=0x00 LastRxReport=0 TxFlagsSeen=0x00 LastTxReport=0 Flags=0x0000 [ ] RevNAT=0 SourceSecurityID=12345 BackendID=0 NatPort=0 "},
		},
		{
			name: "icmp in",
			k:    ctKey(ip4(10, 42, 0, 1), ip4(10, 42, 0, 23), 0, 7, 1, tupleFIn),
			v:    ciliumCtEntry{Packets: 1, Bytes: 84, Lifetime: 61, SourceSecurityID: 1},
			want: bpfentries.CTEntry{Map: MapCTAny, Protocol: "ICMP", Direction: "IN", TupleFlags: 1,
				Src: "10.42.0.1:7", Dst: "10.42.0.23:0", SrcIP: "10.42.0.1", SrcPort: 7, DstIP: "10.42.0.23", DstPort: 0,
				Lifetime: 61, Packets: 1, Bytes: 84, FlagNames: []string{}, SourceSecurityID: 1,
				Line: "ICMP IN 10.42.0.1:7 -> 10.42.0.23:0 expires=61 Packets=1 Bytes=84 RxFlagsSeen=0x00 LastRxReport=0 TxFlagsSeen=0x00 LastTxReport=0 Flags=0x0000 [ ] RevNAT=0 SourceSecurityID=1 BackendID=0 NatPort=0 "},
		},
	}
	return tcp, any
}

func TestConntrack(t *testing.T) {
	root := privateBPFFS(t)
	tcpMap := createPinned(t, root, MapCTTCP, specCT(1024))
	anyMap := createPinned(t, root, MapCTAny, specCT(1024))
	tcp, anyF := ctFixtures()
	for _, f := range tcp {
		put(t, tcpMap, f.k, f.v)
	}
	for _, f := range anyF {
		put(t, anyMap, f.k, f.v)
	}
	r := openReader(t, root)

	for _, fallback := range []bool{false, true} {
		t.Run(fmt.Sprintf("iterate=%v", fallback), func(t *testing.T) {
			if fallback {
				// Force the iteration path on both maps.
				r.mu.Lock()
				for _, n := range []string{MapCTTCP, MapCTAny} {
					om, err := r.get(n)
					if err != nil {
						t.Fatal(err)
					}
					om.batch = false
				}
				r.mu.Unlock()
			}
			got, err := r.Conntrack()
			if err != nil {
				t.Fatal(err)
			}
			var want []bpfentries.CTEntry
			for _, f := range append(tcp, anyF...) {
				if f.name != "skipped" {
					want = append(want, f.want)
				}
			}
			if len(got) != len(want) {
				t.Fatalf("got %d entries, want %d:\n%s", len(got), len(want), strings.Join(got.Lines(), "\n"))
			}
			// Kernel hash order is not insertion order: match by Line.
			byLine := map[string]bpfentries.CTEntry{}
			for i, e := range got {
				byLine[e.Line] = e
				if i < 4 && e.Map != MapCTTCP || i >= 4 && e.Map != MapCTAny {
					t.Errorf("entry %d from %s: TCP map entries must come first", i, e.Map)
				}
			}
			for _, w := range want {
				g, ok := byLine[w.Line]
				if !ok {
					t.Errorf("missing line %q\n got lines:\n%s", w.Line, strings.Join(got.Lines(), "\n"))
					continue
				}
				if !reflect.DeepEqual(g, w) {
					t.Errorf("entry mismatch:\n got %s\nwant %s", js(g), js(w))
				}
			}
		})
	}

	got, err := r.Conntrack()
	if err != nil {
		t.Fatal(err)
	}
	if n := len(got.Matching(8080)); n != 3 {
		t.Errorf("Matching(8080) = %d entries, want 3", n)
	}
	if n := len(got.Matching(53)); n != 1 {
		t.Errorf("Matching(53) = %d, want 1", n)
	}
	if n := len(got.InDirection("svc")); n != 1 {
		t.Errorf("InDirection(svc) = %d, want 1", n)
	}
	if n := len(got.WithIP("10.42.0.23")); n != 5 {
		t.Errorf("WithIP(10.42.0.23) = %d, want 5", n)
	}
	if n := len(got.WithAddr("10.43.0.5:80")); n != 1 {
		t.Errorf("WithAddr(10.43.0.5:80) = %d, want 1", n)
	}
	if n := len(got.WithProtocol("udp")); n != 1 {
		t.Errorf("WithProtocol(udp) = %d, want 1", n)
	}
	if m := got.Matching(1); m == nil || len(m) != 0 {
		t.Errorf("empty filter result must be non-nil and empty, got %#v", m)
	}

	only, err := r.ConntrackMaps(MapCTAny)
	if err != nil || len(only) != 2 {
		t.Errorf("ConntrackMaps(any) = %d entries, %v", len(only), err)
	}
}

// ciliumDumpLine is Cilium v1.20.1's own formatting, copied from
// CtKey4Global.Dump (pkg/maps/ctmap/types.go L181-219, reverse=true as in
// DumpEntriesWithTimeDiff) and CtEntry.flagsString/StringWithTimeDiff
// (types.go L349-416), applied to the mirror structs. It is the reference
// the fast formatter in ct.go must match.
func ciliumDumpLine(k ciliumTupleKey4, c ciliumCtEntry) (string, bool) {
	ntohs := htons
	k.DestPort, k.SourcePort = ntohs(k.DestPort), ntohs(k.SourcePort) // ToHost
	if k.NextHeader == 0 {
		return "", false
	}
	addr := func(a [4]byte) string { return netip.AddrFrom4(a).String() }
	var sb strings.Builder
	addrSource, addrDest := addr(k.DestAddr), addr(k.SourceAddr)
	proto := bpfentries.ProtoName(k.NextHeader)
	if k.Flags&tupleFService != 0 {
		sb.WriteString(fmt.Sprintf("%s SVC %s:%d -> %s:%d ", proto, addr(k.SourceAddr), k.DestPort, addr(k.DestAddr), k.SourcePort))
	} else if k.Flags&tupleFIn != 0 {
		sb.WriteString(fmt.Sprintf("%s IN %s:%d -> %s:%d ", proto, addrSource, k.SourcePort, addrDest, k.DestPort))
	} else {
		sb.WriteString(fmt.Sprintf("%s OUT %s:%d -> %s:%d ", proto, addrSource, k.SourcePort, addrDest, k.DestPort))
	}
	if k.Flags&tupleFRelated != 0 {
		sb.WriteString("related ")
	}

	var fs strings.Builder
	fs.WriteString(fmt.Sprintf("Flags=%#04x [ ", c.Flags))
	for _, n := range []struct {
		bit  uint16
		name string
	}{{1, "RxClosing"}, {2, "TxClosing"}, {4, "Nat64"}, {8, "LBLoopback"}, {16, "SeenNonSyn"}, {32, "NodePort"},
		{64, "ProxyRedirect"}, {128, "DSRInternal"}, {256, "FromL7LB"}, {1024, "FromTunnel"}} {
		if c.Flags&n.bit != 0 {
			fs.WriteString(n.name + " ")
		}
	}
	unknownFlags := c.Flags
	unknownFlags &^= (1 << 11) - 1
	if unknownFlags != 0 {
		fs.WriteString(fmt.Sprintf("Unknown=%#04x ", unknownFlags))
	}
	fs.WriteString("]")

	sb.WriteString(fmt.Sprintf("expires=%d%s Packets=%d Bytes=%d RxFlagsSeen=%#02x LastRxReport=%d TxFlagsSeen=%#02x LastTxReport=%d %s RevNAT=%d SourceSecurityID=%d BackendID=%d NatPort=%d \n",
		c.Lifetime, "", c.Packets, c.Bytes, c.RxFlagsSeen, c.LastRxReport, c.TxFlagsSeen, c.LastTxReport,
		fs.String(), ntohs(c.RevNAT), c.SourceSecurityID, c.Union0[1], ntohs(c.NatPort)))
	return sb.String(), true
}

// TestCTLineMatchesCiliumFormat decodes random raw entries and compares
// the fast formatter with Cilium's fmt-based formatting, byte for byte.
func TestCTLineMatchesCiliumFormat(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	cache := newFlagNameCache()
	for i := 0; i < 20000; i++ {
		var k ciliumTupleKey4
		var v ciliumCtEntry
		rng.Read(k.DestAddr[:])
		rng.Read(k.SourceAddr[:])
		k.DestPort, k.SourcePort = uint16(rng.Uint32()), uint16(rng.Uint32())
		k.NextHeader = []uint8{0, 1, 6, 17, 58, 132, 250}[rng.Intn(7)]
		k.Flags = uint8(rng.Intn(8))
		v = ciliumCtEntry{Union0: [2]uint64{rng.Uint64(), rng.Uint64()}, Packets: rng.Uint64() >> uint(rng.Intn(64)),
			Bytes: rng.Uint64() >> uint(rng.Intn(64)), Lifetime: rng.Uint32(), Flags: uint16(rng.Uint32()),
			RevNAT: uint16(rng.Uint32()), NatPort: uint16(rng.Uint32()), TxFlagsSeen: uint8(rng.Uint32()),
			RxFlagsSeen: uint8(rng.Uint32()), SourceSecurityID: rng.Uint32(), LastTxReport: rng.Uint32(), LastRxReport: rng.Uint32()}
		if rng.Intn(3) == 0 {
			v.Flags &= 0xff // more small values, to exercise hex padding
			v.TxFlagsSeen &= 0xf
		}

		want, ok := ciliumDumpLine(k, v)
		var rk rawCTTuple4
		var rv rawCTEntry
		copy(rk[:], ciliumBytes(t, k))
		copy(rv[:], ciliumBytes(t, v))
		if !ok {
			continue
		}
		var e bpfentries.CTEntry
		decodeCT(&e, MapCTTCP, &rk, &rv, nil, cache)
		if e.Line+"\n" != want {
			t.Fatalf("line mismatch for %+v %+v:\n got %q\nwant %q", k, v, e.Line+"\n", want)
		}
		// The fields agree with the printed line.
		if !strings.HasPrefix(e.Line, e.Protocol+" "+e.Direction+" "+e.Src+" -> "+e.Dst+" ") {
			t.Fatalf("fields disagree with line: %q vs %s %s %s %s", e.Line, e.Protocol, e.Direction, e.Src, e.Dst)
		}
	}
}

// TestConntrackLargeDump checks that batch reads of a 200k-entry LRU map
// return every entry exactly once and reports the time taken.
func TestConntrackLargeDump(t *testing.T) {
	if testing.Short() {
		t.Skip("large map in -short mode")
	}
	root := privateBPFFS(t)
	fillCT(t, root, 200_000)
	r := openReader(t, root)
	start := time.Now()
	got, err := r.Conntrack()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("dumped %d CT entries in %v", len(got), time.Since(start))
	if len(got) != 200_000 {
		t.Fatalf("got %d entries, want 200000", len(got))
	}
	seen := make(map[string]struct{}, len(got))
	for _, e := range got {
		if _, dup := seen[e.Src]; dup {
			t.Fatalf("duplicate entry %s", e.Line)
		}
		seen[e.Src] = struct{}{}
	}
}

// fillCT creates both CT maps (with Cilium's default TCP size, 512Ki) and
// puts n distinct TCP entries into the TCP map with one BatchUpdate.
func fillCT(t testing.TB, root string, n int) {
	tcp := createPinned(t, root, MapCTTCP, specCT(2<<18))
	createPinned(t, root, MapCTAny, specCT(2<<17))
	keys := make([]rawCTTuple4, n)
	vals := make([]rawCTEntry, n)
	for i := 0; i < n; i++ {
		// Unique client 10.x.y.z:port per entry, to one VIP.
		k := ctKey(ip4(10, byte(i>>16), byte(i>>8), byte(i)), ip4(10, 43, 0, 5), 80, uint16(i), protoTCP, 0)
		v := ciliumCtEntry{Packets: uint64(i), Bytes: uint64(i) * 100, Lifetime: uint32(i), Flags: 0x10,
			TxFlagsSeen: 0x1b, RxFlagsSeen: 0x1a, SourceSecurityID: 12345, RevNAT: htons(2)}
		copy(keys[i][:], ciliumBytes(t, k))
		copy(vals[i][:], ciliumBytes(t, v))
	}
	if _, err := tcp.BatchUpdate(keys, vals, nil); err != nil {
		t.Fatalf("batch update: %v", err)
	}
}

func BenchmarkConntrackDump200k(b *testing.B) {
	root := privateBPFFS(b)
	fillCT(b, root, 200_000)
	r := openReader(b, root)
	b.ReportAllocs()
	cpu0 := processCPU()
	for b.Loop() {
		got, err := r.Conntrack()
		if err != nil {
			b.Fatal(err)
		}
		if len(got) != 200_000 {
			b.Fatalf("got %d entries", len(got))
		}
	}
	// CPU time (user+sys, all threads) per dump: unlike ns/op it does not
	// grow when other processes compete for the machine's cores.
	b.ReportMetric(float64((processCPU()-cpu0).Milliseconds())/float64(b.N), "cpu-ms/op")
}

func processCPU() time.Duration {
	var ru unix.Rusage
	_ = unix.Getrusage(unix.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkConntrackDump200kIterate measures the fallback path, for
// comparison with the batch path.
func BenchmarkConntrackDump200kIterate(b *testing.B) {
	root := privateBPFFS(b)
	fillCT(b, root, 200_000)
	r := openReader(b, root)
	r.mu.Lock()
	om, err := r.get(MapCTTCP)
	if err != nil {
		b.Fatal(err)
	}
	om.batch = false
	r.mu.Unlock()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := r.Conntrack(); err != nil {
			b.Fatal(err)
		}
	}
}
