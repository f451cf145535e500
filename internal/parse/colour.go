package parse

import "strings"

// plainText returns text without the colour codes a terminal shows as
// colour: SGR sequences (ESC [ params m) and the erase-to-end-of-line
// ESC [ K that grep --color=always writes after each of them. They carry
// no printed character, so taking them off gives back exactly the text the
// tool printed (grep colours what it matched inside a value: left in,
// "True" would read as "\x1b[01;31m\x1b[KTrue\x1b[m\x1b[K"). Any other
// escape sequence (cursor movement, a title, a cut-off code) changes what a
// terminal shows and is refused, naming its line. Text without ESC is
// returned as it is, not copied.
func plainText(kind, text string) (string, error) {
	i := strings.IndexByte(text, esc)
	if i < 0 {
		return text, nil
	}
	var b strings.Builder
	b.Grow(len(text))
	for i >= 0 {
		b.WriteString(text[:i])
		n := colourCodeLen(text[i:])
		if n == 0 {
			return "", escapeError(kind, b.String(), text[i:])
		}
		text = text[i+n:]
		i = strings.IndexByte(text, esc)
	}
	b.WriteString(text)
	return b.String(), nil
}

const esc = '\x1b'

// colourCodeLen is the length of the SGR or erase-in-line sequence that s
// starts with, 0 when s starts with another escape sequence.
func colourCodeLen(s string) int {
	if len(s) < 3 || s[1] != '[' {
		return 0
	}
	for i := 2; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9' || c == ';' || c == ':':
		case c == 'm' || c == 'K':
			return i + 1
		default:
			return 0
		}
	}
	return 0
}

// escapeError refuses an escape sequence that is not a colour code. done
// is the text before it with colour codes taken off, rest the text from
// it on; the error names its line.
func escapeError(kind, done, rest string) *Error {
	start := strings.LastIndexByte(done, '\n') + 1
	end := strings.IndexByte(rest, '\n')
	if end < 0 {
		end = len(rest)
	}
	return newError(kind, 1+strings.Count(done, "\n"), done[start:]+rest[:end],
		"terminal escape sequence in input that is not a colour code (colour codes, ESC[...m and ESC[K, are taken off; capture the command's output without a terminal)")
}
