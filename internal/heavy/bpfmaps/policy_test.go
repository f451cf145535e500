package bpfmaps

import (
	"reflect"
	"testing"

	"github.com/labrun/labrun/internal/boundary/bpfentries"
)

// polK builds a PolicyKey as NewKeyFromPolicyKey does (policymap.go L316):
// Prefixlen = StaticPrefixBits + 8 (if proto or port set) + port prefix.
func polK(egress bool, id uint32, proto uint8, port uint16, protoPortPrefix uint32) ciliumPolicyKey {
	dir := uint8(0)
	if egress {
		dir = 1
	}
	return ciliumPolicyKey{Prefixlen: policyStaticPrefixBits + protoPortPrefix, Identity: id,
		TrafficDirection: dir, Nexthdr: proto, DestPortNetwork: htons(port)}
}

// polV builds a PolicyEntry as NewEntryFromPolicyEntry does (policymap.go
// L337): flags = deny | prefixLen<<3.
func polV(deny bool, prefixLen uint8, proxyPort uint16, auth uint8, prec, cookie uint32) ciliumPolicyEntry {
	f := prefixLen << 3
	if deny {
		f |= 1
	}
	return ciliumPolicyEntry{ProxyPortNetwork: htons(proxyPort), Flags: f, AuthRequirement: auth, Precedence: prec, Cookie: cookie}
}

func TestPolicy(t *testing.T) {
	root := privateBPFFS(t)
	const ep = 1234
	m := createPinned(t, root, "cilium_policy_v3_01234", specPolicy())
	createPinned(t, root, "cilium_policy_v3_00007", specPolicy())
	createPinned(t, root, "cilium_policy_v2_00008", specPolicy()) // older name: ignored
	fixtures := []struct {
		k ciliumPolicyKey
		v ciliumPolicyEntry
	}{
		// allow all ingress from any identity
		{polK(false, 0, 0, 0, 0), polV(false, 0, 0, 0, 0, 0)},
		// allow ingress from 12345 on 80/TCP via proxy 15001
		{polK(false, 12345, protoTCP, 80, 24), polV(false, 24, 15001, 0, 100, 7)},
		// deny egress to world (2) on 8080-8095/TCP (port prefix 12)
		{polK(true, 2, protoTCP, 8080, 20), polV(true, 20, 0, 0, 0xffffffff, 0)},
		// allow egress UDP (any port) to 1, explicit spire auth
		{polK(true, 1, protoUDP, 0, 8), polV(false, 8, 0, 0x80|1, 5, 9)},
		// value prefix length disagrees with the key: invalid
		{polK(true, 5, protoTCP, 443, 24), polV(false, 16, 0, 3, 0, 0)},
	}
	for _, f := range fixtures {
		put(t, m, f.k, f.v)
	}

	r := openReader(t, root)
	got, err := r.Policy(ep)
	if err != nil {
		t.Fatal(err)
	}
	want := bpfentries.PolicyEntries{
		{EndpointID: ep, Direction: "Egress", Identity: 2, Protocol: "TCP", ProtoNum: 6, Port: 8080, PrefixLen: 20, PortPrefixLen: 12,
			PortProto: "8080-8095/TCP", Deny: true, Verdict: "Deny", AuthType: "disabled", Precedence: 0xffffffff, Valid: true},
		{EndpointID: ep, Direction: "Ingress", Identity: 0, Protocol: "ANY", PortProto: "ANY", Verdict: "Allow", AuthType: "disabled", Valid: true},
		{EndpointID: ep, Direction: "Ingress", Identity: 12345, Protocol: "TCP", ProtoNum: 6, Port: 80, PrefixLen: 24, PortPrefixLen: 16,
			PortProto: "80/TCP", Verdict: "Allow", ProxyPort: 15001, AuthType: "disabled", Precedence: 100, Cookie: 7, Valid: true},
		{EndpointID: ep, Direction: "Egress", Identity: 1, Protocol: "UDP", ProtoNum: 17, PrefixLen: 8,
			PortProto: "UDP", Verdict: "Allow", AuthType: "spire", AuthExplicit: true, Precedence: 5, Cookie: 9, Valid: true},
		{EndpointID: ep, Direction: "Egress", Identity: 5, Protocol: "TCP", ProtoNum: 6, Port: 443, PrefixLen: 24, PortPrefixLen: 16,
			PortProto: "443/TCP", Verdict: "Allow", AuthType: "Unknown-auth-type-3", Valid: false},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("policy:\n got %s\nwant %s", js(got), js(want))
	}
	if !got.Has("ingress", 12345, "80/TCP") || got.Has("egress", 12345, "80/TCP") {
		t.Error("Has wrong")
	}
	if n := len(got.Ingress()); n != 2 {
		t.Errorf("Ingress() = %d", n)
	}
	if n := len(got.Egress().Denies()); n != 1 {
		t.Errorf("Egress().Denies() = %d", n)
	}
	if n := len(got.ForIdentity(2)); n != 1 {
		t.Errorf("ForIdentity(2) = %d", n)
	}

	eps, err := r.PolicyEndpoints()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(eps, []uint16{7, 1234}) {
		t.Errorf("PolicyEndpoints = %v", eps)
	}
	empty, err := r.Policy(7)
	if err != nil || empty == nil || len(empty) != 0 {
		t.Errorf("empty policy map = %#v, %v", empty, err)
	}
}

func TestPortProtoString(t *testing.T) {
	// Cases from PolicyKey.PortProtoString (policymap.go L287).
	cases := []struct {
		proto  uint8
		port   uint16
		prefix uint8
		want   string
	}{
		{0, 0, 0, "ANY"},
		{6, 0, 8, "TCP"},
		{6, 80, 24, "80/TCP"},
		{6, 8080, 20, "8080-8095/TCP"},
		{17, 0, 9, "0-32767/UDP"},
		{6, 80, 25, "<INVALID PREFIX LENGTH: 25>"},
	}
	for _, c := range cases {
		if got := portProtoString(c.proto, c.port, c.prefix); got != c.want {
			t.Errorf("portProtoString(%d,%d,%d) = %q, want %q", c.proto, c.port, c.prefix, got, c.want)
		}
	}
}
