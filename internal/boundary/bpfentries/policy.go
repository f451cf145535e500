package bpfentries

import (
	"strings"
)

// PolicyEntry is one entry of an endpoint's cilium_policy_v3_NNNNN map
// (LPM trie keyed by identity, direction, protocol and port prefix).
type PolicyEntry struct {
	// EndpointID is the endpoint whose map holds the entry (the spec's
	// endpoint, the map name's NNNNN).
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
	// Precedence orders entries that match the same packet: the higher
	// wins (derived from the rules' priorities).
	Precedence uint32 `json:"precedence" expr:"precedence"`
	// Cookie is the policy log cookie the datapath passes up with a
	// policy verdict for this entry (it names the rule's log text in
	// the agent); 0 when the rule has none.
	Cookie uint32 `json:"cookie" expr:"cookie"`
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
