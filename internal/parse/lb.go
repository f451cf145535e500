package parse

import (
	"encoding/json"
	"sort"
	"strconv"
	"strings"
)

const kindLBList = "cilium-bpf-lb-list"

// LBEntry is one row of `cilium-dbg bpf lb list`: one slot of one frontend
// in the BPF services map.
//
// Slot 0 is the service itself: its value holds the rev-NAT id and the
// service flags ("[ClusterIP, non-routable]"). Slots 1..N each hold one
// backend. A backend id missing from the backends map prints
// "backend N not found" (NotFound, BackendID).
type LBEntry struct {
	// Frontend is the row's key without its slot: the service's
	// address, port, protocol and scope.
	Frontend L4Addr `json:"frontend" expr:"frontend"`
	// Slot is the key's "(N)": 0 for the service's own row, 1..N for
	// backends; in the old grouped layout, which printed no slots, 0 for
	// the service's 0.0.0.0:0 / [::]:0 value and null for backends.
	Slot *int `json:"slot" expr:"slot"`
	// Backend is the backend of a slot 1..N row as "ip:port"
	// ("[fd00::1]:80" for IPv6), BackendProtocol its "/PROTO"; both are
	// null for slot 0 and for "backend N not found", which print none
	// (and BackendProtocol where Cilium 1.15 printed no protocol).
	Backend         *string `json:"backend" expr:"backend"`
	BackendProtocol *string `json:"backendProtocol" expr:"backendProtocol"`
	// RevNAT is the "(N)" after the value's address, the service's ID
	// (its reverse NAT entry); null for "backend N not found".
	RevNAT *int `json:"revNAT" expr:"revNAT"`
	// Flags are the bracketed flags of slot 0, e.g. ["ClusterIP",
	// "non-routable"]; empty for other slots.
	Flags []string `json:"flags" expr:"flags"`
	// L7ProxyPort is the "(L7LB Proxy Port: N)" of slot 0 of an L7
	// load-balanced service; null otherwise.
	L7ProxyPort *int `json:"l7ProxyPort" expr:"l7ProxyPort"`
	// NotFound is true for a "backend N not found" row: the slot names
	// a backend ID the backends map does not hold; BackendID is then N
	// (null otherwise: other rows do not print the ID).
	NotFound  bool `json:"notFound" expr:"notFound"`
	BackendID *int `json:"backendID" expr:"backendID"`
}

// IsService reports whether the row is the service's own (slot 0) entry.
func (e LBEntry) IsService() bool { return e.Slot != nil && *e.Slot == 0 }

// slotOrder is the slot for sorting: a backend of the grouped layout,
// which printed none, sorts after slot 0 in printed order.
func (e LBEntry) slotOrder() int {
	if e.Slot == nil {
		return 1
	}
	return *e.Slot
}

// LBList is the parsed `cilium-dbg bpf lb list`. Rows are kept in printed
// order, which is random: the command dumps a Go map. Use Services,
// Frontend or Backends for a stable, grouped view.
type LBList struct {
	// Entries are the rows of the default listing, one per slot, in
	// printed order; empty for the other listings.
	Entries []LBEntry `json:"entries" expr:"entries"`
	// Layout is "slots" for the per-slot layout of Cilium 1.15+
	// ("10.43.0.10:53/UDP (0)") and "grouped" for the older layout that
	// printed one key followed by its values; "" when there are no rows.
	Layout string `json:"layout" expr:"layout"`
	// Mode is the listing: "services" (the default one, in Entries),
	// "frontends" (--frontends, in FrontendRows), "backends" (--backends,
	// in BackendRows) or "revnat" (--revnat, in RevNATRows); "" when
	// there are no rows.
	Mode         string          `json:"mode" expr:"mode"`
	FrontendRows []LBFrontendRow `json:"frontendRows" expr:"frontendRows"`
	BackendRows  []LBBackendRow  `json:"backendRows" expr:"backendRows"`
	RevNATRows   []LBRevNATRow   `json:"revNATRows" expr:"revNATRows"`
}

// LBFrontendRow is a row of `bpf lb list --frontends`: the services map's
// value as stored, "10.96.0.1:443/TCP (0)   0 1[0] (1) [0x0 0x0]".
type LBFrontendRow struct {
	// Frontend is the key's address, port, protocol and scope, Slot its
	// "(N)" (0 for the service's own row).
	Frontend L4Addr `json:"frontend" expr:"frontend"`
	Slot     int    `json:"slot" expr:"slot"`
	// BackendID is the first number: the backend's ID for slots 1..N;
	// for slot 0 the raw union that holds the L7 proxy port of an L7 LB
	// service, or the LB algorithm and affinity timeout (0 when neither
	// is set).
	BackendID int `json:"backendID" expr:"backendID"`
	// Count is the number of active backend slots and QCount of the
	// quarantined ones, "Count[QCount]" (meaningful in slot 0).
	Count  int `json:"count" expr:"count"`
	QCount int `json:"qCount" expr:"qCount"`
	// RevNAT is the "(N)", the service's ID.
	RevNAT int `json:"revNAT" expr:"revNAT"`
	// Flags and Flags2 are the two bytes of "[0xF 0xF2]", the service
	// flags as stored (decoded, they are the default listing's Flags).
	Flags  int `json:"flags" expr:"flags"`
	Flags2 int `json:"flags2" expr:"flags2"`
}

// LBBackendRow is a row of `bpf lb list --backends`: "12   TCP://10.42.0.17"
// (Cilium prints no port there).
type LBBackendRow struct {
	// ID is the backend's ID, the first column.
	ID int `json:"id" expr:"id"`
	// Protocol and IP are the "PROTO://ip" column ("TCP",
	// "10.42.0.17").
	Protocol string `json:"protocol" expr:"protocol"`
	IP       string `json:"ip" expr:"ip"`
	// Zone is the "[zone]" suffix; null when not printed.
	Zone *string `json:"zone" expr:"zone"`
}

// LBRevNATRow is a row of `bpf lb list --revnat`: "7   10.43.77.5:80".
type LBRevNATRow struct {
	// ID is the service's ID, the first column.
	ID int `json:"id" expr:"id"`
	// Address is the frontend ip:port replies are given as source.
	Address L4Addr `json:"address" expr:"address"`
}

// LBService groups the rows of one frontend.
type LBService struct {
	// Frontend is the service's address, port, protocol and scope.
	Frontend L4Addr `json:"frontend" expr:"frontend"`
	// Found is false for the zero value returned when nothing matched.
	Found bool `json:"found" expr:"found"`
	// RevNAT is the service's ID, from slot 0; 0 without a slot 0.
	RevNAT int `json:"revNAT" expr:"revNAT"`
	// Type is the first flag of slot 0, e.g. "ClusterIP", "NodePort";
	// "" without a slot 0.
	Type string `json:"type" expr:"type"`
	// Flags are the flags of slot 0; empty without a slot 0.
	Flags []string `json:"flags" expr:"flags"`
	// HasSlot0 is false if the slot-0 row is missing.
	HasSlot0 bool `json:"hasSlot0" expr:"hasSlot0"`
	// Backends are the rows of slots 1..N sorted by slot, including
	// "backend N not found" rows.
	Backends []LBEntry `json:"backends" expr:"backends"`
}

// Addrs returns the found backends as "ip:port", sorted by slot.
func (s LBService) Addrs() []string {
	out := []string{}
	for _, b := range s.Backends {
		if b.Backend != nil {
			out = append(out, *b.Backend)
		}
	}
	return out
}

// SlotCount returns the number of backend slots (rows other than slot 0).
func (s LBService) SlotCount() int { return len(s.Backends) }

// Services groups the rows by frontend, sorted by frontend text.
func (l LBList) Services() []LBService {
	byKey := map[string]*LBService{}
	var keys []string
	for _, e := range l.Entries {
		k := e.Frontend.String()
		s, ok := byKey[k]
		if !ok {
			s = &LBService{Frontend: e.Frontend, Found: true, Flags: []string{}, Backends: []LBEntry{}}
			byKey[k] = s
			keys = append(keys, k)
		}
		if e.IsService() {
			s.HasSlot0, s.Flags = true, e.Flags
			if e.RevNAT != nil {
				s.RevNAT = *e.RevNAT
			}
			if len(e.Flags) > 0 {
				s.Type = e.Flags[0]
			}
			continue
		}
		s.Backends = append(s.Backends, e)
	}
	sort.Strings(keys)
	out := make([]LBService, 0, len(keys))
	for _, k := range keys {
		s := byKey[k]
		sort.SliceStable(s.Backends, func(i, j int) bool { return s.Backends[i].slotOrder() < s.Backends[j].slotOrder() })
		out = append(out, *s)
	}
	return out
}

// Frontend returns the group of the frontend fe: "10.43.1.2:80/TCP"
// (exact; "/i" selects the internal scope) or "10.43.1.2:80" (external
// scope, any protocol: the first in sorted order, so TCP before UDP). It
// returns a zero LBService with Found false when nothing matches.
func (l LBList) Frontend(fe string) LBService {
	for _, s := range l.Services() {
		if frontendMatch(s.Frontend, fe) {
			return s
		}
	}
	return LBService{Flags: []string{}, Backends: []LBEntry{}}
}

// Backends returns the backends of frontend fe as "ip:port", sorted by slot
// ("backend N not found" rows left out).
func (l LBList) Backends(fe string) []string { return l.Frontend(fe).Addrs() }

// ParseLBList parses `cilium-dbg bpf lb list`.
//
// Cilium 1.15 and later print one row per slot, the key carrying the slot:
//
//	SERVICE ADDRESS         BACKEND ADDRESS (REVNAT_ID) (SLOT)
//	10.43.0.10:53/UDP (0)   0.0.0.0:0 (2) (0) [ClusterIP, non-routable]
//	10.43.0.10:53/UDP (1)   10.42.0.12:53/UDP (2) (1)
//	10.43.5.5:8080/TCP (1)  backend 99 not found
//
// (v1.15 prints no "/PROTO"). Older versions printed the frontend once and
// its values under it, without slots:
//
//	SERVICE ADDRESS      BACKEND ADDRESS
//	10.96.0.10:53        0.0.0.0:0 (2) [ClusterIP]
//	                     10.10.1.185:53 (2)
//
// In that layout the 0.0.0.0:0 / [::]:0 value is slot 0 and a backend's
// Slot is null.
//
// `bpf lb list -o json` (a JSON object mapping each key to its list of
// values, the same strings) is accepted too; entries are then sorted by key.
func ParseLBList(text string) (LBList, error) {
	return jsonOrText(kindLBList, text, parseLBListJSON, parseLBListText)
}

// parseLBListJSON reads `bpf lb list -o json`: each key with its list of
// values, the strings the table prints, entries sorted by key.
func parseLBListJSON(text string) (LBList, error) {
	var raw map[string][]string
	if err := json.Unmarshal([]byte(text), &raw); err != nil {
		return LBList{}, jsonError(kindLBList, text, err)
	}
	keys := make([]string, 0, len(raw))
	for k := range raw {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	l := LBList{Entries: []LBEntry{}, Layout: "slots", Mode: "services", FrontendRows: []LBFrontendRow{}, BackendRows: []LBBackendRow{}, RevNATRows: []LBRevNATRow{}}
	for _, k := range keys {
		addr, slotText, _ := strings.Cut(k, " ")
		fe, err := ParseL4Addr(addr)
		if err != nil {
			return LBList{}, newError(kindLBList, 0, k, `expected "ip:port/PROTO (slot)" as key`)
		}
		slot := -1
		if isParenInt(slotText) {
			slot, _ = strconv.Atoi(slotText[1 : len(slotText)-1])
		} else if slotText != "" {
			return LBList{}, newError(kindLBList, 0, k, `expected "ip:port/PROTO (slot)" as key`)
		} else {
			l.Layout = "grouped"
		}
		for _, v := range raw[k] {
			e, err := parseLBValue(strings.TrimSpace(v), fe, slot)
			if err != nil {
				return LBList{}, newError(kindLBList, 0, v, err.Error())
			}
			l.Entries = append(l.Entries, e)
		}
	}
	return l, nil
}
