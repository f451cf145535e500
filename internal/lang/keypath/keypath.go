// Package keypath names a value inside a lab file by its keys: `after.identity`,
// `pods[*].ip`. The `loose` and `hints` of a write step are such paths, and
// labrun check names the first differing value of a learner's file with one.
// A path written by an author is a pattern: `[*]` stands for every item of a
// list, since lists are compared as multisets and an item's position carries
// no meaning. A path check reports is concrete: `pods[1].ip` is item 1 of
// the learner's list.
package keypath

import (
	"fmt"
	"strconv"
	"strings"
)

// Seg is one step of a path: a key of an object, or an item of a list.
type Seg struct {
	Key string
	// Item marks a list item; Index is its position, or -1 for [*].
	Item  bool
	Index int
}

// Path is a sequence of segments; the empty path is the whole file.
type Path []Seg

// Parse reads a path as an author writes it: keys separated by dots, each
// optionally followed by [*]. A key cannot hold '.', '[' or ']'.
func Parse(s string) (Path, error) {
	if s == "" {
		return nil, fmt.Errorf("empty path")
	}
	var p Path
	for _, part := range strings.Split(s, ".") {
		key, rest, _ := strings.Cut(part, "[")
		if key == "" {
			return nil, fmt.Errorf("path %q has an empty key; write keys separated by dots, e.g. after.identity", s)
		}
		if strings.Contains(key, "]") {
			return nil, fmt.Errorf("path %q: unexpected ] after %q", s, key)
		}
		p = append(p, Seg{Key: key})
		if rest == "" && !strings.Contains(part, "[") {
			continue
		}
		for _, idx := range strings.Split("["+rest, "[")[1:] {
			switch {
			case idx == "*]":
				p = append(p, Seg{Item: true, Index: -1})
			case strings.HasSuffix(idx, "]") && isDigits(strings.TrimSuffix(idx, "]")):
				return nil, fmt.Errorf("path %q: lists are compared as multisets, so an item has no fixed position; write [*] for every item", s)
			default:
				return nil, fmt.Errorf("path %q: expected [*] after %q", s, key)
			}
		}
	}
	return p, nil
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// Key is the path one key further.
func (p Path) Key(k string) Path { return append(p[:len(p):len(p)], Seg{Key: k}) }

// Index is the path of item i of the list at p.
func (p Path) Index(i int) Path { return append(p[:len(p):len(p)], Seg{Item: true, Index: i}) }

// String writes the path as an author would: after.identity, pods[1].ip,
// pods[*].ip; the empty path is written as "(the whole file)".
func (p Path) String() string {
	if len(p) == 0 {
		return "(the whole file)"
	}
	var b strings.Builder
	for i, s := range p {
		switch {
		case s.Item && s.Index < 0:
			b.WriteString("[*]")
		case s.Item:
			b.WriteString("[" + strconv.Itoa(s.Index) + "]")
		default:
			if i > 0 {
				b.WriteByte('.')
			}
			b.WriteString(s.Key)
		}
	}
	return b.String()
}

// Covers reports whether c is the value pattern p names or lies inside it:
// c starts with p's keys, [*] standing for any item.
func (p Path) Covers(c Path) bool {
	if len(p) > len(c) {
		return false
	}
	for i, s := range p {
		t := c[i]
		if s.Item != t.Item || (!s.Item && s.Key != t.Key) || (s.Item && s.Index >= 0 && s.Index != t.Index) {
			return false
		}
	}
	return true
}

// Top is the first key of the path ("" for the whole file or a list item).
func (p Path) Top() string {
	if len(p) == 0 || p[0].Item {
		return ""
	}
	return p[0].Key
}
