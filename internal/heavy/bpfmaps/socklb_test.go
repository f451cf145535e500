package bpfmaps

import (
	"encoding/binary"
	"reflect"
	"testing"

	"github.com/cilium/ebpf"

	"github.com/labrun/labrun/internal/boundary/bpfentries"
)

// Map specs as Cilium creates them: LRU hashes (lb.h L299, sock.h L35).
func specAffinity() ebpf.MapSpec {
	return ebpf.MapSpec{Type: ebpf.LRUHash, KeySize: sizeofLB4AffinityKey, ValueSize: sizeofLBAffinityVal, MaxEntries: 65536}
}

func specReverseSK() ebpf.MapSpec {
	return ebpf.MapSpec{Type: ebpf.LRUHash, KeySize: sizeofRevNATTuple4, ValueSize: sizeofRevNATEntry4, MaxEntries: 110859}
}

// affinityByIP builds the key the tc datapath writes for a client address
// (lb4_update_affinity_by_addr: client_ip in the union's first 4 bytes).
func affinityByIP(ip [4]byte, revNAT uint16) ciliumAffinity4Key {
	var b [8]byte
	copy(b[:], ip[:])
	return ciliumAffinity4Key{ClientID: binary.NativeEndian.Uint64(b[:]), RevNATID: htons(revNAT)}
}

func TestAffinity(t *testing.T) {
	root := privateBPFFS(t)
	fillLB(t, root)
	m := createPinned(t, root, MapAffinity, specAffinity())
	// Socket LB keys a pod by its netns cookie (lb4_update_affinity_by_netns).
	put(t, m, ciliumAffinity4Key{ClientID: 0x1000000000000abc, RevNATID: htons(2), NetNSCookie: 1},
		ciliumAffinityValue{LastUsed: 4242, BackendID: 4})
	put(t, m, affinityByIP(ip4(10, 250, 42, 1), 2), ciliumAffinityValue{LastUsed: 4243, BackendID: 3})
	put(t, m, affinityByIP(ip4(10, 250, 42, 1), 6), ciliumAffinityValue{LastUsed: 7, BackendID: 99})

	r := openReader(t, root)
	got, err := r.Affinity()
	if err != nil {
		t.Fatal(err)
	}
	want := bpfentries.Affinities{
		{ClientIP: ptr("10.250.42.1"), RevNATID: 2, Service: ptr("10.43.0.5:80"), BackendID: 3, Backend: ptr("10.42.0.17:8080"), LastUsed: 4243},
		{NetNSCookie: true, ClientCookie: ptr[uint64](0x1000000000000abc), RevNATID: 2, Service: ptr("10.43.0.5:80"), BackendID: 4, Backend: ptr("10.42.0.18:8080"), LastUsed: 4242},
		// neither the service nor the backend is known: both are null
		{ClientIP: ptr("10.250.42.1"), RevNATID: 6, BackendID: 99, LastUsed: 7},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("affinity:\n got %s\nwant %s", js(got), js(want))
	}
	if b := got.ForService("10.43.0.5:80").Backends(); !reflect.DeepEqual(b, []string{"10.42.0.17:8080", "10.42.0.18:8080"}) {
		t.Errorf("ForService(10.43.0.5:80).Backends() = %v", b)
	}
	if n := len(got.ForRevNAT(6)); n != 1 {
		t.Errorf("ForRevNAT(6) = %d entries", n)
	}
}

func TestSockRevNAT(t *testing.T) {
	root := privateBPFFS(t)
	m := createPinned(t, root, MapReverseSK, specReverseSK())
	put(t, m, ciliumSockRevNat4Key{Cookie: 8193, Address: ip4(10, 42, 1, 7), Port: htons(80)},
		ciliumSockRevNat4Value{Address: ip4(10, 43, 12, 9), Port: htons(8080), RevNatIndex: htons(11)})
	put(t, m, ciliumSockRevNat4Key{Cookie: 8200, Address: ip4(10, 42, 0, 31), Port: htons(5353)},
		ciliumSockRevNat4Value{Address: ip4(10, 43, 3, 4), Port: htons(5353), RevNatIndex: htons(12)})
	r := openReader(t, root)
	got, err := r.SockRevNAT()
	if err != nil {
		t.Fatal(err)
	}
	want := bpfentries.SockRevNATs{
		{Cookie: 8200, Backend: "10.42.0.31:5353", BackendIP: "10.42.0.31", BackendPort: 5353,
			Frontend: "10.43.3.4:5353", FrontendIP: "10.43.3.4", FrontendPort: 5353, RevNATID: 12},
		{Cookie: 8193, Backend: "10.42.1.7:80", BackendIP: "10.42.1.7", BackendPort: 80,
			Frontend: "10.43.12.9:8080", FrontendIP: "10.43.12.9", FrontendPort: 8080, RevNATID: 11},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("reverse_sk:\n got %s\nwant %s", js(got), js(want))
	}
	if s := got.WithFrontend("10.43.12.9:8080"); len(s) != 1 || s[0].Backend != "10.42.1.7:80" {
		t.Errorf("WithFrontend = %+v", s)
	}
	if s := got.WithBackend("10.42.0.31:5353"); len(s) != 1 || s[0].Cookie != 8200 {
		t.Errorf("WithBackend = %+v", s)
	}
}
