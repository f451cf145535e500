package labtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/labrun/labrun/internal/leaf/outdir"
	"github.com/labrun/labrun/runner"
)

// The other half of proving a grader: a right answer written another way
// must pass. A learner's editor, language or tool writes the same JSON
// with other key order, spacing and number forms, lists in the order it
// found the items, a text file with or without its final newline; a
// grader that fails any of them fails a learner who was right. labrun
// test writes each graded file that check passed in such renderings and
// grades each as check does: every one must pass.

// Rendering is a graded file written another way with the same meaning,
// and what grading it found.
type Rendering struct {
	// File is the file's path relative to the output directory; Name
	// says how it was written ("keys in reverse order").
	File, Name string
	// Problems is what the check reported; empty when it passed.
	Problems []string
}

// Refused reports whether the check failed the rendering: a right answer
// refused.
func (r Rendering) Refused() bool { return len(r.Problems) > 0 }

// String is the line labrun test prints for a rendering.
func (r Rendering) String() string {
	if !r.Refused() {
		return fmt.Sprintf("%s written with %s: passed", r.File, r.Name)
	}
	return fmt.Sprintf("%s written with %s (the same answer): refused: %s", r.File, r.Name, strings.Join(r.Problems, "; "))
}

// rendering is one rewritten copy of a file.
type rendering struct {
	name    string
	content []byte
}

// renderAll writes each graded file of dir in every rendering of its kind
// into scratch and grades it there.
func renderAll(files []*runner.GradedFile, dir, scratch *outdir.Dir) ([]Rendering, error) {
	var out []Rendering
	for _, f := range files {
		c := f.Comparison
		orig, err := dir.ReadFile(c.Path, maxFile)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c.Path, err)
		}
		rs, err := renderings(c.Kind, orig)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c.Path, err)
		}
		for _, r := range rs {
			if err := scratch.WriteFile(c.Path, r.content); err != nil {
				return nil, err
			}
			got := Rendering{File: c.Path, Name: r.name, Problems: []string{}}
			for _, p := range f.Grade(scratch) {
				got.Problems = append(got.Problems, p.Text)
			}
			out = append(out, got)
		}
	}
	return out, nil
}

// renderings are the ways of writing orig, a file of kind json, kv or
// text, that mean what it means; a rendering equal to orig byte for byte
// is left out.
func renderings(kind string, orig []byte) ([]rendering, error) {
	var out []rendering
	add := func(name string, b []byte) {
		if !bytes.Equal(b, orig) {
			out = append(out, rendering{name, b})
		}
	}
	switch kind {
	case "json":
		doc, err := decode(orig)
		if err != nil {
			return nil, fmt.Errorf("not valid JSON: %w", err)
		}
		w := jsonWriter{}
		add("keys in alphabetical order", w.write(doc, "  ", "\n", false))
		add("keys in reverse alphabetical order", w.write(doc, "  ", "\n", true))
		add("no whitespace and no final newline", bytes.TrimSuffix(w.write(doc, "", "", false), []byte("\n")))
		add("tab indentation and CRLF line ends", w.write(doc, "\t", "\r\n", false))
		if hasList(doc) {
			add("every list reversed", jsonWriter{reverseLists: true}.write(doc, "  ", "\n", false))
		}
		if hasInteger(doc) {
			add("whole numbers as 80.0", jsonWriter{fractions: true}.write(doc, "  ", "\n", false))
		}
		if bytes.Contains(orig, []byte("/")) {
			add(`"/" escaped as "\/"`, bytes.ReplaceAll(w.write(doc, "  ", "\n", false), []byte("/"), []byte(`\/`)))
		}
	case "kv":
		lines := nonEmptyLines(orig)
		add("lines in reverse order", []byte(strings.Join(reversed(lines), "\n")+"\n"))
		add("no final newline", []byte(strings.Join(lines, "\n")))
		var spaced []string
		for _, l := range lines {
			k, v, ok := strings.Cut(l, "=")
			if ok {
				l = strings.TrimSpace(k) + " = " + strings.TrimSpace(v)
			}
			spaced = append(spaced, l)
		}
		add(`spaces around "="`, []byte(strings.Join(spaced, "\n")+"\n"))
	default:
		trimmed := bytes.TrimRight(orig, "\n")
		add("no final newline", trimmed)
		add("a final newline", append(append([]byte{}, trimmed...), '\n'))
		add("a blank line at the end", append(append([]byte{}, trimmed...), '\n', '\n'))
	}
	return out, nil
}

// jsonWriter writes a decoded JSON document (json.Number numbers) in a
// chosen form; the meaning stays the document's.
type jsonWriter struct {
	reverseLists bool // lists in reverse order
	fractions    bool // whole numbers as 80.0
}

// write renders doc indented by indent with lines ended by eol (no
// indentation and no line breaks when both are empty), the keys of each
// object sorted, or in reverse when reverseKeys.
func (w jsonWriter) write(doc any, indent, eol string, reverseKeys bool) []byte {
	var b bytes.Buffer
	w.value(&b, doc, indent, eol, 0, reverseKeys)
	if eol == "" {
		eol = "\n"
	}
	b.WriteString(eol)
	return b.Bytes()
}

func (w jsonWriter) value(b *bytes.Buffer, v any, indent, eol string, depth int, reverseKeys bool) {
	newline := func(d int) {
		b.WriteString(eol)
		b.WriteString(strings.Repeat(indent, d))
	}
	sep := ":"
	if indent != "" {
		sep = ": "
	}
	switch x := v.(type) {
	case map[string]any:
		if len(x) == 0 {
			b.WriteString("{}")
			return
		}
		keys := slices.Sorted(maps.Keys(x))
		if reverseKeys {
			slices.Reverse(keys)
		}
		b.WriteString("{")
		for i, k := range keys {
			if i > 0 {
				b.WriteString(",")
			}
			newline(depth + 1)
			kb, _ := json.Marshal(k)
			b.Write(kb)
			b.WriteString(sep)
			w.value(b, x[k], indent, eol, depth+1, reverseKeys)
		}
		newline(depth)
		b.WriteString("}")
	case []any:
		if len(x) == 0 {
			b.WriteString("[]")
			return
		}
		items := x
		if w.reverseLists {
			items = reversed(x)
		}
		b.WriteString("[")
		for i, item := range items {
			if i > 0 {
				b.WriteString(",")
			}
			newline(depth + 1)
			w.value(b, item, indent, eol, depth+1, reverseKeys)
		}
		newline(depth)
		b.WriteString("]")
	case json.Number:
		s := x.String()
		if w.fractions && !strings.ContainsAny(s, ".eE") {
			s += ".0"
		}
		b.WriteString(s)
	default:
		vb, _ := json.Marshal(x)
		b.Write(vb)
	}
}

func hasList(v any) bool {
	switch x := v.(type) {
	case []any:
		if len(x) > 1 {
			return true
		}
		return slices.ContainsFunc(x, hasList)
	case map[string]any:
		for _, e := range x {
			if hasList(e) {
				return true
			}
		}
	}
	return false
}

func hasInteger(v any) bool {
	switch x := v.(type) {
	case json.Number:
		return !strings.ContainsAny(x.String(), ".eE")
	case []any:
		return slices.ContainsFunc(x, hasInteger)
	case map[string]any:
		for _, e := range x {
			if hasInteger(e) {
				return true
			}
		}
	}
	return false
}

func nonEmptyLines(b []byte) []string {
	var out []string
	for _, l := range strings.Split(strings.ReplaceAll(string(b), "\r\n", "\n"), "\n") {
		if strings.TrimSpace(l) != "" {
			out = append(out, l)
		}
	}
	return out
}

func reversed[T any](s []T) []T {
	out := slices.Clone(s)
	slices.Reverse(out)
	return out
}
