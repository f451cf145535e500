package parse

import (
	"strings"
	"unicode/utf8"
)

// lineReader walks text line by line without copying: every line is a
// substring of the input, so parsers that keep fields (IP strings, names)
// keep slices of the one input string instead of allocating per field.
type lineReader struct {
	text string
	pos  int
	num  int // 1-based number of the line last returned
}

func newLineReader(text string) *lineReader { return &lineReader{text: text} }

// next returns the next line without its "\n" or "\r\n".
func (r *lineReader) next() (string, bool) {
	if r.pos >= len(r.text) {
		return "", false
	}
	rest := r.text[r.pos:]
	line := rest
	if i := strings.IndexByte(rest, '\n'); i >= 0 {
		line = rest[:i]
		r.pos += i + 1
	} else {
		r.pos = len(r.text)
	}
	r.num++
	return strings.TrimSuffix(line, "\r"), true
}

// collapseSpace trims s and replaces every run of whitespace with one space.
// Tables printed through text/tabwriter pad cells to the widest cell of the
// column, so the number of spaces inside a value depends on the other lines
// of the output; collapsing makes values comparable across runs.
func collapseSpace(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// isBlank reports whether a line has only whitespace.
func isBlank(s string) bool { return strings.TrimSpace(s) == "" }

// table reads the aligned tables that Cilium prints with text/tabwriter
// (service list, endpoint list, map list). tabwriter pads every cell of a
// column to the same width, so each column starts at the same position on
// every line, the header included. Cells may be empty (service list prints an
// empty Backend column for a service without backends) or contain single
// spaces ("Service Type", "NodePort (Remote)"), so splitting data lines on
// whitespace would shift columns; cutting at the header's positions does not.
type table struct {
	starts []int // rune offset where each column starts
}

// newTable finds the titles in header, in order. It fails when a title is
// missing, which is how a parser notices it was given another command's
// output.
func newTable(header string, titles []string) (table, bool) {
	h := []rune(header)
	var t table
	from := 0
	for _, title := range titles {
		i := indexRunes(h[from:], []rune(title))
		if i < 0 {
			return table{}, false
		}
		pos := from + i
		// A title starts a column: at the line start or after a space.
		if pos > 0 && h[pos-1] != ' ' {
			return table{}, false
		}
		t.starts = append(t.starts, pos)
		from = pos + utf8.RuneCountInString(title)
	}
	return t, true
}

func indexRunes(s, sub []rune) int {
	for i := 0; i+len(sub) <= len(s); i++ {
		match := true
		for j := range sub {
			if s[i+j] != sub[j] {
				match = false
				break
			}
		}
		if match {
			return i
		}
	}
	return -1
}

// cells cuts line at the column starts and trims each cell. ok is false
// when the line is not aligned with the header, i.e. when a column start
// falls inside a word, which means the line belongs to something else.
// Column starts count runes; the cells are substrings of line, cut at the
// byte offsets of those runes (the same offsets in an ASCII line).
func (t table) cells(line string) ([]string, bool) {
	return t.cellsInto(make([]string, len(t.starts)), line)
}

// cellsInto is cells writing into cells, which has one element per column,
// so that a loop over a table's lines cuts them all into one slice.
func (t table) cellsInto(cells []string, line string) ([]string, bool) {
	clear(cells)
	line = strings.TrimRight(line, " \t")
	var offsets []int // byte offset of each rune, then len(line); nil for ASCII
	for i := 0; i < len(line); i++ {
		if line[i] >= utf8.RuneSelf {
			for j := range line {
				offsets = append(offsets, j)
			}
			offsets = append(offsets, len(line))
			break
		}
	}
	runes := len(line)
	at := func(n int) int { return n }
	if offsets != nil {
		runes = len(offsets) - 1
		at = func(n int) int { return offsets[n] }
	}
	for i, start := range t.starts {
		if start > runes {
			break
		}
		if start > 0 && start < runes && line[at(start)-1] != ' ' && line[at(start)] != ' ' {
			return nil, false
		}
		end := runes
		if i+1 < len(t.starts) && t.starts[i+1] < end {
			end = t.starts[i+1]
		}
		cells[i] = strings.TrimSpace(line[at(start):at(end)])
	}
	return cells, true
}

// cutField cuts s at its first run of spaces or tabs: the first word and
// the rest, trimmed. Tools pad with spaces, but output pasted from docs or
// a terminal may hold tabs, so no parser splits on one space.
func cutField(s string) (first, rest string) {
	s = strings.TrimLeft(s, " \t")
	i := strings.IndexAny(s, " \t")
	if i < 0 {
		return s, ""
	}
	return s[:i], strings.TrimLeft(s[i:], " \t")
}

// shortToken cuts a token quoted in an error message to 40 bytes, so that
// a garbled line does not flood the message.
func shortToken(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}

// orNull is s, or null when s is empty: a table cell or a value that was
// not printed.
func orNull(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
