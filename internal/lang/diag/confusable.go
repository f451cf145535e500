package diag

import (
	"fmt"
	"unicode/utf8"

	"golang.org/x/text/unicode/runenames"
)

// NonASCII finds the first character outside ASCII in s, an identifier
// that should be plain ASCII, and describes it by code point and name with
// its column in s (1-based, in characters): a Cyrillic е in stеps prints
// exactly like a Latin e, so a message that only quoted the name would
// show no difference at all.
func NonASCII(s string) (desc string, col int, found bool) {
	col = 0
	for _, r := range s {
		col++
		if r >= utf8.RuneSelf {
			return RuneName(r), col, true
		}
	}
	return "", 0, false
}

// RuneName is a character's code point and Unicode name: U+0435 CYRILLIC
// SMALL LETTER IE.
func RuneName(r rune) string {
	if name := runenames.Name(r); name != "" {
		return fmt.Sprintf("U+%04X %s", r, name)
	}
	return fmt.Sprintf("U+%04X", r)
}
