package diag

import (
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/labrun/labrun/internal/lang/visible"
)

// Render writes errors for a person at a terminal: each error's one line
// (file:line:col: message, the same line --format json and github carry,
// its control characters and bidi controls escaped by visible.Text),
// then the source line with the offending text underlined, and, when the
// message suggests a replacement, the line as it would read with it, as
// rustc and HCL's diagnostic writer print them. Source is read through
// read (nil: the file system); an error whose line cannot be shown, from
// a file that cannot be read or a line that is not printable text, is
// printed as its one line.
func Render(w io.Writer, errs []*Error, read func(file string) ([]byte, error)) {
	if read == nil {
		read = readSource
	}
	files := map[string][]string{}
	for _, e := range errs {
		fmt.Fprintln(w, visible.Text(e.Error()))
		if e.Pos.Line <= 0 || e.Pos.File == "" {
			continue
		}
		lines, ok := files[e.Pos.File]
		if !ok {
			if data, err := read(e.Pos.File); err == nil {
				lines = strings.Split(string(data), "\n")
			}
			files[e.Pos.File] = lines
		}
		if e.Pos.Line > len(lines) {
			continue
		}
		excerpt(w, e, strings.TrimRight(lines[e.Pos.Line-1], "\r"))
	}
}

// maxSourceSize bounds what Render reads to show a line; the loaders
// refuse larger files anyway.
const maxSourceSize = 16 << 20

func readSource(file string) ([]byte, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, maxSourceSize))
}

// maxLineWidth is the longest source line shown; a longer one (minified
// JSON, a generated playbook) would wrap into noise.
const maxLineWidth = 160

// excerpt prints the source line, the underline and the suggestion.
func excerpt(w io.Writer, e *Error, line string) {
	if strings.TrimSpace(line) == "" || !printable(line) {
		return
	}
	runes := []rune(line)
	start := e.Pos.Col - 1
	if start < 0 || start > len(runes) {
		return
	}
	from, to, fix := span(e, runes, start)
	num := strconv.Itoa(e.Pos.Line)
	gutter := strings.Repeat(" ", len(num))
	fmt.Fprintf(w, "  %s | %s\n", num, line)
	fmt.Fprintf(w, "  %s | %s%s\n", gutter, indent(runes[:from]), strings.Repeat("^", max(to-from, 1)))
	if s := suggestion(e.Msg); s != "" && fix {
		fixed := string(runes[:from]) + s + string(runes[to:])
		fmt.Fprintf(w, "  %s = help: did you mean\n", gutter)
		fmt.Fprintf(w, "  %s | %s\n", num, fixed)
	}
}

// printable reports whether a line can be shown as it is: valid UTF-8, no
// character visible would escape (control characters but tabs, bidi
// controls, which would also move the underline off the text), and not
// too wide.
func printable(line string) bool {
	if !utf8.ValidString(line) || utf8.RuneCountInString(line) > maxLineWidth {
		return false
	}
	for _, r := range line {
		if visible.Escaped(r) {
			return false
		}
	}
	return true
}

// indent reproduces the whitespace under the text before the underline, so
// the carets stay aligned under tabs.
func indent(before []rune) string {
	var b strings.Builder
	for _, r := range before {
		if r == '\t' {
			b.WriteByte('\t')
		} else {
			b.WriteByte(' ')
		}
	}
	return b.String()
}

// quoted finds what a message quotes: "a key" (Go-quoted) or `an expr`.
var quoted = regexp.MustCompile("\"((?:[^\"\\\\]|\\\\.)*)\"|`([^`]*)`")

// span finds the runes [from, to) the message is about. A message with a
// suggestion names its typo just before it (unknown step "frist" (did you
// mean "first"?)): the typo where it is written, nearest the column, which
// the suggestion may replace (fix). Otherwise the word written at the
// column when the message names it (unknown key "step" at step:), else the
// first text the message quotes that is written at or after the column
// (`vars.n`), else the one character at the column.
func span(e *Error, line []rune, start int) (from, to int, fix bool) {
	if typo := typo(e.Msg); typo != "" {
		if from, ok := find(line, start, typo); ok {
			return from, from + utf8.RuneCountInString(typo), true
		}
	}
	if end := wordEnd(line, start); end > start {
		word := string(line[start:end])
		if strings.Contains(e.Msg, strconv.Quote(word)) {
			return start, end, false
		}
		if unq := strings.Trim(word, `"'`); unq != word && strings.Contains(e.Msg, strconv.Quote(unq)) {
			return start + 1, end - 1, false
		}
	}
	for _, word := range quotes(e.Msg) {
		if i := strings.Index(string(line[start:]), word); i >= 0 {
			from := start + utf8.RuneCountInString(string(line[start:])[:i])
			return from, from + utf8.RuneCountInString(word), false
		}
	}
	return start, start + 1, false
}

// find locates word in line: its first occurrence at or after start, else
// its last one before.
func find(line []rune, start int, word string) (int, bool) {
	rest := string(line[start:])
	if i := strings.Index(rest, word); i >= 0 {
		return start + utf8.RuneCountInString(rest[:i]), true
	}
	head := string(line[:start])
	if i := strings.LastIndex(head, word); i >= 0 {
		return utf8.RuneCountInString(head[:i]), true
	}
	return 0, false
}

// quotes lists what a message quotes, in order.
func quotes(msg string) []string {
	var out []string
	for _, m := range quoted.FindAllStringSubmatch(msg, -1) {
		word := m[2]
		if m[1] != "" {
			w, err := strconv.Unquote(`"` + m[1] + `"`)
			if err != nil {
				continue
			}
			word = w
		}
		if word != "" {
			out = append(out, word)
		}
	}
	return out
}

// typo is the word a DidYouMean suggestion replaces: the one quoted just
// before it.
func typo(msg string) string {
	i := strings.Index(msg, didYouMeanPrefix)
	if i < 0 {
		return ""
	}
	words := quotes(msg[:i])
	if len(words) == 0 || !strings.HasSuffix(msg[:i], `"`) {
		return ""
	}
	return words[len(words)-1]
}

// wordEnd returns the end of the word or quoted string starting at i.
func wordEnd(line []rune, i int) int {
	if i >= len(line) {
		return i
	}
	if q := line[i]; q == '"' || q == '\'' {
		for j := i + 1; j < len(line); j++ {
			if line[j] == q {
				return j + 1
			}
		}
		return i
	}
	j := i
	for j < len(line) && isWordRune(line[j]) {
		j++
	}
	return j
}

func isWordRune(r rune) bool {
	return r == '_' || r == '-' || r == '$' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r > utf8.RuneSelf
}

// suggestion is the replacement DidYouMean put in a message, if any.
func suggestion(msg string) string {
	i := strings.Index(msg, didYouMeanPrefix)
	if i < 0 {
		return ""
	}
	rest := msg[i+len(didYouMeanPrefix):]
	end := strings.Index(rest, "?)")
	if end < 0 {
		return ""
	}
	s, err := strconv.Unquote(rest[:end])
	if err != nil {
		return ""
	}
	return s
}
