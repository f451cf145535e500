package bpfmaps

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/cilium/ebpf"
)

// loadRealDump fills m with the entries of a `bpftool -j map dump` capture
// in testdata/real (keys and values as lists of "0x.." bytes).
func loadRealDump(t *testing.T, m *ebpf.Map, name string) int {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "real", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var dump []struct{ Key, Value []string }
	if err := json.Unmarshal(raw, &dump); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	bytesOf := func(hex []string) []byte {
		b := make([]byte, len(hex))
		for i, h := range hex {
			v, err := strconv.ParseUint(h, 0, 8)
			if err != nil {
				t.Fatalf("%s: byte %q: %v", name, h, err)
			}
			b[i] = byte(v)
		}
		return b
	}
	for _, e := range dump {
		if err := m.Put(bytesOf(e.Key), bytesOf(e.Value)); err != nil {
			t.Fatalf("%s: put: %v", name, err)
		}
	}
	return len(dump)
}

// The maps of the test cluster's node 1 after a cca-services solve: the
// client pod's requests to Service sticky (10.43.147.238:8081, service 6)
// went to backend 3 (10.42.1.50:80), keyed by the pod's network namespace
// cookie; its UDP probes of echo-udp (10.43.13.27:5353, service 7, backend
// 10.42.1.3:5353) each left a socket reverse NAT entry.
func TestRealAffinityAndReverseSK(t *testing.T) {
	root := privateBPFFS(t)
	loadRealDump(t, createPinned(t, root, MapBackends, specBackends()), MapBackends)
	loadRealDump(t, createPinned(t, root, MapRevNAT, specRevNAT()), MapRevNAT)
	loadRealDump(t, createPinned(t, root, MapAffinity, specAffinity()), MapAffinity)
	nsk := loadRealDump(t, createPinned(t, root, MapReverseSK, specReverseSK()), MapReverseSK)
	r := openReader(t, root)

	aff, err := r.Affinity()
	if err != nil {
		t.Fatal(err)
	}
	if len(aff) != 1 {
		t.Fatalf("affinity: %d entries, want 1: %s", len(aff), js(aff))
	}
	a := aff[0]
	if !a.NetNSCookie || a.ClientIP != nil || a.ClientCookie == nil || *a.ClientCookie != 6604 || a.RevNATID != 6 ||
		a.Service == nil || *a.Service != "10.43.147.238:8081" || a.BackendID != 3 || a.Backend == nil || *a.Backend != "10.42.1.50:80" || a.LastUsed != 12241 {
		t.Errorf("affinity entry = %s", js(a))
	}

	sk, err := r.SockRevNAT()
	if err != nil {
		t.Fatal(err)
	}
	if len(sk) != nsk {
		t.Fatalf("reverse_sk: %d entries, the capture has %d", len(sk), nsk)
	}
	cookies := map[uint64]bool{}
	for _, s := range sk {
		if s.Frontend != "10.43.13.27:5353" || s.Backend != "10.42.1.3:5353" || s.RevNATID != 7 {
			t.Errorf("reverse_sk entry = %s", js(s))
		}
		cookies[s.Cookie] = true
	}
	if len(cookies) != nsk || !cookies[51435] {
		t.Errorf("socket cookies %v: want %d distinct ones, 51435 among them", cookies, nsk)
	}
	if got := sk.WithFrontend("10.43.13.27:5353"); len(got) != nsk {
		t.Errorf("WithFrontend: %d entries", len(got))
	}
}
