package bpfmaps

import (
	"bytes"
	"errors"
	"fmt"
	"net/netip"
	"sort"
	"strings"

	"github.com/cilium/ebpf"

	"github.com/labrun/labrun/internal/boundary/bpfentries"
)

// Backends dumps cilium_lb4_backends_v3.
func (r *Reader) Backends() (bpfentries.Backends, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.backendsLocked()
}

func (r *Reader) backendsLocked() (bpfentries.Backends, error) {
	om, err := r.get(MapBackends)
	if err != nil {
		return nil, err
	}
	out := bpfentries.Backends{}
	err = dumpMap(om, func(k *rawBackendKey, v *rawLB4Backend) {
		out = append(out, decodeBackend(hostEndian.Uint32(k[:]), v[:]))
	})
	if err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// RevNATs dumps cilium_lb4_reverse_nat.
func (r *Reader) RevNATs() (bpfentries.RevNATs, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.revNATsLocked()
}

func (r *Reader) revNATsLocked() (bpfentries.RevNATs, error) {
	om, err := r.get(MapRevNAT)
	if err != nil {
		return nil, err
	}
	out := bpfentries.RevNATs{}
	err = dumpMap(om, func(k *rawRevNATKey, v *rawLB4RevNAT) {
		out = append(out, decodeRevNAT(k[:], v[:]))
	})
	if err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// Services dumps cilium_lb4_services_v2 and resolves every slot against
// cilium_lb4_backends_v3 and every frontend against cilium_lb4_reverse_nat.
func (r *Reader) Services() (bpfentries.Frontends, error) {
	r.mu.Lock()
	defer r.mu.Unlock()

	bes, err := r.backendsLocked()
	if err != nil {
		return nil, err
	}
	byID := make(map[uint32]*bpfentries.Backend, len(bes))
	for i := range bes {
		byID[bes[i].ID] = &bes[i]
	}
	rns, err := r.revNATsLocked()
	if err != nil {
		return nil, err
	}
	rnByID := make(map[uint16]string, len(rns))
	for _, rn := range rns {
		rnByID[rn.ID] = rn.Address
	}

	om, err := r.get(MapServices)
	if err != nil {
		return nil, err
	}
	type group struct {
		key svcKey
		fe  *bpfentries.Frontend
	}
	groups := map[svcKey]*group{}
	err = dumpMap(om, func(k *rawLB4Key, v *rawLB4Service) {
		key := decodeSvcKey(k[:])
		val := decodeSvcValue(v[:])
		gk := key
		gk.slot = 0
		g := groups[gk]
		if g == nil {
			g = &group{key: gk, fe: newFrontend(gk)}
			groups[gk] = g
		}
		if key.slot == 0 {
			setMaster(g.fe, val)
			if a, ok := rnByID[val.revNat]; ok {
				g.fe.RevNAT = &a
			}
			g.fe.Slots = append(g.fe.Slots, makeSlot(0, val, nil))
			return
		}
		g.fe.Slots = append(g.fe.Slots, makeSlot(key.slot, val, byID[val.union]))
	})
	if err != nil {
		return nil, err
	}
	list := make([]*group, 0, len(groups))
	for _, g := range groups {
		sort.Slice(g.fe.Slots, func(i, j int) bool { return g.fe.Slots[i].Slot < g.fe.Slots[j].Slot })
		list = append(list, g)
	}
	sort.Slice(list, func(i, j int) bool {
		a, b := list[i].key, list[j].key
		if c := bytes.Compare(a.addr[:], b.addr[:]); c != 0 {
			return c < 0
		}
		if a.port != b.port {
			return a.port < b.port
		}
		if a.proto != b.proto {
			return a.proto < b.proto
		}
		return a.scope < b.scope
	})
	out := make(bpfentries.Frontends, 0, len(list))
	for _, g := range list {
		out = append(out, *g.fe)
	}
	return out, nil
}

// LookupFrontend reads one frontend with point lookups instead of dumping
// the maps: slot 0, then slots 1..Count+QCount, their backends and the rev
// NAT entry. It is the cheap way to poll a single service. addr is
// "ip:port/PROTO[/i]"; without "/PROTO" TCP, UDP and SCTP are tried in
// that order. A frontend that is not in the map gives (nil, nil).
func (r *Reader) LookupFrontend(addr string) (*bpfentries.Frontend, error) {
	keys, err := parseFrontendAddr(addr)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	svc, err := r.get(MapServices)
	if err != nil {
		return nil, err
	}
	bem, err := r.get(MapBackends)
	if err != nil {
		return nil, err
	}
	rnm, err := r.get(MapRevNAT)
	if err != nil {
		return nil, err
	}
	for _, k := range keys {
		var raw rawLB4Service
		rk := encodeSvcKey(k)
		if err := svc.m.Lookup(&rk, &raw); err != nil {
			if errors.Is(err, ebpf.ErrKeyNotExist) {
				continue
			}
			return nil, fmt.Errorf("lookup %s in %s: %w", addr, MapServices, err)
		}
		master := decodeSvcValue(raw[:])
		fe := newFrontend(k)
		setMaster(fe, master)
		fe.Slots = append(fe.Slots, makeSlot(0, master, nil))

		var rnKey rawRevNATKey
		netEndian.PutUint16(rnKey[:], master.revNat)
		var rnVal rawLB4RevNAT
		if err := rnm.m.Lookup(&rnKey, &rnVal); err == nil {
			a := decodeRevNAT(rnKey[:], rnVal[:]).Address
			fe.RevNAT = &a
		} else if !errors.Is(err, ebpf.ErrKeyNotExist) {
			return nil, fmt.Errorf("lookup rev NAT %d: %w", master.revNat, err)
		}

		for slot := 1; slot <= fe.Count+fe.QCount; slot++ {
			sk := k
			sk.slot = uint16(slot)
			rsk := encodeSvcKey(sk)
			if err := svc.m.Lookup(&rsk, &raw); err != nil {
				if errors.Is(err, ebpf.ErrKeyNotExist) {
					continue
				}
				return nil, fmt.Errorf("lookup %s slot %d: %w", addr, slot, err)
			}
			val := decodeSvcValue(raw[:])
			var bk rawBackendKey
			hostEndian.PutUint32(bk[:], val.union)
			var bv rawLB4Backend
			var be *bpfentries.Backend
			if err := bem.m.Lookup(&bk, &bv); err == nil {
				b := decodeBackend(val.union, bv[:])
				be = &b
			} else if !errors.Is(err, ebpf.ErrKeyNotExist) {
				return nil, fmt.Errorf("lookup backend %d: %w", val.union, err)
			}
			fe.Slots = append(fe.Slots, makeSlot(uint16(slot), val, be))
		}
		return fe, nil
	}
	return nil, nil
}

// parseFrontendAddr turns "ip:port[/PROTO[/i]]" into the slot-0 keys to
// try, in order.
func parseFrontendAddr(addr string) ([]svcKey, error) {
	parts := strings.Split(strings.TrimSpace(addr), "/")
	ap, err := netip.ParseAddrPort(parts[0])
	if err != nil || !ap.Addr().Is4() {
		return nil, fmt.Errorf("frontend %q: want ipv4:port[/PROTO[/i]]", addr)
	}
	base := svcKey{addr: ap.Addr().As4(), port: ap.Port()}
	if len(parts) > 3 || (len(parts) == 3 && parts[2] != "i") {
		return nil, fmt.Errorf("frontend %q: want ipv4:port[/PROTO[/i]]", addr)
	}
	if len(parts) == 3 {
		base.scope = 1
	}
	if len(parts) == 1 {
		var keys []svcKey
		for _, p := range []uint8{6, 17, 132} {
			k := base
			k.proto = p
			keys = append(keys, k)
		}
		return keys, nil
	}
	p, ok := protoNumber(parts[1])
	if !ok {
		return nil, fmt.Errorf("frontend %q: unknown protocol %q", addr, parts[1])
	}
	base.proto = p
	return []svcKey{base}, nil
}
