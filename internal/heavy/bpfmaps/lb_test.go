package bpfmaps

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/labrun/labrun/internal/boundary/bpfentries"
)

const (
	protoTCP = 6
	protoUDP = 17
)

func svcK(ip [4]byte, port uint16, proto, scope uint8, slot uint16) ciliumService4Key {
	return ciliumService4Key{Address: ip, Port: htons(port), BackendSlot: slot, Proto: proto, Scope: scope}
}

// svcV builds a Service4Value the way Service4Value.SetFlags/ToNetwork do.
func svcV(union uint32, count, revNat, flags, qcount uint16) ciliumService4Value {
	return ciliumService4Value{BackendID: union, Count: count, RevNat: htons(revNat),
		Flags: uint8(flags), Flags2: uint8(flags >> 8), QCount: qcount}
}

func beV(ip [4]byte, port uint16, proto, state uint8, cluster uint16) ciliumBackend4ValueV3 {
	return ciliumBackend4ValueV3{Address: ip, Port: htons(port), Proto: proto, Flags: state, ClusterID: cluster}
}

// fillLB creates and fills the three LB maps with a small but tricky
// service set: ClusterIP, quarantined slot, NodePort surrogate and per-IP
// copies with two scopes, a backend in another cluster, no backends, an L7
// LB proxy port, and a slot whose backend is missing.
func fillLB(t *testing.T, root string) {
	svc := createPinned(t, root, MapServices, specServices())
	be := createPinned(t, root, MapBackends, specBackends())
	rn := createPinned(t, root, MapRevNAT, specRevNAT())

	for id, v := range map[uint32]ciliumBackend4ValueV3{
		1: beV(ip4(10, 42, 0, 5), 53, protoUDP, 0, 0),
		2: beV(ip4(10, 42, 0, 6), 53, protoUDP, 0, 0),
		3: beV(ip4(10, 42, 0, 17), 8080, protoTCP, 0, 0),
		4: beV(ip4(10, 42, 0, 18), 8080, protoTCP, 0, 0),
		5: beV(ip4(10, 42, 0, 19), 8080, protoTCP, 1, 0), // terminating
		6: beV(ip4(10, 42, 0, 20), 8080, protoTCP, 0, 3), // cluster 3
	} {
		put(t, be, ciliumBackend4KeyV3{ID: id}, v)
	}
	for id, v := range map[uint16]ciliumRevNat4Value{
		1: {Address: ip4(10, 43, 0, 10), Port: htons(53)},
		2: {Address: ip4(10, 43, 0, 5), Port: htons(80)},
		3: {Address: ip4(0, 0, 0, 0), Port: htons(30780)},
		4: {Address: ip4(10, 43, 7, 7), Port: htons(80)},
		5: {Address: ip4(10, 43, 0, 99), Port: htons(443)},
		// 6 deliberately missing
	} {
		put(t, rn, ciliumRevNat4Key{Key: htons(id)}, v)
	}

	nodeIP := ip4(192, 168, 1, 10)
	entries := []struct {
		k ciliumService4Key
		v ciliumService4Value
	}{
		// A: ClusterIP DNS, two backends.
		{svcK(ip4(10, 43, 0, 10), 53, protoUDP, 0, 0), svcV(0, 2, 1, 0, 0)},
		{svcK(ip4(10, 43, 0, 10), 53, protoUDP, 0, 1), svcV(1, 0, 1, 0, 0)},
		{svcK(ip4(10, 43, 0, 10), 53, protoUDP, 0, 2), svcV(2, 0, 1, 0, 0)},
		// B: two active + one quarantined slot.
		{svcK(ip4(10, 43, 0, 5), 80, protoTCP, 0, 0), svcV(0, 2, 2, 0, 1)},
		{svcK(ip4(10, 43, 0, 5), 80, protoTCP, 0, 1), svcV(3, 0, 2, 0, 0)},
		{svcK(ip4(10, 43, 0, 5), 80, protoTCP, 0, 2), svcV(4, 0, 2, 0, 0)},
		{svcK(ip4(10, 43, 0, 5), 80, protoTCP, 0, 3), svcV(5, 0, 2, svcFlagQuarantined, 0)},
		// C: NodePort surrogate and per-node-IP copies (two scopes).
		{svcK(ip4(0, 0, 0, 0), 30780, protoTCP, 0, 0), svcV(0, 1, 3, svcFlagNodePort, 0)},
		{svcK(ip4(0, 0, 0, 0), 30780, protoTCP, 0, 1), svcV(3, 0, 3, svcFlagNodePort, 0)},
		{svcK(nodeIP, 30780, protoTCP, 0, 0), svcV(0, 1, 3, svcFlagNodePort|svcFlagRoutable|svcFlagExtLocalScope|svcFlagTwoScopes, 0)},
		{svcK(nodeIP, 30780, protoTCP, 0, 1), svcV(3, 0, 3, 0, 0)},
		{svcK(nodeIP, 30780, protoTCP, 1, 0), svcV(0, 2, 3, svcFlagNodePort|svcFlagRoutable|svcFlagTwoScopes, 0)},
		{svcK(nodeIP, 30780, protoTCP, 1, 1), svcV(3, 0, 3, 0, 0)},
		{svcK(nodeIP, 30780, protoTCP, 1, 2), svcV(6, 0, 3, 0, 0)},
		// D: no backends.
		{svcK(ip4(10, 43, 7, 7), 80, protoTCP, 0, 0), svcV(0, 0, 4, 0, 0)},
		// E: L7 LB, proxy port 15001 in network order in the union.
		{svcK(ip4(10, 43, 0, 99), 443, protoTCP, 0, 0), svcV(uint32(htons(15001)), 0, 5, svcFlagL7LoadBalancer, 0)},
		// F: LoadBalancer with maglev + affinity, source ranges (deny), DSR,
		// a missing backend and a missing rev NAT entry.
		{svcK(ip4(172, 18, 0, 200), 443, protoTCP, 0, 0), svcV(2<<24|10800, 1, 6,
			svcFlagLoadBalancer|svcFlagRoutable|svcFlagSessionAffinity|svcFlagSourceRange|svcFlagSourceRangeDeny|svcFlagFwdModeDSR, 0)},
		{svcK(ip4(172, 18, 0, 200), 443, protoTCP, 0, 1), svcV(99, 0, 6, 0, 0)},
	}
	for _, e := range entries {
		put(t, svc, e.k, e.v)
	}
}

func TestServices(t *testing.T) {
	root := privateBPFFS(t)
	fillLB(t, root)
	r := openReader(t, root)

	fes, err := r.Services()
	if err != nil {
		t.Fatal(err)
	}
	want := bpfentries.Frontends{
		{
			Address: "0.0.0.0:30780/TCP", IP: "0.0.0.0", Port: 30780, Protocol: "TCP", Scope: "external",
			Count: 1, RevNATID: 3, RevNAT: ptr("0.0.0.0:30780"),
			Flags: svcFlagNodePort, Type: "NodePort", FlagNames: []string{"NodePort", "non-routable"},
			FlagsText: "NodePort, non-routable", LBAlgorithm: ptr("undef"), AffinityTimeout: ptr[uint32](0), HasMaster: true,
			Slots: []bpfentries.Slot{
				{Slot: 0, Found: true, RevNATID: 3, Text: "0.0.0.0:0 (3) (0) [NodePort, non-routable] "},
				{Slot: 1, BackendID: ptr[uint32](3), Backend: ptr("10.42.0.17:8080"), Protocol: ptr("TCP"), State: ptr("active"), Found: true, Quarantined: ptr(false), RevNATID: 3, Text: "10.42.0.17:8080/TCP (3) (1)"},
			},
		},
		{
			Address: "10.43.0.5:80/TCP", IP: "10.43.0.5", Port: 80, Protocol: "TCP", Scope: "external",
			Count: 2, QCount: 1, RevNATID: 2, RevNAT: ptr("10.43.0.5:80"),
			Type: "ClusterIP", FlagNames: []string{"ClusterIP", "non-routable"},
			FlagsText: "ClusterIP, non-routable", LBAlgorithm: ptr("undef"), AffinityTimeout: ptr[uint32](0), HasMaster: true,
			Slots: []bpfentries.Slot{
				{Slot: 0, Found: true, RevNATID: 2, Text: "0.0.0.0:0 (2) (0) [ClusterIP, non-routable] "},
				{Slot: 1, BackendID: ptr[uint32](3), Backend: ptr("10.42.0.17:8080"), Protocol: ptr("TCP"), State: ptr("active"), Found: true, Quarantined: ptr(false), RevNATID: 2, Text: "10.42.0.17:8080/TCP (2) (1)"},
				{Slot: 2, BackendID: ptr[uint32](4), Backend: ptr("10.42.0.18:8080"), Protocol: ptr("TCP"), State: ptr("active"), Found: true, Quarantined: ptr(false), RevNATID: 2, Text: "10.42.0.18:8080/TCP (2) (2)"},
				{Slot: 3, BackendID: ptr[uint32](5), Backend: ptr("10.42.0.19:8080"), Protocol: ptr("TCP"), State: ptr("terminating"), Found: true, Quarantined: ptr(true), RevNATID: 2, Text: "10.42.0.19:8080/TCP (2) (3)"},
			},
		},
		{
			Address: "10.43.0.10:53/UDP", IP: "10.43.0.10", Port: 53, Protocol: "UDP", Scope: "external",
			Count: 2, RevNATID: 1, RevNAT: ptr("10.43.0.10:53"),
			Type: "ClusterIP", FlagNames: []string{"ClusterIP", "non-routable"},
			FlagsText: "ClusterIP, non-routable", LBAlgorithm: ptr("undef"), AffinityTimeout: ptr[uint32](0), HasMaster: true,
			Slots: []bpfentries.Slot{
				{Slot: 0, Found: true, RevNATID: 1, Text: "0.0.0.0:0 (1) (0) [ClusterIP, non-routable] "},
				{Slot: 1, BackendID: ptr[uint32](1), Backend: ptr("10.42.0.5:53"), Protocol: ptr("UDP"), State: ptr("active"), Found: true, Quarantined: ptr(false), RevNATID: 1, Text: "10.42.0.5:53/UDP (1) (1)"},
				{Slot: 2, BackendID: ptr[uint32](2), Backend: ptr("10.42.0.6:53"), Protocol: ptr("UDP"), State: ptr("active"), Found: true, Quarantined: ptr(false), RevNATID: 1, Text: "10.42.0.6:53/UDP (1) (2)"},
			},
		},
		{
			Address: "10.43.0.99:443/TCP", IP: "10.43.0.99", Port: 443, Protocol: "TCP", Scope: "external",
			RevNATID: 5, RevNAT: ptr("10.43.0.99:443"),
			Flags: svcFlagL7LoadBalancer, Type: "ClusterIP", FlagNames: []string{"ClusterIP", "non-routable", "l7-load-balancer"},
			FlagsText: "ClusterIP, non-routable, l7-load-balancer", L7ProxyPort: ptr[uint16](15001), HasMaster: true,
			Slots: []bpfentries.Slot{
				{Slot: 0, Found: true, RevNATID: 5, Text: "0.0.0.0:0 (5) (0) [ClusterIP, non-routable, l7-load-balancer] (L7LB Proxy Port: 15001)"},
			},
		},
		{
			Address: "10.43.7.7:80/TCP", IP: "10.43.7.7", Port: 80, Protocol: "TCP", Scope: "external",
			RevNATID: 4, RevNAT: ptr("10.43.7.7:80"),
			Type: "ClusterIP", FlagNames: []string{"ClusterIP", "non-routable"},
			FlagsText: "ClusterIP, non-routable", LBAlgorithm: ptr("undef"), AffinityTimeout: ptr[uint32](0), HasMaster: true,
			Slots: []bpfentries.Slot{
				{Slot: 0, Found: true, RevNATID: 4, Text: "0.0.0.0:0 (4) (0) [ClusterIP, non-routable] "},
			},
		},
		{
			Address: "172.18.0.200:443/TCP", IP: "172.18.0.200", Port: 443, Protocol: "TCP", Scope: "external",
			Count: 1, RevNATID: 6,
			Flags: svcFlagLoadBalancer | svcFlagRoutable | svcFlagSessionAffinity | svcFlagSourceRange | svcFlagSourceRangeDeny | svcFlagFwdModeDSR,
			Type:  "LoadBalancer", FlagNames: []string{"LoadBalancer", "sessionAffinity", "check source-range", "deny", "dsr"},
			FlagsText:   "LoadBalancer, sessionAffinity, check source-range, deny, dsr",
			LBAlgorithm: ptr("maglev"), AffinityTimeout: ptr[uint32](10800), HasMaster: true,
			Slots: []bpfentries.Slot{
				{Slot: 0, Found: true, RevNATID: 6, Text: "0.0.0.0:0 (6) (0) [LoadBalancer, sessionAffinity, check source-range, deny, dsr] "},
				{Slot: 1, BackendID: ptr[uint32](99), Quarantined: ptr(false), RevNATID: 6, Text: "backend 99 not found"},
			},
		},
		{
			Address: "192.168.1.10:30780/TCP", IP: "192.168.1.10", Port: 30780, Protocol: "TCP", Scope: "external",
			Count: 1, RevNATID: 3, RevNAT: ptr("0.0.0.0:30780"),
			Flags: svcFlagNodePort | svcFlagRoutable | svcFlagExtLocalScope | svcFlagTwoScopes,
			Type:  "NodePort", FlagNames: []string{"NodePort", "Local", "two-scopes"},
			FlagsText: "NodePort, Local, two-scopes", LBAlgorithm: ptr("undef"), AffinityTimeout: ptr[uint32](0), HasMaster: true,
			Slots: []bpfentries.Slot{
				{Slot: 0, Found: true, RevNATID: 3, Text: "0.0.0.0:0 (3) (0) [NodePort, Local, two-scopes] "},
				{Slot: 1, BackendID: ptr[uint32](3), Backend: ptr("10.42.0.17:8080"), Protocol: ptr("TCP"), State: ptr("active"), Found: true, Quarantined: ptr(false), RevNATID: 3, Text: "10.42.0.17:8080/TCP (3) (1)"},
			},
		},
		{
			Address: "192.168.1.10:30780/TCP/i", IP: "192.168.1.10", Port: 30780, Protocol: "TCP", Scope: "internal",
			Count: 2, RevNATID: 3, RevNAT: ptr("0.0.0.0:30780"),
			Flags: svcFlagNodePort | svcFlagRoutable | svcFlagTwoScopes,
			Type:  "NodePort", FlagNames: []string{"NodePort", "two-scopes"},
			FlagsText: "NodePort, two-scopes", LBAlgorithm: ptr("undef"), AffinityTimeout: ptr[uint32](0), HasMaster: true,
			Slots: []bpfentries.Slot{
				{Slot: 0, Found: true, RevNATID: 3, Text: "0.0.0.0:0 (3) (0) [NodePort, two-scopes] "},
				{Slot: 1, BackendID: ptr[uint32](3), Backend: ptr("10.42.0.17:8080"), Protocol: ptr("TCP"), State: ptr("active"), Found: true, Quarantined: ptr(false), RevNATID: 3, Text: "10.42.0.17:8080/TCP (3) (1)"},
				{Slot: 2, BackendID: ptr[uint32](6), Backend: ptr("10.42.0.20:8080"), Protocol: ptr("TCP"), State: ptr("active"), Found: true, Quarantined: ptr(false), RevNATID: 3, Text: "10.42.0.20@3:8080/TCP (3) (2)"},
			},
		},
	}
	if len(fes) != len(want) {
		t.Fatalf("got %d frontends, want %d: %v", len(fes), len(want), fes.Addresses())
	}
	for i := range want {
		if !reflect.DeepEqual(fes[i], want[i]) {
			t.Errorf("frontend %d:\n got %s\nwant %s", i, js(fes[i]), js(want[i]))
		}
	}

	// Methods used by lab expressions.
	b := fes.Find("10.43.0.5:80/TCP")
	if b == nil {
		t.Fatal("Find(10.43.0.5:80/TCP) = nil")
	}
	if got, w := b.Backends(), []string{"10.42.0.17:8080", "10.42.0.18:8080", "10.42.0.19:8080"}; !reflect.DeepEqual(got, w) {
		t.Errorf("Backends() = %v, want %v", got, w)
	}
	if got, w := b.ActiveBackends(), []string{"10.42.0.17:8080", "10.42.0.18:8080"}; !reflect.DeepEqual(got, w) {
		t.Errorf("ActiveBackends() = %v, want %v", got, w)
	}
	if !b.HasBackend("10.42.0.18:8080") || b.HasBackend("10.42.0.99:8080") {
		t.Error("HasBackend wrong")
	}
	if f := fes.Find("10.43.0.5:80"); f == nil || f.Address != "10.43.0.5:80/TCP" {
		t.Errorf("Find without protocol = %v", f)
	}
	if f := fes.Find("192.168.1.10:30780"); f == nil || f.Scope != "external" {
		t.Errorf("Find without protocol should prefer external scope, got %v", f)
	}
	if f := fes.Find("192.168.1.10:30780/tcp/i"); f == nil || f.Scope != "internal" {
		t.Errorf("Find internal scope = %v", f)
	}
	if fes.Find("10.43.0.5:81/TCP") != nil || fes.Has("10.9.9.9:1/UDP") {
		t.Error("Find of a missing frontend should be nil")
	}
	if got := fes.Find("10.43.7.7:80/TCP").Backends(); got == nil || len(got) != 0 {
		t.Errorf("Backends() of a service without backends = %#v, want empty non-nil", got)
	}
	if n := len(fes.OfType("NodePort")); n != 3 {
		t.Errorf("OfType(NodePort) = %d, want 3", n)
	}
	if n := len(fes.WithIP("192.168.1.10")); n != 2 {
		t.Errorf("WithIP = %d, want 2", n)
	}

	// `cilium-dbg bpf lb list -o json` equivalent.
	lb := fes.LBList()
	if got := lb["10.43.0.10:53/UDP (2)"]; !reflect.DeepEqual(got, []string{"10.42.0.6:53/UDP (1) (2)"}) {
		t.Errorf("LBList slot row = %q", got)
	}
	if got := lb["0.0.0.0:30780/TCP (0)"]; !reflect.DeepEqual(got, []string{"0.0.0.0:0 (3) (0) [NodePort, non-routable] "}) {
		t.Errorf("LBList master row = %q", got)
	}
	if len(lb) != 18 {
		t.Errorf("LBList has %d rows, want 18 (one per slot)", len(lb))
	}
}

func TestBackendsAndRevNAT(t *testing.T) {
	root := privateBPFFS(t)
	fillLB(t, root)
	r := openReader(t, root)

	bes, err := r.Backends()
	if err != nil {
		t.Fatal(err)
	}
	if len(bes) != 6 {
		t.Fatalf("got %d backends", len(bes))
	}
	want := bpfentries.Backend{ID: 6, Address: "10.42.0.20:8080", IP: "10.42.0.20", Port: 8080, Protocol: "TCP", State: "active", ClusterID: 3}
	if got := bes.ByID(6); got == nil || *got != want {
		t.Errorf("backend 6 = %+v, want %+v", got, want)
	}
	if got := bes.ByID(5); got == nil || got.State != "terminating" || got.Flags != 1 {
		t.Errorf("backend 5 = %+v", got)
	}

	rns, err := r.RevNATs()
	if err != nil {
		t.Fatal(err)
	}
	wantRN := bpfentries.RevNATs{{ID: 1, Address: "10.43.0.10:53"}, {ID: 2, Address: "10.43.0.5:80"}, {ID: 3, Address: "0.0.0.0:30780"}, {ID: 4, Address: "10.43.7.7:80"}, {ID: 5, Address: "10.43.0.99:443"}}
	if !reflect.DeepEqual(rns, wantRN) {
		t.Errorf("rev NATs = %+v, want %+v", rns, wantRN)
	}
}

func TestLookupFrontendMatchesDump(t *testing.T) {
	root := privateBPFFS(t)
	fillLB(t, root)
	r := openReader(t, root)
	fes, err := r.Services()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fes {
		got, err := r.LookupFrontend(f.Address)
		if err != nil {
			t.Fatalf("LookupFrontend(%s): %v", f.Address, err)
		}
		if got == nil || !reflect.DeepEqual(*got, f) {
			t.Errorf("LookupFrontend(%s):\n got %s\nwant %s", f.Address, js(got), js(f))
		}
	}
	got, err := r.LookupFrontend("10.43.0.10:53") // no protocol: TCP, then UDP
	if err != nil || got == nil || got.Address != "10.43.0.10:53/UDP" {
		t.Errorf("LookupFrontend without protocol = %v, %v", got, err)
	}
	got, err = r.LookupFrontend("10.1.2.3:80/TCP")
	if err != nil || got != nil {
		t.Errorf("LookupFrontend(missing) = %v, %v; want nil, nil", got, err)
	}
	for _, bad := range []string{"10.1.2.3", "10.1.2.3:80/XYZ", "10.1.2.3:80/TCP/x", "[fd00::1]:80/TCP"} {
		if _, err := r.LookupFrontend(bad); err == nil {
			t.Errorf("LookupFrontend(%q) should fail", bad)
		}
	}
}

func js(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
