//go:build e2e

package e2e

// The decodings of each map kind's bytes that
// TestBpfmapEntriesAreTheBytesBpftoolDumps (bpfmap_bytes_test.go) compares
// the bpfmap reader with.

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net/netip"
	"strconv"

	"github.com/labrun/labrun/internal/boundary/bpfentries"
	"github.com/labrun/labrun/internal/heavy/bpfmaps"
)

var (
	host = binary.NativeEndian
	netw = binary.BigEndian
)

func ip4(b []byte) string { return netip.AddrFrom4([4]byte(b)).String() }

func hostPort(ip string, port uint16) string {
	return netip.AddrPortFrom(netip.MustParseAddr(ip), port).String()
}

// The names of a byte: the u8proto names are labrun's own mapping
// (bpfentries.ProtoName, compared with cilium-dbg by the other e2e
// tests); the byte is what is checked here.
var (
	backendStates = map[uint8]string{0: "active", 1: "terminating", 2: "quarantined", 3: "maintenance"}
	lbAlgorithms  = map[uint8]string{0: "undef", 1: "random", 2: "maglev"}
	authTypes     = map[uint8]string{0: "disabled", 1: "spire", 2: "test-always-fail"}
)

// bpfmapChecks are the map kinds the bpfmap action reads, each with its
// decoding of the bytes (layouts: Cilium 1.20.1's bpf/lib structs, which
// internal/heavy/bpfmaps/layout.go cites line by line).
func bpfmapChecks(r *bpfmaps.Reader, eps []uint16) []bytesCheck {
	backendKey := func(x rec) string { return keyOf(x, "id") }
	checks := []bytesCheck{
		{kind: "backends", maps: []string{bpfmaps.MapBackends},
			decode: func(d dumps) map[string]rec { return decodeBackends(d[bpfmaps.MapBackends]) },
			read: func() (map[string]rec, error) {
				bs, err := r.Backends()
				return records(bs, backendKey), err
			}},
		{kind: "revnat", maps: []string{bpfmaps.MapRevNAT},
			decode: func(d dumps) map[string]rec { return decodeRevNATs(d[bpfmaps.MapRevNAT]) },
			read: func() (map[string]rec, error) {
				rs, err := r.RevNATs()
				return records(rs, func(x rec) string { return keyOf(x, "id") }), err
			}},
		{kind: "services", maps: []string{bpfmaps.MapServices, bpfmaps.MapBackends, bpfmaps.MapRevNAT},
			// the frontend's address, type and flag names and a slot's
			// cilium-dbg text are written from the fields checked; a
			// slot is found when its backend id is in the backends map;
			// hasMaster says whether slot 0 is there
			derived: []string{"fe.address", "fe.type", "fe.flagNames", "fe.flagsText", "fe.hasMaster", "found", "text"},
			decode:  decodeServices,
			read: func() (map[string]rec, error) {
				fs, err := r.Services()
				out := map[string]rec{}
				for _, f := range fs {
					fe := toRec(f)
					delete(fe, "slots")
					for _, s := range f.Slots {
						x := toRec(s)
						for k, v := range fe {
							x["fe."+k] = v
						}
						out[serviceKey(x)] = x
					}
				}
				return out, err
			}},
		{kind: "conntrack", maps: []string{bpfmaps.MapCTTCP, bpfmaps.MapCTAny},
			// OUT, IN or SVC names the tuple flags checked; the flag
			// names and cilium-dbg's line are written from the fields
			// checked
			derived: []string{"direction", "flagNames", "line"},
			decode: func(d dumps) map[string]rec {
				out := decodeCT(bpfmaps.MapCTTCP, d[bpfmaps.MapCTTCP])
				for k, x := range decodeCT(bpfmaps.MapCTAny, d[bpfmaps.MapCTAny]) {
					out[k] = x
				}
				return out
			},
			read: func() (map[string]rec, error) {
				cs, err := r.Conntrack()
				return records(cs, ctKey), err
			}},
		{kind: "ipcache", maps: []string{bpfmaps.MapIPCache},
			// the prefix, flag names and cilium-dbg's value column are
			// written from the fields checked
			derived: []string{"prefix", "flagNames", "flagsText", "value"},
			decode:  func(d dumps) map[string]rec { return decodeIPCache(d[bpfmaps.MapIPCache]) },
			read: func() (map[string]rec, error) {
				es, err := r.IPCache()
				return records(es, ipcacheKey), err
			}},
		{kind: "affinity", maps: []string{bpfmaps.MapAffinity, bpfmaps.MapBackends, bpfmaps.MapRevNAT},
			decode: decodeAffinity,
			read: func() (map[string]rec, error) {
				as, err := r.Affinity()
				return records(as, affinityKey), err
			}},
		{kind: "reversesk", maps: []string{bpfmaps.MapReverseSK},
			decode: func(d dumps) map[string]rec { return decodeReverseSK(d[bpfmaps.MapReverseSK]) },
			read: func() (map[string]rec, error) {
				ss, err := r.SockRevNAT()
				return records(ss, func(x rec) string { return keyOf(x, "cookie", "backend") }), err
			}},
	}
	for _, ep := range eps {
		name := bpfmaps.PolicyMapName(ep)
		checks = append(checks, bytesCheck{kind: "policy " + strconv.Itoa(int(ep)), maps: []string{name},
			// the PORT/PROTO and verdict columns of cilium-dbg, written
			// from the fields checked; valid compares the key's prefix
			// length with the value's
			derived: []string{"portProto", "verdict", "valid"},
			decode:  func(d dumps) map[string]rec { return decodePolicy(ep, d[name]) },
			read: func() (map[string]rec, error) {
				ps, err := r.Policy(ep)
				return records(ps, policyKey), err
			}})
	}
	return checks
}

func decodeBackends(d dump) map[string]rec {
	out := map[string]rec{}
	each(d, func(k, v []byte) {
		id := host.Uint32(k)
		ip, port := ip4(v[0:4]), netw.Uint16(v[4:6])
		x := rec{"id": num(id), "address": hostPort(ip, port), "ip": ip, "port": num(port),
			"protocol": bpfentries.ProtoName(v[6]), "flags": num(v[7]), "clusterId": num(host.Uint16(v[8:10])), "zone": num(v[10])}
		if s, ok := backendStates[v[7]]; ok {
			x["state"] = s
		}
		out[keyOf(x, "id")] = x
	})
	return out
}

func decodeRevNATs(d dump) map[string]rec {
	out := map[string]rec{}
	each(d, func(k, v []byte) {
		x := rec{"id": num(netw.Uint16(k)), "address": hostPort(ip4(v[0:4]), netw.Uint16(v[4:6]))}
		out[keyOf(x, "id")] = x
	})
	return out
}

func serviceKey(x rec) string {
	return keyOf(x, "fe.ip", "fe.port", "fe.protocol", "fe.scope", "slot")
}

// decodeServices reads each lb4_key/lb4_service entry of the services map
// as one slot, with its frontend's fields from the frontend's slot 0, its
// backend from the backends map and the frontend's address from the
// reverse NAT map.
func decodeServices(d dumps) map[string]rec {
	bes := decodeBackends(d[bpfmaps.MapBackends])
	rns := decodeRevNATs(d[bpfmaps.MapRevNAT])
	type feKey struct {
		addr        [4]byte
		port        uint16
		proto, scop uint8
	}
	masters := map[feKey][]byte{}
	each(d[bpfmaps.MapServices], func(k, v []byte) {
		if host.Uint16(k[6:8]) == 0 {
			masters[feKey{[4]byte(k[0:4]), netw.Uint16(k[4:6]), k[8], k[9]}] = v
		}
	})
	out := map[string]rec{}
	each(d[bpfmaps.MapServices], func(k, v []byte) {
		slot := host.Uint16(k[6:8])
		fk := feKey{[4]byte(k[0:4]), netw.Uint16(k[4:6]), k[8], k[9]}
		flags := uint16(v[8]) | uint16(v[9])<<8
		union := host.Uint32(v[0:4])
		x := rec{"fe.ip": ip4(k[0:4]), "fe.port": num(fk.port), "fe.protocol": bpfentries.ProtoName(k[8]),
			"slot": num(slot), "revNatId": num(netw.Uint16(v[6:8]))}
		switch k[9] {
		case 0:
			x["fe.scope"] = "external"
		case 1:
			x["fe.scope"] = "internal"
		}
		if slot > 0 {
			// a backend slot: the union is the backend's id, flags2's
			// bit 6 its quarantine
			x["backendId"] = num(union)
			x["quarantined"] = flags&(1<<14) != 0
			if be, ok := bes[fmt.Sprint(num(union))]; ok {
				x["backend"], x["protocol"], x["state"] = be["address"], be["protocol"], be["state"]
			}
		}
		if m, ok := masters[fk]; ok {
			mflags := uint16(m[8]) | uint16(m[9])<<8
			mu := host.Uint32(m[0:4])
			rn := netw.Uint16(m[6:8])
			x["fe.count"], x["fe.qCount"], x["fe.revNatId"], x["fe.flags"] = num(host.Uint16(m[4:6])), num(host.Uint16(m[10:12])), num(rn), num(mflags)
			if mflags&(1<<10) != 0 { // l7-load-balancer: the union is the proxy port, network order
				x["fe.l7ProxyPort"] = num(uint16(mu)>>8 | uint16(mu)<<8)
			} else { // the algorithm in the top byte, the affinity timeout below
				if a, ok := lbAlgorithms[uint8(mu>>24)]; ok {
					x["fe.lbAlgorithm"] = a
				}
				x["fe.affinityTimeout"] = num(mu & 0x00ff_ffff)
			}
			if r, ok := rns[fmt.Sprint(num(rn))]; ok {
				x["fe.revNat"] = r["address"]
			}
		}
		out[serviceKey(x)] = x
	})
	return out
}

func ctKey(x rec) string { return keyOf(x, "map", "protocol", "tupleFlags", "src", "dst") }

// decodeCT reads ipv4_ct_tuple/ct_entry entries. The tuple's address
// fields are named for the reply direction and its ports for the original
// one; cilium-dbg prints OUT/IN entries as daddr:sport -> saddr:dport and
// SVC entries as saddr:dport -> daddr:sport (CtKey4Global.Dump).
func decodeCT(name string, d dump) map[string]rec {
	out := map[string]rec{}
	each(d, func(k, v []byte) {
		daddr, saddr := ip4(k[0:4]), ip4(k[4:8])
		dport, sport := netw.Uint16(k[8:10]), netw.Uint16(k[10:12])
		tf := k[13]
		srcIP, srcPort, dstIP, dstPort := daddr, sport, saddr, dport
		svc := tf&4 != 0
		if svc {
			srcIP, srcPort, dstIP, dstPort = saddr, dport, daddr, sport
		}
		x := rec{"map": name, "protocol": bpfentries.ProtoName(k[12]), "tupleFlags": num(tf), "related": tf&2 != 0,
			"src": hostPort(srcIP, srcPort), "dst": hostPort(dstIP, dstPort),
			"srcIp": srcIP, "srcPort": num(srcPort), "dstIp": dstIP, "dstPort": num(dstPort),
			"backendId": num(host.Uint64(v[8:16])), "packets": num(host.Uint64(v[16:24])), "bytes": num(host.Uint64(v[24:32])),
			"lifetime": num(host.Uint32(v[32:36])), "flags": num(host.Uint16(v[36:38])), "revNat": num(netw.Uint16(v[38:40])),
			"natPort": num(netw.Uint16(v[40:42])), "txFlagsSeen": num(v[42]), "rxFlagsSeen": num(v[43]),
			"sourceSecurityId": num(host.Uint32(v[44:48])), "lastTxReport": num(host.Uint32(v[48:52])), "lastRxReport": num(host.Uint32(v[52:56]))}
		// nat_addr (the union's last 4 bytes) is an address only outside
		// SVC entries, whose union holds the backend id, and only when
		// set
		if !svc && !bytes.Equal(v[12:16], []byte{0, 0, 0, 0}) {
			x["natAddr"] = ip4(v[12:16])
		}
		out[ctKey(x)] = x
	})
	return out
}

func ipcacheKey(x rec) string { return keyOf(x, "ip", "prefixLen", "clusterId") }

func decodeIPCache(d dump) map[string]rec {
	out := map[string]rec{}
	each(d, func(k, v []byte) {
		x := rec{"prefixLen": json.Number(strconv.Itoa(int(host.Uint32(k[0:4])) - 32)), "clusterId": num(host.Uint16(k[4:6])),
			"identity": num(host.Uint32(v[0:4])), "encryptKey": num(v[22]), "flags": num(v[23])}
		switch k[7] {
		case 1:
			x["family"], x["ip"] = "IPv4", ip4(k[8:12])
		case 2:
			x["family"], x["ip"] = "IPv6", netip.AddrFrom16([16]byte(k[8:24])).String()
		}
		if v[23]&(1<<2) == 0 { // the tunnel endpoint is IPv4 unless flag ipv6tunnel
			x["tunnelEndpoint"] = ip4(v[4:8])
		} else {
			x["tunnelEndpoint"] = netip.AddrFrom16([16]byte(v[4:20])).String()
		}
		out[ipcacheKey(x)] = x
	})
	return out
}

// affinityKey names an affinity entry by its client, a cookie or an
// address as the netns_cookie bit says, and its service.
func affinityKey(x rec) string {
	client := x["clientIp"]
	if x["netnsCookie"] == true {
		client = x["clientCookie"]
	}
	return fmt.Sprint(x["netnsCookie"], " ", client, " ", x["revNatId"])
}

// decodeAffinity reads lb4_affinity_key/lb_affinity_val entries: the
// client is a network namespace cookie or an IPv4 address, as the key's
// netns_cookie bit says; the backend and the service are resolved in the
// backends and reverse NAT maps.
func decodeAffinity(d dumps) map[string]rec {
	bes := decodeBackends(d[bpfmaps.MapBackends])
	rns := decodeRevNATs(d[bpfmaps.MapRevNAT])
	out := map[string]rec{}
	each(d[bpfmaps.MapAffinity], func(k, v []byte) {
		netns := k[10]&1 != 0
		rn := netw.Uint16(k[8:10])
		id := host.Uint32(v[8:12])
		x := rec{"netnsCookie": netns, "revNatId": num(rn), "backendId": num(id), "lastUsed": num(host.Uint64(v[0:8]))}
		if netns {
			x["clientCookie"] = num(host.Uint64(k[0:8]))
		} else {
			x["clientIp"] = ip4(k[0:4])
		}
		if be, ok := bes[fmt.Sprint(num(id))]; ok {
			x["backend"] = be["address"]
		}
		if r, ok := rns[fmt.Sprint(num(rn))]; ok {
			x["service"] = r["address"]
		}
		out[affinityKey(x)] = x
	})
	return out
}

func decodeReverseSK(d dump) map[string]rec {
	out := map[string]rec{}
	each(d, func(k, v []byte) {
		bip, bport := ip4(k[8:12]), netw.Uint16(k[12:14])
		fip, fport := ip4(v[0:4]), netw.Uint16(v[4:6])
		x := rec{"cookie": num(host.Uint64(k[0:8])), "backend": hostPort(bip, bport), "backendIp": bip, "backendPort": num(bport),
			"frontend": hostPort(fip, fport), "frontendIp": fip, "frontendPort": num(fport), "revNatId": num(netw.Uint16(v[6:8]))}
		out[keyOf(x, "cookie", "backend")] = x
	})
	return out
}

func policyKey(x rec) string {
	return keyOf(x, "direction", "identity", "protoNum", "port", "prefixLen")
}

// decodePolicy reads policy_key/policy_entry entries of endpoint ep's map
// (its pinned name holds the endpoint id). The key's LPM prefix counts
// the identity and direction (40 bits) before protocol and port.
func decodePolicy(ep uint16, d dump) map[string]rec {
	out := map[string]rec{}
	each(d, func(k, v []byte) {
		prefix := uint8(host.Uint32(k[0:4]) - 40)
		portPrefix := uint8(0)
		if prefix > 8 {
			portPrefix = prefix - 8
		}
		dir := "Ingress"
		if k[8]&1 != 0 {
			dir = "Egress"
		}
		x := rec{"endpointId": num(ep), "direction": dir, "identity": num(host.Uint32(k[4:8])), "protocol": bpfentries.ProtoName(k[9]),
			"protoNum": num(k[9]), "port": num(netw.Uint16(k[10:12])), "prefixLen": num(prefix), "portPrefixLen": num(portPrefix),
			"deny": v[2]&1 != 0, "proxyPort": num(netw.Uint16(v[0:2])), "authExplicit": v[3]&0x80 != 0,
			"precedence": num(host.Uint32(v[4:8])), "cookie": num(host.Uint32(v[8:12]))}
		if a, ok := authTypes[v[3]&0x7f]; ok {
			x["authType"] = a
		}
		out[policyKey(x)] = x
	})
	return out
}
