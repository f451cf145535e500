package yamlnode

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/labrun/labrun/internal/lang/diag"
	"gopkg.in/yaml.v3"
)

// yaml.v3's syntax errors, placed and worded for the author of a file.
//
// yaml.v3 prints "yaml: line N: problem" without a column, and N is often
// not the line of the problem: a scanner error gives the line where the
// token it was reading starts (a quoted string, a block scalar), a parser
// error the line before the block it was reading (its marks count from
// 0). So the problem is found again, by parsing ever longer beginnings of
// the text: the first beginning that fails with the same problem ends at
// the character that causes it. Each problem an author meets is then
// worded from what is written there; a problem not listed keeps
// yaml.v3's words, at its place.

// SyntaxError turns err, the error yaml.v3 gave for data (the text of
// file), into an error at the line and column of its cause.
func SyntaxError(file string, data []byte, err error) *diag.Error {
	reported, problem := splitYAMLError(err.Error())
	off := locate(data, problem, reported)
	if off < 0 {
		off = lineStart(data, reported)
		off += len(data[off:]) - len(bytes.TrimLeft(data[off:], " "))
	}
	msg, at := explain(data, off, problem)
	line, col := lineCol(data, at)
	return diag.Errorf(diag.Pos{File: file, Line: line, Col: col}, "invalid YAML: %s", msg)
}

// yamlLine splits a yaml.v3 error into the line it names, if any, and its
// problem.
var yamlLine = regexp.MustCompile(`^yaml: (?:line (\d+): )?(.*)$`)

func splitYAMLError(msg string) (int, string) {
	m := yamlLine.FindStringSubmatch(msg)
	if m == nil {
		return 1, msg
	}
	line := 1
	if m[1] != "" {
		line, _ = strconv.Atoi(m[1])
	}
	return line, m[2]
}

// maxLocate bounds the text locate parses again: each try parses a
// beginning of the text, and a file this large was not written by hand.
const maxLocate = 128 << 10

// locate is the byte offset of the character at which yaml.v3 finds
// problem in data: the end of the shortest beginning of data that fails
// with the same problem. It finds the line first, searching down from
// the line yaml.v3 named (the problem is never above it: yaml.v3 names
// the line where the token or block it was reading starts, counted from
// 0 for a parser's error; the search starts two lines up to be safe),
// then the character on it, by halving; -1 when
// data is too large or the problem does not come from a beginning (an
// error only the whole text has).
func locate(data []byte, problem string, reported int) int {
	if len(data) > maxLocate {
		return -1
	}
	fails := func(n int) bool { return problemOf(data[:n]) == problem }
	if strings.HasPrefix(problem, "did not find expected ',' or") {
		// every beginning inside a [ ] or { } that is not closed yet
		// fails so: close them, so that only the entry at fault fails
		fails = func(n int) bool { return problemOf(closeFlows(data[:n])) == problem }
	}
	if !fails(len(data)) {
		return -1
	}
	var ends []int // the end of each line, after its line break
	for i, b := range data {
		if b == '\n' {
			ends = append(ends, i+1)
		}
	}
	if len(ends) == 0 || ends[len(ends)-1] != len(data) {
		ends = append(ends, len(data))
	}
	// the first line whose end fails is in [lo, hi]: widen hi from the
	// line yaml.v3 named until it fails, then halve
	lo, hi := min(max(reported-2, 0), len(ends)-1), len(ends)-1
	for step := 0; ; step = 2*step + 1 {
		if lo+step >= hi {
			break
		}
		if fails(ends[lo+step]) {
			hi = lo + step
			break
		}
		lo = lo + step + 1
	}
	for lo < hi {
		mid := (lo + hi) / 2
		if fails(ends[mid]) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	start := 0
	if lo > 0 {
		start = ends[lo-1]
	}
	// the runes of the line, by the offset each ends at
	var stops []int
	for i := start; i < ends[lo]; {
		_, size := utf8.DecodeRune(data[i:])
		i += size
		stops = append(stops, i)
	}
	a, b := 0, len(stops)-1
	for a < b {
		mid := (a + b) / 2
		if fails(stops[mid]) {
			b = mid
		} else {
			a = mid + 1
		}
	}
	if a == 0 {
		return start
	}
	return stops[a-1]
}

// problemOf is the problem yaml.v3 finds in data, read as the loaders
// read a file (every document), or "".
func problemOf(data []byte) string {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var n yaml.Node
		err := dec.Decode(&n)
		if errors.Is(err, io.EOF) {
			return ""
		}
		if err != nil {
			_, problem := splitYAMLError(err.Error())
			return problem
		}
	}
}

// lineStart is the offset of line (1-based) in data.
func lineStart(data []byte, line int) int {
	off := 0
	for l := 1; l < line; l++ {
		i := bytes.IndexByte(data[off:], '\n')
		if i < 0 {
			return off
		}
		off += i + 1
	}
	return off
}

// lineCol is the line and column (1-based, in characters) of offset off.
func lineCol(data []byte, off int) (int, int) {
	off = min(max(off, 0), len(data))
	line := 1 + bytes.Count(data[:off], []byte{'\n'})
	col := 1 + utf8.RuneCount(data[bytes.LastIndexByte(data[:off], '\n')+1:off])
	return line, col
}

// explain words problem, found at offset off of data, and gives the
// offset the message is about.
func explain(data []byte, off int, problem string) (string, int) {
	s := newSource(data)
	r := s.runeAt(off)
	switch problem {
	case "found character that cannot start any token":
		switch {
		case r == '\t':
			return tabMessage(s, off), off
		case r == '@' || r == '`':
			return fmt.Sprintf("an unquoted value cannot start with %s, which YAML reserves: quote the value ('...' or \"...\")", quote(string(r))), off
		case r == '%':
			return "an unquoted value cannot start with `%` here: quote the value ('...' or \"...\")", off
		}
		return fmt.Sprintf("%s cannot start a YAML value: quote the value ('...' or \"...\")", quote(string(r))), off
	case "found a tab character that violates indentation", "found a tab character where an indentation space is expected":
		if r != '\t' {
			if i := bytes.IndexByte(s.lineOf(off), '\t'); i >= 0 {
				off = s.startOf(off) + i
			}
		}
		return tabMessage(s, off), off
	case "mapping values are not allowed in this context":
		return colonMessage(s, off), off
	case "could not find expected ':'":
		return noColonMessage(s, off)
	case "block sequence entries are not allowed in this context":
		return "a list item (`- `) cannot start on the line of its key: start the list on the next line, indented, or write it in brackets ([a, b])", off
	case "did not find expected key", "did not find expected '-' indicator":
		off = keyStart(s, off)
		return misplaced(s, off, problem == "did not find expected '-' indicator"), off
	case "did not find expected node content":
		return fmt.Sprintf("%s where a value was expected", quote(s.word(off))), off
	case "did not find expected ',' or ']'":
		return flowMessage(s, off, '[', ']')
	case "did not find expected ',' or '}'":
		return flowMessage(s, off, '{', '}')
	case "found unexpected end of stream":
		if q := s.runeAt(off); q == '"' || q == '\'' {
			return fmt.Sprintf("this %s string is not closed: add the closing %s", quote(string(q)), quote(string(q))), off
		}
	case "found unexpected document indicator":
		return "a quoted string runs into a `---` or `...` line: close the quote before it", s.startOf(off)
	case "found undefined tag handle":
		at := s.wordStart(off)
		tag := s.word(at)
		return fmt.Sprintf("%s starts with a tag handle no %%TAG line declares: quote the value if the `!` is text", quote(tag)), at
	case "did not find the expected '>'":
		at := s.wordStart(off)
		return fmt.Sprintf("the tag %s is not closed with `>`: quote the value if the `!` is text", quote(s.word(at))), at
	case "found unknown escape character", "did not find expected hexdecimal number", "found invalid Unicode character escape code":
		return escapeMessage(s, off, problem)
	case "did not find expected alphabetic or numeric character":
		switch r {
		case '&':
			return "`&` starts an anchor and needs a name after it: quote the value if the `&` is text", off
		case '*':
			return "`*` starts an alias and needs a name after it: quote the value if the `*` is text", off
		}
	case "did not find expected comment or line break":
		if at, ok := s.blockHeader(off); ok {
			return "after `|` or `>` only `-` or `+` (chomping), a digit (indentation) and a comment may follow on the line", at
		}
	case "found an indentation indicator equal to 0":
		return "the indentation digit after `|` or `>` is 1 to 9, not 0", off
	case "control characters are not allowed":
		if i := controlChar(data); i >= 0 {
			return fmt.Sprintf("%s is a control character, which YAML text cannot hold: write it as an escape in a double-quoted string (\"\\x%02X\")", diag.RuneName(rune(data[i])), data[i]), i
		}
	}
	if m := unknownAnchor.FindStringSubmatch(problem); m != nil {
		if i := bytes.LastIndex(data[:min(off+1, len(data))], []byte("*"+m[1])); i >= 0 {
			off = i
		}
		return fmt.Sprintf("%s refers to an anchor &%s that is not defined above it: quote the value if the `*` is text", quote("*"+m[1]), m[1]), off
	}
	return problem, off
}

var unknownAnchor = regexp.MustCompile(`^unknown anchor '(.*)' referenced$`)

// tabMessage words a tab where YAML wants spaces.
func tabMessage(s source, off int) string {
	if strings.TrimLeft(string(s.lineOf(off)[:s.byteCol(off)]), " \t") == "" {
		return "a tab in indentation: YAML indents with spaces"
	}
	return "a tab where YAML expects a space: YAML indents and separates with spaces"
}

// colonMessage words ": " where YAML reads a value and a key cannot
// start: inside an unquoted value on the line of its key, or on a line
// indented under a key whose value is already written, which YAML reads
// as more of that value.
func colonMessage(s source, off int) string {
	line := s.lineOf(off)
	col := utf8.RuneCount(line[:s.byteCol(off)])
	if key, ok := plainValueKey(string(line)); ok && key < col {
		return `this unquoted value holds ": ", which YAML reads as the start of another key; quote the value ('...' or "...") or write it as a block scalar (|)`
	}
	this := s.levels(s.lineIndex(off))
	if len(this) > 0 {
		if k, above, ok := s.above(s.lineIndex(off), this[len(this)-1]); ok {
			if _, ok := plainValueKey(string(s.line(k))); ok {
				return fmt.Sprintf("%s is indented deeper than %s (line %d), so YAML reads this line as more of that key's unquoted value, where a key cannot start; indent it like %s to make it a key beside it, or quote the value",
					quote(keyText(line, this[len(this)-1])), quote(strings.TrimSpace(string(s.line(k)))), k+1, quote(keyText(s.line(k), above)))
			}
		}
	}
	if k := s.structural(s.lineIndex(off)); len(k) > 0 {
		prev := string(s.line(k[0]))
		if lv := s.levels(k[0]); len(lv) > 0 && len(this) > 0 && lv[len(lv)-1] <= this[len(this)-1] && colonAt(prev, 0) < 0 && !strings.ContainsAny(prev, "'\"[]{}") {
			return fmt.Sprintf("line %d (%s) is not `key: value`, so YAML reads it and this line as one unquoted value, where a key cannot start: write line %d as `key: value`, or make it a comment (#)", k[0]+1, quote(short(strings.TrimSpace(prev))), k[0]+1)
		}
	}
	return `a ": " here starts a key where YAML reads an unquoted value: quote the value, or check the indentation of this line`
}

// plainValueKey finds, in a line "key: value" (after any "- "), the
// index of the ": " that ends the key when an unquoted value follows it.
func plainValueKey(text string) (int, bool) {
	text = strings.TrimRight(text, "\r")
	i := len(text) - len(strings.TrimLeft(text, " "))
	for strings.HasPrefix(text[i:], "- ") {
		i += 2
		for i < len(text) && text[i] == ' ' {
			i++
		}
	}
	sep := colonAt(text, i)
	if sep < 0 {
		return 0, false
	}
	v := sep + 1
	for v < len(text) && text[v] == ' ' {
		v++
	}
	if v >= len(text) || strings.ContainsRune("'\"{[|>&*!#", rune(text[v])) {
		return 0, false // not a plain scalar
	}
	return utf8.RuneCountInString(text[:sep]), true
}

// colonAt is the index of the first ":" at or after from that is followed
// by a space or ends the line, as YAML reads a key's end; -1 when none is.
func colonAt(text string, from int) int {
	for j := from; j < len(text); j++ {
		if text[j] == ' ' && j+1 < len(text) && text[j+1] == '#' {
			return -1 // a comment
		}
		if text[j] == ':' && (j+1 == len(text) || text[j+1] == ' ') {
			return j
		}
	}
	return -1
}

// noColonMessage words a line YAML began to read as a key that has no
// ":" after it: a key longer than YAML's limit, text at the place of a
// key, or a list item without its "- ".
func noColonMessage(s source, off int) (string, int) {
	line := strings.TrimRight(string(s.lineOf(off)), "\r")
	col := s.byteCol(off)
	if key, ok := strings.CutSuffix(strings.TrimRight(line, " "), ":"); ok || strings.Contains(line, ": ") {
		if !ok {
			key, _, _ = strings.Cut(line, ": ")
		}
		if n := utf8.RuneCountInString(strings.TrimLeft(key, " -")); n > 1024 {
			return fmt.Sprintf("this mapping key is %d characters long; YAML allows at most 1024 for a key on one line", n), off
		}
	}
	text := strings.TrimSpace(line[min(col, len(line)):])
	k := s.lineIndex(off)
	if above, ok := s.listAt(k, utf8.RuneCountInString(line[:min(col, len(line))])); ok {
		return fmt.Sprintf("%s lines up with the items of the list at line %d but does not start with `- `: write `- %s`, or indent it to continue the item above", quote(short(text)), above+1, short(text)), off
	}
	return fmt.Sprintf("%s stands where a key is expected, but no `: ` follows it on its line: write `key: value`, or indent the line deeper than its key to continue the value above", quote(short(text))), off
}

// misplaced words a token that fits no block of the lines above it: a
// line indented between two blocks, a list item among keys, a key among
// list items, or more text after a complete value on its line.
func misplaced(s source, off int, inList bool) string {
	k := s.lineIndex(off)
	line := s.line(k)
	col := utf8.RuneCount(line[:s.byteCol(off)])
	first := s.levels(k)
	if len(first) == 0 || first[0] != col && !slicesContains(first, col) {
		return afterValue(s, off)
	}
	text := strings.TrimSpace(string(line))
	if col == first[0] {
		if outer, level, ok := s.above(k, col); ok {
			if inner, innerLevel, ok := s.below(k, outer, col); ok {
				return fmt.Sprintf("%s is indented %s: more than %s (line %d, %s) and less than %s (line %d, %s), so it belongs to neither; indent it like one of them",
					quote(short(text)), spaces(col), quote(keyText(s.line(outer), level)), outer+1, spaces(level), quote(keyText(s.line(inner), innerLevel)), inner+1, spaces(innerLevel))
			}
		}
	}
	if inList {
		if above, ok := s.listAt(k, col); ok {
			return fmt.Sprintf("%s lines up with the items of the list at line %d but does not start with `- `: write `- %s`, or indent it to belong to the item above", quote(short(text)), above+1, short(text))
		}
		return fmt.Sprintf("%s does not line up with the items of the list it follows: a list's items start with `- `, each at the same column", quote(short(text)))
	}
	if strings.HasPrefix(text, "-") {
		return fmt.Sprintf("a list item (%s) among the keys of a mapping: indent the list under the key whose value it is", quote(short(text)))
	}
	return fmt.Sprintf("%s does not line up with the keys of the mapping it follows: a mapping's keys start at the same column", quote(short(text)))
}

// keyStart is where the key whose ": " is at off starts, when off is
// that ": " after the first node of its line: YAML finds a key misplaced
// only at its ": ". Else off.
func keyStart(s source, off int) int {
	if s.runeAt(off) != ':' {
		return off
	}
	start := s.startOf(off)
	lv := s.levels(s.lineIndex(off))
	if len(lv) == 0 {
		return off
	}
	line := []rune(string(s.lineOf(off)))
	last := lv[len(lv)-1]
	key := string(line[min(last, len(line)):])
	col := utf8.RuneCount(s.data[start:off])
	if i := colonAt(key, 0); i >= 0 && utf8.RuneCountInString(key[:i]) == col-last {
		return start + len(string(line[:last]))
	}
	return off
}

// afterValue words text after a complete value on its line.
func afterValue(s source, off int) string {
	before := strings.TrimRight(string(s.data[s.startOf(off):off]), " ")
	tok := s.word(off)
	switch {
	case strings.HasSuffix(before, "'"):
		return fmt.Sprintf("%s after the quoted value that ends before it: a value in '...' ends at the next single quote; write a quote inside it twice ('it''s')", quote(tok))
	case strings.HasSuffix(before, `"`):
		return fmt.Sprintf(`%s after the quoted value that ends before it: a value in "..." ends at the next double quote; write a quote inside it as \"`, quote(tok))
	case tok == "]" || tok == "}":
		return fmt.Sprintf("a %s that closes nothing", quote(tok))
	}
	return fmt.Sprintf("%s after a complete value: quote the whole value, or check the brackets and quotes before it", quote(tok))
}

// flowMessage words a [ ] list or { } mapping that is not closed, at its
// opening bracket, or that lacks a comma between two entries.
func flowMessage(s source, off int, open, close byte) (string, int) {
	if at, ok := unclosed(s.data, open, close); ok {
		return fmt.Sprintf("this %s is not closed: add the %s (or quote the value if the %s is text)", quote(string(open)), quote(string(close)), quote(string(open))), at
	}
	for off > s.startOf(off) && s.runeAt(off) == ' ' {
		off--
	}
	return fmt.Sprintf("%s where a %s or the closing %s was expected: separate the entries of [...] and {...} with commas", quote(s.word(off)), quote(","), quote(string(close))), off
}

// closeFlows appends to a beginning of a file the brackets that close the
// [ ] and { } open at its end.
func closeFlows(data []byte) []byte {
	stack := openBrackets(data)
	if len(stack) == 0 {
		return data
	}
	out := append([]byte{}, data...)
	for i := len(stack) - 1; i >= 0; i-- {
		if data[stack[i]] == '[' {
			out = append(out, ']')
		} else {
			out = append(out, '}')
		}
	}
	return out
}

// unclosed finds the first open bracket (open) that no close matches
// before the end of data, outside quoted strings and comments.
func unclosed(data []byte, open, close byte) (int, bool) {
	stack := openBrackets(data)
	if len(stack) == 0 || data[stack[0]] != open {
		return 0, false
	}
	return stack[0], true
}

// openBrackets lists the offsets of the [ and { that are open at the end
// of data, outermost first, outside quoted strings and comments.
func openBrackets(data []byte) []int {
	var stack []int
	var q byte
	for i := 0; i < len(data); i++ {
		c := data[i]
		switch {
		case q == '"' && c == '\\':
			i++
		case q != 0 && c == q:
			if q == '\'' && i+1 < len(data) && data[i+1] == '\'' {
				i++
				continue
			}
			q = 0
		case q != 0:
		case (c == '"' || c == '\'') && (len(stack) > 0 || i > 0 && (data[i-1] == ' ' || data[i-1] == '\n')):
			q = c
		case c == '#' && (i == 0 || data[i-1] == ' ' || data[i-1] == '\n'):
			for i < len(data) && data[i] != '\n' {
				i++
			}
		case c == '[' || c == '{':
			stack = append(stack, i)
		case (c == ']' || c == '}') && len(stack) > 0:
			stack = stack[:len(stack)-1]
		}
	}
	return stack
}

// escapeMessage words a backslash escape YAML does not know in a
// double-quoted string (as "\d" in a regular expression), at the
// backslash.
func escapeMessage(s source, off int, problem string) (string, int) {
	at := bytes.LastIndexByte(s.data[s.startOf(off):off+1], '\\')
	if at < 0 {
		return problem, off
	}
	at += s.startOf(off)
	esc := string(s.data[at:min(at+2, len(s.data))])
	switch problem {
	case "found unknown escape character":
		return fmt.Sprintf(`%s is not an escape YAML knows in a double-quoted string: write \\ for a backslash (%s), or quote the value with single quotes, where a backslash is itself ('%s')`, quote(esc), quote(`\`+esc), esc), at
	case "did not find expected hexdecimal number":
		return fmt.Sprintf(`%s needs hexadecimal digits after it (\x: 2, \u: 4, \U: 8): write \\ for a backslash`, quote(esc)), at
	}
	end := at + 2
	for end < len(s.data) && end < at+10 && strings.IndexByte("0123456789abcdefABCDEF", s.data[end]) >= 0 {
		end++
	}
	return fmt.Sprintf("%s is not a Unicode character", quote(string(s.data[at:end]))), at
}

// controlChar is the offset of the first control character YAML refuses.
func controlChar(data []byte) int {
	for i, b := range data {
		if b < ' ' && b != '\t' && b != '\n' && b != '\r' || b == 0x7f {
			return i
		}
	}
	return -1
}

// quote quotes text of the file for a message, with backquotes, or with
// double quotes when it holds a backquote.
func quote(s string) string {
	if strings.Contains(s, "`") {
		return strconv.Quote(s)
	}
	return "`" + s + "`"
}

// short cuts text to a length a message can quote.
func short(s string) string {
	if utf8.RuneCountInString(s) > 40 {
		return string([]rune(s)[:37]) + "..."
	}
	return s
}

// spaces words an indentation.
func spaces(n int) string {
	switch n {
	case 0:
		return "not at all"
	case 1:
		return "1 space"
	}
	return fmt.Sprintf("%d spaces", n)
}

func slicesContains(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}
