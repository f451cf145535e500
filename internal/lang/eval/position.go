package eval

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/labrun/labrun/internal/lang/diag"
	"gopkg.in/yaml.v3"
)

// Positions inside a YAML scalar: an expression's offset in the decoded
// string is mapped back to the file's line and column, through block
// scalars' indentation and folding, quoted scalars' escapes and the
// folding of a plain or quoted scalar written over several lines, so that
// an error points at the word it is about and not at the scalar's first
// line.

// Where maps a byte offset of an expression's source to the place in the
// file it was written at. Every position an error of the expression names
// comes from it.
type Where func(off int) diag.Pos

// At is the Where of an expression src written as it is at pos, not
// inside a YAML scalar (a test, an expression given on the command line):
// its first line starts at pos's column, the next ones at column 1.
func At(src string, pos diag.Pos) Where {
	return func(off int) diag.Pos {
		p := pos
		if p.Line == 0 {
			return p
		}
		off = min(max(off, 0), len(src))
		head := src[:off]
		if nl := strings.LastIndexByte(head, '\n'); nl >= 0 {
			p.Line += strings.Count(head, "\n")
			p.Col = 1 + utf8.RuneCountInString(head[nl+1:])
			return p
		}
		p.Col += utf8.RuneCountInString(head)
		return p
	}
}

// SetSource gives the text of file, which positions inside its block and
// quoted scalars are computed from.
func (c *Compiler) SetSource(file string, data []byte) {
	if c.sources == nil {
		c.sources = map[string][]string{}
	}
	c.sources[file] = strings.Split(string(data), "\n")
}

// InScalar is the Where of the text that starts at byte start of scalar
// n's value, n being written at pos. Without the file's text, or where
// the text of the file does not give back the value (a form of YAML it
// does not follow), an offset is placed as if the scalar were one line.
func (c *Compiler) InScalar(pos diag.Pos, n *yaml.Node, start int) Where {
	if n == nil {
		return func(off int) diag.Pos {
			p := pos
			if p.Line > 0 {
				p.Col += start + off
			}
			return p
		}
	}
	return func(off int) diag.Pos { return c.offsetPos(pos, n, start+off) }
}

// offsetPos finds the file position of byte off of scalar n's value,
// written at p.
func (c *Compiler) offsetPos(p diag.Pos, n *yaml.Node, off int) diag.Pos {
	off = min(max(off, 0), len(n.Value))
	lines := c.sources[p.File]
	if n.Style == 0 && n.Line >= 1 && n.Line <= len(lines) && strings.HasPrefix(fromColumn(lines[n.Line-1], n.Column), n.Value[:off]) {
		// the text up to off is on the scalar's first line, as written
		p.Col += utf8.RuneCountInString(n.Value[:off])
		return p
	}
	if n.Line >= 1 && n.Line <= len(lines) {
		var line, col int
		var ok bool
		if n.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0 {
			line, col, ok = blockPos(lines, n, off)
		} else {
			line, col, ok = flowPos(lines, n, off)
		}
		if ok {
			p.Line, p.Col = line, col
			return p
		}
	}
	if n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) != 0 {
		p.Col++ // the opening quote
	}
	head := n.Value[:off]
	if i := strings.LastIndexByte(head, '\n'); i >= 0 {
		head = head[i+1:]
	}
	p.Col += utf8.RuneCountInString(head)
	return p
}

// fromColumn is line from column col (1-based, in characters) on.
func fromColumn(line string, col int) string {
	n := 1
	for i := range line {
		if n == col {
			return line[i:]
		}
		n++
	}
	return ""
}

// blockPos maps off in a | or > scalar whose indicator is on line
// n.Line: each content line's text appears whole in the value, in order
// (folding only changes the line breaks between them, chomping only the
// breaks after the last). An offset past the last line's text (the
// chomped or kept final breaks) is placed at the end of that line.
func blockPos(lines []string, n *yaml.Node, off int) (line, col int, ok bool) {
	indent := -1
	cursor := 0
	lastLine, lastCol := 0, 0
	for i := n.Line; i < len(lines); i++ { // lines[n.Line] is the line after the indicator
		text := strings.TrimRight(lines[i], "\r")
		if strings.TrimSpace(text) == "" {
			continue
		}
		lead := len(text) - len(strings.TrimLeft(text, " "))
		if indent < 0 {
			indent = lead
		}
		if lead < indent {
			break
		}
		content := text[indent:]
		at := strings.Index(n.Value[cursor:], content)
		if at < 0 {
			return 0, 0, false
		}
		start := cursor + at
		if off >= start && off <= start+len(content) {
			return i + 1, utf8.RuneCountInString(text[:indent]) + utf8.RuneCountInString(content[:off-start]) + 1, true
		}
		if off < start {
			// off is in the line breaks folded or kept before this line:
			// at the end of the line before
			return lastLine, lastCol, lastLine > 0
		}
		cursor = start + len(content)
		lastLine, lastCol = i+1, utf8.RuneCountInString(text)+1
	}
	if lastLine > 0 && strings.TrimRight(n.Value[cursor:], "\n") == "" {
		return lastLine, lastCol, true
	}
	return 0, 0, false
}

// flowPos maps off in a plain, single- or double-quoted scalar that
// starts at line n.Line, column n.Column, on one line or several. It reads
// the source as YAML folds it (a line break between two lines of text is
// a space, each empty line a newline; the indentation and the spaces
// around a break are dropped) and decodes quoted scalars' escapes, and
// checks as it goes that the source gives back the value: where it does
// not, ok is false.
func flowPos(lines []string, n *yaml.Node, off int) (line, col int, ok bool) {
	single := n.Style&yaml.SingleQuotedStyle != 0
	double := n.Style&yaml.DoubleQuotedStyle != 0
	li := n.Line - 1
	src := []rune(strings.TrimRight(lines[li], "\r"))
	i := n.Column - 1
	if single || double {
		i++ // after the opening quote
	}
	if i < 0 || i > len(src) {
		return 0, 0, false
	}
	v := n.Value
	vi := 0
	for {
		if double && i+1 == len(src) && src[i] == '\\' {
			// an escaped line break: the lines join without a space
			li++
			if li >= len(lines) {
				return 0, 0, false
			}
			src = []rune(strings.TrimRight(lines[li], "\r"))
			i = 0
			for i < len(src) && isBlank(src[i]) {
				i++
			}
			continue
		}
		if vi >= off {
			return li + 1, i + 1, true
		}
		if i >= len(src) || isBlank(src[i]) && blankToEnd(src[i:]) {
			// a line break, with the empty lines after it: one space, or
			// one newline for each empty line
			endLine, endCol := li+1, i+1
			breaks := 0
			for {
				li++
				breaks++
				if li >= len(lines) {
					return 0, 0, false
				}
				src = []rune(strings.TrimRight(lines[li], "\r"))
				if !blankToEnd(src) {
					break
				}
			}
			folded := " "
			if breaks > 1 {
				folded = strings.Repeat("\n", breaks-1)
			}
			if !strings.HasPrefix(v[vi:], folded) {
				return 0, 0, false
			}
			if off < vi+len(folded) {
				return endLine, endCol, true
			}
			vi += len(folded)
			i = 0
			for i < len(src) && isBlank(src[i]) {
				i++
			}
			continue
		}
		r := src[i]
		switch {
		case double && r == '\\':
			size, width := escapeWidth(src[i+1:])
			if off < vi+size {
				return li + 1, i + 1, true
			}
			vi += size
			i += 1 + width
			continue
		case double && r == '"', single && r == '\'' && (i+1 == len(src) || src[i+1] != '\''):
			return 0, 0, false // the closing quote before off
		case single && r == '\'':
			i++ // '' is one quote
		}
		s := string(r)
		if !strings.HasPrefix(v[vi:], s) {
			return 0, 0, false
		}
		vi += len(s)
		i++
	}
}

func isBlank(r rune) bool { return r == ' ' || r == '\t' }

// blankToEnd reports whether s holds only spaces and tabs.
func blankToEnd(s []rune) bool {
	for _, r := range s {
		if !isBlank(r) {
			return false
		}
	}
	return true
}

// escapeWidth is how many bytes a YAML escape after the backslash decodes
// to, and how many source characters it takes.
func escapeWidth(rest []rune) (bytes, width int) {
	if len(rest) == 0 {
		return 1, 0
	}
	hex := map[rune]int{'x': 2, 'u': 4, 'U': 8}
	switch c := rest[0]; {
	case hex[c] > 0 && len(rest) > hex[c]:
		v, err := strconv.ParseUint(string(rest[1:1+hex[c]]), 16, 32)
		if err != nil {
			return 1, 1
		}
		return utf8.RuneLen(rune(v)), 1 + hex[c]
	case c == 'N' || c == '_':
		return 2, 1 // U+0085, U+00A0
	case c == 'L' || c == 'P':
		return 3, 1 // U+2028, U+2029
	}
	return 1, 1
}

// ScalarPos is where byte off of scalar value v's text is written in
// its file (through a block scalar's indentation, a quoted scalar's
// escapes), for a problem found inside text a step reads as a document
// of its own (apply's manifest).
func (c *Compiler) ScalarPos(v *Value, off int) diag.Pos {
	if v == nil || v.Node == nil {
		return diag.Pos{}
	}
	return c.offsetPos(v.Pos, v.Node, off)
}
