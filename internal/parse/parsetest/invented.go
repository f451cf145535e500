package parsetest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"unicode"
)

// Invented lists the values a parser's result holds that its JSON source
// never printed: each field of the result that is "", 0 or false, named by
// its path, for which the source has no key of a like name (interface-index
// for interfaceIndex, k8s-pod-name for podName, prio for priority) holding
// an empty string, a zero or false. A parser that fills a missing key with
// its Go zero value says "" where Cilium said nothing; the field must be
// null instead.
// allowed names result fields that are the parser's own making (a count,
// a value derived from others), by their last key.
func Invented(raw []byte, result any, allowed ...string) ([]string, error) {
	src, err := jsonDocuments(raw)
	if err != nil {
		return nil, err
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
		if printedLike(printed, normalize(key), kind) || abbreviated[key] != "" && printedLike(printed, abbreviated[key], kind) {
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

// abbreviated maps a result key to the shorter name its source prints it
// under, which the like-name rule of printedLike does not match: bpftool's
// "prio" for priority.
var abbreviated = map[string]string{"priority": "prio"}

// jsonDocuments is the JSON source: one document, or a list of the
// documents of a stream of them (a line each, as hubble observe -o jsonpb
// prints).
func jsonDocuments(raw []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	var docs []any
	for {
		var doc any
		err := dec.Decode(&doc)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("source is not JSON: %v", err)
		}
		docs = append(docs, doc)
	}
	switch len(docs) {
	case 0:
		return nil, errors.New("source is not JSON: no document")
	case 1:
		return docs[0], nil
	}
	return docs, nil
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

// Derived are the fields, by parser kind, that a parser computes from
// what was printed rather than copying a key, so their "", 0 or false
// was printed in another form:
//   - bpf policy get -o json prints the map's raw entry, whose Flags
//     hold deny, whose Prefixlen counts the key's header bits and whose
//     ProxyPortNetwork is in network byte order; empty says whether there
//     was any entry.
//   - map list -o json prints each map's cache, a list or null; the
//     table's columns are counted from it as cilium-dbg's printMapList
//     counts them: entries (the non-null elements; null for a null
//     cache), entriesKnown and cacheEnabled (the cache is not null),
//     errors (the elements with a last-error; 0 without a cache, as the
//     table prints).
//   - service list -o json: remote is whether flags.cluster is printed,
//     the rule by which the table prints "(Remote)".
//   - status -o json: a device's directRouting is whether its name is
//     kube-proxy-replacement's directRoutingDevice, the rule by which
//     the text marks one device "(Direct Routing)".
//   - hubble observe -o jsonpb: lost is the sum of the num_events_lost of
//     the stream's lost_events lines, 0 when it printed none.
var Derived = map[string][]string{
	"cilium-bpf-policy-get": {".empty", ".entries[].deny", ".entries[].prefixLen", ".entries[].proxyPort"},
	"cilium-map-list":       {"[].cacheEnabled", "[].entries", "[].entriesKnown", "[].errors"},
	"cilium-service-list":   {"[].remote"},
	"cilium-status":         {".kubeProxyReplacementDetails.devices[].directRouting", ".kubeProxyReplacementDevices[].directRouting"},
	"hubble-observe":        {".lost"},
}

// InventedBeyond is Invented less the paths Derived lists for kind: the
// "", 0 and false that nothing printed.
func InventedBeyond(kind string, raw []byte, result any) ([]string, error) {
	all, err := Invented(raw, result)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, line := range all {
		path, _, _ := strings.Cut(line, " ")
		if !slices.Contains(Derived[kind], path) {
			out = append(out, line)
		}
	}
	return out, nil
}
