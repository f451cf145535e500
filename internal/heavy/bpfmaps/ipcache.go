package bpfmaps

import (
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	"github.com/cilium/ebpf"

	"github.com/labrun/labrun/internal/boundary/bpfentries"
)

// ipcache address families (bpf/lib/eps.h L11-12, pkg/bpf/endpoint.go).
const (
	familyIPv4 = 1
	familyIPv6 = 2
)

func decodeIPCache(k, v []byte) bpfentries.IPCacheEntry {
	e := bpfentries.IPCacheEntry{
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
	for _, fn := range bpfentries.IPCacheFlags {
		if e.Flags&fn.Bit != 0 {
			e.FlagNames = append(e.FlagNames, fn.Name)
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
func (r *Reader) IPCache() (bpfentries.IPCacheEntries, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	om, err := r.get(MapIPCache)
	if err != nil {
		return nil, err
	}
	out := bpfentries.IPCacheEntries{}
	err = dumpMap(om, func(k *rawIPCacheKey, v *rawRemoteEPInfo) {
		out = append(out, decodeIPCache(k[:], v[:]))
	})
	if err != nil {
		return nil, err
	}
	bpfentries.SortIPCache(out)
	return out, nil
}

// LookupIPCache asks the kernel's LPM trie for the longest prefix that
// contains ip (cluster 0), exactly like the datapath's ipcache_lookup4/6.
// It is a single syscall, so cheap enough for tight polls. The kernel does
// not say which prefix matched: the result has IP = ip, Prefix "" and
// PrefixLen -1. No match gives (nil, nil).
func (r *Reader) LookupIPCache(ip string) (*bpfentries.IPCacheEntry, error) {
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
