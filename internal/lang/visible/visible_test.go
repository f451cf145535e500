package visible

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestTextAndLine(t *testing.T) {
	tests := []struct {
		name, in, text, line string
	}{
		{"plain text stays", "hello, wörld 世界 ✓", "hello, wörld 世界 ✓", "hello, wörld 世界 ✓"},
		{"empty", "", "", ""},
		{"clear screen", "a\x1b[2Jb", `a\u001b[2Jb`, `a\u001b[2Jb`},
		{"OSC window title ended by BEL", "\x1b]0;pwned\x07x", `\u001b]0;pwned\u0007x`, `\u001b]0;pwned\u0007x`},
		{"OSC ended by ST", "\x1b]8;;http://x\x1b\\", `\u001b]8;;http://x\u001b\`, `\u001b]8;;http://x\u001b\`},
		{"newline and tab kept in text, escaped in a line", "a\nb\tc", "a\nb\tc", `a\nb\tc`},
		{"carriage return always", "PASS\rFAIL", `PASS\rFAIL`, `PASS\rFAIL`},
		{"NUL, backspace, vertical tab, form feed", "\x00\b\v\f", `\u0000\u0008\u000b\u000c`, `\u0000\u0008\u000b\u000c`},
		{"DEL", "a\x7fb", `a\u007fb`, `a\u007fb`},
		{"C1: CSI, NEL, OSC, ST, APC", "\u009b2J\u0085\u009d\u009c\u009f", `\u009b2J\u0085\u009d\u009c\u009f`, `\u009b2J\u0085\u009d\u009c\u009f`},
		{"first and last C1", "\u0080\u009f", `\u0080\u009f`, `\u0080\u009f`},
		{"right-to-left override", "txt.\u202egpj", `txt.\u202egpj`, `txt.\u202egpj`},
		{"every embedding and override", "\u202a\u202b\u202c\u202d\u202e", `\u202a\u202b\u202c\u202d\u202e`, `\u202a\u202b\u202c\u202d\u202e`},
		{"every isolate", "\u2066\u2067\u2068\u2069", `\u2066\u2067\u2068\u2069`, `\u2066\u2067\u2068\u2069`},
		{"direction marks", "\u200e\u200f\u061c", `\u200e\u200f\u061c`, `\u200e\u200f\u061c`},
		{"neighbours of the ranges stay", "\u00a0\u2029\u202f\u2065\u206a\u200d\u061b", "\u00a0\u2029\u202f\u2065\u206a\u200d\u061b", "\u00a0\u2029\u202f\u2065\u206a\u200d\u061b"},
		{"invalid UTF-8 bytes", "a\x9bb\xffc\xe2\x80", `a\x9bb\xffc\xe2\x80`, `a\x9bb\xffc\xe2\x80`},
		{"backslashes stay as written", `C:\dir \u001b`, `C:\dir \u001b`, `C:\dir \u001b`},
		{"a mix", "n\x1b[31m\u202e\n\u009b", "n\\u001b[31m\\u202e\n\\u009b", `n\u001b[31m\u202e\n\u009b`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Text(tt.in); got != tt.text {
				t.Errorf("Text(%q) = %q, want %q", tt.in, got, tt.text)
			}
			if got := Line(tt.in); got != tt.line {
				t.Errorf("Line(%q) = %q, want %q", tt.in, got, tt.line)
			}
			if got := string(Bytes([]byte(tt.in))); got != tt.text {
				t.Errorf("Bytes(%q) = %q, want %q", tt.in, got, tt.text)
			}
		})
	}
}

// The escapes are JSON's: a control character prints as encoding/json
// writes it (but backspace and form feed, which it writes \b and \f).
func TestSameAsJSON(t *testing.T) {
	for r := rune(0); r <= 0x7f; r++ {
		if !Escaped(r) && r != '\n' && r != '\t' || r == '\b' || r == '\f' {
			continue
		}
		b, err := json.Marshal(string(r))
		if err != nil {
			t.Fatal(err)
		}
		if want := string(b[1 : len(b)-1]); Line(string(r)) != want && r != 0x7f {
			t.Errorf("Line(%U) = %s, encoding/json writes %s", r, Line(string(r)), want)
		}
	}
}

// Every string, random or made of the characters around each range: no
// escaped character and no invalid byte is left, a Line holds no newline
// or tab, escaping twice changes nothing, and a string without quotes
// or backslashes reads back from its Line as a Go string literal (no
// character is lost or changed).
func TestEscapeProperties(t *testing.T) {
	edges := []rune{0, 1, '\t', '\n', '\r', 0x1b, 0x1f, ' ', '~', 0x7f, 0x80, 0x85, 0x9b, 0x9f, 0xa0, 0xff,
		0x061b, 0x061c, 0x061d, 0x200d, 0x200e, 0x200f, 0x2010, 0x2028, 0x2029, 0x202a, 0x202e, 0x202f,
		0x2065, 0x2066, 0x2069, 0x206a, 0xfeff, 0xfffd, 0x1f600, 'a', 'é', '世'}
	rng := rand.New(rand.NewPCG(1, 2))
	var inputs []string
	for range 5000 {
		var b []byte
		for range rng.IntN(12) {
			switch rng.IntN(4) {
			case 0:
				b = append(b, byte(rng.IntN(256))) // any byte, invalid UTF-8 included
			case 1:
				b = utf8.AppendRune(b, rune(rng.IntN(0x3000)))
			default:
				b = utf8.AppendRune(b, edges[rng.IntN(len(edges))])
			}
		}
		inputs = append(inputs, string(b))
	}
	for _, in := range inputs {
		text, line := Text(in), Line(in)
		for name, out := range map[string]string{"Text": text, "Line": line} {
			if !utf8.ValidString(out) {
				t.Fatalf("%s(%q) = %q: not UTF-8", name, in, out)
			}
			for _, r := range out {
				if Escaped(r) {
					t.Fatalf("%s(%q) = %q: holds %U", name, in, out, r)
				}
			}
			if again := escape(out, name == "Line"); again != out {
				t.Fatalf("%s is not idempotent on %q: %q, then %q", name, in, out, again)
			}
		}
		if strings.ContainsAny(line, "\n\t") {
			t.Fatalf("Line(%q) = %q: holds a newline or tab", in, line)
		}
		if !bytes.Equal(Bytes([]byte(in)), []byte(text)) {
			t.Fatalf("Bytes(%q) differs from Text", in)
		}
		if !strings.ContainsAny(in, `"\`) {
			back, err := strconv.Unquote(`"` + line + `"`)
			if err != nil || back != in {
				t.Fatalf("Line(%q) = %q reads back as %q (%v)", in, line, back, err)
			}
		}
	}
}

// Escaped is true exactly for the characters listed in its comment.
func TestEscapedRunes(t *testing.T) {
	want := func(r rune) bool {
		return r < 0x20 && r != '\n' && r != '\t' || r >= 0x7f && r <= 0x9f ||
			r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069 || r == 0x200e || r == 0x200f || r == 0x061c
	}
	for r := rune(0); r <= utf8.MaxRune; r++ {
		if Escaped(r) != want(r) {
			t.Errorf("Escaped(%U) = %v", r, Escaped(r))
		}
	}
}

func TestWriter(t *testing.T) {
	var b bytes.Buffer
	w := Writer(&b)
	n, err := w.Write([]byte("file.yaml:1:7: \x1b[2J\u202e\n"))
	if err != nil || n != len("file.yaml:1:7: \x1b[2J\u202e\n") {
		t.Fatalf("Write = %d, %v", n, err)
	}
	if got, want := b.String(), "file.yaml:1:7: \\u001b[2J\\u202e\n"; got != want {
		t.Errorf("wrote %q, want %q", got, want)
	}
}

func FuzzLine(f *testing.F) {
	for _, s := range []string{"", "a\x1b[2J", "\u202e\u2066", "\x9b\xff", "a\nb\tc\r"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		line := Line(in)
		for _, r := range line {
			if Escaped(r) || r == '\n' || r == '\t' {
				t.Fatalf("Line(%q) = %q holds %U", in, line, r)
			}
		}
		if !utf8.ValidString(line) || Line(line) != line {
			t.Fatalf("Line(%q) = %q: not UTF-8 or not idempotent", in, line)
		}
	})
}
