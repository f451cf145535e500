package bpfentries

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode"
)

// resultTypes are every struct type returned to callers.
var resultTypes = []any{Frontend{}, Slot{}, Backend{}, RevNAT{}, CTEntry{}, PolicyEntry{}, IPCacheEntry{}, Affinity{}, SockRevNAT{}}

// TestResultTags enforces the contract the playbook layer relies on: every
// exported field has json and expr tags, equal, lowerCamel.
func TestResultTags(t *testing.T) {
	for _, v := range resultTypes {
		typ := reflect.TypeOf(v)
		for i := 0; i < typ.NumField(); i++ {
			f := typ.Field(i)
			if !f.IsExported() {
				continue
			}
			j, e := f.Tag.Get("json"), f.Tag.Get("expr")
			if j == "" || e == "" || j != e {
				t.Errorf("%s.%s: json %q expr %q: want both, equal", typ.Name(), f.Name, j, e)
				continue
			}
			if !unicode.IsLower(rune(j[0])) || strings.ContainsAny(j, "_-, ") {
				t.Errorf("%s.%s: tag %q is not lowerCamel", typ.Name(), f.Name, j)
			}
		}
	}
}

// The methods expressions call, on entries built by hand; the decoding
// that fills them from real maps is tested in package bpfmaps.
func TestFrontends(t *testing.T) {
	slot := func(n int, backend string) Slot {
		if n == 0 {
			return Slot{Slot: 0, Found: true} // the service's own: no backend
		}
		return Slot{Slot: n, Backend: &backend, Found: true}
	}
	fs := Frontends{
		{Address: "10.43.0.5:80/TCP", IP: "10.43.0.5", Port: 80, Scope: "external", Type: "ClusterIP", Count: 1,
			Slots: []Slot{slot(0, "0.0.0.0:0"), slot(1, "10.42.0.17:8080"), slot(2, "10.42.0.18:8080")}},
		{Address: "10.43.0.5:80/TCP/i", IP: "10.43.0.5", Port: 80, Scope: "internal", Type: "ClusterIP"},
		{Address: "192.168.1.10:30780/TCP/i", IP: "192.168.1.10", Port: 30780, Scope: "internal", Type: "NodePort"},
	}
	if f := fs.Find("10.43.0.5:80/tcp"); f == nil || f.Scope != "external" {
		t.Errorf("Find with protocol, any case: %+v", f)
	}
	if f := fs.Find("10.43.0.5:80"); f == nil || f.Scope != "external" {
		t.Errorf("Find without protocol prefers the external scope: %+v", f)
	}
	if f := fs.Find("192.168.1.10:30780"); f == nil || f.Scope != "internal" {
		t.Errorf("Find without protocol falls back to the internal scope: %+v", f)
	}
	if fs.Has("10.43.0.6:80") || !fs.Has("10.43.0.5:80/TCP/i") {
		t.Errorf("Has")
	}
	f := fs[0]
	if !slices.Equal(f.Backends(), []string{"10.42.0.17:8080", "10.42.0.18:8080"}) || !slices.Equal(f.ActiveBackends(), []string{"10.42.0.17:8080"}) ||
		!f.HasBackend("10.42.0.18:8080") || f.HasBackend("0.0.0.0:0") {
		t.Errorf("backends %v active %v", f.Backends(), f.ActiveBackends())
	}
	if got := fs.OfType("nodeport").Addresses(); !slices.Equal(got, []string{"192.168.1.10:30780/TCP/i"}) {
		t.Errorf("OfType: %v", got)
	}
	if got := fs.WithIP("10.43.9.9"); got == nil || len(got) != 0 {
		t.Errorf("WithIP of no frontend: %#v, want an empty list", got)
	}
	if got := fs[:1].LBList()["10.43.0.5:80/TCP (2)"]; len(got) != 1 {
		t.Errorf("LBList: %v", fs[:1].LBList())
	}
}

func TestConntrackFilters(t *testing.T) {
	cs := CTEntries{
		{Protocol: "TCP", Direction: "OUT", Src: "10.42.0.9:40404", Dst: "10.42.0.17:8080", SrcIP: "10.42.0.9", SrcPort: 40404, DstIP: "10.42.0.17", DstPort: 8080, Line: "a"},
		{Protocol: "TCP", Direction: "SVC", Src: "10.42.0.9:40404", Dst: "10.43.0.5:80", SrcIP: "10.42.0.9", SrcPort: 40404, DstIP: "10.43.0.5", DstPort: 80, Line: "b"},
		{Protocol: "UDP", Direction: "IN", Src: "10.42.0.3:53", Dst: "10.42.0.9:5353", SrcIP: "10.42.0.3", SrcPort: 53, DstIP: "10.42.0.9", DstPort: 5353, Line: "c"},
	}
	tests := []struct {
		name string
		got  CTEntries
		want []string
	}{
		{"Matching", cs.Matching(40404), []string{"a", "b"}},
		{"WithIP", cs.WithIP("10.43.0.5"), []string{"b"}},
		{"WithAddr", cs.WithAddr("10.42.0.3:53"), []string{"c"}},
		{"InDirection", cs.InDirection("svc"), []string{"b"}},
		{"WithProtocol", cs.WithProtocol("udp"), []string{"c"}},
		{"none", cs.Matching(1), []string{}},
	}
	for _, tt := range tests {
		if got := tt.got.Lines(); !slices.Equal(got, tt.want) {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
		}
	}
	if cs[0].String() != "a" {
		t.Errorf("String: %q", cs[0].String())
	}
}

func TestIPCacheLookups(t *testing.T) {
	es := IPCacheEntries{
		{IP: "10.0.0.0", PrefixLen: 8, Identity: 2},
		{IP: "10.42.0.17", PrefixLen: 32, Identity: 4321},
		{IP: "10.42.0.17", PrefixLen: 32, Identity: 9, ClusterID: 3},
		{IP: "fd00::", PrefixLen: 64, Identity: 7},
	}
	if e := es.Find("10.42.0.17"); e == nil || e.Identity != 4321 {
		t.Errorf("Find bare IP: %+v", e)
	}
	if e := es.Find("10.0.0.0/8"); e == nil || e.Identity != 2 {
		t.Errorf("Find prefix: %+v", e)
	}
	if es.Find("not an ip") != nil || es.Lookup("not an ip") != nil {
		t.Errorf("a bad address finds nothing")
	}
	for ip, want := range map[string]int{"10.42.0.17": 4321, "10.1.2.3": 2, "fd00::1": 7, "192.168.0.1": 0} {
		if got := es.IdentityOf(ip); got != want {
			t.Errorf("IdentityOf(%s) = %d, want %d", ip, got, want)
		}
	}
	if got := es.WithIdentity(9); len(got) != 1 || got[0].ClusterID != 3 {
		t.Errorf("WithIdentity: %+v", got)
	}
}

func TestPolicyFilters(t *testing.T) {
	ps := PolicyEntries{
		{Direction: "Ingress", Identity: 0, PortProto: "80/TCP"},
		{Direction: "Egress", Identity: 4321, PortProto: "ANY", Deny: true},
	}
	if !ps.Has("ingress", 0, "80/tcp") || ps.Has("egress", 0, "80/TCP") {
		t.Errorf("Has")
	}
	if len(ps.Ingress()) != 1 || len(ps.Egress()) != 1 || len(ps.ForIdentity(4321)) != 1 || len(ps.Denies()) != 1 || ps.Denies()[0].Identity != 4321 {
		t.Errorf("filters: %+v %+v %+v", ps.Ingress(), ps.Egress(), ps.Denies())
	}
}

func TestHostPortAndLists(t *testing.T) {
	if got := HostPort("fd00::1", 80); got != "[fd00::1]:80" {
		t.Errorf("IPv6: %s", got)
	}
	bs := Backends{{ID: 7, Address: "10.42.0.17:8080"}}
	rs := RevNATs{{ID: 3, Address: "10.43.0.5:80"}}
	if bs.ByID(7) == nil || bs.ByID(8) != nil || !slices.Equal(bs.Addresses(), []string{"10.42.0.17:8080"}) || rs.ByID(3) == nil || rs.ByID(4) != nil {
		t.Errorf("ByID / Addresses")
	}
}
