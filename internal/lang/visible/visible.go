// Package visible writes the characters a terminal or a text viewer would
// act on, instead of showing, as escapes a person can read: `\u001b` for
// ESC, `\u202e` for a right-to-left override. Everything labrun prints
// that came from a playbook, a vars file, a cluster or a learner goes
// through it, so a name holding ESC[2J cannot clear the screen, an OSC
// sequence cannot retitle the window and a bidi override cannot show a
// line other than it reads. The escapes are JSON's: the same value
// prints the same way in a message, in the console and in a JSON report,
// and applied to JSON text they keep it valid and equal in meaning.
package visible

import (
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Escaped reports whether r is escaped by Text: a C0 control character
// but newline and tab, DEL, a C1 control character, or a character that
// changes the direction of the text around it (the bidi embeddings,
// overrides and isolates U+202A-U+202E and U+2066-U+2069, the marks
// U+200E, U+200F and U+061C).
func Escaped(r rune) bool {
	switch {
	case r == '\n' || r == '\t':
		return false
	case r < 0x20, r >= 0x7f && r <= 0x9f:
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	}
	return r == 0x200e || r == 0x200f || r == 0x061c
}

// Text returns s with every character Escaped reports written as an
// escape: \r, and \u followed by four hex digits (\u001b, \u009b,
// \u202e); a byte that is not UTF-8 as \x and two hex digits. Newlines
// and tabs stay: Text is for a multi-line message or block. s comes back
// as it is when it holds nothing to escape.
func Text(s string) string { return escape(s, false) }

// Line is Text that also escapes newline and tab (as \n and \t): for a
// value printed inside one line or one column (a name, a title, a table
// cell), which a newline would break in two, letting the value forge the
// line after it.
func Line(s string) string { return escape(s, true) }

// Bytes is Text of b, b itself when it holds nothing to escape: for a
// rendered document (a report) that may be megabytes long.
func Bytes(b []byte) []byte {
	s := string(b)
	if first(s, false) < 0 {
		return b
	}
	return []byte(escape(s, false))
}

// first is the index of the first byte of s to escape, -1 for none.
func first(s string, line bool) int {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c < 0x20 && (line || c != '\n' && c != '\t') || c == 0x7f {
				return i
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || Escaped(r) {
			return i
		}
		i += size
	}
	return -1
}

func escape(s string, line bool) string {
	i := first(s, line)
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	b.WriteString(s[:i])
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b.WriteString(`\x`)
			b.WriteString(hex2(s[i]))
		case r == '\n' && line:
			b.WriteString(`\n`)
		case r == '\t' && line:
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case Escaped(r):
			b.WriteString(`\u`)
			h := strconv.FormatInt(int64(r), 16)
			b.WriteString(strings.Repeat("0", 4-len(h)))
			b.WriteString(h)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

func hex2(c byte) string {
	const digits = "0123456789abcdef"
	return string([]byte{digits[c>>4], digits[c&0xf]})
}

// Writer returns a writer that writes Text of each write to w: for a
// stream of messages (labrun's stderr), where no write is meant to
// control the terminal. Each write is escaped on its own, so a character
// split between two writes shows as the \x escapes of its bytes; labrun
// writes whole lines.
func Writer(w io.Writer) io.Writer { return writer{w} }

type writer struct{ w io.Writer }

func (w writer) Write(p []byte) (int, error) {
	if _, err := w.w.Write(Bytes(p)); err != nil {
		return 0, err
	}
	return len(p), nil
}
