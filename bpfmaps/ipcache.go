package bpfmaps

import (
	"errors"
	"fmt"
	"net/netip"
	"sort"
	"strconv"
	"strings"

	"github.com/cilium/ebpf"
)

// ipcache address families (bpf/lib/eps.h L11-12, pkg/bpf/endpoint.go).
const (
	familyIPv4 = 1
	familyIPv6 = 2
)

// remote_endpoint_info flag bits (eps.h L100-104; ipcache.go
// RemoteEndpointInfoFlags), with the names RemoteEndpointInfoFlags.String
// prints.
var ipcacheFlagNames = [...]struct {
	bit  uint8
	name string
}{
	{1 << 0, "skiptunnel"},
	{1 << 1, "hastunnel"},
	{1 << 2, "ipv6tunnel"},
	{1 << 3, "remotecluster"},
}

// IPCacheEntry is one prefix of cilium_ipcache_v2.
type IPCacheEntry struct {
	// Prefix as cilium-dbg prints it: "10.42.0.17/32", with "@<cluster>"
	// when ClusterID is not 0 (cmtypes.PrefixCluster.String).
	Prefix    string `json:"prefix" expr:"prefix"`
	IP        string `json:"ip" expr:"ip"`
	PrefixLen int    `json:"prefixLen" expr:"prefixLen"`
	// Family is "IPv4" or "IPv6".
	Family    string `json:"family" expr:"family"`
	ClusterID uint16 `json:"clusterId" expr:"clusterId"`
	// Identity is the security identity of the prefix.
	Identity uint32 `json:"identity" expr:"identity"`
	// TunnelEndpoint is the node to tunnel to, "0.0.0.0" when none (as
	// cilium-dbg prints it).
	TunnelEndpoint string `json:"tunnelEndpoint" expr:"tunnelEndpoint"`
	// EncryptKey is the IPsec key index.
	EncryptKey uint8 `json:"encryptKey" expr:"encryptKey"`
	// Flags is the raw flag byte; FlagNames its names (skiptunnel,
	// hastunnel, ipv6tunnel, remotecluster); FlagsText as cilium-dbg
	// prints it ("hastunnel,remotecluster" or "<none>").
	Flags     uint8    `json:"flags" expr:"flags"`
	FlagNames []string `json:"flagNames" expr:"flagNames"`
	FlagsText string   `json:"flagsText" expr:"flagsText"`
	// Value is the value column of `cilium-dbg bpf ipcache list`:
	// "identity=N encryptkey=N tunnelendpoint=IP flags=F"
	// (RemoteEndpointInfo.String).
	Value string `json:"value" expr:"value"`
}

// IPCacheEntries is the decoded ipcache, sorted by family, address and
// prefix length.
type IPCacheEntries []IPCacheEntry

// Find returns the entry with exactly this prefix ("10.0.0.0/8", or a bare
// IP meaning /32 or /128), or nil.
func (es IPCacheEntries) Find(prefix string) *IPCacheEntry {
	p, err := parsePrefix(prefix)
	if err != nil {
		return nil
	}
	for i := range es {
		if es[i].ClusterID == 0 && es[i].IP == p.Addr().String() && es[i].PrefixLen == p.Bits() {
			return &es[i]
		}
	}
	return nil
}

// Lookup returns the longest prefix (cluster 0) containing ip, as the
// datapath would find it, or nil.
func (es IPCacheEntries) Lookup(ip string) *IPCacheEntry {
	addr, err := netip.ParseAddr(ip)
	if err != nil {
		return nil
	}
	var best *IPCacheEntry
	for i := range es {
		e := &es[i]
		if e.ClusterID != 0 {
			continue
		}
		a, err := netip.ParseAddr(e.IP)
		if err != nil || a.Is4() != addr.Is4() {
			continue
		}
		p := netip.PrefixFrom(a, e.PrefixLen)
		if p.Contains(addr) && (best == nil || e.PrefixLen > best.PrefixLen) {
			best = e
		}
	}
	return best
}

// IdentityOf returns the identity Lookup(ip) finds, or 0 (reserved
// "unknown") when no prefix matches.
func (es IPCacheEntries) IdentityOf(ip string) int {
	if e := es.Lookup(ip); e != nil {
		return int(e.Identity)
	}
	return 0
}

// WithIdentity returns the entries with the given identity.
func (es IPCacheEntries) WithIdentity(id int) IPCacheEntries {
	return filter(es, func(e IPCacheEntry) bool { return int(e.Identity) == id })
}

func parsePrefix(s string) (netip.Prefix, error) {
	if strings.Contains(s, "/") {
		return netip.ParsePrefix(s)
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Prefix{}, err
	}
	return netip.PrefixFrom(a, a.BitLen()), nil
}

func decodeIPCache(k, v []byte) IPCacheEntry {
	e := IPCacheEntry{
		ClusterID:  hostEndian.Uint16(k[4:6]),
		PrefixLen:  int(hostEndian.Uint32(k[0:4])) - ipcacheStaticPrefixBits,
		Identity:   hostEndian.Uint32(v[0:4]),
		EncryptKey: v[22],
		Flags:      v[23],
		FlagNames:  []string{},
	}
	var addr netip.Addr
	switch k[7] {
	case familyIPv4:
		e.Family = "IPv4"
		addr = netip.AddrFrom4([4]byte(k[8:12]))
	case familyIPv6:
		e.Family = "IPv6"
		addr = netip.AddrFrom16([16]byte(k[8:24]))
	default:
		e.Family = "unknown(" + strconv.Itoa(int(k[7])) + ")"
	}
	if addr.IsValid() {
		e.IP = addr.String()
		e.Prefix = netip.PrefixFrom(addr, e.PrefixLen).String()
	} else {
		e.Prefix = "<unknown>" // ipcache.Key.String
	}
	if e.ClusterID != 0 && addr.IsValid() {
		e.Prefix += "@" + strconv.Itoa(int(e.ClusterID))
	}
	// RemoteEndpointInfo.GetTunnelEndpoint: IPv4 unless flag ipv6tunnel.
	if e.Flags&(1<<2) == 0 {
		e.TunnelEndpoint = ipv4String(v[4:8])
	} else {
		e.TunnelEndpoint = netip.AddrFrom16([16]byte(v[4:20])).String()
	}
	for _, fn := range ipcacheFlagNames {
		if e.Flags&fn.bit != 0 {
			e.FlagNames = append(e.FlagNames, fn.name)
		}
	}
	e.FlagsText = "<none>"
	if len(e.FlagNames) > 0 {
		e.FlagsText = strings.Join(e.FlagNames, ",")
	}
	e.Value = fmt.Sprintf("identity=%d encryptkey=%d tunnelendpoint=%s flags=%s",
		e.Identity, e.EncryptKey, e.TunnelEndpoint, e.FlagsText)
	return e
}

// IPCache dumps cilium_ipcache_v2.
func (r *Reader) IPCache() (IPCacheEntries, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	om, err := r.get(MapIPCache)
	if err != nil {
		return nil, err
	}
	out := IPCacheEntries{}
	err = dumpMap(om, func(k *rawIPCacheKey, v *rawRemoteEPInfo) {
		out = append(out, decodeIPCache(k[:], v[:]))
	})
	if err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Family != b.Family {
			return a.Family < b.Family
		}
		ai, _ := netip.ParseAddr(a.IP)
		bi, _ := netip.ParseAddr(b.IP)
		if c := ai.Compare(bi); c != 0 {
			return c < 0
		}
		if a.PrefixLen != b.PrefixLen {
			return a.PrefixLen < b.PrefixLen
		}
		return a.ClusterID < b.ClusterID
	})
	return out, nil
}

// LookupIPCache asks the kernel's LPM trie for the longest prefix that
// contains ip (cluster 0), exactly like the datapath's ipcache_lookup4/6.
// It is a single syscall, so cheap enough for tight polls. The kernel does
// not say which prefix matched: the result has IP = ip, Prefix "" and
// PrefixLen -1. No match gives (nil, nil).
func (r *Reader) LookupIPCache(ip string) (*IPCacheEntry, error) {
	addr, err := netip.ParseAddr(ip)
	if err != nil {
		return nil, fmt.Errorf("ipcache lookup: %w", err)
	}
	var k rawIPCacheKey
	hostEndian.PutUint32(k[0:4], uint32(ipcacheStaticPrefixBits+addr.BitLen()))
	if addr.Is4() {
		k[7] = familyIPv4
		a := addr.As4()
		copy(k[8:12], a[:])
	} else {
		k[7] = familyIPv6
		a := addr.As16()
		copy(k[8:24], a[:])
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	om, err := r.get(MapIPCache)
	if err != nil {
		return nil, err
	}
	var v rawRemoteEPInfo
	if err := om.m.Lookup(&k, &v); err != nil {
		if errors.Is(err, ebpf.ErrKeyNotExist) {
			return nil, nil
		}
		return nil, fmt.Errorf("lookup %s in %s: %w", ip, MapIPCache, err)
	}
	// An LPM lookup returns only the value, not which prefix matched, so
	// the entry carries the looked-up IP with Prefix "" and PrefixLen -1;
	// IPCache().Lookup(ip) tells the prefix when that matters.
	e := decodeIPCache(k[:], v[:])
	e.Prefix = ""
	e.PrefixLen = -1
	return &e, nil
}
