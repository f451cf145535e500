package bpfentries

import (
	"strconv"
	"strings"
)

// Frontend is one service frontend: all lb4_key entries with the same
// address, port, protocol and scope. Slot 0 is the service ("master")
// entry; slots 1..Count are active backends and Count+1..Count+QCount the
// quarantined/terminating fallbacks, as written by Cilium's BPF reconciler
// (pkg/loadbalancer/reconciler/bpf_reconciler.go).
type Frontend struct {
	// Address as cilium-dbg prints it: "10.43.0.10:53/UDP", with "/i" for the
	// internal scope (Service4Key.String without the slot).
	Address string `json:"address" expr:"address"`
	// IP, Port and Protocol are the frontend's address, port and
	// protocol (TCP, UDP, ANY, ...) from lb4_key.
	IP       string `json:"ip" expr:"ip"`
	Port     uint16 `json:"port" expr:"port"`
	Protocol string `json:"protocol" expr:"protocol"`
	// Scope is "external" or "internal" (lb4_key.scope 0/1).
	Scope string `json:"scope" expr:"scope"`
	// Count is the number of active backend slots, QCount the number of
	// quarantined/terminating ones (lb4_service.count/qcount of slot 0).
	Count  int `json:"count" expr:"count"`
	QCount int `json:"qCount" expr:"qCount"`
	// RevNATID is the service ID (lb4_service.rev_nat_index, stored in
	// network byte order); RevNAT the ip:port the reverse NAT map holds for
	// it (null if the map has no entry).
	RevNATID uint16  `json:"revNatId" expr:"revNatId"`
	RevNAT   *string `json:"revNat" expr:"revNat"`
	// Flags is the 16-bit flags|flags2<<8 of slot 0; Type, FlagNames and
	// FlagsText are its decoding exactly as cilium-dbg prints it
	// ("ClusterIP, non-routable").
	Flags     uint16   `json:"flags" expr:"flags"`
	Type      string   `json:"type" expr:"type"`
	FlagNames []string `json:"flagNames" expr:"flagNames"`
	FlagsText string   `json:"flagsText" expr:"flagsText"`
	// LBAlgorithm and AffinityTimeout come from the slot-0 union:
	// the service's own algorithm ("random", "maglev", or "undef" when
	// it follows the agent's default) and its session affinity timeout
	// in seconds (0 without sessionAffinity). Both are null when the
	// l7-load-balancer flag is set: the union holds L7ProxyPort then.
	LBAlgorithm     *string `json:"lbAlgorithm" expr:"lbAlgorithm"`
	AffinityTimeout *uint32 `json:"affinityTimeout" expr:"affinityTimeout"`
	// L7ProxyPort is the port of the L7 proxy (Envoy) the service's
	// traffic is redirected to, when the l7-load-balancer flag is set;
	// null otherwise (the union holds the algorithm and timeout).
	L7ProxyPort *uint16 `json:"l7ProxyPort" expr:"l7ProxyPort"`
	// HasMaster is false when backend slots exist without a slot 0 (seen
	// only transiently while Cilium rewrites a service).
	HasMaster bool `json:"hasMaster" expr:"hasMaster"`
	// Slots are the frontend's lb4_key entries in slot order, slot 0
	// first (with its backends resolved).
	Slots []Slot `json:"slots" expr:"slots"`
}

// Slot is one lb4_key/lb4_service entry of a frontend.
type Slot struct {
	// Slot is the slot number, lb4_key.backend_slot: 0 for the service
	// entry, 1..N for backends.
	Slot int `json:"slot" expr:"slot"`
	// BackendID is lb4_service.backend_id; null in slot 0, where the
	// union holds the algorithm/timeout or proxy port instead.
	BackendID *uint32 `json:"backendId" expr:"backendId"`
	// Backend is the backend's ip:port from cilium_lb4_backends_v3; null
	// for slot 0 (cilium-dbg prints "0.0.0.0:0" there, see Text) and when
	// the backend ID is not in the map.
	Backend *string `json:"backend" expr:"backend"`
	// Protocol is the backend's protocol from the backends map (TCP,
	// UDP, ...); null for slot 0 and when the backend ID is not there.
	Protocol *string `json:"protocol" expr:"protocol"`
	// State is the backend state from the backends map (active,
	// terminating, quarantined, maintenance); null for slot 0 / not found.
	State *string `json:"state" expr:"state"`
	// Found reports whether the backend ID resolved (always true for slot 0).
	Found bool `json:"found" expr:"found"`
	// Quarantined is the slot's own quarantined flag (flags2 bit 6); null
	// for slot 0, where that bit means source-range deny.
	Quarantined *bool `json:"quarantined" expr:"quarantined"`
	// RevNATID is the slot's lb4_service.rev_nat_index, the service ID
	// (the same in every slot of a frontend).
	RevNATID uint16 `json:"revNatId" expr:"revNatId"`
	// Text is the value cilium-dbg `bpf lb list` prints for this slot,
	// byte for byte (bpf_lb_list.go dumpSVC), including the trailing space
	// of slot-0 rows without an L7 proxy port.
	Text string `json:"text" expr:"text"`
}

// Backends returns the ip:port of every resolved backend slot (1..N) in
// slot order, active ones first. (Value receivers on purpose: expr-lang
// finds them on slice elements such as services[0] too.)
func (f Frontend) Backends() []string {
	out := []string{}
	for _, s := range f.Slots {
		if s.Slot > 0 && s.Backend != nil {
			out = append(out, *s.Backend)
		}
	}
	return out
}

// ActiveBackends returns the backends of slots 1..Count, the ones Cilium
// load-balances new connections to.
func (f Frontend) ActiveBackends() []string {
	out := []string{}
	for _, s := range f.Slots {
		if s.Slot > 0 && s.Slot <= f.Count && s.Backend != nil {
			out = append(out, *s.Backend)
		}
	}
	return out
}

// HasBackend reports whether addr ("ip:port") is in one of the slots.
func (f Frontend) HasBackend(addr string) bool {
	for _, b := range f.Backends() {
		if b == addr {
			return true
		}
	}
	return false
}

// Frontends is the decoded services map, sorted by IP, port, protocol and
// scope.
type Frontends []Frontend

// Find returns the frontend with the given address, or null. addr is
// "ip:port/PROTO" with an optional "/i" for the internal scope (the form
// cilium-dbg prints); "ip:port" without protocol matches the first
// frontend on that ip:port, preferring the external scope.
func (fs Frontends) Find(addr string) *Frontend {
	want := strings.TrimSpace(addr)
	if strings.Contains(want, "/") {
		for i := range fs {
			if strings.EqualFold(fs[i].Address, want) {
				return &fs[i]
			}
		}
		return nil
	}
	var internal *Frontend
	for i := range fs {
		if HostPort(fs[i].IP, fs[i].Port) == want {
			if fs[i].Scope == "external" {
				return &fs[i]
			}
			if internal == nil {
				internal = &fs[i]
			}
		}
	}
	return internal
}

// Has reports whether Find(addr) finds a frontend.
func (fs Frontends) Has(addr string) bool { return fs.Find(addr) != nil }

// Addresses returns every frontend's Address.
func (fs Frontends) Addresses() []string {
	out := make([]string, 0, len(fs))
	for _, f := range fs {
		out = append(out, f.Address)
	}
	return out
}

// OfType returns the frontends whose Type is t (ClusterIP, NodePort, ...).
func (fs Frontends) OfType(t string) Frontends {
	return filter(fs, func(f Frontend) bool { return strings.EqualFold(f.Type, t) })
}

// WithIP returns the frontends on the given IP (all ports, protocols).
func (fs Frontends) WithIP(ip string) Frontends {
	return filter(fs, func(f Frontend) bool { return f.IP == ip })
}

// LBList returns what `cilium-dbg bpf lb list -o json` prints for the IPv4
// services map: key "<address> (<slot>)", value the slot's Text.
func (fs Frontends) LBList() map[string][]string {
	out := map[string][]string{}
	for _, f := range fs {
		for _, s := range f.Slots {
			k := f.Address + " (" + strconv.Itoa(s.Slot) + ")"
			out[k] = append(out[k], s.Text)
		}
	}
	return out
}

// Backend is one entry of cilium_lb4_backends_v3.
type Backend struct {
	// ID is the backend's ID, the map's key, which service slots
	// (Slot.BackendID) and SVC conntrack entries name.
	ID uint32 `json:"id" expr:"id"`
	// Address is the backend's ip:port ("10.42.0.21:8080"), as
	// Slot.Backend names it.
	Address string `json:"address" expr:"address"`
	// IP, Port and Protocol are the backend's address, port and
	// protocol (TCP, UDP, ...).
	IP       string `json:"ip" expr:"ip"`
	Port     uint16 `json:"port" expr:"port"`
	Protocol string `json:"protocol" expr:"protocol"`
	// State is active, terminating, quarantined or maintenance, decoded
	// from Flags, the raw state byte (0..3).
	State string `json:"state" expr:"state"`
	Flags uint8  `json:"flags" expr:"flags"`
	// ClusterID is the cluster (Cluster Mesh) the backend is in; 0 for
	// this cluster.
	ClusterID uint16 `json:"clusterId" expr:"clusterId"`
	// Zone is the backend's zone as an index Cilium assigns to topology
	// zone names; 0 when it has none.
	Zone uint8 `json:"zone" expr:"zone"`
}

// Backends is the decoded backends map, sorted by ID.
type Backends []Backend

// ByID returns the backend with the given ID, or null.
func (bs Backends) ByID(id int) *Backend {
	for i := range bs {
		if int(bs[i].ID) == id {
			return &bs[i]
		}
	}
	return nil
}

// Addresses returns every backend's ip:port.
func (bs Backends) Addresses() []string {
	out := make([]string, 0, len(bs))
	for _, b := range bs {
		out = append(out, b.Address)
	}
	return out
}

// RevNAT is one entry of cilium_lb4_reverse_nat.
type RevNAT struct {
	// ID is the service ID, the key that frontends' RevNATID and
	// conntrack entries' RevNAT name.
	ID uint16 `json:"id" expr:"id"`
	// Address is the frontend's ip:port that replies from the service's
	// backends are given as source.
	Address string `json:"address" expr:"address"`
}

// RevNATs is the decoded reverse NAT map, sorted by ID.
type RevNATs []RevNAT

// ByID returns the entry with the given ID, or null.
func (rs RevNATs) ByID(id int) *RevNAT {
	for i := range rs {
		if int(rs[i].ID) == id {
			return &rs[i]
		}
	}
	return nil
}
