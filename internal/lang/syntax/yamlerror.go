package syntax

import (
	"bytes"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/labrun/labrun/internal/lang/diag"
)

// Rewriting yaml.v3's syntax errors into file:line:col messages that
// point at the cause.

// yamlLineRe splits a yaml.v3 error into its line, when it gives one, and
// its message.
var yamlLineRe = regexp.MustCompile(`^yaml: (?:line (\d+): )?(.*)$`)

// yamlError rewrites yaml.v3's "yaml: line N: msg" into file:N:1: msg.
func yamlError(file string, err error, data []byte) error {
	msg := err.Error()
	if m := yamlLineRe.FindStringSubmatch(msg); m != nil {
		line := 1
		if m[1] != "" {
			line, _ = strconv.Atoi(m[1])
		}
		if m[2] == "could not find expected ':'" {
			if n, col := longKey(data, line); n > 0 {
				return diag.Errorf(diag.Pos{File: file, Line: line, Col: col}, "this mapping key is %d characters long; YAML allows at most 1024 for a key on one line", n)
			}
		}
		if m[2] == "mapping values are not allowed in this context" {
			if col, ok := colonInPlainValue(data, line); ok {
				return diag.Errorf(diag.Pos{File: file, Line: line, Col: col}, `invalid YAML: %s: this unquoted value holds ": ", which YAML reads as the start of another key; quote the value ('...' or "...") or write it as a block scalar (|)`, m[2])
			}
		}
		return diag.Errorf(diag.Pos{File: file, Line: line, Col: 1}, "invalid YAML: %s", m[2])
	}
	return diag.Errorf(diag.Pos{File: file, Line: 1, Col: 1}, "invalid YAML: %s", msg)
}

// colonInPlainValue finds, on line (1-based) of data, the ": " inside a
// plain (unquoted) value after "key: " that makes yaml.v3 say "mapping
// values are not allowed in this context" (which it places at column 1 of
// the line), and returns its column.
func colonInPlainValue(data []byte, line int) (int, bool) {
	lines := strings.Split(string(data), "\n")
	if line < 1 || line > len(lines) {
		return 0, false
	}
	text := strings.TrimRight(lines[line-1], "\r")
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
	at := colonAt(text, v)
	if at < 0 {
		return 0, false
	}
	return utf8.RuneCountInString(text[:at]) + 1, true
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

// longKey finds a plain mapping key longer than YAML's 1024-character
// limit on line (1-based) of data: yaml.v3 then only says it could not
// find the ':'. It returns the key's length in characters and its column,
// or 0.
func longKey(data []byte, line int) (int, int) {
	lines := bytes.Split(data, []byte("\n"))
	if line < 1 || line > len(lines) {
		return 0, 0
	}
	text := string(lines[line-1])
	key, _, ok := strings.Cut(text, ": ")
	if !ok {
		key, ok = strings.CutSuffix(strings.TrimRight(text, " \r"), ":")
	}
	trimmed := strings.TrimLeft(key, " -")
	if !ok || utf8.RuneCountInString(trimmed) <= 1024 {
		return 0, 0
	}
	return utf8.RuneCountInString(trimmed), utf8.RuneCountInString(key) - utf8.RuneCountInString(trimmed) + 1
}
