package eval

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/expr-lang/expr/file"
	"github.com/expr-lang/expr/parser/lexer"
)

// expr-lang's syntax errors in the words of the expression as written:
// expr names its lexer's tokens (unexpected token Bracket("{"),
// Operator("=")) and places an unterminated string at its end. Each form
// its parser and lexer produce is reworded here, and placed at the text
// it is about; a form not listed keeps expr's words.

// syntaxError rewords err, an error of expr's parser for src.
func syntaxError(src string, err error) error {
	var fe *file.Error
	if !errors.As(err, &fe) {
		return err
	}
	out := *fe
	if brace := closureBraces(src, fe); brace >= 0 {
		out.Message = `a map literal where map, filter, all, ... take their closure: braces after a comma are the closure's own, so a map literal there needs parentheses: map(xs, ({"key": #}))`
		out.From = utf8.RuneCountInString(src[:brace])
		return &out
	}
	msg, from := plainSyntax(src, fe.Message, fe.From)
	out.Message, out.From = msg, from
	return &out
}

// The forms of expr's messages that name a token or a Go parse error.
var (
	unexpectedToken = regexp.MustCompile(`^unexpected token (\w+)(?:\((".*")\))?$`)
	badLiteral      = regexp.MustCompile(`^invalid (\w+) literal: strconv\.Parse\w+: parsing "(.*)": (.*)$`)
	badNumber       = regexp.MustCompile(`^bad number syntax: "(.*)"$`)
	unknownChar     = regexp.MustCompile(`^unrecognized character: U\+([0-9A-F]{4,6}) '(.*)'$`)
)

// plainSyntax is the message for expr's msg at rune from of src, and the
// rune the message is about.
func plainSyntax(src, msg string, from int) (string, int) {
	runes := []rune(src)
	switch {
	case unexpectedToken.MatchString(msg):
		m := unexpectedToken.FindStringSubmatch(msg)
		value, _ := strconv.Unquote(m[2])
		return unexpected(src, from, lexer.Kind(m[1]), value)
	case msg == "literal not terminated":
		if at, quote, ok := openString(runes); ok {
			return fmt.Sprintf("a string opened with %s is not closed: add the closing %s", codeSpan(string(quote)), codeSpan(string(quote))), at
		}
	case msg == "invalid char escape" || strings.HasPrefix(msg, "unable to unescape"):
		at := from
		for at > 0 && (at >= len(runes) || runes[at] != '\\') {
			at--
		}
		if at < len(runes) && runes[at] == '\\' && at+1 < len(runes) {
			esc := string(runes[at : at+2])
			return fmt.Sprintf(`%s is not an escape in a quoted string: write %s for a backslash, or put the string between backquotes instead of quotes, where a backslash is itself (as regular expressions want)`,
				codeSpan(esc), codeSpan(`\`+esc)), at
		}
		return "a backslash in a quoted string starts an escape it does not finish: write \\\\ for a backslash, or quote the string with backquotes (`...`)", from
	case msg == "unexpected end of expression":
		return fmt.Sprintf("the expression ends after %s, where a name was expected", codeSpan(lastText(runes, from))), from
	case msg == "expected name":
		return "a field name must follow `.` (write x.name, or x[expression] for a computed key)", from
	case msg == "unclosed comment":
		if i := strings.LastIndex(src, "/*"); i >= 0 {
			from = utf8.RuneCountInString(src[:i])
		}
		return "a comment opened with `/*` is not closed with `*/`", from
	}
	if m := badLiteral.FindStringSubmatch(msg); m != nil {
		if i := strings.Index(src, m[2]); i >= 0 {
			from = utf8.RuneCountInString(src[:i])
		}
		if m[3] == "value out of range" {
			return fmt.Sprintf("the number %s is out of range", m[2]), from
		}
		return fmt.Sprintf("%s is not a number", codeSpan(m[2])), from
	}
	if m := badNumber.FindStringSubmatch(msg); m != nil {
		return fmt.Sprintf("%s is not a number", codeSpan(m[1])), from
	}
	if m := unknownChar.FindStringSubmatch(msg); m != nil {
		return fmt.Sprintf("%s (U+%s) is not part of the expression language", codeSpan(m[2]), m[1]), from
	}
	return msg, from
}

// unexpected words expr's "unexpected token X" at rune from of src by
// what stands before the token: a value was expected after an operator,
// an opening bracket or a comma, an operator after a value.
func unexpected(src string, from int, kind lexer.Kind, value string) (string, int) {
	runes := []rune(src)
	tokens, _ := lexer.Lex(file.NewSource(src))
	at := -1
	for i, t := range tokens {
		if t.From == from && t.Kind == kind && t.Value == value {
			at = i
			break
		}
	}
	if at < 0 {
		return "unexpected " + codeSpan(lastText(runes, from)), from
	}
	tok := tokens[at]
	var prev *lexer.Token
	if at > 0 {
		prev = &tokens[at-1]
	}
	if tok.Kind == lexer.EOF {
		return endsEarly(runes, tokens[:at])
	}
	text := string(runes[tok.From:min(tok.To, len(runes))])
	switch {
	case tok.Is(lexer.Bracket, "{") && prev != nil && prev.Is(lexer.Identifier, "$"):
		return "`${{` inside an expression: this text is an expression already, so write what is inside `${{ }}` without them", prev.From
	case tok.Is(lexer.Operator, "="):
		op := operatorRun(runes, tok.From)
		return fmt.Sprintf("%s is not an operator: compare with %s", codeSpan(string(runes[op.from:op.to])), codeSpan(comparison(string(runes[op.from:op.to])))), op.from
	case tok.Is(lexer.Operator, "&"):
		return "`&` is not an operator: join conditions with `&&` (or `and`)", tok.From
	case tok.Kind == lexer.Bracket && strings.Contains(")]}", tok.Value) && !opened(tokens[:at], tok.Value):
		return fmt.Sprintf("a %s that closes nothing: no %s is open before it", codeSpan(text), codeSpan(opener(tok.Value))), tok.From
	case tok.Is(lexer.Operator, ",") && depth(tokens[:at]) == 0:
		return "a `,` outside brackets: commas separate the items of a list [...], a map {...} or a call's arguments", tok.From
	case prev == nil || expectsValue(*prev):
		if prev == nil {
			return fmt.Sprintf("%s where an expression was expected", codeSpan(text)), tok.From
		}
		return fmt.Sprintf("%s after %s, where an expression was expected", codeSpan(text), codeSpan(tokenText(runes, *prev))), tok.From
	}
	return fmt.Sprintf("%s after %s: an operator is missing between them (==, and, +, ...), or a `,` in a list", codeSpan(operand(runes, tokens, at, 1)), codeSpan(operand(runes, tokens, at-1, -1))), tok.From
}

// operand is the text of the member chain (vars.ns, steps.a.stdout) that
// token i is part of, read from i onwards (dir 1) or back (dir -1).
func operand(runes []rune, tokens []lexer.Token, i, dir int) string {
	inChain := func(t lexer.Token) bool {
		return t.Kind == lexer.Identifier || t.Is(lexer.Operator, ".", "?.")
	}
	j := i
	for j+dir >= 0 && j+dir < len(tokens) && inChain(tokens[i]) && inChain(tokens[j+dir]) {
		j += dir
	}
	from, to := tokens[min(i, j)], tokens[max(i, j)]
	if from.From < 0 || to.To > len(runes) || from.From >= to.To {
		return tokens[i].Value
	}
	return string(runes[from.From:to.To])
}

// endsEarly words an expression that ends where more was expected: a
// bracket left open, or an operator with nothing after it.
func endsEarly(runes []rune, tokens []lexer.Token) (string, int) {
	end := max(len(runes)-1, 0)
	var open []lexer.Token
	for _, t := range tokens {
		switch {
		case t.Kind == lexer.Bracket && strings.Contains("([{", t.Value):
			open = append(open, t)
		case t.Kind == lexer.Bracket && len(open) > 0:
			open = open[:len(open)-1]
		}
	}
	if len(open) > 0 {
		o := open[len(open)-1]
		return fmt.Sprintf("this %s is not closed: the expression ends before its %s", codeSpan(o.Value), codeSpan(closer(o.Value))), o.From
	}
	if len(tokens) == 0 {
		return "the expression is empty", 0
	}
	last := tokens[len(tokens)-1]
	if expectsValue(last) {
		return fmt.Sprintf("the expression ends after %s, where a value was expected", codeSpan(tokenText(runes, last))), end
	}
	return fmt.Sprintf("the expression ends too soon, after %s", codeSpan(tokenText(runes, last))), end
}

// expectsValue reports whether a value must follow t: t is an operator
// other than a postfix one, an opening bracket, a comma or a colon.
func expectsValue(t lexer.Token) bool {
	switch t.Kind {
	case lexer.Operator:
		return t.Value != "#"
	case lexer.Bracket:
		return strings.Contains("([{", t.Value)
	}
	return false
}

// opened reports whether a bracket that close closes is open after tokens.
func opened(tokens []lexer.Token, close string) bool {
	n := 0
	for _, t := range tokens {
		switch {
		case t.Is(lexer.Bracket, opener(close)):
			n++
		case t.Is(lexer.Bracket, close):
			n--
		}
	}
	return n > 0
}

// depth is how many brackets are open after tokens.
func depth(tokens []lexer.Token) int {
	n := 0
	for _, t := range tokens {
		switch {
		case t.Kind == lexer.Bracket && strings.Contains("([{", t.Value):
			n++
		case t.Kind == lexer.Bracket:
			n--
		}
	}
	return n
}

func opener(close string) string {
	return map[string]string{")": "(", "]": "[", "}": "{"}[close]
}

func closer(open string) string {
	return map[string]string{"(": ")", "[": "]", "{": "}"}[open]
}

type runeSpan struct{ from, to int }

// operatorRun is the run of operator characters around rune at: the
// whole of "===" or "=>" where expr names one "=" of it.
func operatorRun(runes []rune, at int) runeSpan {
	isOp := func(r rune) bool { return strings.ContainsRune("=!<>", r) }
	s := runeSpan{at, at + 1}
	for s.from > 0 && isOp(runes[s.from-1]) {
		s.from--
	}
	for s.to < len(runes) && isOp(runes[s.to]) {
		s.to++
	}
	return s
}

// comparison is the operator an author who wrote op most likely meant.
func comparison(op string) string {
	switch {
	case strings.HasPrefix(op, "!"):
		return "!="
	case strings.Contains(op, ">"):
		return ">="
	case strings.Contains(op, "<"):
		return "<="
	}
	return "=="
}

// openString finds a string literal that is not closed: the rune index
// of its opening quote, and the quote.
func openString(runes []rune) (int, rune, bool) {
	var quote rune
	at := 0
	for i := 0; i < len(runes); i++ {
		r := runes[i]
		switch {
		case quote == 0 && (r == '"' || r == '\'' || r == '`'):
			quote, at = r, i
		case quote != 0 && r == '\\' && quote != '`':
			i++
		case quote != 0 && r == quote:
			quote = 0
		}
	}
	return at, quote, quote != 0
}

// tokenText is the text of t as written in the expression.
func tokenText(runes []rune, t lexer.Token) string {
	if t.From >= 0 && t.To <= len(runes) && t.From < t.To {
		return string(runes[t.From:t.To])
	}
	return t.Value
}

// lastText is the word of runes that ends at rune at, for a message.
func lastText(runes []rune, at int) string {
	at = min(at, len(runes)-1)
	from := at
	for from > 0 && runes[from-1] != ' ' && at-from < 20 {
		from--
	}
	if at < 0 {
		return ""
	}
	return string(runes[from : at+1])
}

// codeSpan quotes expression text for a message, with backquotes as
// expressions are quoted elsewhere; text holding a backquote is quoted
// with double quotes.
func codeSpan(s string) string {
	if strings.Contains(s, "`") {
		return fmt.Sprintf("%q", s)
	}
	return "`" + s + "`"
}

// byteOffset is the byte offset in src of its rune index i, as expr's
// locations count.
func byteOffset(src string, i int) int {
	if i <= 0 {
		return 0
	}
	n := 0
	for off := range src {
		if n == i {
			return off
		}
		n++
	}
	return len(src)
}
