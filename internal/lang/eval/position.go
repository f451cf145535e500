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
// scalars' indentation and quoted scalars' escapes, so that an error
// points at the expression and not somewhere left of it.

// SetSource gives the text of file, which positions inside its block and
// quoted scalars are computed from.
func (c *Compiler) SetSource(file string, data []byte) {
	if c.sources == nil {
		c.sources = map[string][]string{}
	}
	c.sources[file] = strings.Split(string(data), "\n")
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

// offsetPos finds the file position of byte off of scalar n's value,
// written at p. Without the file's text, or where the mapping is not
// certain (a quoted scalar over several lines), it is the scalar itself.
func (c *Compiler) offsetPos(p diag.Pos, n *yaml.Node, off int) diag.Pos {
	off = min(off, len(n.Value))
	lines := c.sources[p.File]
	switch {
	case n.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0:
		if line, col, ok := blockPos(lines, n, off); ok {
			p.Line, p.Col = line, col
		}
		return p
	case n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) != 0:
		if n.Line < 1 || n.Line > len(lines) {
			return p
		}
		if col, ok := quotedCol(lines[n.Line-1], n.Column, off, n.Style&yaml.SingleQuotedStyle != 0); ok {
			p.Col = col
		}
		return p
	case strings.Contains(n.Value[:off], "\n"):
		return p
	}
	p.Col += utf8.RuneCountInString(n.Value[:off])
	return p
}

// blockPos maps off in a | or > scalar whose indicator is on line
// n.Line: each content line's text appears whole in the value, in order
// (folding only changes the line breaks between them).
func blockPos(lines []string, n *yaml.Node, off int) (line, col int, ok bool) {
	indent := -1
	cursor := 0
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
		cursor = start + len(content)
	}
	return 0, 0, false
}

// quotedCol maps off in the value of a one-line quoted scalar that opens
// at column col of text to the column of the source character that
// produced it, decoding escapes ("\u00e9" is two bytes of value, six
// characters of source; ” is one quote).
func quotedCol(text string, col, off int, single bool) (int, bool) {
	src := []rune(text)
	i := col // index of the first rune after the opening quote
	decoded := 0
	for i < len(src) {
		if decoded >= off {
			return i + 1, true
		}
		r := src[i]
		switch {
		case single && r == '\'':
			if i+1 < len(src) && src[i+1] == '\'' {
				decoded++
				i += 2
				continue
			}
			return 0, false // the closing quote: off is past the value
		case !single && r == '"':
			return 0, false
		case !single && r == '\\' && i+1 < len(src):
			n, width := escapeWidth(src[i+1:])
			decoded += n
			i += 1 + width
			continue
		}
		decoded += utf8.RuneLen(r)
		i++
	}
	return 0, false
}

// escapeWidth is how many bytes a YAML escape after the backslash decodes
// to, and how many source characters it takes.
func escapeWidth(rest []rune) (bytes, width int) {
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
