package eval

import (
	"fmt"
	"strings"
)

// A segment is a piece of a templated string: literal text, or the source
// of one ${{ }} expression with its byte offset in the string.
type segment struct {
	lit    string
	expr   string
	offset int // byte offset of the expression source within the string
	isExpr bool
}

// splitTemplate cuts s into literal text and ${{ expr }} pieces. "$${{"
// stands for a literal "${{". The closing "}}" is found with awareness of
// quoted strings and nested braces in the expression, so that
// ${{ {"a": {"b": 1}} }} and ${{ "}}" }} work.
func splitTemplate(s string) ([]segment, error) {
	var segs []segment
	var lit strings.Builder
	i := 0
	for i < len(s) {
		if strings.HasPrefix(s[i:], "$${{") {
			lit.WriteString("${{")
			i += 4
			continue
		}
		if !strings.HasPrefix(s[i:], "${{") {
			lit.WriteByte(s[i])
			i++
			continue
		}
		start := i + 3
		end, err := findClose(s, start)
		if err != nil {
			return nil, err
		}
		if lit.Len() > 0 {
			segs = append(segs, segment{lit: lit.String()})
			lit.Reset()
		}
		src := s[start:end]
		trimmed := strings.TrimLeft(src, " \t\n")
		off := start + len(src) - len(trimmed)
		trimmed = strings.TrimRight(trimmed, " \t\n")
		if trimmed == "" {
			return nil, &templateError{offset: i, msg: "empty expression ${{ }}"}
		}
		segs = append(segs, segment{expr: trimmed, offset: off, isExpr: true})
		i = end + 2
	}
	if lit.Len() > 0 {
		segs = append(segs, segment{lit: lit.String()})
	}
	return segs, nil
}

// templateError is a problem in the template syntax itself, at a byte
// offset of the string.
type templateError struct {
	offset int
	msg    string
}

func (e *templateError) Error() string { return e.msg }

func findClose(s string, start int) (int, error) {
	depth := 0
	var quote byte
	for i := start; i < len(s); i++ {
		c := s[i]
		if quote != 0 {
			switch {
			case c == '\\' && quote != '`':
				i++
			case c == quote:
				quote = 0
			}
			continue
		}
		switch c {
		case '"', '\'', '`':
			quote = c
		case '{':
			depth++
		case '}':
			if depth > 0 {
				depth--
				continue
			}
			if i+1 < len(s) && s[i+1] == '}' {
				return i, nil
			}
			return 0, &templateError{offset: i, msg: "unexpected } in ${{ }} expression"}
		}
	}
	if quote != 0 {
		return 0, &templateError{offset: start - 3, msg: fmt.Sprintf("unterminated %c string in ${{ }} expression", quote)}
	}
	return 0, &templateError{offset: start - 3, msg: "${{ has no closing }}"}
}

// HasTemplate reports whether s contains a ${{ }} expression (not only the
// escaped form).
func HasTemplate(s string) bool {
	return strings.Contains(strings.ReplaceAll(s, "$${{", ""), "${{")
}
