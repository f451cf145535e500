package bpfmaps

import (
	"encoding/binary"
	"testing"
)

// Mirrors of Cilium v1.20.1's own Go map types, field for field, with the
// file and line they are copied from. The tests encode their fixtures with
// these (binary.Write in host order = the struct memory Cilium passes to the
// kernel), independently of the offsets the package decodes with, so a
// wrong offset in layout.go cannot be hidden by the same wrong offset in a
// test encoder. TestLayoutSizesMatchCilium ties their sizes to the C
// structs' sizes the package checks on open.

// pkg/loadbalancer/maps/types.go L140 (struct lb4_key, bpf/lib/lb.h L68).
type ciliumService4Key struct {
	Address     [4]byte // types.IPv4
	Port        uint16  // network order (ToNetwork)
	BackendSlot uint16
	Proto       uint8
	Scope       uint8
	Pad         [2]uint8
}

// pkg/loadbalancer/maps/types.go L206 (struct lb4_service, lb.h L77).
type ciliumService4Value struct {
	BackendID uint32 // union backend_id / affinity_timeout|alg<<24 / l7 proxy port (network order)
	Count     uint16
	RevNat    uint16 // network order (ToNetwork)
	Flags     uint8
	Flags2    uint8
	QCount    uint16
}

// pkg/loadbalancer/maps/types.go L521.
type ciliumBackend4KeyV3 struct {
	ID uint32 // loadbalancer.BackendID
}

// pkg/loadbalancer/maps/types.go L534 (struct lb4_backend, lb.h L110).
type ciliumBackend4ValueV3 struct {
	Address   [4]byte
	Port      uint16 // network order
	Proto     uint8  // u8proto.U8proto
	Flags     uint8
	ClusterID uint16
	Zone      uint8
	Pad       uint8
}

// pkg/loadbalancer/maps/types.go L764.
type ciliumRevNat4Key struct {
	Key uint16 // network order
}

// pkg/loadbalancer/maps/types.go L790 (struct lb4_reverse_nat, common.h L399).
type ciliumRevNat4Value struct {
	Address [4]byte
	Port    uint16 // network order
}

// pkg/tuple/ipv4.go L20 tupleKey[types.IPv4] (struct ipv4_ct_tuple,
// common.h L379), used by ctmap.CtKey4Global (types.go L141).
type ciliumTupleKey4 struct {
	DestAddr   [4]byte
	SourceAddr [4]byte
	DestPort   uint16 // network order
	SourcePort uint16 // network order
	NextHeader uint8
	Flags      uint8
}

// pkg/maps/ctmap/types.go L311 (struct ct_entry, conntrack.h L87).
type ciliumCtEntry struct {
	Union0           [2]uint64
	Packets          uint64
	Bytes            uint64
	Lifetime         uint32
	Flags            uint16
	RevNAT           uint16 // network order
	NatPort          uint16 // network order
	TxFlagsSeen      uint8
	RxFlagsSeen      uint8
	SourceSecurityID uint32
	LastTxReport     uint32
	LastRxReport     uint32
}

// pkg/maps/policymap/policymap.go L129 (struct policy_key, policy.h L58).
type ciliumPolicyKey struct {
	Prefixlen        uint32
	Identity         uint32
	TrafficDirection uint8
	Nexthdr          uint8
	DestPortNetwork  uint16 // network order
}

// pkg/maps/policymap/policymap.go L177 (struct policy_entry, policy.h L71).
type ciliumPolicyEntry struct {
	ProxyPortNetwork uint16 // network order
	Flags            uint8  // deny:1 reserved:2 lpm_prefix_length:5
	AuthRequirement  uint8  // auth_type:7 has_explicit_auth_type:1
	Precedence       uint32
	Cookie           uint32
}

// pkg/maps/ipcache/ipcache.go L35 (struct ipcache_key, eps.h L107).
type ciliumIPCacheKey struct {
	Prefixlen uint32
	ClusterID uint16
	Pad1      uint8
	Family    uint8
	IP        [16]byte // IPv4 in the first 4 bytes
}

// pkg/maps/ipcache/ipcache.go L154 (struct remote_endpoint_info, eps.h L92).
type ciliumRemoteEndpointInfo struct {
	SecurityIdentity uint32
	TunnelEndpoint   [16]byte
	Pad              uint16
	Key              uint8
	Flags            uint8
}

// pkg/loadbalancer/maps/types.go L922 (struct lb4_affinity_key, lb.h L132).
type ciliumAffinity4Key struct {
	ClientID    uint64 // union: network-order IPv4 in the low-addressed 4 bytes, or a netns cookie
	RevNATID    uint16 // network order, as lb4_service.rev_nat_index
	NetNSCookie uint8
	Pad1        uint8
	Pad2        uint32
}

// pkg/loadbalancer/maps/types.go L940 (struct lb_affinity_val, lb.h L155).
type ciliumAffinityValue struct {
	LastUsed  uint64
	BackendID uint32
	Pad       uint32
}

// pkg/loadbalancer/maps/types.go L992 (struct ipv4_revnat_tuple, sock.h L22).
type ciliumSockRevNat4Key struct {
	Cookie  uint64
	Address [4]byte
	Port    uint16 // network order (int16 in Cilium)
	Pad     uint16
}

// pkg/loadbalancer/maps/types.go L1000 (struct ipv4_revnat_entry, sock.h L29).
type ciliumSockRevNat4Value struct {
	Address     [4]byte
	Port        uint16 // network order
	RevNatIndex uint16 // network order
}

func TestLayoutSizesMatchCilium(t *testing.T) {
	// binary.Size of Cilium's Go types == sizeof(C struct) == what the
	// package demands from the kernel map.
	cases := []struct {
		name string
		v    any
		want int
	}{
		{"Service4Key / lb4_key", ciliumService4Key{}, sizeofLB4Key},
		{"Service4Value / lb4_service", ciliumService4Value{}, sizeofLB4Service},
		{"Backend4KeyV3 / __u32", ciliumBackend4KeyV3{}, sizeofBackendKey},
		{"Backend4ValueV3 / lb4_backend", ciliumBackend4ValueV3{}, sizeofLB4Backend},
		{"RevNat4Key / __u16", ciliumRevNat4Key{}, sizeofRevNATKey},
		{"RevNat4Value / lb4_reverse_nat", ciliumRevNat4Value{}, sizeofLB4RevNAT},
		{"TupleKey4 / ipv4_ct_tuple", ciliumTupleKey4{}, sizeofCTTuple4},
		{"CtEntry / ct_entry", ciliumCtEntry{}, sizeofCTEntry},
		{"PolicyKey / policy_key", ciliumPolicyKey{}, sizeofPolicyKey},
		{"PolicyEntry / policy_entry", ciliumPolicyEntry{}, sizeofPolicyEntry},
		{"ipcache.Key / ipcache_key", ciliumIPCacheKey{}, sizeofIPCacheKey},
		{"RemoteEndpointInfo / remote_endpoint_info", ciliumRemoteEndpointInfo{}, sizeofRemoteEndpointInfo},
		{"Affinity4Key / lb4_affinity_key", ciliumAffinity4Key{}, sizeofLB4AffinityKey},
		{"AffinityValue / lb_affinity_val", ciliumAffinityValue{}, sizeofLBAffinityVal},
		{"SockRevNat4Key / ipv4_revnat_tuple", ciliumSockRevNat4Key{}, sizeofRevNATTuple4},
		{"SockRevNat4Value / ipv4_revnat_entry", ciliumSockRevNat4Value{}, sizeofRevNATEntry4},
	}
	for _, c := range cases {
		if got := binary.Size(c.v); got != c.want {
			t.Errorf("%s: binary.Size = %d, package layout = %d", c.name, got, c.want)
		}
	}
	// LPM static prefix bits, as Cilium computes them.
	if got := (binary.Size(ciliumPolicyKey{})-4)*8 - 24; got != policyStaticPrefixBits {
		t.Errorf("policy StaticPrefixBits = %d, package uses %d", got, policyStaticPrefixBits)
	}
	if got := (binary.Size(ciliumIPCacheKey{}) - 4 - 16) * 8; got != ipcacheStaticPrefixBits {
		t.Errorf("ipcache staticPrefixBits = %d, package uses %d", got, ipcacheStaticPrefixBits)
	}
}
