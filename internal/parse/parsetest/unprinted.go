package parsetest

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Unprinted lists the values of a text parser's result that the text it
// read does not print: every leaf of the result (as its JSON shows it) that
// is
//   - a string, non-empty, that is not a substring of the text;
//   - a number that no number of the text is (decimal, with a sign or a
//     fraction or neither, or hex written 0x...; see numericTokens);
//   - "", 0 or false: a value the text can print only as an empty column
//     or no marker at all, so it must be null; 0 passes when a token of
//     the text is 0, false when the text says false, and "" when a line of
//     the text ends in a key of a like name and its ':' or '=' ("Key : ",
//     "errormsg="), the key's name folded as Invented folds it (a key
//     "Parent.Key" of a nested block is also looked for as "Key");
//   - true, unless the text says true.
//
// Strings are compared with every run of white space as one space, as
// the parsers collapse the padding of columns ("Ok   1.20.1" is "Ok
// 1.20.1").
//
// A field the parser computes rather than copies (a count, a flag from a
// marker, a unit conversion) is named in derived by its path in the result
// (".entries[].deny", "[].backends[].active"); its values are not checked.
// Each finding is one line naming the path and the value, once per path.
func Unprinted(text string, result any, derived ...string) ([]string, error) {
	return unprinted(text, result, derived, nil)
}

// unprinted is Unprinted where a word of text that names (a key of names)
// prints its number too.
func unprinted(text string, result any, derived []string, names map[string]float64) ([]string, error) {
	b, err := json.Marshal(result)
	if err != nil {
		return nil, err
	}
	var res any
	if err := json.Unmarshal(b, &res); err != nil {
		return nil, err
	}
	nums := numericTokens(text)
	for name, n := range names {
		if regexp.MustCompile(`(^|[^\w-])` + regexp.QuoteMeta(name) + `($|[^\w-]|-[^\w])`).MatchString(text) {
			nums[n] = true
		}
	}
	lower := strings.ToLower(text)
	flat := collapseSpace(text)
	empty := emptyKeys(text)
	found := map[string]bool{} // strings looked for, and whether the text has them
	contains := func(x string) bool {
		ok, seen := found[x]
		if !seen {
			ok = strings.Contains(flat, collapseSpace(x))
			found[x] = ok
		}
		return ok
	}
	seen := map[string]bool{}
	var out []string
	add := func(path, why string) {
		if !seen[path] {
			seen[path] = true
			out = append(out, path+" "+why)
		}
	}
	var walk func(path, key string, v any)
	walk = func(path, key string, v any) {
		if slices.Contains(derived, path) {
			return
		}
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				walk(path+"."+k, k, e)
			}
		case []any:
			for _, e := range x {
				walk(path+"[]", key, e)
			}
		case string:
			if x == "" {
				_, last, _ := strings.Cut(key, ".")
				if !empty[normalize(key)] && !empty[normalize(last)] {
					add(path, fmt.Sprintf(`is "", and the text prints no %q with an empty value: null if the text has nothing there`, key))
				}
			} else if !contains(x) {
				add(path, fmt.Sprintf("is %q, which the text does not print", x))
			}
		case float64:
			if !nums[x] {
				if x == 0 {
					add(path, "is 0, and the text prints no 0: null if the text has nothing there")
				} else {
					add(path, fmt.Sprintf("is %s, which no number of the text is", strconv.FormatFloat(x, 'f', -1, 64)))
				}
			}
		case bool:
			if !strings.Contains(lower, strconv.FormatBool(x)) {
				add(path, fmt.Sprintf("is %t, and the text does not say %t: a flag the parser derives is declared so", x, x))
			}
		}
	}
	walk("", "", res)
	sort.Strings(out)
	return out, nil
}

// numberRE matches the numbers a tool prints: hex with 0x, and decimal
// with an optional sign and fraction, with what comes before (group 1) so
// that digits inside a word ("eth0", "ipv4", "k8s") are not numbers.
var numberRE = regexp.MustCompile(`(?s)(^|.)(0[xX][0-9a-fA-F]+|-?[0-9]+(?:\.[0-9]+)*)`)

// numericTokens is the set of values the numbers of text have. A number
// must start a word: after a letter, digit, '_' or '.' it is part of a
// name. A run with more than one dot (an address, 10.42.0.1; a version,
// 1.20.1) is no number at all: a parser that reads one of its parts makes
// a value the text does not print as such.
func numericTokens(text string) map[float64]bool {
	out := map[float64]bool{}
	for _, m := range numberRE.FindAllStringSubmatch(text, -1) {
		if b := m[1]; b != "" && (isWordByte(b[0]) || b[0] == '.') {
			continue
		}
		tok := m[2]
		if len(tok) > 2 && (tok[1] == 'x' || tok[1] == 'X') {
			if u, err := strconv.ParseUint(tok[2:], 16, 64); err == nil {
				out[float64(u)] = true
			}
			continue
		}
		if strings.Count(tok, ".") > 1 {
			continue
		}
		if f, err := strconv.ParseFloat(tok, 64); err == nil && !math.IsInf(f, 0) {
			out[f] = true
		}
	}
	return out
}

func isWordByte(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_'
}

// TextDerived are the fields, by parser kind, that a text parser computes
// from what was printed rather than copying it; Unprinted does not check
// them. Each says from what. A flag from a marker is false when the
// marker is absent: the tool prints the marker only when it holds.
var TextDerived = map[string][]string{
	// a tcx or netkit line without link_id: bpftool prints link_id only
	// when it is not 0 (with -j, it prints the 0)
	"bpftool-net-show": {".attachments[].linkID"},
	// the attach type's short name, in either of bpftool's spellings
	// ("cgroup_inet4_post_bind" is post_bind4)
	"bpftool-cgroup-tree": {".programs[].hook"},
	// the name of the kernel's link type N bpftool < 7.3 prints as "type N"
	"bpftool-link-show": {"[].type"},
	// the "related" and "service" keywords; whether "(remaining: N
	// sec(s))" was printed; Packets and Bytes are RxPackets+TxPackets and
	// RxBytes+TxBytes on Cilium <= 1.15, which printed only those
	"cilium-bpf-ct-list": {".entries[].related", ".entries[].service", ".entries[].hasRemaining", ".entries[].packets", ".entries[].bytes"},
	// the prefix's address family
	"cilium-bpf-ipcache-list": {"[].family"},
	// the listing's shape (per-slot or grouped; which of --frontends,
	// --backends, --revnat); the "backend N not found" row; a frontend's
	// scope, external unless "/i" is printed
	"cilium-bpf-lb-list": {".layout", ".mode", ".entries[].notFound", ".entries[].frontend.scope", ".frontendRows[].frontend.scope"},
	// "Policy stats empty" or no entry; the POLICY column's Deny
	"cilium-bpf-policy-get": {".empty", ".entries[].deny"},
	// the sum of the "Lost N events" lines
	"cilium-monitor": {".lost"},
	// a frontend's scope, external unless "/i" is printed; the
	// "(Remote)" and "(preferred)" marks
	"cilium-service-list": {"[].frontend.scope", "[].remote", "[].backends[].preferred"},
	// whether the "KubeProxyReplacement Details:" block was printed; the
	// "(Direct Routing)" mark of a device
	"cilium-status": {".kubeProxyReplacementDetails.present", ".kubeProxyReplacementDevices[].directRouting", ".kubeProxyReplacementDetails.devices[].directRouting"},
	// whether an exit code was printed (exitcode=, "curl: (N)", kubectl's
	// "exit code N")
	"curl-w": {".hasExitCode"},
	// the count of lines; a line without a handle; the "direct-action"
	// and "jited" words
	"tc-filter-show": {".lines", ".filters[].head", ".filters[].directAction", ".filters[].jited"},
	// tcpdump -n prints a port as the last dot-separated part of its
	// address ("10.42.0.7.8080"), which the number rule does not read
	// inside an address; the protocol is named in lower case from the
	// line's form ("Flags [S.]" is tcp; "UDP", "ICMP", "ICMP6" as
	// printed; a DNS line, whose ports only UDP prints bare, udp); each
	// of tcpdump's "... unreachable" ICMP lines is named "destination
	// unreachable", ICMP's type 3
	"tcpdump": {".packets[].srcPort", ".packets[].dstPort", ".packets[].protocol", ".packets[].icmpType",
		".packets[].inner[].srcPort", ".packets[].inner[].dstPort", ".packets[].inner[].protocol", ".packets[].inner[].icmpType"},
}

// TextNames are the numbers, by parser kind, that a text prints by a name
// the parser documents: cilium-dbg monitor without -n prints a reserved
// identity by its name (pkg/identity/numericidentity.go's
// NumericIdentity.String: "remote ID host" is identity 1).
var TextNames = map[string]map[string]float64{
	"cilium-monitor": {"unknown": 0, "host": 1, "world": 2, "unmanaged": 3, "health": 4, "init": 5,
		"remote-node": 6, "kube-apiserver": 7, "ingress": 8, "world-ipv4": 9, "world-ipv6": 10},
}

// UnprintedBeyond is Unprinted with the fields TextDerived lists for kind,
// and the numbers TextNames names for kind printed by their name.
func UnprintedBeyond(kind, text string, result any) ([]string, error) {
	return unprinted(text, result, TextDerived[kind], TextNames[kind])
}

// spaceRE is a run of white space.
var spaceRE = regexp.MustCompile(`\s+`)

// collapseSpace turns every run of white space into one space.
func collapseSpace(s string) string { return spaceRE.ReplaceAllString(s, " ") }

// emptyKeyRE is a line that ends in a key and its separator: "Key : ",
// "name=".
var emptyKeyRE = regexp.MustCompile(`(?m)^\s*([^\s:=][^:=\n]*?)\s*[:=][ \t]*$`)

// emptyKeys are the keys, folded by normalize, of the lines of text that
// print a key with an empty value.
func emptyKeys(text string) map[string]bool {
	out := map[string]bool{}
	for _, m := range emptyKeyRE.FindAllStringSubmatch(text, -1) {
		out[normalize(m[1])] = true
	}
	return out
}
