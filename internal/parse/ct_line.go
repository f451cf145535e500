package parse

// One conntrack line: ctParser.line tries the one-pass reader (ct_fast.go)
// and falls back to general, which reads the line token by token and hands
// every key=value pair to set (ct_fields.go).

import (
	"strconv"
	"strings"
)

const ctLineMsg = errString(`expected "PROTO OUT|IN|SVC src -> dst [related] expires=N key=value..."`)

// ctParser holds what the lines of one listing share: blocks the optional
// fields point into (one allocation per thousand values instead of one per
// value) and the flag-name lists already seen (a busy table has a handful
// of distinct flag sets, so entries share them; treat them as read-only).
type ctParser struct {
	ints  slab[int]
	int64 slab[int64]
	ids   slab[uint64]
	flags map[string][]string
}

// slab hands out pointers into blocks of values.
type slab[T any] struct{ block []T }

func (s *slab[T]) new(v T) *T {
	if len(s.block) == cap(s.block) {
		s.block = make([]T, 0, 1024)
	}
	s.block = append(s.block, v)
	return &s.block[len(s.block)-1]
}

// noExtra is the Extra map of every entry without unknown keys.
var noExtra = map[string]string{}

// line parses one entry into e, which must be zero: in one pass when the
// line is laid out as Cilium 1.16 and later print nearly every line
// (fast), else token by token (general).
func (p *ctParser) line(line string, e *CTEntry) error {
	if p.fast(line, e) {
		return nil
	}
	*e = CTEntry{}
	return p.general(line, e)
}

// general parses one entry into e. It walks the line token by token
// (tokens are separated by single spaces; Cilium prints exactly one) and
// keeps substrings of line rather than copies.
func (p *ctParser) general(line string, e *CTEntry) error {
	t := tokenizer{s: line}
	e.Protocol, e.Direction = t.next(), t.next()
	if !ctProtoDir(e) {
		return ctLineMsg
	}
	var err error
	if e.Src, err = ParseAddr(t.next()); err != nil || e.Src.IP == "*" {
		return errString("source: " + errAddr.Error())
	}
	if t.next() != "->" {
		return ctLineMsg
	}
	if e.Dst, err = ParseAddr(t.next()); err != nil || e.Dst.IP == "*" {
		return errString("destination: " + errAddr.Error())
	}
	e.FlagNames = []string{}
	e.Extra = noExtra
	seen := 0
	for {
		tok, eq := t.nextKV()
		if tok == "" {
			if t.done() {
				break
			}
			continue // a doubled space
		}
		if eq > 0 {
			bit, err := p.set(e, tok[:eq], tok[eq+1:], &t)
			if err != nil {
				return err
			}
			if seen&bit != 0 {
				return errString(tok[:eq] + "= printed twice")
			}
			seen |= bit
			continue
		}
		switch tok {
		case "related":
			e.Related = true
			continue
		case "service":
			e.Service = true
			continue
		case "(remaining:":
			n, err := strconv.ParseInt(t.next(), 10, 64)
			if err != nil || t.next() != "sec(s))" {
				return errString(`expected "(remaining: N sec(s))"`)
			}
			e.Remaining, e.HasRemaining = &n, true
			continue
		}
		return errString("unexpected " + strconv.Quote(shortToken(tok)) + `, expected key=value`)
	}
	return ctComplete(e, seen)
}

// ctProtoDir reports whether an entry's first two words are a protocol
// name and a direction.
func ctProtoDir(e *CTEntry) bool {
	switch e.Direction {
	case "OUT", "IN", "SVC":
		return isProtoName(e.Protocol)
	}
	return false
}

// flagNames splits the names between Flags' brackets, reusing the list of
// an earlier entry with the same names.
func (p *ctParser) flagNames(names string) []string {
	if f, ok := p.flags[names]; ok {
		return f
	}
	f := make([]string, 0, countWords(names))
	for rest := names; rest != ""; {
		var name string
		name, rest, _ = strings.Cut(rest, " ")
		if name != "" {
			f = append(f, name)
		}
	}
	if p.flags == nil {
		p.flags = map[string][]string{}
	}
	p.flags[names] = f
	return f
}

// tokenizer splits on single spaces. Consecutive spaces yield empty
// tokens, which callers skip; that keeps it allocation-free and simple.
type tokenizer struct {
	s   string
	pos int
}

func (t *tokenizer) done() bool { return t.pos >= len(t.s) }

func (t *tokenizer) next() string {
	if t.pos >= len(t.s) {
		return ""
	}
	rest := t.s[t.pos:]
	if i := strings.IndexByte(rest, ' '); i >= 0 {
		t.pos += i + 1
		return rest[:i]
	}
	t.pos = len(t.s)
	return rest
}

// nextKV is next for a key=value token: it also returns the offset of
// the token's first '=' (-1 when it has none), found in the same pass
// over the bytes. Tokens are short, so a plain loop beats a call to
// strings.IndexByte per token and then another per '='.
func (t *tokenizer) nextKV() (string, int) {
	s, start, eq := t.s, t.pos, -1
	i := start
	for ; i < len(s) && s[i] != ' '; i++ {
		if s[i] == '=' && eq < 0 {
			eq = i - start
		}
	}
	t.pos = i
	if i < len(s) {
		t.pos++
	}
	return s[start:i], eq
}

func (t *tokenizer) peek() string {
	save := t.pos
	tok := t.next()
	t.pos = save
	return tok
}

// countWords counts space-separated words without allocating.
func countWords(s string) int {
	n := 0
	inWord := false
	for i := 0; i < len(s); i++ {
		if s[i] == ' ' {
			inWord = false
		} else if !inWord {
			inWord = true
			n++
		}
	}
	return n
}
