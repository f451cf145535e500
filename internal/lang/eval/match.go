package eval

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strconv"
)

// Mismatch compares actual with expected the way a partial-object
// assertion does (KUTTL's asserts, Chainsaw's): every key of an expected
// mapping must be in actual with a matching value, where keys actual has
// beyond those do not matter; an expected list must have as many items as
// actual's, each matching the item at its position; scalars must be equal,
// numbers by value (2 matches 2.0); an expected null matches a missing
// key. It returns "" when actual matches, else the first difference by
// path, e.g. `.status.readyReplicas is 1, expected 2`.
//
// Typed results (a step's struct) are compared through their JSON form,
// the names expressions use.
func Mismatch(actual, expected any) string {
	return mismatch("", plainJSON(actual), plainJSON(expected))
}

func mismatch(path string, a, e any) string {
	at := path
	if at == "" {
		at = "the value"
	}
	switch ev := e.(type) {
	case map[string]any:
		am, ok := a.(map[string]any)
		if !ok {
			return fmt.Sprintf("%s is %s, expected a mapping", at, Show(a))
		}
		keys := make([]string, 0, len(ev))
		for k := range ev {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			av, present := am[k]
			if !present && ev[k] != nil {
				return fmt.Sprintf("%s is missing, expected %s", path+"."+k, Show(ev[k]))
			}
			if m := mismatch(path+"."+k, av, ev[k]); m != "" {
				return m
			}
		}
		return ""
	case []any:
		al, ok := a.([]any)
		if !ok {
			return fmt.Sprintf("%s is %s, expected a list", at, Show(a))
		}
		if len(al) != len(ev) {
			return fmt.Sprintf("%s has %d items, expected %d", at, len(al), len(ev))
		}
		for i := range ev {
			if m := mismatch(path+"["+strconv.Itoa(i)+"]", al[i], ev[i]); m != "" {
				return m
			}
		}
		return ""
	case nil:
		if a != nil {
			return fmt.Sprintf("%s is %s, expected null", at, Show(a))
		}
		return ""
	}
	if x, ok := toFloat(a); ok {
		if y, ok := toFloat(e); ok && x == y {
			return ""
		}
	} else if reflect.DeepEqual(a, e) {
		return ""
	}
	return fmt.Sprintf("%s is %s, expected %s", at, Show(a), Show(e))
}

// plainJSON turns any value into maps, lists and scalars as JSON would
// show it; numbers stay float64 or int as they were where possible.
func plainJSON(v any) any {
	switch x := Plain(v).(type) {
	case nil, string, bool, int, int64, float64:
		return x
	case map[string]any:
		if isPlain(x) {
			return x
		}
	case []any:
		if isPlain(x) {
			return x
		}
	}
	b, err := json.Marshal(v)
	if err != nil {
		return v
	}
	var out any
	if json.Unmarshal(b, &out) != nil {
		return v
	}
	return out
}

// isPlain reports whether v holds only maps, lists and scalars already.
func isPlain(v any) bool {
	switch x := v.(type) {
	case nil, string, bool, int, int64, float64:
		return true
	case map[string]any:
		for _, e := range x {
			if !isPlain(e) {
				return false
			}
		}
		return true
	case []any:
		for _, e := range x {
			if !isPlain(e) {
				return false
			}
		}
		return true
	}
	return false
}
