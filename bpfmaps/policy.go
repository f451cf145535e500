package bpfmaps

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// PolicyEntry is one entry of an endpoint's cilium_policy_v3_NNNNN map
// (LPM trie keyed by identity, direction, protocol and port prefix).
type PolicyEntry struct {
	EndpointID uint16 `json:"endpointId" expr:"endpointId"`
	// Direction is "Ingress" or "Egress" (policy_key.egress bit,
	// trafficdirection.String).
	Direction string `json:"direction" expr:"direction"`
	// Identity is the peer security identity (0 = any peer).
	Identity uint32 `json:"identity" expr:"identity"`
	// Protocol is the u8proto name ("ANY" for 0 = wildcarded), ProtoNum
	// the number.
	Protocol string `json:"protocol" expr:"protocol"`
	ProtoNum uint8  `json:"protoNum" expr:"protoNum"`
	// Port is the destination port (host order; 0 when wildcarded).
	Port uint16 `json:"port" expr:"port"`
	// PrefixLen is the LPM prefix over protocol+port (0..24: 0 = any
	// protocol, 8 = protocol only, 24 = exact port), PortPrefixLen the
	// part of it over the port (0..16).
	PrefixLen     uint8 `json:"prefixLen" expr:"prefixLen"`
	PortPrefixLen uint8 `json:"portPrefixLen" expr:"portPrefixLen"`
	// PortProto is the PORT/PROTO column of `cilium-dbg bpf policy get`:
	// "ANY", "TCP", "80/TCP" or a range "8080-8095/TCP"
	// (PolicyKey.PortProtoString).
	PortProto string `json:"portProto" expr:"portProto"`
	// Deny is the entry's deny bit; Verdict "Deny" or "Allow".
	Deny    bool   `json:"deny" expr:"deny"`
	Verdict string `json:"verdict" expr:"verdict"`
	// ProxyPort is the L7 proxy redirect port (0 = none; cilium-dbg prints
	// NONE).
	ProxyPort uint16 `json:"proxyPort" expr:"proxyPort"`
	// AuthType is "disabled", "spire", "test-always-fail" or
	// "Unknown-auth-type-N"; AuthExplicit the has_explicit_auth_type bit.
	AuthType     string `json:"authType" expr:"authType"`
	AuthExplicit bool   `json:"authExplicit" expr:"authExplicit"`
	Precedence   uint32 `json:"precedence" expr:"precedence"`
	Cookie       uint32 `json:"cookie" expr:"cookie"`
	// Valid is false when the value's lpm_prefix_length disagrees with the
	// key's prefix length (Cilium's PolicyEntry.IsValid); the agent
	// rewrites such entries.
	Valid bool `json:"valid" expr:"valid"`
}

// PolicyEntries is a decoded policy map, in cilium-dbg's order: deny
// before allow, ingress before egress, then by identity (PolicyEntriesDump
// .Less), ties broken by protocol and port.
type PolicyEntries []PolicyEntry

// Ingress returns the ingress entries.
func (ps PolicyEntries) Ingress() PolicyEntries {
	return filter(ps, func(p PolicyEntry) bool { return p.Direction == "Ingress" })
}

// Egress returns the egress entries.
func (ps PolicyEntries) Egress() PolicyEntries {
	return filter(ps, func(p PolicyEntry) bool { return p.Direction == "Egress" })
}

// ForIdentity returns the entries for one peer identity.
func (ps PolicyEntries) ForIdentity(id int) PolicyEntries {
	return filter(ps, func(p PolicyEntry) bool { return int(p.Identity) == id })
}

// Has reports whether there is an entry with the given direction
// ("ingress"/"egress", any case), identity and PortProto ("80/TCP", "ANY").
func (ps PolicyEntries) Has(direction string, identity int, portProto string) bool {
	for _, p := range ps {
		if strings.EqualFold(p.Direction, direction) && int(p.Identity) == identity &&
			strings.EqualFold(p.PortProto, portProto) {
			return true
		}
	}
	return false
}

// Denies returns the deny entries.
func (ps PolicyEntries) Denies() PolicyEntries {
	return filter(ps, func(p PolicyEntry) bool { return p.Deny })
}

// filter returns the items of s that keep accepts, never nil (results
// are JSON lists for expressions and reports).
func filter[S ~[]E, E any](s S, keep func(E) bool) S {
	out := S{}
	for _, e := range s {
		if keep(e) {
			out = append(out, e)
		}
	}
	return out
}

// authTypeName mirrors policy/types AuthType.String (pkg/policy/types/auth.go L67).
func authTypeName(a uint8) string {
	switch a {
	case 0:
		return "disabled"
	case 1:
		return "spire"
	case 2:
		return "test-always-fail"
	}
	return "Unknown-auth-type-" + strconv.Itoa(int(a))
}

// portProtoString mirrors PolicyKey.PortProtoString (policymap.go L287).
func portProtoString(proto uint8, dport uint16, prefixLen uint8) string {
	protoStr := protoName(proto)
	switch {
	case prefixLen == 0, prefixLen == 8:
		return protoStr
	case prefixLen > 8 && prefixLen < 24:
		portLen := uint16(0xffff) >> (prefixLen - 8)
		return fmt.Sprintf("%d-%d/%s", dport, dport+portLen, protoStr)
	case prefixLen == 24:
		return fmt.Sprintf("%d/%s", dport, protoStr)
	}
	return fmt.Sprintf("<INVALID PREFIX LENGTH: %d>", prefixLen)
}

func decodePolicy(ep uint16, k, v []byte) PolicyEntry {
	keyPrefix := hostEndian.Uint32(k[0:4])
	prefixLen := uint8(keyPrefix - policyStaticPrefixBits)
	portPrefixLen := uint8(0)
	if prefixLen > 8 {
		portPrefixLen = prefixLen - 8
	}
	proto := k[9]
	dport := netEndian.Uint16(k[10:12])
	dir := "Ingress"
	if k[8]&1 != 0 {
		dir = "Egress"
	}
	flags := v[2]
	deny := flags&1 != 0
	verdict := "Allow"
	if deny {
		verdict = "Deny"
	}
	return PolicyEntry{
		EndpointID:    ep,
		Direction:     dir,
		Identity:      hostEndian.Uint32(k[4:8]),
		Protocol:      protoName(proto),
		ProtoNum:      proto,
		Port:          dport,
		PrefixLen:     prefixLen,
		PortPrefixLen: portPrefixLen,
		PortProto:     portProtoString(proto, dport, prefixLen),
		Deny:          deny,
		Verdict:       verdict,
		ProxyPort:     netEndian.Uint16(v[0:2]),
		AuthType:      authTypeName(v[3] & 0x7f),
		AuthExplicit:  v[3]&0x80 != 0,
		Precedence:    hostEndian.Uint32(v[4:8]),
		Cookie:        hostEndian.Uint32(v[8:12]),
		Valid:         flags>>3 == prefixLen,
	}
}

// Policy dumps the policy map of one endpoint (cilium_policy_v3_%05d).
func (r *Reader) Policy(endpointID uint16) (PolicyEntries, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	om, err := r.get(PolicyMapName(endpointID))
	if err != nil {
		return nil, err
	}
	out := PolicyEntries{}
	err = dumpMap(om, func(k *rawPolicyKey, v *rawPolicyEntry) {
		out = append(out, decodePolicy(endpointID, k[:], v[:]))
	})
	if err != nil {
		return nil, err
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Deny != b.Deny {
			return a.Deny
		}
		if a.Direction != b.Direction {
			return a.Direction == "Ingress"
		}
		if a.Identity != b.Identity {
			return a.Identity < b.Identity
		}
		if a.ProtoNum != b.ProtoNum {
			return a.ProtoNum < b.ProtoNum
		}
		if a.Port != b.Port {
			return a.Port < b.Port
		}
		return a.PrefixLen < b.PrefixLen
	})
	return out, nil
}
