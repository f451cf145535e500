package bpfmaps

import (
	"bytes"
	"errors"
	"fmt"
	"net/netip"
	"sort"
	"strconv"
	"strings"

	"github.com/cilium/ebpf"

	"github.com/labrun/labrun/internal/bpfmaps/entries"
)

// Service flag bits: lb4_service.flags is the low byte, flags2 the high
// byte (bpf/lib/lb.h L359-380; Go: loadbalancer.ServiceFlags,
// pkg/loadbalancer/loadbalancer.go L197-218).
const (
	svcFlagExternalIPs     = 1 << 0
	svcFlagNodePort        = 1 << 1
	svcFlagExtLocalScope   = 1 << 2
	svcFlagHostPort        = 1 << 3
	svcFlagSessionAffinity = 1 << 4
	svcFlagLoadBalancer    = 1 << 5
	svcFlagRoutable        = 1 << 6
	svcFlagSourceRange     = 1 << 7
	svcFlagLocalRedirect   = 1 << 8
	svcFlagNat46x64        = 1 << 9
	svcFlagL7LoadBalancer  = 1 << 10
	svcFlagLoopback        = 1 << 11 // also L7 delegate
	svcFlagIntLocalScope   = 1 << 12
	svcFlagTwoScopes       = 1 << 13
	svcFlagQuarantined     = 1 << 14 // on backend slots
	svcFlagSourceRangeDeny = 1 << 14 // on the master slot
	svcFlagFwdModeDSR      = 1 << 15
)

// svcType mirrors ServiceFlags.SVCType (loadbalancer.go L299).
func svcType(f uint16) string {
	switch {
	case f&svcFlagExternalIPs != 0:
		return "ExternalIPs"
	case f&svcFlagNodePort != 0:
		return "NodePort"
	case f&svcFlagLoadBalancer != 0:
		return "LoadBalancer"
	case f&svcFlagHostPort != 0:
		return "HostPort"
	case f&svcFlagLocalRedirect != 0:
		return "LocalRedirect"
	}
	return "ClusterIP"
}

// svcFlagNames mirrors ServiceFlags.String (loadbalancer.go L363-411) item
// by item, so strings.Join(names, ", ") is exactly what cilium-dbg prints
// between the brackets of a `bpf lb list` slot-0 row.
func svcFlagNames(f uint16) []string {
	names := []string{svcType(f)}
	seenDeny := false
	if f&svcFlagExtLocalScope != 0 {
		names = append(names, "Local")
	}
	if f&svcFlagIntLocalScope != 0 {
		names = append(names, "InternalLocal")
	}
	if f&svcFlagTwoScopes != 0 {
		names = append(names, "two-scopes")
	}
	if f&svcFlagSessionAffinity != 0 {
		names = append(names, "sessionAffinity")
	}
	if f&svcFlagRoutable == 0 {
		names = append(names, "non-routable")
	}
	if f&svcFlagSourceRange != 0 {
		names = append(names, "check source-range")
		if f&svcFlagSourceRangeDeny != 0 {
			seenDeny = true
			names = append(names, "deny")
		}
	}
	if f&svcFlagNat46x64 != 0 {
		names = append(names, "46x64")
	}
	if f&svcFlagL7LoadBalancer != 0 {
		names = append(names, "l7-load-balancer")
	}
	if f&svcFlagLoopback != 0 {
		if svcType(f) == "HostPort" {
			names = append(names, "loopback")
		} else {
			names = append(names, "delegate-if-local")
		}
	}
	if !seenDeny && f&svcFlagQuarantined != 0 {
		names = append(names, "quarantined")
	}
	if f&svcFlagFwdModeDSR != 0 {
		names = append(names, "dsr")
	}
	return names
}

// backendState mirrors GetBackendStateFromFlags + BackendState.String
// (loadbalancer.go L508, L767): lb4_backend.flags holds the state.
func backendState(flags uint8) string {
	switch flags {
	case 1:
		return "terminating"
	case 2:
		return "quarantined"
	case 3:
		return "maintenance"
	}
	return "active"
}

// lbAlgorithm mirrors SVCLoadBalancingAlgorithm.String (loadbalancer.go L153).
func lbAlgorithm(v uint8) string {
	switch v {
	case 1:
		return "random"
	case 2:
		return "maglev"
	}
	return "undef"
}

// --- decoding -------------------------------------------------------------

type svcKey struct {
	addr  [4]byte
	port  uint16
	slot  uint16
	proto uint8
	scope uint8
}

func decodeSvcKey(k []byte) svcKey {
	return svcKey{
		addr:  [4]byte(k[0:4]),
		port:  netEndian.Uint16(k[4:6]),
		slot:  hostEndian.Uint16(k[6:8]),
		proto: k[8],
		scope: k[9],
	}
}

func encodeSvcKey(k svcKey) rawLB4Key {
	var b rawLB4Key
	copy(b[0:4], k.addr[:])
	netEndian.PutUint16(b[4:6], k.port)
	hostEndian.PutUint16(b[6:8], k.slot)
	b[8] = k.proto
	b[9] = k.scope
	return b
}

type svcValue struct {
	union  uint32
	count  uint16
	revNat uint16
	flags  uint16
	qcount uint16
}

func decodeSvcValue(v []byte) svcValue {
	return svcValue{
		union:  hostEndian.Uint32(v[0:4]),
		count:  hostEndian.Uint16(v[4:6]),
		revNat: netEndian.Uint16(v[6:8]),
		flags:  uint16(v[8]) | uint16(v[9])<<8,
		qcount: hostEndian.Uint16(v[10:12]),
	}
}

func decodeBackend(id uint32, v []byte) entries.Backend {
	ip := ipv4String(v[0:4])
	port := netEndian.Uint16(v[4:6])
	return entries.Backend{
		ID:        id,
		Address:   entries.HostPort(ip, port),
		IP:        ip,
		Port:      port,
		Protocol:  protoName(v[6]),
		State:     backendState(v[7]),
		Flags:     v[7],
		ClusterID: hostEndian.Uint16(v[8:10]),
		Zone:      v[10],
	}
}

func decodeRevNAT(k, v []byte) entries.RevNAT {
	return entries.RevNAT{
		ID:      netEndian.Uint16(k[0:2]),
		Address: entries.HostPort(ipv4String(v[0:4]), netEndian.Uint16(v[4:6])),
	}
}

func scopeName(s uint8) string {
	if s == 1 {
		return "internal"
	}
	return "external"
}

// frontendAddress mirrors Service4Key.String without the " (slot)" suffix.
func frontendAddress(k svcKey) string {
	a := entries.HostPort(ipv4String(k.addr[:]), k.port) + "/" + protoName(k.proto)
	if k.scope == 1 {
		a += "/i"
	}
	return a
}

// makeSlot builds a Slot and its cilium-dbg text (bpf_lb_list.go dumpSVC).
func makeSlot(slot uint16, v svcValue, be *entries.Backend) entries.Slot {
	s := entries.Slot{
		Slot:        int(slot),
		RevNATID:    v.revNat,
		Quarantined: slot > 0 && v.flags&svcFlagQuarantined != 0,
	}
	if slot == 0 {
		extra := ""
		if v.flags&svcFlagL7LoadBalancer != 0 {
			extra = fmt.Sprintf("(L7LB Proxy Port: %d)", l7ProxyPort(v.union))
		}
		s.Backend = "0.0.0.0:0"
		s.Found = true
		s.Text = fmt.Sprintf("%s:%d (%d) (%d) [%s] %s", "0.0.0.0", 0, v.revNat, 0,
			strings.Join(svcFlagNames(v.flags), ", "), extra)
		return s
	}
	s.BackendID = v.union
	if be == nil {
		s.Text = fmt.Sprintf("backend %d not found", v.union)
		return s
	}
	s.Found = true
	s.Backend = be.Address
	s.Protocol = be.Protocol
	s.State = be.State
	ip := be.IP
	if be.ClusterID != 0 { // AddrCluster.String
		ip += "@" + strconv.Itoa(int(be.ClusterID))
	}
	s.Text = fmt.Sprintf("%s:%d/%s (%d) (%d)", ip, be.Port, be.Protocol, v.revNat, slot)
	return s
}

// l7ProxyPort mirrors Service4Value.GetL7LBProxyPort: the port sits in the
// low 16 bits of the union in network byte order.
func l7ProxyPort(u uint32) uint16 {
	p := uint16(u)
	return p>>8 | p<<8
}

// setMaster fills f from its slot-0 (service) entry.
func setMaster(f *entries.Frontend, v svcValue) {
	f.HasMaster = true
	f.Count = int(v.count)
	f.QCount = int(v.qcount)
	f.RevNATID = v.revNat
	f.Flags = v.flags
	f.Type = svcType(v.flags)
	f.FlagNames = svcFlagNames(v.flags)
	f.FlagsText = strings.Join(f.FlagNames, ", ")
	if v.flags&svcFlagL7LoadBalancer != 0 {
		f.L7ProxyPort = l7ProxyPort(v.union)
	} else {
		f.LBAlgorithm = lbAlgorithm(uint8(v.union >> 24))
		f.AffinityTimeout = v.union & 0x00ff_ffff
	}
}

func newFrontend(k svcKey) *entries.Frontend {
	return &entries.Frontend{
		Address:   frontendAddress(k),
		IP:        ipv4String(k.addr[:]),
		Port:      k.port,
		Protocol:  protoName(k.proto),
		Scope:     scopeName(k.scope),
		FlagNames: []string{},
		Slots:     []entries.Slot{},
	}
}

// Backends dumps cilium_lb4_backends_v3.
func (r *Reader) Backends() (entries.Backends, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.backendsLocked()
}

func (r *Reader) backendsLocked() (entries.Backends, error) {
	om, err := r.get(MapBackends)
	if err != nil {
		return nil, err
	}
	out := entries.Backends{}
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
func (r *Reader) RevNATs() (entries.RevNATs, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.revNATsLocked()
}

func (r *Reader) revNATsLocked() (entries.RevNATs, error) {
	om, err := r.get(MapRevNAT)
	if err != nil {
		return nil, err
	}
	out := entries.RevNATs{}
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
func (r *Reader) Services() (entries.Frontends, error) {
	r.mu.Lock()
	defer r.mu.Unlock()

	bes, err := r.backendsLocked()
	if err != nil {
		return nil, err
	}
	byID := make(map[uint32]*entries.Backend, len(bes))
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
		fe  *entries.Frontend
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
			g.fe.RevNAT = rnByID[val.revNat]
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
	out := make(entries.Frontends, 0, len(list))
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
func (r *Reader) LookupFrontend(addr string) (*entries.Frontend, error) {
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
			fe.RevNAT = decodeRevNAT(rnKey[:], rnVal[:]).Address
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
			var be *entries.Backend
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
