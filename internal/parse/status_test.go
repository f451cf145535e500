package parse

import (
	"strings"
	"testing"
)

func TestStatusVerbose120(t *testing.T) {
	s, err := ParseStatus(input(t, "synthetic/cilium-status/v1.20-verbose.txt"))
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "kpr", s.KubeProxyReplacement, "True")
	// Cilium's device string has 1+N spaces after the name (empty
	// leading IPs); the IPs must come out clean.
	eq(t, "devices", s.KubeProxyReplacementDevices, []StatusDevice{{Name: "eth0", IPs: []string{"10.0.2.15", "fe80::fc:ff:fe00:1"}, DirectRouting: true}})
	d := s.KubeProxyReplacementDetails
	eq(t, "present", d.Present, true)
	eq(t, "status", deref(d.Status), "True")
	eq(t, "socket LB", deref(d.SocketLB), "Enabled")
	eq(t, "socket LB tracing", deref(d.SocketLBTracing), "Enabled")
	eq(t, "coverage", deref(d.SocketLBCoverage), "Full")
	eq(t, "mode", deref(d.Mode), "SNAT")
	eq(t, "backend selection", deref(d.BackendSelection), "Random")
	eq(t, "session affinity", deref(d.SessionAffinity), "Enabled")
	eq(t, "xdp", deref(d.XDPAcceleration), "Disabled")
	eq(t, "graceful termination (gone in 1.20)", d.GracefulTermination, (*string)(nil))
	eq(t, "details devices", d.Devices, s.KubeProxyReplacementDevices)
	eq(t, "services", d.Services, map[string]string{"ClusterIP": "Enabled", "NodePort": "Enabled (Range: 30000-32767)",
		"LoadBalancer": "Enabled", "externalIPs": "Enabled", "HostPort": "Enabled"})
	eq(t, "annotations", d.Annotations, []string{"service.cilium.io/node", "service.cilium.io/node-selector",
		"service.cilium.io/proxy-delegation", "service.cilium.io/src-ranges-policy", "service.cilium.io/type"})
	eq(t, "routing", s.Routing, StatusRouting{Network: ptr("Native"), Host: ptr("BPF")})
	eq(t, "attach", deref(s.AttachMode), "TCX")
	eq(t, "device mode", deref(s.DeviceMode), "veth")
	eq(t, "masquerading", deref(s.Masquerading), "BPF [eth0] 10.42.0.0/16 [IPv4: Enabled, IPv6: Disabled]")
	eq(t, "Field(Cilium)", s.Field("Cilium"), "Ok 1.20.1 (v1.20.1-2a0b3f9c)")
	eq(t, "Field case-insensitive", s.Field("cluster health:"), "Probe disabled")
	eq(t, "Field missing", s.Field("No Such Label"), "")
	eq(t, "Kubernetes APIs value keeps its colons", strings.HasPrefix(s.Field("Kubernetes APIs"), `["EndpointSliceOrEndpoint", "cilium/v2::CiliumEndpoint"`), true)
	eq(t, "allocated addresses block", s.Blocks["Allocated addresses"][0], "10.42.0.1 (router)")
	eq(t, "controller table rows", len(s.Blocks["Controller Status"]), 4)
	eq(t, "BPF maps label", s.Field("BPF Maps"), "dynamic sizing: on (ratio: 0.002500)")
}

func TestStatusPlainHasNoDetails(t *testing.T) {
	s, err := ParseStatus(input(t, "synthetic/cilium-status/v1.20-plain.txt"))
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "kpr", s.KubeProxyReplacement, "True")
	eq(t, "details present", s.KubeProxyReplacementDetails.Present, false)
	eq(t, "coverage", s.KubeProxyReplacementDetails.SocketLBCoverage, (*string)(nil))
}

func TestStatusTunnelDSR(t *testing.T) {
	s, err := ParseStatus(input(t, "synthetic/cilium-status/v1.20-verbose-tunnel-dsr.txt"))
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "devices", s.KubeProxyReplacementDevices, []StatusDevice{
		{Name: "eth0", IPs: []string{"192.168.56.10", "192.168.56.11", "fe80::a00:27ff:fe4e:66a1"}},
		{Name: "eth1", IPs: []string{"10.0.3.15"}, DirectRouting: true},
	})
	d := s.KubeProxyReplacementDetails
	eq(t, "coverage", deref(d.SocketLBCoverage), "Hostns-only")
	eq(t, "mode", deref(d.Mode), "Hybrid")
	eq(t, "dsr", deref(d.DSRDispatchMode), "Geneve")
	eq(t, "maglev", deref(d.BackendSelection), "Maglev (Table Size: 16381)")
	eq(t, "xdp", deref(d.XDPAcceleration), "Native")
	eq(t, "nat46 sub-block", d.NAT4664, (*string)(nil))
	eq(t, "nat46 gateway", d.Fields["NAT46/64 Support.Gateway"], "Enabled")
	eq(t, "nat46 prefixes", d.Fields["Prefixes"], "64:ff9b::/96")
	eq(t, "annotations n/a", d.Annotations, []string{})
	eq(t, "routing", s.Routing, StatusRouting{Network: ptr("Tunnel"), TunnelProtocol: ptr("vxlan"), Host: ptr("Legacy")})
	eq(t, "attach", deref(s.AttachMode), "Legacy TC")
	eq(t, "device mode", deref(s.DeviceMode), "veth")
	eq(t, "configured", deref(s.DeviceModeConfigured), "auto")
	eq(t, "services after a nested list", d.Services["NodePort"], "Enabled (Range: 30000-32767)")
}

func TestStatusKPRFalse(t *testing.T) {
	s, err := ParseStatus(input(t, "synthetic/cilium-status/v1.20-kpr-false.txt"))
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "kpr", s.KubeProxyReplacement, "False")
	eq(t, "no devices", s.KubeProxyReplacementDevices, []StatusDevice{})
	eq(t, "socket LB", deref(s.KubeProxyReplacementDetails.SocketLB), "Disabled")
	eq(t, "no Mode without NodePort", s.KubeProxyReplacementDetails.Mode, (*string)(nil))
}

func TestStatusOlderVersions(t *testing.T) {
	// Shapes from FORMATS.md: <=1.13 modes and "Socket LB Protocols".
	old := "KubeProxyReplacement:   Strict   [enp0s3 10.0.2.15 (Direct Routing)]\n" +
		"Host Routing:           Legacy\n" +
		"KubeProxyReplacement Details:\n" +
		"  Status:                 Strict\n" +
		"  Socket LB:              Enabled\n" +
		"  Socket LB Protocols:    TCP, UDP\n" +
		"  Devices:                enp0s3 10.0.2.15 (Direct Routing)\n" +
		"  Mode:                   SNAT\n" +
		"  Backend Selection:      Random\n" +
		"  Session Affinity:       Enabled\n" +
		"  Graceful Termination:   Enabled\n" +
		"  XDP Acceleration:       Disabled\n" +
		"  Services:\n" +
		"  - ClusterIP:      Enabled\n" +
		"  - NodePort:       Enabled (Range: 30000-32767) \n"
	s, err := ParseStatus(old)
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "mode", s.KubeProxyReplacement, "Strict")
	eq(t, "devices", s.KubeProxyReplacementDevices, []StatusDevice{{Name: "enp0s3", IPs: []string{"10.0.2.15"}, DirectRouting: true}})
	eq(t, "protocols", deref(s.KubeProxyReplacementDetails.SocketLBProtocols), "TCP, UDP")
	eq(t, "graceful", deref(s.KubeProxyReplacementDetails.GracefulTermination), "Enabled")
	eq(t, "host routing", s.Field("Host Routing"), "Legacy")
	eq(t, "nodeport", s.KubeProxyReplacementDetails.Services["NodePort"], "Enabled (Range: 30000-32767)")
}

func TestStatusTrailingDeviceComma(t *testing.T) {
	s, err := ParseStatus("KubeProxyReplacement:   True   [eth0   10.0.2.15 fe80::1 (Direct Routing), ]\n")
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "devices", s.KubeProxyReplacementDevices, []StatusDevice{{Name: "eth0", IPs: []string{"10.0.2.15", "fe80::1"}, DirectRouting: true}})
}

func TestStatusErrors(t *testing.T) {
	_, err := ParseStatus("")
	wantError(t, err, kindStatus, 0, "no KubeProxyReplacement, Cilium")
	_, err = ParseStatus("OK\n")
	wantError(t, err, kindStatus, 0, "no KubeProxyReplacement, Cilium")
	// cilium-dbg's error text (stderr merged) is not a status.
	_, err = ParseStatus("Error: Get \"http://localhost/v1/healthz\": dial unix /var/run/cilium/cilium.sock: connect: no such file or directory\n")
	wantError(t, err, kindStatus, 0, "no KubeProxyReplacement, Cilium")
	// A grepped single line is enough.
	s, err := ParseStatus("KubeProxyReplacement:    True   [eth0   10.0.2.15 (Direct Routing)]\n")
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "grepped line", s.KubeProxyReplacement, "True")
	_, err = ParseStatus("KubeProxyReplacement Details:\n  - ClusterIP: Enabled\n")
	wantError(t, err, kindStatus, 2, "outside a list")
	_, err = ParseStatus("KubeProxyReplacement Details:\n  garbage without colon\n")
	wantError(t, err, kindStatus, 2, "expected \"Label: value\"")
}

// The same StatusResponse printed as text (--verbose) and as -o json must
// give the same typed values.
func TestStatusJSONMatchesText(t *testing.T) {
	txt, err := ParseStatus(input(t, "synthetic/cilium-status/v1.20-verbose.txt"))
	if err != nil {
		t.Fatal(err)
	}
	js, err := ParseStatus(input(t, "synthetic/cilium-status/v1.20-json.txt"))
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "kpr", js.KubeProxyReplacement, txt.KubeProxyReplacement)
	eq(t, "devices", js.KubeProxyReplacementDevices, txt.KubeProxyReplacementDevices)
	eq(t, "routing", js.Routing, txt.Routing)
	eq(t, "attach", js.AttachMode, txt.AttachMode)
	eq(t, "device mode", js.DeviceMode, txt.DeviceMode)
	eq(t, "Cilium field", js.Field("Cilium"), txt.Field("Cilium"))
	jd, td := js.KubeProxyReplacementDetails, txt.KubeProxyReplacementDetails
	jd.Fields, td.Fields = nil, nil // text-only
	eq(t, "details", jd, td)
	_, err = ParseStatus(`{"nodeMonitor": {}}`)
	wantError(t, err, kindStatus, 0, "no kube-proxy-replacement")
}
