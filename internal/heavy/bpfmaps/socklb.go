package bpfmaps

import (
	"cmp"
	"net/netip"
	"sort"

	"github.com/labrun/labrun/internal/boundary/bpfentries"
)

// decodeAffinity decodes one cilium_lb4_affinity entry (layout.go,
// struct lb4_affinity_key / lb_affinity_val); backend and service are
// resolved by the caller.
func decodeAffinity(k, v []byte) bpfentries.Affinity {
	a := bpfentries.Affinity{
		NetNSCookie: k[10]&1 != 0,
		RevNATID:    netEndian.Uint16(k[8:10]),
		BackendID:   hostEndian.Uint32(v[8:12]),
		LastUsed:    hostEndian.Uint64(v[0:8]),
	}
	if a.NetNSCookie {
		c := hostEndian.Uint64(k[0:8])
		a.ClientCookie = &c
	} else {
		ip := ipv4String(k[0:4])
		a.ClientIP = &ip
	}
	return a
}

// decodeSockRevNAT decodes one cilium_lb4_reverse_sk entry (layout.go,
// struct ipv4_revnat_tuple / ipv4_revnat_entry).
func decodeSockRevNAT(k, v []byte) bpfentries.SockRevNAT {
	s := bpfentries.SockRevNAT{
		Cookie:       hostEndian.Uint64(k[0:8]),
		BackendIP:    ipv4String(k[8:12]),
		BackendPort:  netEndian.Uint16(k[12:14]),
		FrontendIP:   ipv4String(v[0:4]),
		FrontendPort: netEndian.Uint16(v[4:6]),
		RevNATID:     netEndian.Uint16(v[6:8]),
	}
	s.Backend = bpfentries.HostPort(s.BackendIP, s.BackendPort)
	s.Frontend = bpfentries.HostPort(s.FrontendIP, s.FrontendPort)
	return s
}

// Affinity dumps cilium_lb4_affinity and resolves each entry's backend
// against cilium_lb4_backends_v3 and its service against
// cilium_lb4_reverse_nat.
func (r *Reader) Affinity() (bpfentries.Affinities, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	bes, err := r.backendsLocked()
	if err != nil {
		return nil, err
	}
	rns, err := r.revNATsLocked()
	if err != nil {
		return nil, err
	}
	om, err := r.get(MapAffinity)
	if err != nil {
		return nil, err
	}
	out := bpfentries.Affinities{}
	err = dumpMap(om, func(k *rawAffinityKey, v *rawAffinityVal) {
		out = append(out, decodeAffinity(k[:], v[:]))
	})
	if err != nil {
		return nil, err
	}
	for i := range out {
		if b := bes.ByID(int(out[i].BackendID)); b != nil {
			out[i].Backend = &b.Address
		}
		if rn := rns.ByID(int(out[i].RevNATID)); rn != nil {
			out[i].Service = &rn.Address
		}
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.RevNATID != b.RevNATID {
			return a.RevNATID < b.RevNATID
		}
		if a.NetNSCookie != b.NetNSCookie {
			return !a.NetNSCookie
		}
		if a.NetNSCookie {
			return *a.ClientCookie < *b.ClientCookie
		}
		return compareIP(*a.ClientIP, *b.ClientIP) < 0
	})
	return out, nil
}

// SockRevNAT dumps cilium_lb4_reverse_sk.
func (r *Reader) SockRevNAT() (bpfentries.SockRevNATs, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	om, err := r.get(MapReverseSK)
	if err != nil {
		return nil, err
	}
	out := bpfentries.SockRevNATs{}
	err = dumpMap(om, func(k *rawRevNATTuple, v *rawRevNATEntry) {
		out = append(out, decodeSockRevNAT(k[:], v[:]))
	})
	if err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if c := cmp.Or(compareIP(a.FrontendIP, b.FrontendIP), cmp.Compare(a.FrontendPort, b.FrontendPort),
			compareIP(a.BackendIP, b.BackendIP), cmp.Compare(a.BackendPort, b.BackendPort)); c != 0 {
			return c < 0
		}
		return a.Cookie < b.Cookie
	})
	return out, nil
}

// compareIP orders two addresses numerically ("" first).
func compareIP(a, b string) int {
	x, _ := netip.ParseAddr(a)
	y, _ := netip.ParseAddr(b)
	return x.Compare(y)
}
