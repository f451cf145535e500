package bpfmaps

import (
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"

	"github.com/cilium/ebpf"
	"github.com/labrun/labrun/internal/boundary/bpfentries"
)

// This file holds every map layout the package decodes. Each layout names
// the C struct it mirrors (Cilium v1.20.1, bpf/lib/...) and the Go type
// Cilium itself uses for the same bytes, so a reviewer can check offsets
// against both. Sizes are checked against the kernel's view of the map on
// open (see checkLayout), which is what keeps a layout drift in a future
// Cilium from being decoded as garbage.
//
// Byte order: Cilium stores some fields in network byte order (addresses,
// ports, rev_nat_index) and the rest in host byte order; hostEndian and
// netEndian below make that explicit at every read.

var (
	hostEndian = binary.NativeEndian
	netEndian  = binary.BigEndian
)

// Map names, as pinned by Cilium 1.20 under <root>/tc/globals.
const (
	MapServices   = "cilium_lb4_services_v2"
	MapBackends   = "cilium_lb4_backends_v3"
	MapRevNAT     = "cilium_lb4_reverse_nat"
	MapCTTCP      = "cilium_ct4_global"
	MapCTAny      = "cilium_ct_any4_global"
	MapIPCache    = "cilium_ipcache_v2"
	MapAffinity   = "cilium_lb4_affinity"
	MapReverseSK  = "cilium_lb4_reverse_sk"
	PolicyMapBase = "cilium_policy_v3_" // + %05d endpoint ID
)

// PolicyMapName returns the pinned name of an endpoint's policy map. Cilium
// formats it with "%s%05d" (pkg/bpf/bpffs_linux.go L110, LocalMapName), so
// endpoint 42 is cilium_policy_v3_00042.
func PolicyMapName(endpointID uint16) string {
	return fmt.Sprintf("%s%05d", PolicyMapBase, endpointID)
}

// mapLayout is what a map must look like in the kernel for our decoder to
// be valid.
type mapLayout struct {
	keySize   uint32
	valueSize uint32
	types     []ebpf.MapType
}

func (l mapLayout) typeNames() string {
	names := make([]string, len(l.types))
	for i, t := range l.types {
		names[i] = t.String()
	}
	return strings.Join(names, " or ")
}

// Sizes of the keys and values, with the C struct each mirrors.
const (
	// struct lb4_key (bpf/lib/lb.h L68), Go: Service4Key
	// (pkg/loadbalancer/maps/types.go L140):
	//
	//	__be32 address;     off 0
	//	__be16 dport;       off 4
	//	__u16  backend_slot;off 6  (host order)
	//	__u8   proto;       off 8
	//	__u8   scope;       off 9  (0 external, 1 internal)
	//	__u8   pad[2];      off 10
	sizeofLB4Key = 12

	// struct lb4_service (bpf/lib/lb.h L77), Go: Service4Value (types.go L206):
	//
	//	union { __u32 backend_id; __u32 affinity_timeout; __u32 l7_lb_proxy_port; } off 0 (host)
	//	__u16 count;          off 4 (host)
	//	__u16 rev_nat_index;  off 6 (NETWORK order, see Service4Value.ToNetwork)
	//	__u8  flags;          off 8
	//	__u8  flags2;         off 9
	//	__u16 qcount;         off 10 (host)
	sizeofLB4Service = 12

	// Key of cilium_lb4_backends_v3 is a host-order __u32 backend ID
	// (bpf/lib/lb.h L292, Go: Backend4KeyV3 types.go L521).
	sizeofBackendKey = 4

	// struct lb4_backend (bpf/lib/lb.h L110), Go: Backend4ValueV3 (types.go L534):
	//
	//	__be32 address;    off 0
	//	__be16 port;       off 4
	//	__u8   proto;      off 6
	//	__u8   flags;      off 7 (backend state: 0 active, 1 terminating, 2 quarantined, 3 maintenance)
	//	__u16  cluster_id; off 8 (host)
	//	__u8   zone;       off 10
	//	__u8   pad;        off 11
	sizeofLB4Backend = 12

	// Key of cilium_lb4_reverse_nat is a __u16 rev NAT ID stored in NETWORK
	// order (bpf/lib/lb.h L270, Go: RevNat4Key types.go L764, ToNetwork).
	sizeofRevNATKey = 2

	// struct lb4_reverse_nat (bpf/lib/common.h L399, __packed), Go:
	// RevNat4Value (types.go L790):
	//
	//	__be32 address; off 0
	//	__be16 port;    off 4
	sizeofLB4RevNAT = 6

	// struct ipv4_ct_tuple (bpf/lib/common.h L379, __packed), Go:
	// CtKey4Global -> tuple.TupleKey4 (pkg/tuple/ipv4.go L20):
	//
	//	__be32 daddr;   off 0   field names are correct for the REPLY direction
	//	__be32 saddr;   off 4
	//	__be16 dport;   off 8   field names are correct for the ORIGINAL direction
	//	__be16 sport;   off 10
	//	__u8   nexthdr; off 12
	//	__u8   flags;   off 13  TUPLE_F_IN=1, TUPLE_F_RELATED=2, TUPLE_F_SERVICE=4
	sizeofCTTuple4 = 14

	// struct ct_entry (bpf/lib/conntrack.h L87), Go: CtEntry
	// (pkg/maps/ctmap/types.go L311):
	//
	//	union { union v6addr nat_addr; struct { __u64 reserved0; __u64 backend_id; }; } off 0
	//	__u64 packets;        off 16
	//	__u64 bytes;          off 24
	//	__u32 lifetime;       off 32
	//	__u16 flags bitfield; off 36 (rx_closing:1 tx_closing:1 ... from_tunnel:1)
	//	__u16 rev_nat_index;  off 38 (NETWORK order)
	//	__be16 nat_port;      off 40
	//	__u8  tx_flags_seen;  off 42
	//	__u8  rx_flags_seen;  off 43
	//	__u32 src_sec_id;     off 44
	//	__u32 last_tx_report; off 48
	//	__u32 last_rx_report; off 52
	sizeofCTEntry = 56

	// struct policy_key (bpf/lib/policy.h L58), Go: PolicyKey
	// (pkg/maps/policymap/policymap.go L129):
	//
	//	struct bpf_lpm_trie_key lpm_key; off 0 (__u32 prefixlen, host order)
	//	__u32 sec_label;                 off 4 (host)
	//	__u8  egress:1, pad:7;           off 8
	//	__u8  protocol;                  off 9
	//	__be16 dport;                    off 10
	sizeofPolicyKey = 12

	// struct policy_entry (bpf/lib/policy.h L71), Go: PolicyEntry
	// (policymap.go L177):
	//
	//	__be16 proxy_port;                                   off 0
	//	__u8 deny:1, reserved:2, lpm_prefix_length:5;        off 2
	//	__u8 auth_type:7, has_explicit_auth_type:1;          off 3
	//	__u32 precedence;                                    off 4
	//	__u32 cookie;                                        off 8
	sizeofPolicyEntry = 12

	// struct ipcache_key (bpf/lib/eps.h L107, __packed), Go: ipcache.Key
	// (pkg/maps/ipcache/ipcache.go L35):
	//
	//	struct bpf_lpm_trie_key lpm_key; off 0 (__u32 prefixlen)
	//	__u16 cluster_id;                off 4 (host)
	//	__u8  pad1;                      off 6
	//	__u8  family;                    off 7 (1 IPv4, 2 IPv6)
	//	union { v4addr ip4; v6addr ip6; } off 8 (IPv4 in the first 4 bytes)
	sizeofIPCacheKey = 24

	// struct remote_endpoint_info (bpf/lib/eps.h L92), Go:
	// RemoteEndpointInfo (ipcache.go L154):
	//
	//	__u32 sec_identity;                      off 0 (host)
	//	union { v4addr ip4; v6addr ip6; } tunnel_endpoint; off 4
	//	__u16 pad;                               off 20
	//	__u8  key;                               off 22
	//	__u8  flag_skip_tunnel:1, flag_has_tunnel_ep:1,
	//	      flag_ipv6_tunnel_ep:1, flag_remote_cluster:1, pad2:4; off 23
	sizeofRemoteEndpointInfo = 24

	// struct lb4_affinity_key (bpf/lib/lb.h L132, __packed), Go:
	// Affinity4Key (pkg/loadbalancer/maps/types.go L922):
	//
	//	union { __u32 client_ip; __net_cookie client_cookie; } client_id; off 0
	//	      (client_ip: network-order IPv4 in bytes 0-3; client_cookie: a
	//	      host-order __u64 network namespace cookie)
	//	__u16 rev_nat_id;                   off 8 (NETWORK order: the service's
	//	                                    rev_nat_index as lb4_service holds it)
	//	__u8  netns_cookie:1, reserved:7;   off 10 (1: client_id is a cookie)
	//	__u8  pad1;                         off 11
	//	__u32 pad2;                         off 12
	sizeofLB4AffinityKey = 16

	// struct lb_affinity_val (bpf/lib/lb.h L155, __packed), Go:
	// AffinityValue (types.go L940):
	//
	//	__u64 last_used;  off 0 (host; bpf_mono_now() truncated to 32 bits)
	//	__u32 backend_id; off 8 (host)
	//	__u32 pad;        off 12
	sizeofLBAffinityVal = 16

	// struct ipv4_revnat_tuple (bpf/lib/sock.h L22), Go: SockRevNat4Key
	// (types.go L992):
	//
	//	__sock_cookie cookie; off 0 (host __u64: the socket's cookie)
	//	__be32 address;       off 8 (the backend the socket was connected to)
	//	__be16 port;          off 12
	//	__u16  pad;           off 14
	sizeofRevNATTuple4 = 16

	// struct ipv4_revnat_entry (bpf/lib/sock.h L29), Go: SockRevNat4Value
	// (types.go L1000):
	//
	//	__be32 address;       off 0 (the service frontend the app asked for)
	//	__be16 port;          off 4
	//	__u16  rev_nat_index; off 6 (NETWORK order, from lb4_service)
	sizeofRevNATEntry4 = 8
)

// LPM prefix bits that precede the address/port in LPM keys. Cilium counts
// the LPM prefix length over everything after the 4-byte prefixlen field.
const (
	// policy: sec_label (32) + egress byte (8) are always fully matched
	// (policymap.go L171 StaticPrefixBits, = 40).
	policyStaticPrefixBits = 40
	// ipcache: cluster_id (16) + pad1 (8) + family (8)
	// (ipcache.go staticPrefixBits, eps.h IPCACHE_STATIC_PREFIX, = 32).
	ipcacheStaticPrefixBits = 32
)

// Kernel-side shapes, checked on open.
var layouts = map[string]mapLayout{
	MapServices: {sizeofLB4Key, sizeofLB4Service, []ebpf.MapType{ebpf.Hash}},
	MapBackends: {sizeofBackendKey, sizeofLB4Backend, []ebpf.MapType{ebpf.Hash}},
	MapRevNAT:   {sizeofRevNATKey, sizeofLB4RevNAT, []ebpf.MapType{ebpf.Hash}},
	// Cilium creates CT maps as LRU hashes (ctmap.go L373). A plain hash has
	// the same layout, so it is accepted too (old kernels without LRU).
	MapCTTCP:      {sizeofCTTuple4, sizeofCTEntry, []ebpf.MapType{ebpf.LRUHash, ebpf.Hash}},
	MapCTAny:      {sizeofCTTuple4, sizeofCTEntry, []ebpf.MapType{ebpf.LRUHash, ebpf.Hash}},
	MapIPCache:    {sizeofIPCacheKey, sizeofRemoteEndpointInfo, []ebpf.MapType{ebpf.LPMTrie}},
	PolicyMapBase: {sizeofPolicyKey, sizeofPolicyEntry, []ebpf.MapType{ebpf.LPMTrie}},
	// Both are LRU hashes (lb.h L299, sock.h L35); a plain hash has the
	// same layout.
	MapAffinity:  {sizeofLB4AffinityKey, sizeofLBAffinityVal, []ebpf.MapType{ebpf.LRUHash, ebpf.Hash}},
	MapReverseSK: {sizeofRevNATTuple4, sizeofRevNATEntry4, []ebpf.MapType{ebpf.LRUHash, ebpf.Hash}},
}

func layoutFor(name string) mapLayout {
	if strings.HasPrefix(name, PolicyMapBase) {
		return layouts[PolicyMapBase]
	}
	return layouts[name]
}

// Raw fixed-size byte arrays used as batch buffers: the ebpf library copies
// slices of these straight from the syscall without reflection per entry.
type (
	rawLB4Key       [sizeofLB4Key]byte
	rawLB4Service   [sizeofLB4Service]byte
	rawBackendKey   [sizeofBackendKey]byte
	rawLB4Backend   [sizeofLB4Backend]byte
	rawRevNATKey    [sizeofRevNATKey]byte
	rawLB4RevNAT    [sizeofLB4RevNAT]byte
	rawCTTuple4     [sizeofCTTuple4]byte
	rawCTEntry      [sizeofCTEntry]byte
	rawPolicyKey    [sizeofPolicyKey]byte
	rawPolicyEntry  [sizeofPolicyEntry]byte
	rawIPCacheKey   [sizeofIPCacheKey]byte
	rawRemoteEPInfo [sizeofRemoteEndpointInfo]byte
	rawAffinityKey  [sizeofLB4AffinityKey]byte
	rawAffinityVal  [sizeofLBAffinityVal]byte
	rawRevNATTuple  [sizeofRevNATTuple4]byte
	rawRevNATEntry  [sizeofRevNATEntry4]byte
)

// protoNumber is the inverse of protoName for the names users type in lab
// expressions ("TCP", "udp", "6").
func protoNumber(s string) (uint8, bool) {
	if n, err := strconv.ParseUint(s, 10, 8); err == nil {
		return uint8(n), true
	}
	for p := 0; p < 256; p++ {
		if strings.EqualFold(bpfentries.ProtoName(uint8(p)), s) {
			return uint8(p), true
		}
	}
	return 0, false
}

// appendIPv4 formats 4 network-order bytes as dotted quad without going
// through netip (which allocates); CT dumps format hundreds of thousands.
func appendIPv4(b []byte, a []byte) []byte {
	b = strconv.AppendUint(b, uint64(a[0]), 10)
	b = append(b, '.')
	b = strconv.AppendUint(b, uint64(a[1]), 10)
	b = append(b, '.')
	b = strconv.AppendUint(b, uint64(a[2]), 10)
	b = append(b, '.')
	b = strconv.AppendUint(b, uint64(a[3]), 10)
	return b
}

func ipv4String(a []byte) string {
	var buf [15]byte
	return string(appendIPv4(buf[:0], a))
}
