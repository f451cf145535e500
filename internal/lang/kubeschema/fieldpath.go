package kubeschema

import (
	"encoding/json"
	"strconv"
	"strings"
)

// FieldPath follows a path in the API server's own notation, as its
// refusal of an applied object names the value (structured-merge-diff's
// fieldpath: .spec.containers[name="web"].command, [containerPort=80,protocol="TCP"]
// for an item of a list keyed by several fields, [=x] for an item of a
// set, [3] for an index), through n. It returns the path in this
// package's notation and the value, as far as n has it.
func (n *Node) FieldPath(fp string) (Path, *Node) {
	var path Path
	rest := fp
	for rest != "" && n != nil {
		var next *Node
		var seg any
		switch {
		case rest[0] == '.' && n.Kind == Map:
			// the longest key that the rest starts with: a key may hold dots
			// (metadata.labels.app.kubernetes.io/name)
			best := -1
			for i, k := range n.Keys {
				after := rest[1:]
				if strings.HasPrefix(after, k) && (len(after) == len(k) || after[len(k)] == '.' || after[len(k)] == '[') &&
					(best < 0 || len(k) > len(n.Keys[best])) {
					best = i
				}
			}
			if best < 0 {
				return path, n
			}
			seg, next, rest = n.Keys[best], n.Vals[best], rest[1+len(n.Keys[best]):]
		case rest[0] == '[' && n.Kind == List:
			end := closingBracket(rest)
			if end < 0 {
				return path, n
			}
			i := matchItem(n, rest[1:end])
			if i < 0 {
				return path, n
			}
			seg, next, rest = i, n.Items[i], rest[end+1:]
		default:
			return path, n
		}
		path = append(path, seg)
		n = next
	}
	return path, n
}

// closingBracket is the index of the ] that closes the [ at s[0], past
// quoted strings; -1 when there is none.
func closingBracket(s string) int {
	quoted := false
	for i := 1; i < len(s); i++ {
		switch {
		case quoted && s[i] == '\\':
			i++
		case s[i] == '"':
			quoted = !quoted
		case !quoted && s[i] == ']':
			return i
		}
	}
	return -1
}

// matchItem finds the item of list n that a bracket's contents name: an
// index, a set's value (=x) or key fields (name="web",port=80); -1 when
// none is found.
func matchItem(n *Node, sel string) int {
	if i, err := strconv.Atoi(sel); err == nil {
		if i >= 0 && i < len(n.Items) {
			return i
		}
		return -1
	}
	if v, ok := strings.CutPrefix(sel, "="); ok {
		for i, it := range n.Items {
			if sameJSON(it, v) {
				return i
			}
		}
		return -1
	}
	keys := splitKeys(sel)
	for i, it := range n.Items {
		all := len(keys) > 0
		for _, kv := range keys {
			k, v, _ := strings.Cut(kv, "=")
			if !sameJSON(it.Lookup(k), v) {
				all = false
				break
			}
		}
		if all {
			return i
		}
	}
	return -1
}

// splitKeys splits name="a,b",port=80 at the commas outside quotes.
func splitKeys(s string) []string {
	var out []string
	quoted, start := false, 0
	for i := 0; i < len(s); i++ {
		switch {
		case quoted && s[i] == '\\':
			i++
		case s[i] == '"':
			quoted = !quoted
		case !quoted && s[i] == ',':
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}

// sameJSON reports whether a scalar node holds the value that JSON text
// v writes.
func sameJSON(n *Node, v string) bool {
	if n == nil || n.Kind != Scalar {
		return false
	}
	var want any
	if err := json.Unmarshal([]byte(v), &want); err != nil {
		return false
	}
	switch got := n.Value.(type) {
	case int64:
		f, ok := want.(float64)
		return ok && f == float64(got)
	default:
		return got == want
	}
}
