package parse

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"

	"github.com/labrun/labrun/internal/boundary/bpfentries"
)

const kindPolicyGet = "cilium-bpf-policy-get"

// PolicyGet is what `cilium-dbg bpf policy get ID` printed: the entries of
// one endpoint's policy map with the traffic each has let through or
// denied, so a lab can assert that the allow rule it wrote matched the
// request it made (Find(...).packets went up), not only that the rule is
// there.
type PolicyGet struct {
	// Entries are the map's entries in the order printed: deny before
	// allow, ingress before egress, then by identity (cilium-dbg sorts
	// them so).
	Entries []PolicyMapEntry `json:"entries" expr:"entries"`
	// Empty is true when cilium-dbg said the map has no entries ("Policy
	// stats empty. Perhaps the policy enforcement is disabled?").
	Empty bool `json:"empty" expr:"empty"`
}

// PolicyMapEntry is one row of `cilium-dbg bpf policy get` (or one
// element of its -o json). A column a version or an option does not print
// is null: the identity without -n (the labels are printed instead), the
// labels with -n, AUTH TYPE before Cilium 1.14, PREFIX before 1.16,
// COOKIE before 1.18, and the counters of an entry no packet has hit since
// the agent wrote it ("-").
type PolicyMapEntry struct {
	// EndpointID is the endpoint whose map holds the entry, from the
	// "Endpoint ID: N" line `bpf policy get --all` prints before each
	// map; null for the map of one endpoint, whose id the command names.
	EndpointID *int `json:"endpointID" expr:"endpointID"`
	// Verdict is "Allow" or "Deny" (the POLICY column); Deny is true for
	// "Deny".
	Verdict string `json:"verdict" expr:"verdict"`
	Deny    bool   `json:"deny" expr:"deny"`
	// Direction is "Ingress" or "Egress".
	Direction string `json:"direction" expr:"direction"`
	// Identity is the peer's numeric security identity (0: any peer),
	// printed with -n (IDENTITY column), in -o json, and without -n for an
	// identity the agent could not resolve to labels; null when its
	// labels were printed instead.
	Identity *int `json:"identity" expr:"identity"`
	// Labels are the peer identity's labels as printed without -n, one
	// per line ("k8s:app=frontend", "reserved:host"; the any-peer
	// identity prints as "ANY", or "reserved:unknown" before 1.20); empty
	// with -n and in -o json, which print the identity instead.
	Labels []string `json:"labels" expr:"labels"`
	// PortProto is the PORT/PROTO column as printed: "ANY", "TCP",
	// "8080/TCP", or a range "8080-8095/TCP".
	PortProto string `json:"portProto" expr:"portProto"`
	// Protocol is its protocol ("ANY" for any, "TCP", "UDP", "ICMP", ...,
	// or a number Cilium has no name for).
	Protocol string `json:"protocol" expr:"protocol"`
	// Port is the destination port, and PortEnd the last port of a
	// range (Port for one port); both null when any port matches.
	Port    *int `json:"port" expr:"port"`
	PortEnd *int `json:"portEnd" expr:"portEnd"`
	// ProxyPort is the L7 proxy's port the entry redirects to; 0 where
	// cilium-dbg prints NONE.
	ProxyPort int `json:"proxyPort" expr:"proxyPort"`
	// AuthType is "disabled", "spire", ...; null before Cilium 1.14.
	AuthType *string `json:"authType" expr:"authType"`
	// Bytes and Packets count the traffic the entry has decided since the
	// agent wrote it (the cilium_policystats map, summed over CPUs);
	// null where cilium-dbg prints "-": no packet has hit the entry yet.
	Bytes   *int64 `json:"bytes" expr:"bytes"`
	Packets *int64 `json:"packets" expr:"packets"`
	// PrefixLen is the length of the entry's protocol and port prefix
	// (0: any protocol, 8: one protocol, any port, 24: one port); null
	// before Cilium 1.16.
	PrefixLen *int `json:"prefixLen" expr:"prefixLen"`
	// Cookie is the policy log cookie of the rule that made the entry;
	// null before Cilium 1.18.
	Cookie *int64 `json:"cookie" expr:"cookie"`
}

// Ingress returns the ingress entries.
func (p PolicyGet) Ingress() []PolicyMapEntry {
	return filterEntries(p.Entries, func(e PolicyMapEntry) bool { return e.Direction == "Ingress" })
}

// Egress returns the egress entries.
func (p PolicyGet) Egress() []PolicyMapEntry {
	return filterEntries(p.Entries, func(e PolicyMapEntry) bool { return e.Direction == "Egress" })
}

// Denies returns the deny entries.
func (p PolicyGet) Denies() []PolicyMapEntry {
	return filterEntries(p.Entries, func(e PolicyMapEntry) bool { return e.Deny })
}

// ForIdentity returns the entries of one peer identity (read with -n or
// -o json; an entry printed with labels has no identity).
func (p PolicyGet) ForIdentity(id int) []PolicyMapEntry {
	return filterEntries(p.Entries, func(e PolicyMapEntry) bool { return e.Identity != nil && *e.Identity == id })
}

// WithLabel returns the entries whose peer has the label (as printed,
// "k8s:app=frontend"), for output read without -n.
func (p PolicyGet) WithLabel(label string) []PolicyMapEntry {
	return filterEntries(p.Entries, func(e PolicyMapEntry) bool {
		for _, l := range e.Labels {
			if l == label {
				return true
			}
		}
		return false
	})
}

// Matched returns the entries that have decided at least one packet.
func (p PolicyGet) Matched() []PolicyMapEntry {
	return filterEntries(p.Entries, func(e PolicyMapEntry) bool { return e.Packets != nil && *e.Packets > 0 })
}

// Find returns the entry for a direction ("ingress"/"egress", any case),
// a peer identity and a PORT/PROTO as printed ("8080/TCP", "ANY"), or
// null when the map has none.
func (p PolicyGet) Find(direction string, identity int, portProto string) *PolicyMapEntry {
	for i, e := range p.Entries {
		if strings.EqualFold(e.Direction, direction) && e.Identity != nil && *e.Identity == identity &&
			strings.EqualFold(e.PortProto, portProto) {
			return &p.Entries[i]
		}
	}
	return nil
}

// PacketsOf is the packets counted by the entry Find returns, 0 when the
// map has no such entry or no packet has hit it: what a lab compares
// before and after the traffic it makes.
func (p PolicyGet) PacketsOf(direction string, identity int, portProto string) int {
	if e := p.Find(direction, identity, portProto); e != nil && e.Packets != nil {
		return int(*e.Packets)
	}
	return 0
}

func filterEntries(es []PolicyMapEntry, keep func(PolicyMapEntry) bool) []PolicyMapEntry {
	out := []PolicyMapEntry{}
	for _, e := range es {
		if keep(e) {
			out = append(out, e)
		}
	}
	return out
}

// ParsePolicyGet reads `cilium-dbg bpf policy get [-n] ID`, `bpf policy
// get --all` and their -o json.
//
// Text (Cilium 1.20's cilium-dbg/cmd/bpf_policy_get.go, a tabwriter with
// padding 3; without -n the IDENTITY column is LABELS (source:key[=value])
// and an identity with several labels takes one line per label, the rest
// of its columns empty):
//
//	POLICY   DIRECTION   IDENTITY   PORT/PROTO   PROXY PORT   AUTH TYPE   BYTES   PACKETS   PREFIX   COOKIE
//	Allow    Ingress     0          ANY          NONE         disabled    2448    36        0        0
//	Allow    Ingress     11         8080/TCP     NONE         disabled    -       -         24       0
//
// Columns are found by their titles, so the layouts of earlier versions
// read too (no AUTH TYPE before 1.14, no PREFIX before 1.16, no COOKIE
// before 1.18); formats without the POLICY column (before deny policies)
// are refused as such. An empty map prints the header and "Policy stats
// empty. Perhaps the policy enforcement is disabled?".
//
// JSON (-o json) is the map's raw structs (PolicyEntriesDump): the port
// and the proxy port are in network byte order as the map holds them,
// printed as the host's integers; they are read as a little-endian host
// (amd64, arm64) prints them.
func ParsePolicyGet(text string) (PolicyGet, error) {
	return jsonOrText(kindPolicyGet, text, parsePolicyGetJSON, parsePolicyGetText)
}

const policyStatsEmpty = "Policy stats empty. Perhaps the policy enforcement is disabled?"

// policyColumns are the titles of the table, in order; those marked
// optional are missing from the output of some versions.
var policyColumns = []struct {
	title    string
	optional bool
}{
	{"POLICY", false}, {"DIRECTION", false}, {"", false}, // IDENTITY or LABELS
	{"PORT/PROTO", false}, {"PROXY PORT", false}, {"AUTH TYPE", true},
	{"BYTES", false}, {"PACKETS", false}, {"PREFIX", true}, {"COOKIE", true},
}

// policyTable is the header of one table: where each column starts (-1
// for a column this version does not print) and whether the peer column
// holds labels.
type policyTable struct {
	t      table
	col    [10]int // index into t's cells per policyColumns entry, or -1
	labels bool
}

func newPolicyTable(line string) (policyTable, bool, string) {
	words := collapseSpace(line)
	if !strings.HasPrefix(words, "POLICY DIRECTION ") {
		if strings.HasPrefix(words, "DIRECTION ") && strings.Contains(words, "PORT/PROTO") {
			return policyTable{}, false, "a table without the POLICY column, the format of Cilium before deny policies (1.9); not read"
		}
		return policyTable{}, false, `expected the header "POLICY DIRECTION IDENTITY|LABELS PORT/PROTO PROXY PORT [AUTH TYPE] BYTES PACKETS [PREFIX] [COOKIE]"`
	}
	var pt policyTable
	var titles []string
	for i, c := range policyColumns {
		title := c.title
		if i == 2 {
			switch {
			case strings.Contains(line, "LABELS (source:key[=value])"):
				title, pt.labels = "LABELS (source:key[=value])", true
			case strings.Contains(line, "IDENTITY"):
				title = "IDENTITY"
			default:
				return policyTable{}, false, "expected an IDENTITY or LABELS (source:key[=value]) column"
			}
		}
		if c.optional && !strings.Contains(line, title) {
			pt.col[i] = -1
			continue
		}
		pt.col[i] = len(titles)
		titles = append(titles, title)
	}
	t, ok := newTable(line, titles)
	if !ok {
		return policyTable{}, false, "expected the columns of bpf policy get in their order"
	}
	pt.t = t
	return pt, true, ""
}

// cell is the value of column i of cells ("" for a column not printed).
func (pt policyTable) cell(cells []string, i int) (string, bool) {
	if pt.col[i] < 0 {
		return "", false
	}
	return cells[pt.col[i]], true
}

func parsePolicyGetText(text string) (PolicyGet, error) {
	if err := refuseCut(kindPolicyGet, "entries", text, parsePolicyGetText, func(p PolicyGet) int { return len(p.Entries) }); err != nil {
		return PolicyGet{}, err
	}
	r := newLineReader(text)
	out := PolicyGet{Entries: []PolicyMapEntry{}}
	var pt policyTable
	var endpoint *int
	haveHeader := false
	seen := false
	for {
		line, ok := r.next()
		if !ok {
			break
		}
		if isBlank(line) {
			continue
		}
		seen = true
		if rest, ok := strings.CutPrefix(line, "Endpoint ID: "); ok {
			id, err := strconv.Atoi(strings.TrimSpace(rest))
			if err != nil {
				return PolicyGet{}, newError(kindPolicyGet, r.num, line, "expected a numeric endpoint id")
			}
			endpoint, haveHeader = &id, false
			continue
		}
		if strings.HasPrefix(line, "Path: ") && endpoint != nil {
			continue
		}
		if strings.TrimSpace(line) == policyStatsEmpty {
			if !haveHeader {
				return PolicyGet{}, newError(kindPolicyGet, r.num, line, "the empty map's line before the table's header")
			}
			out.Empty = true
			continue
		}
		if strings.TrimSpace(line) == "no maps found" {
			out.Empty = true
			continue
		}
		if !haveHeader {
			var why string
			if pt, haveHeader, why = newPolicyTable(line); !haveHeader {
				return PolicyGet{}, newError(kindPolicyGet, r.num, line, why)
			}
			continue
		}
		cells, ok := pt.t.cells(line)
		if !ok {
			return PolicyGet{}, newError(kindPolicyGet, r.num, line, "line not aligned with the table header")
		}
		if cells[0] == "" {
			// another label of the previous row's identity
			if !pt.labels || len(out.Entries) == 0 || cells[pt.col[2]] == "" || strings.Join(cells, "") != cells[pt.col[2]] {
				return PolicyGet{}, newError(kindPolicyGet, r.num, line, "expected a row starting with Allow or Deny, or a label under the previous row's")
			}
			last := &out.Entries[len(out.Entries)-1]
			if last.Identity != nil {
				return PolicyGet{}, newError(kindPolicyGet, r.num, line, "a label under a row whose peer is a numeric identity")
			}
			last.Labels = append(last.Labels, cells[pt.col[2]])
			continue
		}
		e, why := policyRow(pt, cells)
		if why != "" {
			return PolicyGet{}, newError(kindPolicyGet, r.num, line, why)
		}
		e.EndpointID = endpoint
		out.Entries = append(out.Entries, e)
	}
	if !seen {
		return PolicyGet{}, newError(kindPolicyGet, 0, "", "empty input")
	}
	if !haveHeader && !out.Empty {
		return PolicyGet{}, newError(kindPolicyGet, 0, "", "no table header")
	}
	return out, nil
}

// policyRow reads the cells of one row; why says what is wrong.
func policyRow(pt policyTable, cells []string) (PolicyMapEntry, string) {
	var e PolicyMapEntry
	switch e.Verdict = cells[pt.col[0]]; e.Verdict {
	case "Allow":
	case "Deny":
		e.Deny = true
	default:
		return e, "expected POLICY Allow or Deny"
	}
	switch e.Direction = cells[pt.col[1]]; e.Direction {
	case "Ingress", "Egress":
	default:
		return e, "expected DIRECTION Ingress or Egress"
	}
	peer := cells[pt.col[2]]
	if peer == "" {
		return e, "expected the peer's identity or label"
	}
	e.Labels = []string{}
	if id, err := strconv.Atoi(peer); err == nil && id >= 0 {
		// -n, or an identity the agent could not resolve (printed as %d)
		e.Identity = &id
	} else if pt.labels && strings.Contains(peer, ":") || pt.labels && peer == "ANY" {
		e.Labels = []string{peer}
	} else {
		return e, "expected a numeric identity or a source:key[=value] label"
	}
	var why string
	if e.PortProto, e.Protocol, e.Port, e.PortEnd, why = portProto(cells[pt.col[3]]); why != "" {
		return e, why
	}
	switch pp := cells[pt.col[4]]; pp {
	case "NONE":
	default:
		n, err := strconv.ParseUint(pp, 10, 16)
		if err != nil {
			return e, "expected PROXY PORT NONE or a port"
		}
		e.ProxyPort = int(n)
	}
	if a, ok := pt.cell(cells, 5); ok {
		if a == "" {
			return e, "expected an AUTH TYPE"
		}
		e.AuthType = &a
	}
	for i, dst := range []**int64{&e.Bytes, &e.Packets} {
		v := cells[pt.col[6+i]]
		if v == "-" {
			continue
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return e, "expected " + policyColumns[6+i].title + " as a number or -"
		}
		*dst = &n
	}
	if v, ok := pt.cell(cells, 8); ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || n > 24 {
			return e, "expected PREFIX as a prefix length from 0 to 24"
		}
		e.PrefixLen = &n
	}
	if v, ok := pt.cell(cells, 9); ok {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 || n > math.MaxUint32 {
			return e, "expected a numeric COOKIE"
		}
		e.Cookie = &n
	}
	return e, ""
}

// portProto reads a PORT/PROTO cell (PolicyKey.PortProtoString): "ANY",
// "TCP", "8080/TCP", "8080-8095/TCP".
func portProto(s string) (text, proto string, port, end *int, why string) {
	ports, proto, hasPort := strings.Cut(s, "/")
	if !hasPort {
		proto, ports = s, ""
	}
	if proto == "" || strings.ContainsAny(proto, " /") {
		return s, "", nil, nil, "expected PORT/PROTO as ANY, a protocol, PORT/PROTO or FIRST-LAST/PROTO"
	}
	if !hasPort {
		return s, proto, nil, nil, ""
	}
	first, last, isRange := strings.Cut(ports, "-")
	p, err := strconv.ParseUint(first, 10, 16)
	if err != nil {
		return s, "", nil, nil, "expected a port number in PORT/PROTO"
	}
	pi := int(p)
	ei := pi
	if isRange {
		q, err := strconv.ParseUint(last, 10, 16)
		if err != nil || q < p {
			return s, "", nil, nil, "expected a port range FIRST-LAST in PORT/PROTO"
		}
		ei = int(q)
	}
	return s, proto, &pi, &ei, ""
}

// policyEntryJSON is one element of `bpf policy get -o json`: Cilium's
// PolicyEntryDump, whose embedded PolicyEntry and StatsValue put their
// fields at the top.
type policyEntryJSON struct {
	ProxyPortNetwork *uint16 `json:"ProxyPortNetwork"`
	Flags            *uint8  `json:"Flags"`
	AuthRequirement  *uint8  `json:"AuthRequirement"`
	Cookie           *uint32 `json:"Cookie"`
	Packets          *uint64 `json:"Packets"`
	Bytes            *uint64 `json:"Bytes"`
	Key              *struct {
		Prefixlen        *uint32 `json:"Prefixlen"`
		Identity         *uint32 `json:"Identity"`
		TrafficDirection *uint8  `json:"TrafficDirection"`
		Nexthdr          *uint8  `json:"Nexthdr"`
		DestPortNetwork  *uint16 `json:"DestPortNetwork"`
	} `json:"Key"`
}

// The policy map's key layout (pkg/maps/policymap): the LPM prefix
// counts 40 bits of identity and direction before the protocol's 8 and
// the port's 16.
const (
	policyStaticPrefixBits = 40
	policyNexthdrBits      = 8
	policyFullPrefixBits   = 24
	policyStatNotAvailable = math.MaxUint64
)

func parsePolicyGetJSON(text string) (PolicyGet, error) {
	var raw []policyEntryJSON
	if err := json.Unmarshal([]byte(text), &raw); err != nil {
		return PolicyGet{}, jsonError(kindPolicyGet, text, err)
	}
	out := PolicyGet{Entries: []PolicyMapEntry{}, Empty: len(raw) == 0}
	for i, r := range raw {
		e, why := policyEntryFromJSON(r)
		if why != "" {
			return PolicyGet{}, newError(kindPolicyGet, 0, "", "element "+strconv.Itoa(i)+": "+why)
		}
		out.Entries = append(out.Entries, e)
	}
	return out, nil
}

func policyEntryFromJSON(r policyEntryJSON) (PolicyMapEntry, string) {
	var e PolicyMapEntry
	k := r.Key
	if k == nil || k.Prefixlen == nil || k.Identity == nil || k.TrafficDirection == nil || k.Nexthdr == nil || k.DestPortNetwork == nil ||
		r.Flags == nil || r.ProxyPortNetwork == nil || r.Packets == nil || r.Bytes == nil {
		return e, "expected a policy map entry (Key with Prefixlen, Identity, TrafficDirection, Nexthdr, DestPortNetwork; Flags, ProxyPortNetwork, Packets, Bytes)"
	}
	e.Verdict, e.Deny = "Allow", *r.Flags&1 != 0
	if e.Deny {
		e.Verdict = "Deny"
	}
	switch *k.TrafficDirection {
	case 0:
		e.Direction = "Ingress"
	case 1:
		e.Direction = "Egress"
	default:
		return e, "TrafficDirection is neither 0 (ingress) nor 1 (egress)"
	}
	id := int(*k.Identity)
	e.Identity, e.Labels = &id, []string{}
	if *k.Prefixlen < policyStaticPrefixBits || *k.Prefixlen > policyStaticPrefixBits+policyFullPrefixBits {
		return e, "Prefixlen outside the policy key's 40 to 64 bits"
	}
	plen := int(*k.Prefixlen - policyStaticPrefixBits)
	e.PrefixLen = &plen
	e.Protocol = bpfentries.ProtoName(*k.Nexthdr)
	e.PortProto = e.Protocol
	if plen > policyNexthdrBits {
		port := int(swap16(*k.DestPortNetwork))
		end := port + int(uint16(0xffff)>>(plen-policyNexthdrBits))
		if plen == policyFullPrefixBits {
			e.PortProto = strconv.Itoa(port) + "/" + e.Protocol
		} else {
			e.PortProto = strconv.Itoa(port) + "-" + strconv.Itoa(end) + "/" + e.Protocol
		}
		e.Port, e.PortEnd = &port, &end
	}
	e.ProxyPort = int(swap16(*r.ProxyPortNetwork))
	if r.AuthRequirement != nil {
		a := authTypeName(*r.AuthRequirement &^ 0x80)
		e.AuthType = &a
	}
	for _, c := range []struct {
		v   uint64
		dst **int64
	}{{*r.Bytes, &e.Bytes}, {*r.Packets, &e.Packets}} {
		switch {
		case c.v == policyStatNotAvailable:
		case c.v > math.MaxInt64:
			return e, "a counter beyond 2^63"
		default:
			n := int64(c.v)
			*c.dst = &n
		}
	}
	if r.Cookie != nil {
		n := int64(*r.Cookie)
		e.Cookie = &n
	}
	return e, ""
}

// swap16 turns a port the map holds in network byte order, printed as a
// little-endian host's integer, into the port.
func swap16(v uint16) uint16 { return v<<8 | v>>8 }

// authTypeName is Cilium's AuthType.String.
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
