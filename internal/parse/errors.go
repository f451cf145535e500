package parse

import (
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"strings"
)

// Error is returned by every parser in this package for input it cannot
// read. It names the parser (its registry kind), the 1-based line number and
// the offending text, so that a failed lab step points at the exact line of
// the captured output.
type Error struct {
	Parser string // registry kind, e.g. "cilium-bpf-ct-list"
	Line   int    // 1-based line number; 0 when the problem is not one line
	Text   string // the offending line (shortened), or "" when not useful
	Msg    string // what was expected
	// Truncated is true when the output ends inside a record: a last line
	// without its newline, or JSON that stops before its end. Complete
	// records before the cut are counted in Msg; none is returned.
	Truncated bool
}

// maxErrorText bounds the quoted text so that an error about a huge line
// cannot blow up logs or memory.
const maxErrorText = 120

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("parse ")
	b.WriteString(e.Parser)
	b.WriteString(": ")
	if e.Line > 0 {
		b.WriteString("line ")
		b.WriteString(strconv.Itoa(e.Line))
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	if e.Text != "" {
		b.WriteString(": ")
		b.WriteString(strconv.Quote(e.Text))
	}
	return b.String()
}

// newError builds an *Error, shortening text to maxErrorText bytes (on a
// rune boundary) so that errors stay small whatever the input.
func newError(parser string, line int, text, msg string) *Error {
	return &Error{Parser: parser, Line: line, Text: shorten(text), Msg: msg}
}

// truncatedError is newError for a line that was cut: the last line of
// the text, without its newline.
func truncatedError(parser string, line int, text, msg string) *Error {
	e := newError(parser, line, text, msg)
	e.Truncated = true
	return e
}

func shorten(s string) string {
	s = strings.TrimRight(s, " \t\r")
	if len(s) <= maxErrorText {
		return s
	}
	cut := maxErrorText
	for cut > 0 && !isRuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "..."
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

// jsonError turns an encoding/json error into an *Error with the line of
// the offending byte when json reports an offset.
func jsonError(parser, text string, err error) *Error {
	var offset int64 = -1
	switch e := err.(type) {
	case *json.SyntaxError:
		offset = e.Offset
	case *json.UnmarshalTypeError:
		offset = e.Offset
	}
	if strings.TrimSpace(text) == "" {
		return newError(parser, 0, "", "empty input")
	}
	// A syntax error at the very end (inside a last literal cut short,
	// "true" as "t") is a cut too.
	if errors.Is(err, io.ErrUnexpectedEOF) || err.Error() == "unexpected end of JSON input" ||
		offset >= int64(len(strings.TrimRight(text, " \t\r\n"))) {
		e := newError(parser, 1+strings.Count(text, "\n"), lastLine(text), "JSON ends before its closing bracket (truncated output)")
		e.Truncated = true
		return e
	}
	if offset < 0 || offset > int64(len(text)) {
		return newError(parser, 0, "", "invalid JSON: "+err.Error())
	}
	line := 1 + strings.Count(text[:offset], "\n")
	start := strings.LastIndexByte(text[:offset], '\n') + 1
	end := strings.IndexByte(text[offset:], '\n')
	if end < 0 {
		end = len(text)
	} else {
		end += int(offset)
	}
	return newError(parser, line, text[start:end], "invalid JSON: "+err.Error())
}

// lastLine returns the last non-empty line of text.
func lastLine(text string) string {
	text = strings.TrimRight(text, " \t\r\n")
	return text[strings.LastIndexByte(text, '\n')+1:]
}

// refuseCut is the first check of every line-oriented parser. Every tool
// read here ends each line with a newline, so text that does not end with
// one was cut (head -c, a size limit, a dropped connection, a copy-paste
// that stopped short) and its last line may have lost its end: "RevNAT=12"
// cut to "RevNAT=1" still parses, and a cut inside the leading spaces of a
// service's next backend line looks like a service with fewer backends. It
// returns nil when text is empty or ends with a newline. Otherwise it
// parses the complete lines before the cut to count the records they hold
// (noun names them, count counts them) and returns a Truncated error
// naming the cut line and the last complete one; an error on an earlier
// line is returned as it is, since it is the first thing wrong.
func refuseCut[T any](kind, noun, text string, parse func(string) (T, error), count func(T) int) error {
	if text == "" || text[len(text)-1] == '\n' {
		return nil
	}
	nl := strings.LastIndexByte(text, '\n')
	head := text[:nl+1]
	n := 0
	if v, err := parse(head); err == nil {
		n = count(v)
	} else if pe := (*Error)(nil); errors.As(err, &pe) && pe.Line > 0 {
		return err
	}
	msg := "output ends mid-line, without a final newline (truncated); " + strconv.Itoa(n) + " complete " + noun + " before it"
	if k, line := lastComplete(head); k > 0 {
		msg += ", the last complete line is line " + strconv.Itoa(k) + " " + strconv.Quote(shorten(line))
	}
	e := newError(kind, 1+strings.Count(head, "\n"), text[nl+1:], msg)
	e.Truncated = true
	return e
}

// lastComplete is the number and text of the last non-blank line of head,
// text that ends with a newline; 0 when it has none.
func lastComplete(head string) (int, string) {
	end := len(head)
	for n := strings.Count(head, "\n"); n > 0; n-- {
		start := strings.LastIndexByte(head[:end-1], '\n') + 1
		if line := head[start : end-1]; !isBlank(line) {
			return n, line
		}
		end = start
	}
	return 0, ""
}

// jsonOrText parses text with fromJSON when it starts like JSON ('[' or
// '{') and with fromText otherwise; when the JSON attempt fails it tries
// text too (some text output starts with a bracket), and when both fail
// the error names both attempts.
func jsonOrText[T any](kind, text string, fromJSON, fromText func(string) (T, error)) (T, error) {
	t := strings.TrimLeft(text, " \t\r\n")
	if !strings.HasPrefix(t, "[") && !strings.HasPrefix(t, "{") {
		return fromText(text)
	}
	v, jerr := fromJSON(text)
	if jerr == nil {
		return v, nil
	}
	v, terr := fromText(text)
	if terr == nil {
		return v, nil
	}
	var zero T
	je, te := asParseError(kind, jerr), asParseError(kind, terr)
	e := &Error{Parser: kind, Line: je.Line, Text: je.Text, Truncated: je.Truncated,
		Msg: "neither JSON (" + je.Msg + ") nor text (" + te.position() + te.Msg + ")"}
	return zero, e
}

func asParseError(kind string, err error) *Error {
	var pe *Error
	if errors.As(err, &pe) {
		return pe
	}
	return &Error{Parser: kind, Msg: err.Error()}
}

// position is "line N: " for an error on a line, else "".
func (e *Error) position() string {
	if e.Line > 0 {
		return "line " + strconv.Itoa(e.Line) + ": "
	}
	return ""
}

// errString is an error that is its message: what a line parser returns
// for its caller to wrap with the line (newError).
type errString string

func (e errString) Error() string { return string(e) }
