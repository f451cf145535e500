package parse

import (
	"testing"

	"github.com/labrun/labrun/internal/parse/parsetest"
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
	text := parsetest.ServiceLines(200_000)
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
