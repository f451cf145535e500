package parsetest

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"unicode"
)

// Invented lists the values a parser's result holds that its JSON source
// never printed: each field of the result that is "", 0 or false, named by
// its path, for which the source has no key of a like name (interface-index
// for interfaceIndex, k8s-pod-name for podName) holding an empty string,
// a zero or false. A parser that fills a missing key with its Go zero value
// says "" where Cilium said nothing; the field must be null instead.
// allowed names result fields that are the parser's own making (a count,
// a value derived from others), by their last key.
func Invented(raw []byte, result any, allowed ...string) ([]string, error) {
	var src any
	if err := json.Unmarshal(raw, &src); err != nil {
		return nil, fmt.Errorf("source is not JSON: %v", err)
	}
	b, err := json.Marshal(result)
	if err != nil {
		return nil, err
	}
	var res any
	if err := json.Unmarshal(b, &res); err != nil {
		return nil, err
	}
	printed := map[string]map[string]bool{} // normalized key -> printed zero kinds
	var index func(v any)
	index = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				n := normalize(k)
				if printed[n] == nil {
					printed[n] = map[string]bool{}
				}
				printed[n][zeroKind(e)] = true
				index(e)
			}
		case []any:
			for _, e := range x {
				index(e)
			}
		}
	}
	index(src)
	skip := map[string]bool{}
	for _, a := range allowed {
		skip[a] = true
	}
	seen := map[string]bool{}
	var out []string
	var walk func(path, key string, v any)
	walk = func(path, key string, v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				walk(path+"."+k, k, e)
			}
			return
		case []any:
			for _, e := range x {
				walk(path+"[]", key, e)
			}
			return
		}
		kind := zeroKind(v)
		if kind == "" || kind == "null" || key == "" || skip[key] {
			return
		}
		if printedLike(printed, normalize(key), kind) {
			return
		}
		if !seen[path] {
			seen[path] = true
			out = append(out, fmt.Sprintf("%s is %s, and the source prints no %s under a key like %q", path, showZero(kind), showZero(kind), key))
		}
	}
	walk("", "", res)
	sort.Strings(out)
	return out, nil
}

// printedLike reports whether a source key whose name ends with key's (or
// that key's name ends with) printed a zero of kind.
func printedLike(printed map[string]map[string]bool, key, kind string) bool {
	for k, kinds := range printed {
		if (strings.HasSuffix(k, key) || strings.HasSuffix(key, k)) && kinds[kind] {
			return true
		}
	}
	return false
}

// zeroKind is "string", "number" or "bool" for "", 0 and false, "null" for
// null, and "" for any other value.
func zeroKind(v any) string {
	switch x := v.(type) {
	case string:
		if x == "" {
			return "string"
		}
	case float64:
		if x == 0 {
			return "number"
		}
	case bool:
		if !x {
			return "bool"
		}
	case nil:
		return "null"
	}
	return ""
}

func showZero(kind string) string {
	switch kind {
	case "string":
		return `""`
	case "number":
		return "0"
	case "bool":
		return "false"
	}
	return kind
}

// normalize folds a key's spelling: k8s-pod-name and podName alike.
func normalize(k string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(k) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// OmittedZeros are the fields, by parser kind, that a parser reports as
// "", 0 or false when Cilium's JSON does not have the key: Cilium's API
// models write zero values with omitempty, so an absent key there is the
// model's zero, not a value Cilium did not know (as a pod name it does not
// track is). Each is kept here, by its path in the result, until it is
// decided field by field; a field that is no longer reported so must be
// taken off (InventedBeyond says so), and any other invented value fails.
var OmittedZeros = map[string][]string{
	"cilium-map-list": {"[].cacheEnabled", "[].entries", "[].entriesKnown", "[].errors"},
}

// Derived are the fields, by parser kind, that a parser computes from
// what was printed rather than copying a key: bpf policy get -o json
// prints the map's raw entry, whose Flags hold deny, whose Prefixlen
// counts the key's header bits and whose ProxyPortNetwork is in network
// byte order; empty says whether there was any entry. A service is
// remote when its flags name a cluster.
var Derived = map[string][]string{
	"cilium-bpf-policy-get": {".empty", ".entries[].deny", ".entries[].prefixLen", ".entries[].proxyPort"},
	"cilium-service-list":   {"[].remote"},
}

// InventedBeyond is Invented less the paths OmittedZeros and Derived list
// for kind: the values invented that no decision covers.
func InventedBeyond(kind string, raw []byte, result any) ([]string, error) {
	all, err := Invented(raw, result)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, line := range all {
		path, _, _ := strings.Cut(line, " ")
		if !slices.Contains(OmittedZeros[kind], path) && !slices.Contains(Derived[kind], path) {
			out = append(out, line)
		}
	}
	return out, nil
}
