// Package secret keeps the values of a run's secret variables and
// environment variables out of everything labrun writes or prints: the
// journal, reports, progress and messages. A value is replaced wherever it
// appears, in the forms the outputs encode it in (JSON, XML, URL), because
// it may reach an output inside a URL, an argv, an error or an operand of
// a failed assertion; lab output is shared (CI logs, screenshots).
package secret

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"io"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode"

	"github.com/labrun/labrun/internal/lang/visible"
)

// Redacted stands in for a secret value.
const Redacted = "[REDACTED]"

// words that make a name secret wherever they appear in it, whatever the
// case: API_TOKEN, dbPassword, client_secret, AWS_CREDENTIALS.
var secretWords = []string{"TOKEN", "PASSWORD", "PASSWD", "SECRET", "CREDENTIAL", "PRIVATE"}

// Name reports whether a variable or environment variable name is secret
// by default: it holds TOKEN, PASSWORD, PASSWD, SECRET, CREDENTIAL or
// PRIVATE, or KEY as a whole word (API_KEY, apiKey, key; not KEYBOARD or
// MONKEY).
func Name(name string) bool {
	up := strings.ToUpper(name)
	for _, w := range secretWords {
		if strings.Contains(up, w) {
			return true
		}
	}
	for _, w := range words(name) {
		if strings.EqualFold(w, "key") || strings.EqualFold(w, "keys") {
			return true
		}
	}
	return false
}

// words splits a name at non-letters and at lower-to-upper case changes.
func words(name string) []string {
	var out []string
	start := -1
	rs := []rune(name)
	for i, r := range rs {
		letter := unicode.IsLetter(r) || unicode.IsDigit(r)
		boundary := !letter || (i > 0 && unicode.IsUpper(r) && unicode.IsLower(rs[i-1]))
		if boundary && start >= 0 {
			out = append(out, string(rs[start:i]))
			start = -1
		}
		if letter && start < 0 {
			start = i
		}
	}
	if start >= 0 {
		out = append(out, string(rs[start:]))
	}
	return out
}

// Redactor replaces the secret values it was given. The zero value is
// ready and redacts nothing; it is safe for concurrent use.
type Redactor struct {
	mu       sync.RWMutex
	values   map[string]bool
	replacer *strings.Replacer
}

// Add records a secret value (an empty one is ignored) in every form an
// output may encode it in.
func (r *Redactor) Add(value string) {
	if value == "" {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.values == nil {
		r.values = map[string]bool{}
	}
	for _, form := range forms(value) {
		r.values[form] = true
	}
	olds := make([]string, 0, len(r.values))
	for v := range r.values {
		olds = append(olds, v)
	}
	// longest first, so that a value containing another is replaced whole
	sort.Slice(olds, func(i, j int) bool {
		if len(olds[i]) != len(olds[j]) {
			return len(olds[i]) > len(olds[j])
		}
		return olds[i] < olds[j]
	})
	pairs := make([]string, 0, 2*len(olds))
	for _, o := range olds {
		pairs = append(pairs, o, Redacted)
	}
	r.replacer = strings.NewReplacer(pairs...)
}

// forms are value as written and as the outputs encode it, up to three
// encodings deep: quoted as Go and JSON quote it (messages, the journal,
// JSON reports), escaped for URLs and for XML (JUnit reports), with its
// control characters escaped as printers show them (visible.Text and
// visible.Line, before the redacting writer sees the text). An operand
// of a failed assertion, say, is Go-quoted, then JSON-encoded in a report.
func forms(value string) []string {
	seen := map[string]bool{value: true}
	level := []string{value}
	for range 3 {
		var next []string
		for _, v := range level {
			for _, enc := range encodings {
				if f := enc(v); !seen[f] {
					seen[f] = true
					next = append(next, f)
				}
			}
		}
		level = next
	}
	out := make([]string, 0, len(seen))
	for f := range seen {
		out = append(out, f)
	}
	return out
}

// encodings are the ways labrun's outputs escape a string inside quotes.
var encodings = []func(string) string{
	func(s string) string { q := strconv.Quote(s); return q[1 : len(q)-1] },
	func(s string) string { b, _ := json.Marshal(s); return string(b[1 : len(b)-1]) },
	func(s string) string {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		enc.Encode(s)
		t := bytes.TrimSpace(b.Bytes())
		return string(t[1 : len(t)-1])
	},
	url.QueryEscape,
	url.PathEscape,
	func(s string) string { var b bytes.Buffer; xml.EscapeText(&b, []byte(s)); return b.String() },
	visible.Text,
	visible.Line,
}

// String returns s with every secret replaced.
func (r *Redactor) String(s string) string {
	if r == nil {
		return s
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	if r.replacer == nil {
		return s
	}
	return r.replacer.Replace(s)
}

// Bytes returns b with every secret replaced.
func (r *Redactor) Bytes(b []byte) []byte {
	if r == nil {
		return b
	}
	r.mu.RLock()
	empty := r.replacer == nil
	r.mu.RUnlock()
	if empty {
		return b
	}
	return []byte(r.String(string(b)))
}

// Writer redacts what is written to w. Each Write is redacted on its own:
// labrun's outputs write whole lines, so a value is never split between
// two writes.
func (r *Redactor) Writer(w io.Writer) io.Writer { return &writer{r: r, w: w} }

type writer struct {
	r *Redactor
	w io.Writer
}

func (w *writer) Write(p []byte) (int, error) {
	if _, err := w.w.Write(w.r.Bytes(p)); err != nil {
		return 0, err
	}
	return len(p), nil
}
