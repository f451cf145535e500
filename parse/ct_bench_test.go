package parse

import (
	"fmt"
	"strings"
	"testing"
)

// ctLines200k builds 200k conntrack lines in Cilium 1.20's format, a mix of
// directions, protocols and flag sets like a busy node's table, with a blank
// line between the two maps as cilium-dbg prints them.
func ctLines200k() string {
	var b strings.Builder
	b.Grow(200_000 * 260)
	dirs := []string{"OUT", "IN", "SVC"}
	flags := []string{"Flags=0x0010 [ SeenNonSyn ]", "Flags=0x0013 [ RxClosing TxClosing SeenNonSyn ]", "Flags=0x0000 [ ]"}
	for i := 0; i < 200_000; i++ {
		if i == 150_000 {
			b.WriteString("\n")
		}
		proto := "TCP"
		if i >= 150_000 {
			proto = "UDP"
		}
		fmt.Fprintf(&b, "%s %s 10.42.%d.%d:%d -> 10.43.%d.%d:%d expires=%d Packets=%d Bytes=%d RxFlagsSeen=0x1a LastRxReport=%d TxFlagsSeen=0x1b LastTxReport=%d %s RevNAT=%d SourceSecurityID=%d BackendID=%d NatPort=0 \n",
			proto, dirs[i%3], (i>>8)&255, i&255, 1024+i%60000, (i>>4)&255, i&15, 80+i%3, 16000+i, i%100, i*13%100000, 15000+i, 15000+i, flags[i%3], i%40, 256+i%5000, i%9)
	}
	b.WriteString("\n")
	return b.String()
}

func BenchmarkCTList200k(b *testing.B) {
	text := ctLines200k()
	b.SetBytes(int64(len(text)))
	b.ResetTimer()
	for b.Loop() {
		l, err := ParseCTList(text)
		if err != nil {
			b.Fatal(err)
		}
		if len(l.Entries) != 200_000 {
			b.Fatalf("got %d entries", len(l.Entries))
		}
	}
}
