package parse

import (
	"fmt"
	"strings"
	"testing"

	"github.com/labrun/labrun/parse/parsetest"
)

// ctLines200k is the benchmark input: 200k conntrack lines.
func ctLines200k() string { return parsetest.CTLines(200_000) }

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

// BenchmarkCTList200kQuery is the bench row's work: parse, then count the
// SVC entries of port 40404.
func BenchmarkCTList200kQuery(b *testing.B) {
	text := ctLines200k()
	b.SetBytes(int64(len(text)))
	b.ResetTimer()
	for b.Loop() {
		l, err := ParseCTList(text)
		if err != nil {
			b.Fatal(err)
		}
		_ = l.Count("SVC", ":40404")
	}
}

// BenchmarkServiceList200k parses a 200k-line service table: 100k
// services with two backends each.
func BenchmarkServiceList200k(b *testing.B) {
	var sb strings.Builder
	sb.WriteString("ID       Frontend                Service Type   Backend                            \n")
	for i := 0; i < 100_000; i++ {
		fe := fmt.Sprintf("10.%d.%d.%d:80/TCP", 96+i>>16, (i>>8)&255, i&255)
		fmt.Fprintf(&sb, "%-8d %-23s ClusterIP      1 => 10.42.%d.%d:8080/TCP (active)   \n", i+1, fe, (i>>8)&255, i&255)
		sb.WriteString(strings.Repeat(" ", 48) + "2 => 10.42.1.1:8080/TCP (active)\n")
	}
	text := sb.String()
	if _, err := ParseServiceList(text); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(text)))
	b.ResetTimer()
	for b.Loop() {
		if _, err := ParseServiceList(text); err != nil {
			b.Fatal(err)
		}
	}
}
