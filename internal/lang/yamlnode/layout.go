package yamlnode

import (
	"bytes"
	"strings"
	"unicode/utf8"
)

// The layout of the lines above a syntax error, as the messages of
// SyntaxError describe it: the columns where each line's nodes start
// (its key, or its "- " and what follows), skipping blank lines,
// comments and the text of block scalars.

// source is the text of a file a syntax error is in.
type source struct {
	data   []byte
	starts []int // the offset of each line
}

func newSource(data []byte) source {
	starts := []int{0}
	for i, b := range data {
		if b == '\n' {
			starts = append(starts, i+1)
		}
	}
	return source{data: data, starts: starts}
}

// runeAt is the character at offset off, or 0 past the end.
func (s source) runeAt(off int) rune {
	if off < 0 || off >= len(s.data) {
		return 0
	}
	r, _ := utf8.DecodeRune(s.data[off:])
	return r
}

// startOf is the offset of the line that holds offset off.
func (s source) startOf(off int) int {
	off = min(max(off, 0), len(s.data))
	return bytes.LastIndexByte(s.data[:off], '\n') + 1
}

// lineOf is the line that holds offset off, without its line break.
func (s source) lineOf(off int) []byte {
	start := s.startOf(off)
	end := bytes.IndexByte(s.data[start:], '\n')
	if end < 0 {
		return bytes.TrimRight(s.data[start:], "\r")
	}
	return bytes.TrimRight(s.data[start:start+end], "\r")
}

// byteCol is offset off less the start of its line, at most the length
// of the line without its line break.
func (s source) byteCol(off int) int {
	return min(max(off-s.startOf(off), 0), len(s.lineOf(off)))
}

// lineIndex is the index (from 0) of the line that holds offset off.
func (s source) lineIndex(off int) int {
	off = min(max(off, 0), len(s.data))
	return bytes.Count(s.data[:off], []byte{'\n'})
}

// line is the line of index k, without its line break.
func (s source) line(k int) []byte {
	if k < 0 || k >= len(s.starts) {
		return nil
	}
	return s.lineOf(s.starts[k])
}

// word is the text at offset off a message names: a bracket or other
// punctuation alone, else the run of characters up to a space.
func (s source) word(off int) string {
	line := s.lineOf(off)
	i := s.byteCol(off)
	if i >= len(line) {
		return "end of the file"
	}
	if strings.ContainsRune("[]{},:", rune(line[i])) {
		return string(line[i])
	}
	j := i
	for j < len(line) && line[j] != ' ' && !strings.ContainsRune("[]{},", rune(line[j])) {
		j++
	}
	if j == i {
		_, size := utf8.DecodeRune(line[i:])
		j = i + size
	}
	return short(string(line[i:j]))
}

// wordStart is the offset of the start of the word that holds offset
// off: after the space, bracket or comma before it.
func (s source) wordStart(off int) int {
	start := s.startOf(off)
	for off > start && !strings.ContainsRune(" [{,", rune(s.data[off-1])) {
		off--
	}
	return off
}

// blockHeader reports whether offset off is in the header of a block
// scalar (after "|" or ">" and its indicators), and gives off.
func (s source) blockHeader(off int) (int, bool) {
	before := strings.TrimRight(string(s.data[s.startOf(off):off]), "+-0123456789")
	return off, strings.HasSuffix(before, "|") || strings.HasSuffix(before, ">")
}

// levels are the columns (from 0, in characters) where the nodes of line
// k start: its indentation, and after each "- " the next node. Nil for a
// blank line or a comment.
func (s source) levels(k int) []int {
	text := []rune(string(s.line(k)))
	i := 0
	for i < len(text) && text[i] == ' ' {
		i++
	}
	if i == len(text) || text[i] == '#' {
		return nil
	}
	levels := []int{i}
	for i < len(text) && text[i] == '-' && (i+1 == len(text) || text[i+1] == ' ') {
		i++
		for i < len(text) && text[i] == ' ' {
			i++
		}
		if i == len(text) || text[i] == '#' {
			break
		}
		levels = append(levels, i)
	}
	return levels
}

// structural lists, nearest first, the lines above line k that hold
// nodes: not blank, not comments, not the text of a block scalar.
func (s source) structural(k int) []int {
	var lines []int
	block := -1 // the level a block scalar's text is indented beyond, or -1
	for i := 0; i < k; i++ {
		lv := s.levels(i)
		if len(lv) == 0 {
			continue
		}
		if block >= 0 && lv[0] > block {
			continue
		}
		block = -1
		lines = append(lines, i)
		if opensBlock(string(s.line(i))) {
			block = lv[len(lv)-1]
		}
	}
	for i, j := 0, len(lines)-1; i < j; i, j = i+1, j-1 {
		lines[i], lines[j] = lines[j], lines[i]
	}
	return lines
}

// opensBlock reports whether a line ends with a block scalar's indicator
// (key: |, - >-), so that the lines indented under it are its text.
func opensBlock(text string) bool {
	if i := strings.Index(text, " #"); i >= 0 {
		text = text[:i]
	}
	text = strings.TrimRight(strings.TrimRight(text, " \r"), "+-0123456789")
	if !strings.HasSuffix(text, "|") && !strings.HasSuffix(text, ">") {
		return false
	}
	head := strings.TrimRight(text[:len(text)-1], " ")
	return head == "" || strings.HasSuffix(head, ":") || strings.HasSuffix(head, "-")
}

// above finds the nearest line above line k with a node left of column
// col: the line, and the column of its node nearest col.
func (s source) above(k, col int) (int, int, bool) {
	for _, i := range s.structural(k) {
		best := -1
		for _, l := range s.levels(i) {
			if l < col {
				best = l
			}
		}
		if best >= 0 {
			return i, best, true
		}
	}
	return 0, 0, false
}

// below finds, between line outer and line k, the nearest line to k with
// a node right of column col (on outer itself, a node after the one left
// of col): the line and that node's column. Not ok when a line between
// has a node at col: then col lines up with a block.
func (s source) below(k, outer, col int) (int, int, bool) {
	for _, i := range s.structural(k) {
		if i < outer {
			break
		}
		lv := s.levels(i)
		if slicesContains(lv, col) {
			return 0, 0, false
		}
		for _, l := range lv {
			if l > col {
				return i, l, true
			}
		}
	}
	return 0, 0, false
}

// listAt finds the nearest line above line k with a "- " at column col
// and nothing left of col between: the list col lines up with.
func (s source) listAt(k, col int) (int, bool) {
	for _, i := range s.structural(k) {
		lv := s.levels(i)
		if len(lv) > 0 && lv[0] > col {
			continue
		}
		for _, l := range lv {
			if l == col && s.dashAt(i, l) {
				return i, true
			}
		}
		return 0, false
	}
	return 0, false
}

// dashAt reports whether line k has a list item's "-" at column col.
func (s source) dashAt(k, col int) bool {
	text := []rune(string(s.line(k)))
	return col < len(text) && text[col] == '-' && (col+1 == len(text) || text[col+1] == ' ')
}

// keyText is the node at column col of line, for a message: "- " for a
// list item's dash, "key:" for a key, else the text up to a space.
func keyText(line []byte, col int) string {
	text := []rune(string(line))
	if col >= len(text) {
		return ""
	}
	rest := string(text[col:])
	if rest == "-" || strings.HasPrefix(rest, "- ") {
		return "- "
	}
	if i := colonAt(rest, 0); i >= 0 {
		return short(rest[:i+1])
	}
	return short(strings.TrimSpace(rest))
}
