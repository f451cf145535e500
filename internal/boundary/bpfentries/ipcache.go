package bpfentries

import (
	"cmp"
	"net/netip"
	"slices"
	"strings"
)

// IPCacheEntry is one prefix of cilium_ipcache_v2.
type IPCacheEntry struct {
	// Prefix as cilium-dbg prints it: "10.42.0.17/32", with "@<cluster>"
	// when ClusterID is not 0 (cmtypes.PrefixCluster.String).
	Prefix string `json:"prefix" expr:"prefix"`
	// IP is the prefix's address ("10.42.0.17"), PrefixLen its length
	// in bits (32 for one IPv4 address).
	IP        string `json:"ip" expr:"ip"`
	PrefixLen int    `json:"prefixLen" expr:"prefixLen"`
	// Family is "IPv4" or "IPv6".
	Family string `json:"family" expr:"family"`
	// ClusterID is the cluster (Cluster Mesh) the prefix belongs to; 0
	// for this cluster.
	ClusterID uint16 `json:"clusterId" expr:"clusterId"`
	// Identity is the security identity of the prefix.
	Identity uint32 `json:"identity" expr:"identity"`
	// TunnelEndpoint is the node to tunnel to, "0.0.0.0" when none (as
	// cilium-dbg prints it).
	TunnelEndpoint string `json:"tunnelEndpoint" expr:"tunnelEndpoint"`
	// EncryptKey is the IPsec key index traffic to the prefix is
	// encrypted with; 0 when not encrypted.
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

// IPCacheFlags are remote_endpoint_info's flag bits (bpf/lib/eps.h;
// ipcache.RemoteEndpointInfoFlags) with the names its String method
// prints, in the order it prints them. The map reader names the bits it
// reads; the parser of cilium-dbg's text turns the printed names back into
// bits.
var IPCacheFlags = [...]struct {
	Bit  uint8
	Name string
}{
	{1 << 0, "skiptunnel"},
	{1 << 1, "hastunnel"},
	{1 << 2, "ipv6tunnel"},
	{1 << 3, "remotecluster"},
}

// IPCacheEntries is the ipcache, as the map reader decodes it (sorted by
// family, address and prefix length) or as cilium-dbg printed it (in the
// printed order).
type IPCacheEntries []IPCacheEntry

// SortIPCache orders entries by family, address, prefix length and
// cluster, the order the map reader gives them. A function, not a method,
// so that expressions (which see a list's methods) cannot reorder a result.
func SortIPCache(es IPCacheEntries) {
	slices.SortFunc(es, func(a, b IPCacheEntry) int {
		if c := strings.Compare(a.Family, b.Family); c != 0 {
			return c
		}
		ai, _ := netip.ParseAddr(a.IP)
		bi, _ := netip.ParseAddr(b.IP)
		if c := ai.Compare(bi); c != 0 {
			return c
		}
		if c := cmp.Compare(a.PrefixLen, b.PrefixLen); c != 0 {
			return c
		}
		return cmp.Compare(a.ClusterID, b.ClusterID)
	})
}

// Find returns the entry with exactly this prefix ("10.0.0.0/8", or a bare
// IP meaning /32 or /128), or null.
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
// datapath would find it, or null.
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
