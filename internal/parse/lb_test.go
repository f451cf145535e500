package parse

import "testing"

func TestLBListLab(t *testing.T) {
	l, err := ParseLBList(input(t, "synthetic/cilium-bpf-lb-list/v1.20.txt"))
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "layout", l.Layout, "slots")
	web := l.Frontend("10.43.77.5:80/TCP")
	eq(t, "found", web.Found, true)
	eq(t, "slot 0", web.HasSlot0, true)
	eq(t, "revnat", web.RevNAT, 7)
	eq(t, "type", web.Type, "ClusterIP")
	eq(t, "flags", web.Flags, []string{"ClusterIP", "non-routable"})
	// Rows are shuffled in the input; backends come back by slot.
	eq(t, "backends", l.Backends("10.43.77.5:80/TCP"), []string{"10.42.0.31:8080", "10.42.0.32:8080"})
	eq(t, "slots", []any{deref(web.Backends[0].Slot), deref(web.Backends[1].Slot)}, []any{1, 2})
	eq(t, "slot count", web.SlotCount(), 2)

	ghost := l.Frontend("10.43.7.7:80/TCP")
	eq(t, "ghost found", ghost.Found, true)
	eq(t, "ghost only slot 0", ghost.SlotCount(), 0)
	eq(t, "ghost addrs", ghost.Addrs(), []string{})

	np := l.Frontend("0.0.0.0:30780/TCP")
	eq(t, "nodeport surrogate flags", np.Flags, []string{"NodePort", "non-routable"})
	eq(t, "node IP copy", l.Frontend("10.0.2.15:30780/TCP").Flags, []string{"NodePort"})
	eq(t, "two scopes", l.Frontend("0.0.0.0:31500/TCP/i").SlotCount(), 2)
	eq(t, "external of two scopes", l.Frontend("0.0.0.0:31500/TCP").SlotCount(), 1)
	eq(t, "not there", l.Frontend("10.1.1.1:80/TCP").Found, false)
	eq(t, "udp and tcp share the port", l.Backends("10.43.0.10:53/UDP"), []string{"10.42.0.12:53"})

	// Every frontend of the service list has a slot-0 row.
	svcs := l.Services()
	for _, s := range svcs {
		if !s.HasSlot0 {
			t.Errorf("%s has no slot 0", s.Frontend)
		}
	}
	eq(t, "frontends", len(svcs), 12)
}

func TestLBListScaledHasFourBackendSlots(t *testing.T) {
	l, err := ParseLBList(input(t, "synthetic/cilium-bpf-lb-list/v1.20-scaled.txt"))
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "slots", l.Frontend("10.43.77.5:80/TCP").SlotCount(), 4)
	eq(t, "backends", l.Backends("10.43.77.5:80"), []string{"10.42.0.31:8080", "10.42.0.32:8080", "10.42.0.33:8080", "10.42.0.34:8080"})
}

func TestLBListSpecialRows(t *testing.T) {
	l, err := ParseLBList(input(t, "synthetic/cilium-bpf-lb-list/v1.20-ipv6-l7-notfound.txt"))
	if err != nil {
		t.Fatal(err)
	}
	s := l.Frontend("10.43.5.5:8080/TCP")
	eq(t, "slots incl. not found", s.SlotCount(), 2)
	eq(t, "not found row", s.Backends[0].NotFound, true)
	eq(t, "not found id", deref(s.Backends[0].BackendID), 99)
	eq(t, "not found: no backend, no revnat", []any{s.Backends[0].Backend, s.Backends[0].RevNAT}, []any{(*string)(nil), (*int)(nil)})
	eq(t, "addrs skip not found", s.Addrs(), []string{"10.42.0.70:8080"})
	eq(t, "session affinity flag", s.Flags, []string{"ClusterIP", "sessionAffinity", "non-routable"})
	l7 := l.Frontend("192.168.56.200:443/TCP")
	eq(t, "l7 proxy port", l7.Backends, []LBEntry{})
	for _, e := range l.Entries {
		if e.Frontend.IP == "192.168.56.200" {
			eq(t, "l7 port", deref(e.L7ProxyPort), 15001)
		}
	}
	eq(t, "ipv6", l.Backends("[fd00:10:96::a]:53/UDP"), []string{"[fd00:10:244::12]:53"})
}

func TestLBListGroupedLayout(t *testing.T) {
	// Layout of Cilium <= 1.12 (issues #7902, #11724): key once, values below.
	text := "SERVICE ADDRESS      BACKEND ADDRESS\n" +
		"10.43.13.198:44134   0.0.0.0:0 (26) [ClusterIP]\n" +
		"                     10.42.2.234:44134 (26)\n" +
		"10.43.212.93:8443    10.42.3.158:8443 (7)\n" +
		"                     0.0.0.0:0 (7) [ClusterIP]\n" +
		"10.96.0.1:443        192.168.36.11:6443 (1)\n" +
		"                     0.0.0.0:0 (1)\n"
	l, err := ParseLBList(text)
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "layout", l.Layout, "grouped")
	eq(t, "entries", len(l.Entries), 6)
	s := l.Frontend("10.43.212.93:8443")
	eq(t, "slot 0 found", s.HasSlot0, true)
	eq(t, "flags", s.Flags, []string{"ClusterIP"})
	eq(t, "backends", s.Addrs(), []string{"10.42.3.158:8443"})
	eq(t, "backend slot not printed", s.Backends[0].Slot, (*int)(nil))
	eq(t, "no flags in oldest form", l.Frontend("10.96.0.1:443").Flags, []string{})
}

func TestLBList115(t *testing.T) {
	// v1.15: per-slot keys, no "/PROTO".
	text := "SERVICE ADDRESS      BACKEND ADDRESS (REVNAT_ID) (SLOT)\n" +
		"10.43.0.10:53 (1)    10.42.0.12:53 (2) (1)\n" +
		"10.43.0.10:53 (0)    0.0.0.0:0 (2) (0) [ClusterIP, non-routable] \n"
	l, err := ParseLBList(text)
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "backends", l.Backends("10.43.0.10:53"), []string{"10.42.0.12:53"})
	eq(t, "protocol-qualified query matches unqualified rows", l.Backends("10.43.0.10:53/UDP"), []string{"10.42.0.12:53"})
}

func TestLBListErrors(t *testing.T) {
	_, err := ParseLBList("")
	wantError(t, err, kindLBList, 0, "empty input")
	_, err = ParseLBList("SOURCE RANGE (REVNAT_ID)\n10.0.0.0/8 (3)\n")
	wantError(t, err, kindLBList, 1, "--source-ranges")
	_, err = ParseLBList("ID   BACKEND ADDRESS (REVNAT_ID) (SLOT)\n12   TCP://10.42.0.17\n7    10.43.77.5:80\n")
	wantError(t, err, kindLBList, 3, "a --revnat row among backends rows")
	_, err = ParseLBList("SERVICE ADDRESS   BACKEND ADDRESS (REVNAT_ID) (SLOT)\n10.0.0.1:80/TCP (1)   10.0.0.2:80/TCP (3) (2)\n")
	wantError(t, err, kindLBList, 2, "slot does not match")
	_, err = ParseLBList("SERVICE ADDRESS   BACKEND ADDRESS (REVNAT_ID) (SLOT)\nnot-an-address (0)   0.0.0.0:0 (1) (0) []\n")
	wantError(t, err, kindLBList, 2, "service address")
	_, err = ParseLBList("SERVICE ADDRESS   BACKEND ADDRESS (REVNAT_ID) (SLOT)\n10.0.0.1:80/TCP (0)   0.0.0.0:0 (1) (0) [ClusterIP trailing junk\n")
	wantError(t, err, kindLBList, 2, "expected")
	_, err = ParseLBList("SERVICE ADDRESS   BACKEND ADDRESS (REVNAT_ID) (SLOT)\n10.0.0.1:80/TCP (0)\n")
	wantError(t, err, kindLBList, 2, "without value")
	_, err = ParseLBList("SERVICE ADDRESS   BACKEND ADDRESS\n        10.0.0.2:80 (3)\n")
	wantError(t, err, kindLBList, 2, "before any service")
}

func TestLBListJSON(t *testing.T) {
	text := `{
  "10.43.77.5:80/TCP (0)": ["0.0.0.0:0 (7) (0) [ClusterIP, non-routable] "],
  "10.43.77.5:80/TCP (2)": ["10.42.0.32:8080/TCP (7) (2)"],
  "10.43.77.5:80/TCP (1)": ["10.42.0.31:8080/TCP (7) (1)"]
}`
	l, err := ParseLBList(text)
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "backends", l.Backends("10.43.77.5:80/TCP"), []string{"10.42.0.31:8080", "10.42.0.32:8080"})
	eq(t, "flags", l.Frontend("10.43.77.5:80/TCP").Flags, []string{"ClusterIP", "non-routable"})
	_, err = ParseLBList(`{"nope (0)": ["x"]}`)
	wantError(t, err, kindLBList, 0, "as key")
	_, err = ParseLBList(`{"10.0.0.1:80/TCP (1)": ["garbage"]}`)
	wantError(t, err, kindLBList, 0, "expected")
}
