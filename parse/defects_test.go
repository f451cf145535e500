package parse

import (
	"encoding/json"
	"strings"
	"testing"
)

// Tests on the exact lines of public output that earlier versions of these
// parsers read wrong without an error: each value a lab reads must come
// from the text, or the parse must fail naming the line and the reason.

// wantTruncated checks that err is a truncation error of kind at line.
func wantTruncated(t *testing.T, err error, kind string, line int, msg string) {
	t.Helper()
	wantError(t, err, kind, line, msg)
	var pe *Error
	if asError(err, &pe) && !pe.Truncated {
		t.Errorf("error %q is not marked Truncated", err)
	}
}

// A line cut after LastRxReport= printed no Flags, RevNAT or
// SourceSecurityID; RevNAT=0 on an OUT entry is what a lab reads as socket
// LB, so the line must be refused, not read with zeros.
func TestCTCutLineMissingFields(t *testing.T) {
	const cut = "TCP OUT 2a00:23c8:2425:b801:a91:15ff:fe2a:51c4:58786 -> fd85:ee78:d8a6:8607::1:fe5:8000 expires=26627216 Packets=0 Bytes=0 RxFlagsSeen=0x1b LastRxReport=2"
	_, err := ParseCTList(cut + "\n")
	wantError(t, err, kindCTList, 1, "incomplete entry: missing TxFlagsSeen=, LastTxReport=, Flags=, RevNAT=, SourceSecurityID=")
	// Without its newline it is the end of cut output.
	_, err = ParseCTList(cut)
	wantTruncated(t, err, kindCTList, 1, "truncated); 0 complete entries")
}

// A dump cut inside a token names the line and the complete entries before
// it instead of a generic syntax error.
func TestCTCutInsideToken(t *testing.T) {
	text := input(t, "real/cilium-dbg_bpf_ct_list_global.txt")
	full, err := ParseCTList(text)
	if err != nil {
		t.Fatal(err)
	}
	i := strings.Index(text, "RxFlagsSeen")
	lastNL := strings.LastIndexByte(text[:i], '\n')
	before := strings.Count(text[:lastNL+1], "\n")
	_, err = ParseCTList(text[:i+len("RxFla")])
	wantTruncated(t, err, kindCTList, before+1, "truncated); 0 complete entries")
	// Cut in the last line: every earlier entry is counted.
	j := strings.LastIndex(text, "RxFlagsSeen")
	_, err = ParseCTList(text[:j+len("RxFla")])
	wantTruncated(t, err, kindCTList, strings.Count(text[:j], "\n")+1, "truncated); "+itoa(len(full.Entries)-1)+" complete entries")
}

// Cilium <= 1.15 printed RxPackets/RxBytes/TxPackets/TxBytes instead of
// Packets/Bytes: packets and bytes are their sums, never a 0 nobody
// printed, and the fields of newer versions are null.
func TestCTSplitCounters(t *testing.T) {
	const line = "TCP OUT 10.0.0.1:40000 -> 10.0.0.2:80 expires=1000 RxPackets=3 RxBytes=300 RxFlagsSeen=0x1a LastRxReport=900 TxPackets=7 TxBytes=1400 TxFlagsSeen=0x1a LastTxReport=900 Flags=0x0010 [ SeenNonSyn ] RevNAT=4 SourceSecurityID=2 IfIndex=0 \n"
	l, err := ParseCTList(line)
	if err != nil {
		t.Fatal(err)
	}
	e := l.Entries[0]
	eq(t, "packets", e.Packets, int64(10))
	eq(t, "bytes", e.Bytes, int64(1700))
	b, _ := json.Marshal(e)
	for _, want := range []string{`"rxPackets":3`, `"txBytes":1400`, `"backendID":null`, `"natPort":null`, `"ifIndex":0`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("JSON %s lacks %s", b, want)
		}
	}
	_, err = ParseCTList(strings.Replace(line, "TxBytes=1400 ", "", 1))
	wantError(t, err, kindCTList, 1, "missing TxBytes=")
}

// A BackendID above 2^53 is printed exactly: a JSON string, since jq and
// JavaScript would round the number.
func TestCTBackendIDAbove2p53(t *testing.T) {
	const line = "TCP SVC 10.0.0.1:40000 -> 10.96.0.1:443 expires=1000 Packets=0 Bytes=0 RxFlagsSeen=0x00 LastRxReport=0 TxFlagsSeen=0x00 LastTxReport=0 Flags=0x0000 [ ] RevNAT=1 SourceSecurityID=0 BackendID=18446744073709551615 NatPort=0 \n"
	l, err := ParseCTList(line)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(l.Entries[0])
	if !strings.Contains(string(b), `"backendID":"18446744073709551615"`) {
		t.Errorf("JSON %s: backendID not an exact string", b)
	}
	small, _ := json.Marshal(ExactUint(1 << 53))
	eq(t, "2^53 as a number", string(small), "9007199254740992")
	big, _ := json.Marshal(ExactUint(1<<53 + 1))
	eq(t, "2^53+1 as a string", string(big), `"9007199254740993"`)
}
