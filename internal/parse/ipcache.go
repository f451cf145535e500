package parse

import (
	"encoding/json"
	"net/netip"
	"strconv"
	"strings"

	"github.com/labrun/labrun/internal/boundary/bpfentries"
)

const kindIPCacheList = "cilium-bpf-ipcache-list"

// ParseIPCacheList parses `cilium-dbg bpf ipcache list` into the same
// entries the bpfmap action reads from the pinned map, so a lab can read
// the ipcache through the agent where the node's bpffs is out of reach and
// keep its expressions (Lookup, IdentityOf, WithIdentity).
//
// Text (cilium-dbg's TablePrinter over a map of prefix to values, in Go's
// map order; a second value of one prefix is printed under an empty first
// column):
//
//	IP PREFIX/ADDRESS   IDENTITY
//	10.42.1.0/24        identity=2 encryptkey=0 tunnelendpoint=10.250.42.3 flags=hastunnel
//	10.250.42.2/32      identity=1 encryptkey=0 tunnelendpoint=0.0.0.0 flags=<none>
//
// With -o json it is that map: {"10.42.1.0/24": ["identity=2 ..."]}. Rows
// describe themselves, so grep'd rows without the header are read too.
// Every value must carry its four fields; entries keep the printed order.
// An empty map prints nothing on stdout ("No entries found." goes to
// stderr), so empty input is refused rather than read as no entries.
func ParseIPCacheList(text string) (bpfentries.IPCacheEntries, error) {
	return jsonOrText(kindIPCacheList, text, parseIPCacheJSON, parseIPCacheText)
}

func parseIPCacheText(text string) (bpfentries.IPCacheEntries, error) {
	if err := refuseCut(kindIPCacheList, "entries", text, parseIPCacheText, func(l bpfentries.IPCacheEntries) int { return len(l) }); err != nil {
		return nil, err
	}
	r := newLineReader(text)
	out := bpfentries.IPCacheEntries{}
	prefix := ""
	seen := false
	for {
		line, ok := r.next()
		if !ok {
			break
		}
		if isBlank(line) {
			continue
		}
		seen = true
		if collapseSpace(line) == "IP PREFIX/ADDRESS IDENTITY" {
			continue
		}
		value := strings.TrimSpace(line)
		if line[0] != ' ' && line[0] != '\t' {
			prefix, value = cutField(line)
			value = strings.TrimSpace(value)
		} else if prefix == "" {
			return nil, newError(kindIPCacheList, r.num, line, "a value under an empty prefix column with no prefix above it")
		}
		e, why := ipcacheEntry(prefix, value)
		if why != "" {
			return nil, newError(kindIPCacheList, r.num, line, why)
		}
		out = append(out, e)
	}
	if !seen {
		return nil, newError(kindIPCacheList, 0, "", "empty input (cilium-dbg prints nothing on stdout for an empty ipcache)")
	}
	return out, nil
}

func parseIPCacheJSON(text string) (bpfentries.IPCacheEntries, error) {
	var m map[string][]string
	if err := json.Unmarshal([]byte(text), &m); err != nil {
		return nil, jsonError(kindIPCacheList, text, err)
	}
	out := bpfentries.IPCacheEntries{}
	for prefix, values := range m {
		for _, v := range values {
			e, why := ipcacheEntry(prefix, v)
			if why != "" {
				return nil, newError(kindIPCacheList, 0, prefix+": "+v, why)
			}
			out = append(out, e)
		}
	}
	// JSON objects have no order; entries come in the order the map
	// reader gives them, by prefix.
	bpfentries.SortIPCache(out)
	return out, nil
}

// ipcacheEntry reads one prefix and its value
// (RemoteEndpointInfo.String: "identity=N encryptkey=N tunnelendpoint=IP
// flags=F"). It returns why it cannot, naming what is missing or wrong.
func ipcacheEntry(prefix, value string) (bpfentries.IPCacheEntry, string) {
	e := bpfentries.IPCacheEntry{Prefix: prefix, FlagNames: []string{}}
	if prefix == "<unknown>" {
		e.Family = "unknown" // ipcache.Key.String of another family
	} else {
		addr, cluster, _ := strings.Cut(prefix, "@")
		p, err := netip.ParsePrefix(addr)
		if err != nil {
			return e, "expected an IP prefix such as 10.0.0.0/8 (with @CLUSTER when not 0), got " + strconv.Quote(prefix)
		}
		e.IP, e.PrefixLen = p.Addr().String(), p.Bits()
		e.Family = "IPv4"
		if p.Addr().Is6() {
			e.Family = "IPv6"
		}
		if cluster != "" {
			n, err := strconv.ParseUint(cluster, 10, 16)
			if err != nil || n == 0 {
				return e, "expected a cluster id 1-65535 after @, got " + strconv.Quote(cluster)
			}
			e.ClusterID = uint16(n)
		}
	}
	f := strings.Fields(value)
	e.Value = strings.Join(f, " ")
	names := [...]string{"identity=", "encryptkey=", "tunnelendpoint=", "flags="}
	if len(f) != len(names) {
		return e, "expected the value \"identity=N encryptkey=N tunnelendpoint=IP flags=F\", got " + strconv.Quote(value)
	}
	for i, n := range names {
		if !strings.HasPrefix(f[i], n) {
			return e, "expected " + strings.TrimSuffix(n, "=") + "= as field " + strconv.Itoa(i+1) + " of the value, got " + strconv.Quote(f[i])
		}
		f[i] = strings.TrimPrefix(f[i], n)
	}
	id, err := strconv.ParseUint(f[0], 10, 32)
	if err != nil {
		return e, "expected a number in identity=, got " + strconv.Quote(f[0])
	}
	key, err := strconv.ParseUint(f[1], 10, 8)
	if err != nil {
		return e, "expected a number 0-255 in encryptkey=, got " + strconv.Quote(f[1])
	}
	tep, err := netip.ParseAddr(f[2])
	if err != nil {
		return e, "expected an IP address in tunnelendpoint=, got " + strconv.Quote(f[2])
	}
	e.Identity, e.EncryptKey, e.TunnelEndpoint, e.FlagsText = uint32(id), uint8(key), tep.String(), f[3]
	if f[3] != "<none>" {
		for _, name := range strings.Split(f[3], ",") {
			bit, ok := ipcacheFlagBit(name)
			if !ok {
				return e, "unknown flag " + strconv.Quote(name) + " in flags= (known: skiptunnel, hastunnel, ipv6tunnel, remotecluster, or <none>)"
			}
			e.Flags |= bit
			e.FlagNames = append(e.FlagNames, name)
		}
	}
	return e, ""
}

func ipcacheFlagBit(name string) (uint8, bool) {
	for _, fl := range bpfentries.IPCacheFlags {
		if fl.Name == name {
			return fl.Bit, true
		}
	}
	return 0, false
}
