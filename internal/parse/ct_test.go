package parse

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/labrun/labrun/internal/parse/parsetest"
)

func TestCTListLab(t *testing.T) {
	l, err := ParseCTList(input(t, "synthetic/cilium-bpf-ct-list/v1.20.txt"))
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "entries", len(l.Entries), 13)
	// The lab's socket-LB flow: OUT and IN for holder:40404, no SVC.
	out := l.Find("OUT", "10.42.0.40:40404")
	if len(out) != 1 {
		t.Fatalf("OUT entries for holder: %d", len(out))
	}
	eq(t, "backend", out[0].Dst.String(), "10.42.0.32:8080")
	eq(t, "revnat", out[0].RevNAT, 0)
	eq(t, "flags", out[0].FlagNames, []string{"SeenNonSyn"})
	eq(t, "HasFlag", out[0].HasFlag("SeenNonSyn"), true)
	eq(t, "packets", out[0].Packets, int64(12))
	eq(t, "bytes", out[0].Bytes, int64(1733))
	eq(t, "rx flags seen hex", out[0].RxFlagsSeen, 0x1a)
	eq(t, "identity", out[0].SourceSecurityID, 30125)
	eq(t, "svc entries for :40404", l.Count("SVC", ":40404"), 0)
	eq(t, "all entries for :40404 (v4 and v6)", l.Count("", ":40404"), 3)
	eq(t, "IN entries", l.Count("in", "10.42.0.40:40404"), 1)

	// Per-packet LB: SVC prints client:cport -> vip:vport.
	svc := l.Find("SVC", "10.43.77.5:80")
	if len(svc) != 1 {
		t.Fatalf("SVC entries: %d", len(svc))
	}
	eq(t, "svc src", svc[0].Src, Addr{IP: "10.0.2.15", Port: 51812})
	eq(t, "svc revnat", svc[0].RevNAT, 7)
	eq(t, "svc backend id", *svc[0].BackendID, uint64(14))
	eq(t, "closing flags", svc[0].Flags, 0x13)
	eq(t, "closing names", svc[0].FlagNames, []string{"RxClosing", "TxClosing", "SeenNonSyn"})

	eq(t, "nat port", *l.Find("OUT", "10.0.2.15:6443")[0].NatPort, 33070)
	rel := l.Find("IN", "10.42.0.12:53")[0]
	eq(t, "related", rel.Related, true)
	eq(t, "unknown flag bit", rel.FlagNames, []string{"ProxyRedirect", "Unknown=0x0800"})
	eq(t, "no flag names", l.Find("OUT", "10.42.0.12:53")[0].FlagNames, []string{})
	v6 := l.Find("OUT", "[fd00:10:244::40]:40404")
	eq(t, "ipv6 (printed without brackets)", len(v6), 1)
	eq(t, "ipv6 dst", v6[0].Dst.String(), "[fd00:10:244::32]:8080")
	eq(t, "icmpv6", l.Find("", "fd00:10:244::1")[0].Protocol, "ICMPv6")
	eq(t, "no remaining without -d", out[0].HasRemaining, false)
	eq(t, "remaining not printed", out[0].Remaining, (*int64)(nil))
}

func TestCTListTimeDiff(t *testing.T) {
	l, err := ParseCTList(input(t, "synthetic/cilium-bpf-ct-list/v1.20-time-diff.txt"))
	if err != nil {
		t.Fatal(err)
	}
	e := l.Entries[0]
	eq(t, "expires", e.Expires, int64(37600))
	eq(t, "remaining", deref(e.Remaining), any(int64(21600)))
	eq(t, "has remaining", e.HasRemaining, true)
	eq(t, "packets still parsed after remaining", e.Packets, int64(12))
}

func TestCTListOlderFormats(t *testing.T) {
	text := strings.Join([]string{
		// v1.15: Rx/Tx counters and IfIndex, no BackendID/NatPort, "DSR" flag name.
		"TCP OUT 10.42.0.40:40404 -> 10.42.0.32:8080 expires=21850 RxPackets=6 RxBytes=811 RxFlagsSeen=0x1a LastRxReport=300 TxPackets=7 TxBytes=922 TxFlagsSeen=0x1a LastTxReport=300 Flags=0x0090 [ SeenNonSyn DSR ] RevNAT=7 SourceSecurityID=30125 IfIndex=4 ",
		// <= 1.11: "service" keyword.
		"TCP OUT 10.0.0.1:80 -> 10.0.0.2:1234 service expires=100 RxPackets=1 RxBytes=60 RxFlagsSeen=0x02 LastRxReport=0 TxPackets=1 TxBytes=60 TxFlagsSeen=0x02 LastTxReport=0 Flags=0x0000 [ ] RevNAT=1 SourceSecurityID=0 IfIndex=0 ",
		// A future field is kept, not rejected.
		"UDP IN 10.0.0.3:53 -> 10.0.0.4:999 expires=5 Packets=1 Bytes=2 RxFlagsSeen=0x00 LastRxReport=0 TxFlagsSeen=0x00 LastTxReport=0 Flags=0x0000 [ ] RevNAT=0 SourceSecurityID=0 BackendID=0 NatPort=0 NatAddr=10.9.9.9 ",
	}, "\n") + "\n"
	l, err := ParseCTList(text)
	if err != nil {
		t.Fatal(err)
	}
	e := l.Entries[0]
	eq(t, "rx packets", *e.RxPackets, int64(6))
	eq(t, "tx bytes", *e.TxBytes, int64(922))
	eq(t, "packets = rx + tx", e.Packets, int64(13))
	eq(t, "bytes = rx + tx", e.Bytes, int64(1733))
	eq(t, "ifindex", *e.IfIndex, 4)
	eq(t, "no NatPort before 1.20", e.NatPort, (*int)(nil))
	eq(t, "no split counters in 1.20", l.Entries[2].RxPackets, (*int64)(nil))
	eq(t, "dsr", e.FlagNames, []string{"SeenNonSyn", "DSR"})
	eq(t, "service keyword", l.Entries[1].Service, true)
	eq(t, "extra", l.Entries[2].Extra, map[string]string{"NatAddr": "10.9.9.9"})
}

func TestCTListWarningsAndBlankLines(t *testing.T) {
	text := "Unable to open /sys/fs/bpf/tc/globals/cilium_ct6_global: no such file or directory. Skipping.\n\n\n" +
		"TCP OUT 10.0.0.1:1 -> 10.0.0.2:2 expires=1 Packets=0 Bytes=0 RxFlagsSeen=0x00 LastRxReport=0 TxFlagsSeen=0x00 LastTxReport=0 Flags=0x0000 [ ] RevNAT=0 SourceSecurityID=0 BackendID=0 NatPort=0 \r\n\n"
	l, err := ParseCTList(text)
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "entries", len(l.Entries), 1)
	eq(t, "warnings", len(l.Warnings), 1)
	empty, err := ParseCTList("\n\n")
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "empty table", len(empty.Entries), 0)
}

func TestCTListErrors(t *testing.T) {
	good := "TCP OUT 10.0.0.1:1 -> 10.0.0.2:2 expires=1 Packets=0 Bytes=0 RxFlagsSeen=0x00 LastRxReport=0 TxFlagsSeen=0x00 LastTxReport=0 Flags=0x0000 [ ] RevNAT=0 SourceSecurityID=0 \n"
	rest := " Packets=0 Bytes=0 RxFlagsSeen=0x00 LastRxReport=0 TxFlagsSeen=0x00 LastTxReport=0 Flags=0x0000 [ ] RevNAT=0 SourceSecurityID=0 \n"
	cases := []struct {
		text string
		line int
		msg  string
	}{
		{good + good + "garbage here\n", 3, `expected "PROTO OUT|IN|SVC src -> dst`},
		{"TCP SIDEWAYS 10.0.0.1:1 -> 10.0.0.2:2 expires=1\n", 1, "OUT|IN|SVC"},
		{"TCP OUT 10.0.0.1 -> 10.0.0.2:2 expires=1\n", 1, "source"},
		{"TCP OUT 10.0.0.1:1 => 10.0.0.2:2 expires=1\n", 1, "OUT|IN|SVC"},
		{"TCP OUT 10.0.0.1:1 -> 999.0.0.2:2 expires=1\n", 1, "destination"},
		{"TCP OUT 10.0.0.1:1 -> 10.0.0.2:2" + rest, 1, `missing expires=`},
		{"TCP OUT 10.0.0.1:1 -> 10.0.0.2:2 expires=1 expires=2" + rest, 1, `expires= printed twice`},
		{"TCP OUT 10.0.0.1:1 -> 10.0.0.2:2 expires=soon\n", 1, "bad number in expires"},
		{"TCP OUT 10.0.0.1:1 -> 10.0.0.2:2 expires=1 Flags=0x0001 [ RxClosing\n", 1, "unterminated"},
		{"TCP OUT 10.0.0.1:1 -> 10.0.0.2:2 expires=1 (remaining: x sec(s))\n", 1, "remaining"},
		{"TCP OUT 10.0.0.1:1 -> 10.0.0.2:2 expires=1 what\n", 1, `unexpected "what"`},
	}
	for _, c := range cases {
		_, err := ParseCTList(c.text)
		wantError(t, err, kindCTList, c.line, c.msg)
	}
	_, err := ParseCTList(good + good + "garbage here\n")
	if got := err.Error(); got != `parse cilium-bpf-ct-list: line 3: expected "PROTO OUT|IN|SVC src -> dst [related] expires=N key=value...": "garbage here"` {
		t.Errorf("error text = %s", got)
	}
}

func TestScanCTListMatchesParse(t *testing.T) {
	text := input(t, "synthetic/cilium-bpf-ct-list/v1.20.txt")
	l, err := ParseCTList(text)
	if err != nil {
		t.Fatal(err)
	}
	var got []CTEntry
	if err := ScanCTList(strings.NewReader(text), func(e CTEntry) error { got = append(got, e); return nil }); err != nil {
		t.Fatal(err)
	}
	eq(t, "streamed entries", got, l.Entries)

	stop := errors.New("stop")
	n := 0
	err = ScanCTList(strings.NewReader(text), func(CTEntry) error { n++; return stop })
	if err != stop || n != 1 {
		t.Errorf("callback error not returned: %v after %d", err, n)
	}
	err = ScanCTList(strings.NewReader("\n\nbad line\n"), func(CTEntry) error { return nil })
	wantError(t, err, kindCTList, 3, "expected")

	// Cut mid-line: every complete entry is delivered, then truncation.
	n = 0
	err = ScanCTList(strings.NewReader(text[:len(text)-40]), func(CTEntry) error { n++; return nil })
	var pe *Error
	if !asError(err, &pe) || !pe.Truncated {
		t.Fatalf("cut input: %v, want a truncation error", err)
	}
	eq(t, "entries before the cut", n, len(l.Entries)-1)
}

// A table big enough to be parsed in chunks at once gives the same
// entries as one pass, with blank and warning lines in every chunk (each
// chunk counts its entries before parsing), and an error keeps its line
// number in the output.
func TestCTListChunks(t *testing.T) {
	lines := strings.Split(parsetest.CTLines(12000), "\n")
	warning := "Unable to open cilium_ct6_global: Unable to get object /sys/fs/bpf/tc/globals/cilium_ct6_global: no such file or directory. Skipping."
	for _, at := range []int{3, 500, 6001, 11990} {
		lines = slices.Insert(lines, at, "", warning, "  ")
	}
	text := strings.Join(lines, "\n")
	if chunks := ctChunks(text); len(chunks) < 2 || !strings.Contains(chunks[0], warning) || !strings.Contains(chunks[len(chunks)-1], warning) {
		t.Fatalf("%d bytes are not split with warnings in each chunk; the test needs other lines", len(text))
	}
	whole, err := parseCTLines(text, 0, make([]CTEntry, 0, strings.Count(text, "\n")+1))
	if err != nil {
		t.Fatal(err)
	}
	chunked, err := ParseCTList(text)
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "entries", len(chunked.Entries), 12000)
	eq(t, "warnings", len(chunked.Warnings), 4)
	if !reflect.DeepEqual(whole, chunked) {
		t.Error("chunked parse differs from one pass")
	}
	lines[11000] = "garbage here"
	_, err = ParseCTList(strings.Join(lines, "\n"))
	wantError(t, err, kindCTList, 11001, "expected")
}

// ctFastVariants are lines the one-pass reader must leave to the general
// one (or read the same way): other versions' keys, IPv6, keywords, odd
// spacing, numbers too long for it, and broken lines.
var ctFastVariants = []string{
	"TCP OUT 10.0.0.1:1 -> 10.0.0.2:2 expires=1 Packets=2 Bytes=3 RxFlagsSeen=0x1a LastRxReport=4 TxFlagsSeen=0x1B LastTxReport=5 Flags=0x0013 [ RxClosing TxClosing SeenNonSyn ] RevNAT=6 SourceSecurityID=7 BackendID=8 NatPort=9 ",
	"TCP OUT 10.0.0.1:1 -> 10.0.0.2:2 expires=1 Packets=2 Bytes=3 RxFlagsSeen=0x1a LastRxReport=4 TxFlagsSeen=0x1b LastTxReport=5 Flags=0x0000 [ ] RevNAT=6 SourceSecurityID=7",
	"UDP SVC 10.0.0.1:1 -> 10.0.0.2:2 expires=1 Packets=2 Bytes=3 RxFlagsSeen=0x1a LastRxReport=4 TxFlagsSeen=0x1b LastTxReport=5 Flags=0x0000 [ ] RevNAT=6 SourceSecurityID=7 NatPort=9",
	"TCP OUT 10.0.0.1:1 -> 10.0.0.2:2 expires=1 Packets=2 Bytes=3 RxFlagsSeen=0x1a LastRxReport=4 TxFlagsSeen=0x1b LastTxReport=5 Flags=0x0000 [ ] RevNAT=6 SourceSecurityID=7 BackendID=18446744073709551615 NatPort=9",
	"TCP OUT 10.0.0.1:1 -> 10.0.0.2:2 expires=1 Packets=2 Bytes=3 RxFlagsSeen=0x1a LastRxReport=4 TxFlagsSeen=0x1b LastTxReport=5 Flags=0x0000 [ ] RevNAT=6 SourceSecurityID=7 BackendID=8 NatPort=9 Future=1",
	"TCP OUT 10.0.0.1:1 -> 10.0.0.2:2 expires=1 Packets=2 Bytes=3 RxFlagsSeen=0x1a LastRxReport=4 TxFlagsSeen=0x1b LastTxReport=5 Flags=0x0000 [ ] RevNAT=6 SourceSecurityID=7 BackendID=8 BackendID=8",
	"TCP OUT 10.0.0.1:1 -> 10.0.0.2:2 expires=1 Packets=2 Bytes=3 RxFlagsSeen=0x1a LastRxReport=4 TxFlagsSeen=0x1b LastTxReport=5 Flags=0x0000 [ ]RevNAT=6 SourceSecurityID=7",
	"TCP OUT 10.0.0.1:1 -> 10.0.0.2:2 expires=1 Packets=2 Bytes=3 RxFlagsSeen=0x1a LastRxReport=4 TxFlagsSeen=0x1b LastTxReport=5 Flags=0x0000 RevNAT=6 SourceSecurityID=7",
	"TCP OUT 10.0.0.1:1 -> 10.0.0.2:2 expires=1 Packets=2 Bytes=3 RxFlagsSeen=0x1a LastRxReport=4 TxFlagsSeen=0x1b LastTxReport=5 Flags=0x0000 [ RxClosing RevNAT=6 SourceSecurityID=7",
	"TCP OUT 10.0.0.1:1 -> 10.0.0.2:2 expires=1  Packets=2 Bytes=3 RxFlagsSeen=0x1a LastRxReport=4 TxFlagsSeen=0x1b LastTxReport=5 Flags=0x0000 [ ] RevNAT=6 SourceSecurityID=7",
	"TCP OUT 10.0.0.1:1 -> 10.0.0.2:2 related expires=1 Packets=2 Bytes=3 RxFlagsSeen=0x1a LastRxReport=4 TxFlagsSeen=0x1b LastTxReport=5 Flags=0x0000 [ ] RevNAT=6 SourceSecurityID=7",
	"TCP OUT 10.0.0.1:1 -> 10.0.0.2:2 expires=1 (remaining: 5 sec(s)) Packets=2 Bytes=3 RxFlagsSeen=0x1a LastRxReport=4 TxFlagsSeen=0x1b LastTxReport=5 Flags=0x0000 [ ] RevNAT=6 SourceSecurityID=7",
	"TCP OUT 10.0.0.1:1 -> 10.0.0.2:2 expires=-1 Packets=2 Bytes=3 RxFlagsSeen=0x1a LastRxReport=4 TxFlagsSeen=0x1b LastTxReport=5 Flags=0x0000 [ ] RevNAT=6 SourceSecurityID=7",
	"TCP OUT 10.0.0.1:1 -> 10.0.0.2:2 expires=1234567890123456789 Packets=2 Bytes=3 RxFlagsSeen=0x1a LastRxReport=4 TxFlagsSeen=0x1b LastTxReport=5 Flags=0x0000 [ ] RevNAT=6 SourceSecurityID=7",
	"TCP OUT 10.0.0.1:1 -> 10.0.0.2:2 expires=1 Packets=2 Bytes=3 RxFlagsSeen=26 LastRxReport=4 TxFlagsSeen=0x1b LastTxReport=5 Flags=0x0000 [ ] RevNAT=6 SourceSecurityID=7",
	"TCP OUT 10.0.0.1:1 -> 10.0.0.2:2 expires=1 Packets=2 Bytes=3 RxFlagsSeen=0x123456789 LastRxReport=4 TxFlagsSeen=0x1b LastTxReport=5 Flags=0x0000 [ ] RevNAT=6 SourceSecurityID=7",
	"TCP OUT [fd00::1]:1 -> fd00::2:2 expires=1 Packets=2 Bytes=3 RxFlagsSeen=0x1a LastRxReport=4 TxFlagsSeen=0x1b LastTxReport=5 Flags=0x0000 [ ] RevNAT=6 SourceSecurityID=7",
	"TCP OUT 10.0.0.1:1 => 10.0.0.2:2 expires=1 Packets=2 Bytes=3 RxFlagsSeen=0x1a LastRxReport=4 TxFlagsSeen=0x1b LastTxReport=5 Flags=0x0000 [ ] RevNAT=6 SourceSecurityID=7",
	"TCP SIDEWAYS 10.0.0.1:1 -> 10.0.0.2:2 expires=1 Packets=2 Bytes=3 RxFlagsSeen=0x1a LastRxReport=4 TxFlagsSeen=0x1b LastTxReport=5 Flags=0x0000 [ ] RevNAT=6 SourceSecurityID=7",
	"TCP OUT 10.0.0.1:1 -> 10.0.0.2:2 expires=1 Packets=2 Bytes=3",
	"tcp OUT 10.0.0.1:1 -> 10.0.0.2:2",
	"",
}

// ctFastAgrees checks that where the one-pass reader accepts a line, the
// general one reads the same entry from it; it reports whether the
// one-pass reader accepted.
func ctFastAgrees(t *testing.T, line string) bool {
	t.Helper()
	var fp, gp ctParser
	var fast, general CTEntry
	if !fp.fast(line, &fast) {
		return false
	}
	if err := gp.general(line, &general); err != nil {
		t.Fatalf("one pass read %q, the general reader refuses it: %v", line, err)
	}
	if !reflect.DeepEqual(fast, general) {
		t.Fatalf("%q: one pass read %+v, the general reader %+v", line, fast, general)
	}
	return true
}

// The one-pass reader takes the lines of Cilium 1.16 and later and leaves
// every other layout to the general reader; where it reads a line, both
// agree (FuzzCTFast checks arbitrary lines).
func TestCTFast(t *testing.T) {
	accepted := map[string]int{}
	for _, rel := range []string{"real/cilium-dbg_bpf_ct_list_global.txt", "synthetic/cilium-bpf-ct-list/v1.20.txt", "synthetic/cilium-bpf-ct-list/v1.20-time-diff.txt", "synthetic/cilium-bpf-ct-list/v1.15.txt"} {
		for _, line := range strings.Split(input(t, rel), "\n") {
			if ctFastAgrees(t, line) {
				accepted[rel]++
			}
		}
	}
	if accepted["real/cilium-dbg_bpf_ct_list_global.txt"] == 0 || accepted["synthetic/cilium-bpf-ct-list/v1.20.txt"] == 0 {
		t.Errorf("the one-pass reader took no line of Cilium 1.20's captures: %v", accepted)
	}
	if accepted["synthetic/cilium-bpf-ct-list/v1.15.txt"] != 0 {
		t.Errorf("the one-pass reader took %d lines of 1.15's split counters", accepted["synthetic/cilium-bpf-ct-list/v1.15.txt"])
	}
	var took []int
	for i, line := range ctFastVariants {
		if ctFastAgrees(t, line) {
			took = append(took, i)
		}
	}
	if !slices.Equal(took, []int{0, 1, 2}) {
		t.Errorf("the one-pass reader took variants %v, want [0 1 2]", took)
	}
}
