package parse

import "testing"

// Cilium v1.15 variants, generated from v1.15.19's printing code
// (testdata/synthetic/gen115).
func TestV115Variants(t *testing.T) {
	s, err := ParseStatus(input(t, "synthetic/cilium-status/v1.15-verbose.txt"))
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "kpr", s.KubeProxyReplacement, "True")
	eq(t, "devices (3 addrs, 4 spaces)", s.KubeProxyReplacementDevices[0].IPs, []string{"10.0.2.15", "10.0.2.16", "fe80::1"})
	eq(t, "graceful termination", s.KubeProxyReplacementDetails.GracefulTermination, ptr("Enabled"))
	eq(t, "no annotations line", s.KubeProxyReplacementDetails.Annotations, []string{})
	eq(t, "host routing (pre-1.16 line)", s.Field("Host Routing"), "Legacy")
	eq(t, "no attach mode line", s.AttachMode, (*string)(nil))

	lb, err := ParseLBList(input(t, "synthetic/cilium-bpf-lb-list/v1.15.txt"))
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "lb layout", lb.Layout, "slots")
	eq(t, "lb backends", lb.Backends("10.43.77.5:80/TCP"), []string{"10.42.0.31:8080", "10.42.0.32:8080"})
	eq(t, "lb no protocol", lb.Frontend("10.43.77.5:80").Frontend.Protocol, (*string)(nil))
	eq(t, "ghost", lb.Frontend("10.43.7.7:80").SlotCount(), 0)

	ct, err := ParseCTList(input(t, "synthetic/cilium-bpf-ct-list/v1.15.txt"))
	if err != nil {
		t.Fatal(err)
	}
	out := ct.Find("OUT", ":40404")[0]
	eq(t, "rx/tx", []int64{*out.RxPackets, *out.RxBytes, *out.TxPackets, *out.TxBytes}, []int64{6, 811, 7, 922})
	eq(t, "packets derived as rx+tx", out.Packets, int64(13))
	eq(t, "no BackendID in 1.15", out.BackendID, (*uint64)(nil))
	eq(t, "svc flags", ct.Find("SVC", "")[0].FlagNames, []string{"RxClosing", "TxClosing", "SeenNonSyn", "DSR"})

	svc, err := ParseServiceList(input(t, "synthetic/cilium-service-list/v1.15-table.txt"))
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "svc", svc.Frontend("10.43.77.5:80/TCP").BackendAddrs(), []string{"10.42.0.31:8080", "10.42.0.32:8080"})
	eq(t, "ghost svc", svc.Frontend("10.43.7.7:80").Backends, []Backend{})
}
