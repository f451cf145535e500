package bpfmaps

import (
	"net/netip"
	"reflect"
	"testing"

	"github.com/labrun/labrun/internal/boundary/bpfentries"
)

// ipcK builds an ipcache.Key as NewKey does (ipcache.go L94).
func ipcK(prefix string, cluster uint16) ciliumIPCacheKey {
	p := netip.MustParsePrefix(prefix)
	k := ciliumIPCacheKey{Prefixlen: ipcacheStaticPrefixBits + uint32(p.Bits()), ClusterID: cluster}
	copy(k.IP[:], p.Addr().AsSlice())
	k.Family = familyIPv6
	if p.Addr().Is4() {
		k.Family = familyIPv4
	}
	return k
}

// ipcV builds a RemoteEndpointInfo as NewValue does (ipcache.go L176).
func ipcV(id uint32, tunnel string, key, flags uint8) ciliumRemoteEndpointInfo {
	v := ciliumRemoteEndpointInfo{SecurityIdentity: id, Key: key, Flags: flags}
	if tunnel != "" {
		a := netip.MustParseAddr(tunnel)
		v.Flags |= 1 << 1 // FlagHasTunnelEndpoint
		copy(v.TunnelEndpoint[:], a.AsSlice())
		if a.Is6() {
			v.Flags |= 1 << 2 // FlagIPv6TunnelEndpoint
		}
	}
	return v
}

func TestIPCache(t *testing.T) {
	root := privateBPFFS(t)
	m := createPinned(t, root, MapIPCache, specIPCache())
	for _, f := range []struct {
		k ciliumIPCacheKey
		v ciliumRemoteEndpointInfo
	}{
		{ipcK("10.42.0.17/32", 0), ipcV(12345, "", 0, 0)},
		{ipcK("10.42.1.0/24", 0), ipcV(6, "192.168.1.11", 3, 0)},
		{ipcK("0.0.0.0/0", 0), ipcV(2, "", 0, 0)},
		{ipcK("fd00::1/128", 0), ipcV(7, "fd00::2", 0, 0)},
		{ipcK("10.50.0.0/16", 7), ipcV(8, "172.16.0.1", 0, 1<<3|1<<0)},
	} {
		put(t, m, f.k, f.v)
	}
	r := openReader(t, root)
	got, err := r.IPCache()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("LPM trie read with batch lookups: %v", r.maps[MapIPCache].batch)
	want := bpfentries.IPCacheEntries{
		{Prefix: "0.0.0.0/0", IP: "0.0.0.0", PrefixLen: 0, Family: "IPv4", Identity: 2, TunnelEndpoint: "0.0.0.0",
			FlagNames: []string{}, FlagsText: "<none>", Value: "identity=2 encryptkey=0 tunnelendpoint=0.0.0.0 flags=<none>"},
		{Prefix: "10.42.0.17/32", IP: "10.42.0.17", PrefixLen: 32, Family: "IPv4", Identity: 12345, TunnelEndpoint: "0.0.0.0",
			FlagNames: []string{}, FlagsText: "<none>", Value: "identity=12345 encryptkey=0 tunnelendpoint=0.0.0.0 flags=<none>"},
		{Prefix: "10.42.1.0/24", IP: "10.42.1.0", PrefixLen: 24, Family: "IPv4", Identity: 6, TunnelEndpoint: "192.168.1.11",
			EncryptKey: 3, Flags: 2, FlagNames: []string{"hastunnel"}, FlagsText: "hastunnel",
			Value: "identity=6 encryptkey=3 tunnelendpoint=192.168.1.11 flags=hastunnel"},
		{Prefix: "10.50.0.0/16@7", IP: "10.50.0.0", PrefixLen: 16, Family: "IPv4", ClusterID: 7, Identity: 8, TunnelEndpoint: "172.16.0.1",
			Flags: 11, FlagNames: []string{"skiptunnel", "hastunnel", "remotecluster"}, FlagsText: "skiptunnel,hastunnel,remotecluster",
			Value: "identity=8 encryptkey=0 tunnelendpoint=172.16.0.1 flags=skiptunnel,hastunnel,remotecluster"},
		{Prefix: "fd00::1/128", IP: "fd00::1", PrefixLen: 128, Family: "IPv6", Identity: 7, TunnelEndpoint: "fd00::2",
			Flags: 6, FlagNames: []string{"hastunnel", "ipv6tunnel"}, FlagsText: "hastunnel,ipv6tunnel",
			Value: "identity=7 encryptkey=0 tunnelendpoint=fd00::2 flags=hastunnel,ipv6tunnel"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ipcache:\n got %s\nwant %s", js(got), js(want))
	}

	for ip, wantID := range map[string]int{"10.42.1.9": 6, "10.42.0.17": 12345, "8.8.8.8": 2, "10.50.1.1": 2, "fd00::1": 7, "fd00::9": 0} {
		if id := got.IdentityOf(ip); id != wantID {
			t.Errorf("IdentityOf(%s) = %d, want %d", ip, id, wantID)
		}
		// The kernel's LPM lookup agrees with the userspace one.
		e, err := r.LookupIPCache(ip)
		if err != nil {
			t.Fatalf("LookupIPCache(%s): %v", ip, err)
		}
		kid := 0
		if e != nil {
			kid = int(e.Identity)
			if e.IP != ip || e.PrefixLen != -1 {
				t.Errorf("LookupIPCache(%s) = %+v", ip, e)
			}
		}
		if kid != wantID {
			t.Errorf("LookupIPCache(%s).Identity = %d, want %d", ip, kid, wantID)
		}
	}
	if e := got.Find("10.42.1.0/24"); e == nil || e.TunnelEndpoint != "192.168.1.11" {
		t.Errorf("Find(10.42.1.0/24) = %+v", e)
	}
	if e := got.Find("10.42.0.17"); e == nil || e.Identity != 12345 {
		t.Errorf("Find(bare IP) = %+v", e)
	}
	if n := len(got.WithIdentity(2)); n != 1 {
		t.Errorf("WithIdentity(2) = %d", n)
	}
}
