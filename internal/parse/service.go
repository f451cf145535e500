package parse

import (
	"encoding/json"
	"strconv"
	"strings"
)

const kindServiceList = "cilium-service-list"

// Service is one entry of `cilium-dbg service list`: one frontend address
// (a Kubernetes Service has one per port, per IP family and per scope) with
// its backends.
//
// From `-o json` every field Cilium printed is filled: the model's spec
// and status.realized (the same object in Cilium 1.20) are flattened, so
// spec.flags.name is Name and spec.frontend-address is Frontend. The plain
// table only has ID, Frontend, Type, the "(Remote)" mark and the backends'
// address and state; the other fields are then "" (names, traffic
// policies) or null (the ones -o json may omit too).
type Service struct {
	// ID is the service's ID (spec.id, the ID column), the rev NAT ID
	// the BPF maps key it by; null when the frontend has none: Cilium
	// allocates it (from 1) when it writes the frontend to the datapath,
	// so a frontend not written yet, or never (with kube-proxy
	// replacement off, a NodePort), has ID 0, which the JSON omits and
	// the table prints as 0.
	ID *int `json:"id" expr:"id"`
	// Frontend is the service's address, port, protocol and scope (the
	// Frontend column, spec.frontend-address).
	Frontend L4Addr `json:"frontend" expr:"frontend"`
	// Backends are the backends in printed order; empty (never null)
	// when there are none, as when the JSON says "backend-addresses":
	// null.
	Backends []Backend `json:"backends" expr:"backends"`

	// Type is the Service Type column (spec.flags.type): ClusterIP,
	// NodePort, ExternalIPs, LoadBalancer, HostPort or LocalRedirect,
	// without the table's " (Remote)".
	Type string `json:"type" expr:"type"`
	// Name and Namespace are the Kubernetes Service's (spec.flags);
	// null from the table, which does not print them.
	Name      *string `json:"name" expr:"name"`
	Namespace *string `json:"namespace" expr:"namespace"`
	// TrafficPolicy, ExtTrafficPolicy and IntTrafficPolicy are the
	// Service's traffic policies, "Cluster" or "Local" (TrafficPolicy is
	// the deprecated copy of ExtTrafficPolicy); null from the table.
	TrafficPolicy    *string `json:"trafficPolicy" expr:"trafficPolicy"`
	ExtTrafficPolicy *string `json:"extTrafficPolicy" expr:"extTrafficPolicy"`
	IntTrafficPolicy *string `json:"intTrafficPolicy" expr:"intTrafficPolicy"`
	// NatPolicy is flags.natPolicy, "Nat46" or "Nat64" for a service
	// whose backends are of the other IP family; null when Cilium
	// printed none: it omits the key for a service without NAT46/64
	// (1.20 never prints "None"), and the table does not show it.
	NatPolicy *string `json:"natPolicy" expr:"natPolicy"`
	// HealthCheckNodePort is flags.healthCheckNodePort, the Kubernetes
	// Service's spec.healthCheckNodePort (a LoadBalancer Service with
	// externalTrafficPolicy Local has one; each of its frontends shows
	// it); null when Cilium printed none: it omits the key for a Service
	// that has none, and the table does not show it.
	HealthCheckNodePort *int `json:"healthCheckNodePort" expr:"healthCheckNodePort"`
	// Cluster is flags.cluster, the clustermesh cluster of a remote
	// service; null when Cilium printed none: it omits the key for a
	// service of its own cluster, and the table prints only "(Remote)".
	Cluster *string `json:"cluster" expr:"cluster"`
	// Remote is whether the service is another cluster's: the table's
	// "ClusterIP (Remote)" mark, or with -o json whether flags.cluster
	// is printed, the rule by which cilium-dbg prints that mark.
	Remote bool `json:"remote" expr:"remote"`
}

// Backend is one backend of a Service.
type Backend struct {
	// IP, Port and Protocol are the backend's address ("10.42.0.21"),
	// port and protocol ("TCP"; null when Cilium 1.15's table printed
	// none).
	IP       string  `json:"ip" expr:"ip"`
	Port     int     `json:"port" expr:"port"`
	Protocol *string `json:"protocol" expr:"protocol"`
	// NodeName is nodeName, the node the backend runs on (its
	// EndpointSlice endpoint's nodeName); null when Cilium printed none:
	// it omits the key for a backend without one (an endpoint with no
	// nodeName, as the API server's of default/kubernetes; the local
	// proxy's 127.0.0.1 backend of an L7 service), and the table does
	// not show it.
	NodeName *string `json:"nodeName" expr:"nodeName"`
	// Zone is zone, the backend's topology zone (its EndpointSlice
	// endpoint's zone, from its node's topology.kubernetes.io/zone
	// label); null when Cilium printed none: it omits the key for a
	// backend without a zone (a node without that label), and the table
	// does not show it.
	Zone *string `json:"zone" expr:"zone"`
	// State is active, terminating, terminating-not-serving,
	// quarantined or maintenance.
	State string `json:"state" expr:"state"`
	// Preferred is the JSON's preferred (true for every backend in 1.20),
	// or the table's "(preferred)" mark (Cluster Mesh affinity); false
	// when the table has no mark.
	Preferred bool `json:"preferred" expr:"preferred"`
	// Weight is the backend's weight as the JSON form prints it; 0 is a
	// real weight (a backend that takes no new traffic). null when not
	// printed: the table form does not show weights.
	Weight *int `json:"weight" expr:"weight"`
}

// HostPort returns the backend as "ip:port" ("[v6]:port").
func (b Backend) HostPort() string { return Addr{IP: b.IP, Port: b.Port}.String() }

// BackendAddrs returns the backends as "ip:port" strings, in listed order.
func (s Service) BackendAddrs() []string {
	out := make([]string, 0, len(s.Backends))
	for _, b := range s.Backends {
		out = append(out, b.HostPort())
	}
	return out
}

// ServiceList is the parsed `cilium-dbg service list [-o json]`.
type ServiceList []Service

// Frontend returns the service whose frontend matches fe, or a zero Service
// (ID null, no backends) when none does. fe is "ip:port/PROTO" (exact, "/i" for the
// internal scope) or "ip:port" (external scope, any protocol; the first in
// listed order wins, so give the protocol when TCP and UDP share a port).
func (l ServiceList) Frontend(fe string) Service {
	for _, s := range l {
		if frontendMatch(s.Frontend, fe) {
			return s
		}
	}
	return Service{Backends: []Backend{}}
}

// Named returns the services of the Kubernetes Service namespace/name (one
// per frontend), in listed order. Only -o json output has names.
func (l ServiceList) Named(namespace, name string) ServiceList {
	out := ServiceList{}
	for _, s := range l {
		if s.Namespace != nil && *s.Namespace == namespace && s.Name != nil && *s.Name == name {
			out = append(out, s)
		}
	}
	return out
}

// frontendMatch compares a frontend with "ip:port[/PROTO][/i]".
func frontendMatch(a L4Addr, query string) bool {
	q, err := ParseL4Addr(strings.TrimSpace(query))
	if err != nil {
		return false
	}
	if canonIP(a.IP) != canonIP(q.IP) || a.Port != q.Port || (a.Scope == nil) != (q.Scope == nil) || a.Scope != nil && *a.Scope != *q.Scope {
		return false
	}
	return q.Protocol == nil || a.Protocol == nil || strings.EqualFold(*a.Protocol, *q.Protocol)
}

// ParseServiceList parses `cilium-dbg service list`, either the -o json
// array or the plain table (see jsonOrText).
func ParseServiceList(text string) (ServiceList, error) {
	return jsonOrText(kindServiceList, text, ParseServiceListJSON, ParseServiceListTable)
}

// serviceTypes are the types Cilium prints (loadbalancer.SVCType): a type
// outside them is a cut or garbled row, not a new kind of service.
var serviceTypes = map[string]bool{"ClusterIP": true, "NodePort": true, "ExternalIPs": true,
	"LoadBalancer": true, "HostPort": true, "LocalRedirect": true}

// JSON shape of models.Service (api/v1/models/service*.go).
type jsonService struct {
	Spec   *jsonServiceSpec `json:"spec"`
	Status *struct {
		Realized *jsonServiceSpec `json:"realized"`
	} `json:"status"`
}

type jsonServiceSpec struct {
	ID              *int `json:"id"`
	FrontendAddress *struct {
		IP       string  `json:"ip"`
		Port     int     `json:"port"`
		Protocol *string `json:"protocol"`
		Scope    *string `json:"scope"`
	} `json:"frontend-address"`
	BackendAddresses []*struct {
		IP        *string `json:"ip"`
		Port      int     `json:"port"`
		Protocol  *string `json:"protocol"`
		NodeName  *string `json:"nodeName"`
		Zone      *string `json:"zone"`
		State     string  `json:"state"`
		Preferred bool    `json:"preferred"`
		Weight    *int    `json:"weight"`
	} `json:"backend-addresses"`
	Flags *struct {
		Type                string  `json:"type"`
		Name                *string `json:"name"`
		Namespace           *string `json:"namespace"`
		TrafficPolicy       *string `json:"trafficPolicy"`
		ExtTrafficPolicy    *string `json:"extTrafficPolicy"`
		IntTrafficPolicy    *string `json:"intTrafficPolicy"`
		NatPolicy           *string `json:"natPolicy"`
		HealthCheckNodePort *int    `json:"healthCheckNodePort"`
		Cluster             *string `json:"cluster"`
	} `json:"flags"`
}

// ParseServiceListJSON parses `cilium-dbg service list -o json`.
//
// It reads status.realized, which is what the table shows, and falls back to
// spec for anything realized lacks (in Cilium 1.20 both are the same object).
func ParseServiceListJSON(text string) (ServiceList, error) {
	var raw []jsonService
	if err := json.Unmarshal([]byte(text), &raw); err != nil {
		return nil, jsonError(kindServiceList, text, err)
	}
	out := make(ServiceList, 0, len(raw))
	for i, js := range raw {
		spec := js.Spec
		if js.Status != nil && js.Status.Realized != nil {
			spec = js.Status.Realized
		}
		if spec == nil || spec.FrontendAddress == nil {
			return nil, newError(kindServiceList, 0, "", "element "+strconv.Itoa(i)+": no spec.frontend-address")
		}
		fa := spec.FrontendAddress
		s := Service{
			ID:       spec.ID,
			Frontend: L4Addr{IP: fa.IP, Port: fa.Port, Protocol: fa.Protocol, Scope: fa.Scope},
			Backends: []Backend{},
		}
		flags := spec.Flags
		if flags == nil && js.Spec != nil {
			flags = js.Spec.Flags
		}
		if flags != nil {
			s.Type, s.Name, s.Namespace = flags.Type, flags.Name, flags.Namespace
			s.TrafficPolicy, s.ExtTrafficPolicy, s.IntTrafficPolicy = flags.TrafficPolicy, flags.ExtTrafficPolicy, flags.IntTrafficPolicy
			s.NatPolicy, s.HealthCheckNodePort, s.Cluster = flags.NatPolicy, flags.HealthCheckNodePort, flags.Cluster
			s.Remote = flags.Cluster != nil && *flags.Cluster != ""
		}
		for _, b := range spec.BackendAddresses {
			if b == nil || b.IP == nil {
				return nil, newError(kindServiceList, 0, "", "element "+strconv.Itoa(i)+": backend without ip")
			}
			be := Backend{IP: *b.IP, Port: b.Port, Protocol: b.Protocol, NodeName: b.NodeName,
				Zone: b.Zone, State: b.State, Preferred: b.Preferred, Weight: b.Weight}
			s.Backends = append(s.Backends, be)
		}
		out = append(out, s)
	}
	return out, nil
}

// ParseServiceListTable parses the plain `cilium-dbg service list` table:
//
//	ID   Frontend            Service Type   Backend
//	7    10.43.77.5:80/TCP   ClusterIP      1 => 10.42.0.31:8080/TCP (active)
//	                                        2 => 10.42.0.32:8080/TCP (active)
//	11   10.43.7.7:80/TCP    ClusterIP
//
// Columns are cut at the header's positions (see table) because the Backend
// cell is empty for a service without backends and "Service Type" can hold
// "ClusterIP (Remote)". Without the header (grep'd output) each row
// describes itself: ID, frontend, a known type, then the first backend;
// indented rows are more backends of the service above.
func ParseServiceListTable(text string) (ServiceList, error) {
	if err := refuseCut(kindServiceList, "services", text, ParseServiceListTable, func(l ServiceList) int { return len(l) }); err != nil {
		return nil, err
	}
	r := newLineReader(text)
	// at most one service per line: one allocation instead of a slice
	// regrown (and copied) twenty times over a big table
	out := make(ServiceList, 0, strings.Count(text, "\n")+1)
	var t table
	var row []string // the cells of the current line
	haveHeader, sawLine := false, false
	var err error
	for {
		line, ok := r.next()
		if !ok {
			break
		}
		if isBlank(line) {
			continue
		}
		first := !sawLine
		sawLine = true
		if first {
			if t, haveHeader = newTable(line, []string{"ID", "Frontend", "Service Type", "Backend"}); haveHeader {
				row = make([]string, len(t.starts))
				continue
			}
		}
		var c []string
		if haveHeader {
			if c, ok = t.cellsInto(row, line); !ok {
				return nil, newError(kindServiceList, r.num, line, "line not aligned with the table header")
			}
		} else if c, ok = serviceRowCells(line); !ok || first && c[0] != "" && !isDigits(c[0]) {
			msg := `expected "ID  FRONTEND  TYPE  [N => BACKEND (state)]" or the header "ID Frontend Service Type Backend"`
			if first {
				msg = `expected header "ID Frontend Service Type Backend" or a service row`
			}
			return nil, newError(kindServiceList, r.num, line, msg)
		}
		if out, err = addServiceRow(out, c); err != nil {
			return nil, newError(kindServiceList, r.num, line, err.Error())
		}
	}
	if !sawLine {
		return nil, newError(kindServiceList, 0, "", "empty input")
	}
	return out, nil
}

// addServiceRow appends the service of a row's cells (ID, frontend, type,
// first backend) to out, or, for a row without an ID, the backend to the
// service above.
func addServiceRow(out ServiceList, c []string) (ServiceList, error) {
	if c[0] == "" {
		// Continuation: one more backend of the service above.
		if len(out) == 0 || c[1] != "" || c[2] != "" || c[3] == "" {
			return nil, errString(`expected "N => ip:port/PROTO (state)" under a service`)
		}
		b, err := parseTableBackend(c[3])
		if err != nil {
			return nil, err
		}
		out[len(out)-1].Backends = append(out[len(out)-1].Backends, b)
		return out, nil
	}
	id, err := strconv.Atoi(c[0])
	if err != nil {
		return nil, errString("expected a numeric service ID")
	}
	fe, err := ParseL4Addr(c[1])
	if err != nil {
		return nil, errString("frontend: " + err.Error())
	}
	s := Service{Frontend: fe, Type: c[2], Backends: []Backend{}}
	if id != 0 { // 0 is a frontend without an ID, which -o json omits
		s.ID = &id
	}
	if typ, ok := strings.CutSuffix(s.Type, " (Remote)"); ok {
		s.Type, s.Remote = typ, true
	}
	if !serviceTypes[s.Type] {
		return nil, errString("unknown service type " + strconv.Quote(shortToken(s.Type)) +
			"; expected ClusterIP, NodePort, ExternalIPs, LoadBalancer, HostPort or LocalRedirect")
	}
	if c[3] != "" {
		b, err := parseTableBackend(c[3])
		if err != nil {
			return nil, err
		}
		s.Backends = append(s.Backends, b)
	}
	return append(out, s), nil
}

// serviceRowCells splits a row of the table without its header into the
// four cells: "7  10.43.77.5:80/TCP  ClusterIP  1 => ip:port/TCP (active)",
// "11  10.43.7.7:80/TCP  ClusterIP (Remote)", or an indented
// "2 => ip:port/TCP (active)".
func serviceRowCells(line string) ([]string, bool) {
	if line[0] == ' ' || line[0] == '\t' {
		return []string{"", "", "", strings.TrimSpace(line)}, true
	}
	id, rest := cutField(line)
	fe, rest := cutField(rest)
	typ, rest := cutField(rest)
	if remote, after := cutField(rest); remote == "(Remote)" {
		typ, rest = typ+" (Remote)", after
	}
	if id == "" || fe == "" || typ == "" {
		return nil, false
	}
	return []string{id, fe, typ, strings.TrimSpace(rest)}, true
}

// parseTableBackend reads "1 => 10.42.0.31:8080/TCP (active)", optionally
// followed by " (preferred)" (--clustermesh-affinity).
func parseTableBackend(s string) (Backend, error) {
	const msg = errString(`expected "N => ip:port/PROTO (state)"`)
	_, rest, ok := strings.Cut(s, " => ")
	if !ok {
		return Backend{}, msg
	}
	addr, rest, ok := strings.Cut(rest, " (")
	if !ok {
		if _, err := ParseL4Addr(strings.TrimSpace(addr)); err == nil {
			return Backend{}, errString(`backend without "(state)": the form of Cilium before 1.10, also shown in the examples of Cilium's docs (1.15 to 1.20 print every backend's state); not read, since the state is not there`)
		}
		return Backend{}, msg
	}
	a, err := ParseL4Addr(addr)
	if err != nil {
		return Backend{}, msg
	}
	state, rest, ok := strings.Cut(rest, ")")
	if !ok {
		return Backend{}, msg
	}
	b := Backend{IP: a.IP, Port: a.Port, Protocol: a.Protocol, State: state}
	switch strings.TrimSpace(rest) {
	case "":
	case "(preferred)":
		b.Preferred = true
	default:
		return Backend{}, msg
	}
	return b, nil
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}
