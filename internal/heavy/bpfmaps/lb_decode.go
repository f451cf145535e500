package bpfmaps

// Decoding the LB maps' raw keys and values into the entries that
// cilium-dbg bpf lb list shows (service types and flags, backend states,
// frontends and their slots), and encoding a service key for a lookup.
// The Reader's dumps and lookups are in lb.go.

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/labrun/labrun/internal/boundary/bpfentries"
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

func decodeBackend(id uint32, v []byte) bpfentries.Backend {
	ip := ipv4String(v[0:4])
	port := netEndian.Uint16(v[4:6])
	return bpfentries.Backend{
		ID:        id,
		Address:   bpfentries.HostPort(ip, port),
		IP:        ip,
		Port:      port,
		Protocol:  bpfentries.ProtoName(v[6]),
		State:     backendState(v[7]),
		Flags:     v[7],
		ClusterID: hostEndian.Uint16(v[8:10]),
		Zone:      v[10],
	}
}

func decodeRevNAT(k, v []byte) bpfentries.RevNAT {
	return bpfentries.RevNAT{
		ID:      netEndian.Uint16(k[0:2]),
		Address: bpfentries.HostPort(ipv4String(v[0:4]), netEndian.Uint16(v[4:6])),
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
	a := bpfentries.HostPort(ipv4String(k.addr[:]), k.port) + "/" + bpfentries.ProtoName(k.proto)
	if k.scope == 1 {
		a += "/i"
	}
	return a
}

// makeSlot builds a Slot and its cilium-dbg text (bpf_lb_list.go dumpSVC).
func makeSlot(slot uint16, v svcValue, be *bpfentries.Backend) bpfentries.Slot {
	s := bpfentries.Slot{
		Slot:     int(slot),
		RevNATID: v.revNat,
	}
	if slot == 0 {
		extra := ""
		if v.flags&svcFlagL7LoadBalancer != 0 {
			extra = fmt.Sprintf("(L7LB Proxy Port: %d)", l7ProxyPort(v.union))
		}
		s.Found = true
		s.Text = fmt.Sprintf("%s:%d (%d) (%d) [%s] %s", "0.0.0.0", 0, v.revNat, 0,
			strings.Join(svcFlagNames(v.flags), ", "), extra)
		return s
	}
	id, quarantined := v.union, v.flags&svcFlagQuarantined != 0
	s.BackendID, s.Quarantined = &id, &quarantined
	if be == nil {
		s.Text = fmt.Sprintf("backend %d not found", v.union)
		return s
	}
	s.Found = true
	s.Backend, s.Protocol, s.State = &be.Address, &be.Protocol, &be.State
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
func setMaster(f *bpfentries.Frontend, v svcValue) {
	f.HasMaster = true
	f.Count = int(v.count)
	f.QCount = int(v.qcount)
	f.RevNATID = v.revNat
	f.Flags = v.flags
	f.Type = svcType(v.flags)
	f.FlagNames = svcFlagNames(v.flags)
	f.FlagsText = strings.Join(f.FlagNames, ", ")
	if v.flags&svcFlagL7LoadBalancer != 0 {
		p := l7ProxyPort(v.union)
		f.L7ProxyPort = &p
	} else {
		alg, timeout := lbAlgorithm(uint8(v.union>>24)), v.union&0x00ff_ffff
		f.LBAlgorithm, f.AffinityTimeout = &alg, &timeout
	}
}

func newFrontend(k svcKey) *bpfentries.Frontend {
	return &bpfentries.Frontend{
		Address:   frontendAddress(k),
		IP:        ipv4String(k.addr[:]),
		Port:      k.port,
		Protocol:  bpfentries.ProtoName(k.proto),
		Scope:     scopeName(k.scope),
		FlagNames: []string{},
		Slots:     []bpfentries.Slot{},
	}
}
