package bpfentries

// Affinity is one entry of cilium_lb4_affinity: the backend a client was
// given for a service with sessionAffinity ClientIP, which later
// connections of the same client reuse until the service's timeout.
type Affinity struct {
	// NetNSCookie is true when the client is identified by its network
	// namespace's cookie (socket LB at connect(): every socket of a pod
	// shares one) and false when by its IPv4 address (the tc datapath:
	// NodePort, or a client that socket LB does not cover).
	NetNSCookie bool `json:"netnsCookie" expr:"netnsCookie"`
	// ClientIP is the client's address (null when NetNSCookie);
	// ClientCookie the namespace cookie (null when not NetNSCookie).
	ClientIP     *string `json:"clientIp" expr:"clientIp"`
	ClientCookie *uint64 `json:"clientCookie" expr:"clientCookie"`
	// RevNATID is the service's ID (its rev_nat_index); Service the
	// frontend ip:port the reverse NAT map holds for it (null if none).
	RevNATID uint16  `json:"revNatId" expr:"revNatId"`
	Service  *string `json:"service" expr:"service"`
	// BackendID is the chosen backend; Backend its ip:port in
	// cilium_lb4_backends_v3 (null when the ID is not there).
	BackendID uint32  `json:"backendId" expr:"backendId"`
	Backend   *string `json:"backend" expr:"backend"`
	// LastUsed is the datapath's clock (bpf_mono_now, truncated to 32
	// bits) when the entry was last written; it only compares with other
	// LastUsed values of the same node.
	LastUsed uint64 `json:"lastUsed" expr:"lastUsed"`
}

// Affinities is the decoded affinity map, sorted by service ID, then
// client.
type Affinities []Affinity

// ForRevNAT returns the entries of the service with this ID.
func (as Affinities) ForRevNAT(id int) Affinities {
	return filter(as, func(a Affinity) bool { return int(a.RevNATID) == id })
}

// ForService returns the entries of the service whose frontend is addr
// ("ip:port", as the reverse NAT map holds it).
func (as Affinities) ForService(addr string) Affinities {
	return filter(as, func(a Affinity) bool { return a.Service != nil && *a.Service == addr })
}

// Backends returns the distinct backends (ip:port) of the entries, in
// order of first appearance; an entry whose backend is not in the
// backends map adds none.
func (as Affinities) Backends() []string {
	out := []string{}
	seen := map[string]bool{}
	for _, a := range as {
		if a.Backend != nil && !seen[*a.Backend] {
			seen[*a.Backend] = true
			out = append(out, *a.Backend)
		}
	}
	return out
}

// SockRevNAT is one entry of cilium_lb4_reverse_sk: socket LB's note, made
// at connect() (or sendmsg() for unconnected UDP), of which service a
// socket's backend address stands for, so that getpeername() and
// recvfrom() answer with the service's address instead of the backend's.
type SockRevNAT struct {
	// Cookie is the socket's cookie (the kernel's SO_COOKIE), part of
	// the key.
	Cookie uint64 `json:"cookie" expr:"cookie"`
	// Backend is the ip:port the socket is really connected to (key).
	Backend string `json:"backend" expr:"backend"`
	// BackendIP and BackendPort are Backend split into address and
	// port.
	BackendIP   string `json:"backendIp" expr:"backendIp"`
	BackendPort uint16 `json:"backendPort" expr:"backendPort"`
	// Frontend is the service ip:port the application asked for (value).
	Frontend string `json:"frontend" expr:"frontend"`
	// FrontendIP and FrontendPort are Frontend split into address and
	// port.
	FrontendIP   string `json:"frontendIp" expr:"frontendIp"`
	FrontendPort uint16 `json:"frontendPort" expr:"frontendPort"`
	// RevNATID is the service's ID (its rev_nat_index).
	RevNATID uint16 `json:"revNatId" expr:"revNatId"`
}

// SockRevNATs is the decoded socket reverse NAT map, sorted by frontend,
// backend and cookie.
type SockRevNATs []SockRevNAT

// WithFrontend returns the entries whose frontend is addr ("ip:port").
func (ss SockRevNATs) WithFrontend(addr string) SockRevNATs {
	return filter(ss, func(s SockRevNAT) bool { return s.Frontend == addr })
}

// WithBackend returns the entries whose backend is addr ("ip:port").
func (ss SockRevNATs) WithBackend(addr string) SockRevNATs {
	return filter(ss, func(s SockRevNAT) bool { return s.Backend == addr })
}
