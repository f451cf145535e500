package parse

import (
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
