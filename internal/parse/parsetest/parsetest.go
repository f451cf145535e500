// Package parsetest makes large synthetic tool output for benchmarks of
// the parsers and of the tools they are measured against, and holds the
// checks that a parser's result holds only what its input printed
// (Invented for JSON, Unprinted for text), which the unit and e2e tests
// share. It is test code, kept out of package parse so the parsers carry
// none of it.
package parsetest

import (
	"fmt"
	"strings"
)

// CTLines returns n lines of `cilium-dbg bpf ct list global` in Cilium
// 1.20's format: a mix of directions, protocols and flag sets like a busy
// node's table, TCP entries first, then a blank line and the non-TCP map,
// as cilium-dbg prints the two maps.
func CTLines(n int) string {
	var b strings.Builder
	b.Grow(n * 260)
	dirs := []string{"OUT", "IN", "SVC"}
	flags := []string{"Flags=0x0010 [ SeenNonSyn ]", "Flags=0x0013 [ RxClosing TxClosing SeenNonSyn ]", "Flags=0x0000 [ ]"}
	udpFrom := n * 3 / 4
	for i := 0; i < n; i++ {
		if i == udpFrom {
			b.WriteString("\n")
		}
		proto := "TCP"
		if i >= udpFrom {
			proto = "UDP"
		}
		fmt.Fprintf(&b, "%s %s 10.42.%d.%d:%d -> 10.43.%d.%d:%d expires=%d Packets=%d Bytes=%d RxFlagsSeen=0x1a LastRxReport=%d TxFlagsSeen=0x1b LastTxReport=%d %s RevNAT=%d SourceSecurityID=%d BackendID=%d NatPort=0 \n",
			proto, dirs[i%3], (i>>8)&255, i&255, 1024+i%60000, (i>>4)&255, i&15, 80+i%3, 16000+i, i%100, i*13%100000, 15000+i, 15000+i, flags[i%3], i%40, 256+i%5000, i%9)
	}
	b.WriteString("\n")
	return b.String()
}

// ServiceLines returns n lines of `cilium-dbg service list` (n/2 ClusterIP
// services with two backends each, the second on a line of its own), with
// the header.
func ServiceLines(n int) string {
	var b strings.Builder
	b.Grow(n * 100)
	b.WriteString("ID       Frontend                Service Type   Backend                            \n")
	for i := 0; i < n/2; i++ {
		fe := fmt.Sprintf("10.%d.%d.%d:80/TCP", 96+i>>16, (i>>8)&255, i&255)
		fmt.Fprintf(&b, "%-8d %-23s ClusterIP      1 => 10.42.%d.%d:8080/TCP (active)   \n", i+1, fe, (i>>8)&255, i&255)
		b.WriteString(strings.Repeat(" ", 48) + "2 => 10.42.1.1:8080/TCP (active)\n")
	}
	return b.String()
}
