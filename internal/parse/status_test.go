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
	eq(t, "status", d.Status, ptr("True"))
	eq(t, "socket LB", d.SocketLB, ptr("Enabled"))
	eq(t, "socket LB tracing", d.SocketLBTracing, ptr("Enabled"))
	eq(t, "coverage", d.SocketLBCoverage, ptr("Full"))
	eq(t, "mode", d.Mode, ptr("SNAT"))
	eq(t, "backend selection", d.BackendSelection, ptr("Random"))
	eq(t, "session affinity", d.SessionAffinity, ptr("Enabled"))
	eq(t, "xdp", d.XDPAcceleration, ptr("Disabled"))
	eq(t, "graceful termination (gone in 1.20)", d.GracefulTermination, (*string)(nil))
	eq(t, "no DSR dispatch mode for SNAT", d.DSRDispatchMode, (*string)(nil))
	eq(t, "no socket LB protocols since 1.15", d.SocketLBProtocols, (*string)(nil))
	eq(t, "details devices", d.Devices, s.KubeProxyReplacementDevices)
	eq(t, "services", d.Services, map[string]string{"ClusterIP": "Enabled", "NodePort": "Enabled (Range: 30000-32767)",
		"LoadBalancer": "Enabled", "externalIPs": "Enabled", "HostPort": "Enabled"})
	eq(t, "annotations", d.Annotations, []string{"service.cilium.io/node", "service.cilium.io/node-selector",
		"service.cilium.io/proxy-delegation", "service.cilium.io/src-ranges-policy", "service.cilium.io/type"})
	eq(t, "routing: no tunnel protocol for Native", s.Routing, StatusRouting{Network: ptr("Native"), Host: ptr("BPF")})
	eq(t, "attach", s.AttachMode, ptr("TCX"))
	eq(t, "device mode", s.DeviceMode, ptr("veth"))
	eq(t, "device mode as configured", s.DeviceModeConfigured, (*string)(nil))
	eq(t, "masquerading", s.Masquerading, ptr("BPF [eth0] 10.42.0.0/16 [IPv4: Enabled, IPv6: Disabled]"))
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
	eq(t, "no NAT46/64 line", s.KubeProxyReplacementDetails.NAT4664, (*string)(nil))
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
	eq(t, "coverage", d.SocketLBCoverage, ptr("Hostns-only"))
	eq(t, "mode", d.Mode, ptr("Hybrid"))
	eq(t, "dsr", d.DSRDispatchMode, ptr("Geneve"))
	eq(t, "maglev", d.BackendSelection, ptr("Maglev (Table Size: 16381)"))
	eq(t, "xdp", d.XDPAcceleration, ptr("Native"))
	eq(t, "nat46 sub-block: enabled", d.NAT4664, ptr("Enabled"))
	eq(t, "nat46 gateway", d.Fields["NAT46/64 Support.Gateway"], "Enabled")
	eq(t, "nat46 prefixes", d.Fields["Prefixes"], "64:ff9b::/96")
	eq(t, "annotations n/a", d.Annotations, []string{})
	eq(t, "routing", s.Routing, StatusRouting{Network: ptr("Tunnel"), TunnelProtocol: ptr("vxlan"), Host: ptr("Legacy")})
	eq(t, "attach", s.AttachMode, ptr("Legacy TC"))
	eq(t, "device mode", s.DeviceMode, ptr("veth"))
	eq(t, "configured", s.DeviceModeConfigured, ptr("auto"))
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
	eq(t, "protocols", s.KubeProxyReplacementDetails.SocketLBProtocols, ptr("TCP, UDP"))
	eq(t, "graceful", s.KubeProxyReplacementDetails.GracefulTermination, ptr("Enabled"))
	eq(t, "no masquerading line", s.Masquerading, (*string)(nil))
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
	eq(t, "configured device mode", js.DeviceModeConfigured, txt.DeviceModeConfigured)
	eq(t, "masquerading", js.Masquerading, txt.Masquerading)
	eq(t, "Cilium field", js.Field("Cilium"), txt.Field("Cilium"))
	eq(t, "Masquerading field", js.Field("Masquerading"), txt.Field("Masquerading"))
	jd, td := js.KubeProxyReplacementDetails, txt.KubeProxyReplacementDetails
	jd.Fields, td.Fields = nil, nil // text-only
	eq(t, "details", jd, td)
	_, err = ParseStatus(`{"nodeMonitor": {}}`)
	wantError(t, err, kindStatus, 0, "no kube-proxy-replacement")

	// Tunnel routing, Hybrid NodePort, a configured device mode that is
	// not the operational one, iptables masquerading for both families.
	txt, err = ParseStatus(input(t, "synthetic/cilium-status/v1.20-verbose-tunnel-dsr.txt"))
	if err != nil {
		t.Fatal(err)
	}
	js, err = ParseStatus(input(t, "synthetic/cilium-status/v1.20-json-tunnel-dsr.txt"))
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "tunnel routing", js.Routing, txt.Routing)
	eq(t, "configured device mode differs", js.DeviceModeConfigured, ptr("auto"))
	eq(t, "configured device mode as text", js.DeviceModeConfigured, txt.DeviceModeConfigured)
	eq(t, "iptables masquerading", js.Masquerading, txt.Masquerading)
	eq(t, "DSR dispatch mode", js.KubeProxyReplacementDetails.DSRDispatchMode, txt.KubeProxyReplacementDetails.DSRDispatchMode)
	eq(t, "graceful termination", js.KubeProxyReplacementDetails.GracefulTermination, txt.KubeProxyReplacementDetails.GracefulTermination)
	eq(t, "socket LB protocols", js.KubeProxyReplacementDetails.SocketLBProtocols, txt.KubeProxyReplacementDetails.SocketLBProtocols)
	jd, td = js.KubeProxyReplacementDetails, txt.KubeProxyReplacementDetails
	jd.Fields, td.Fields = nil, nil // text-only
	eq(t, "details", jd, td)
}

// Cilium up to 1.14 printed "Socket LB Protocols:" from
// hostReachableServices, and 1.15 to 1.19 "Graceful Termination:" from
// gracefulTermination; -o json of those versions gives them as the text
// does, and null where the features object lacks them.
func TestStatusJSONOlderFeatures(t *testing.T) {
	old := `{"kube-proxy-replacement": {"mode": "Strict", "features": {` +
		`"hostReachableServices": {"enabled": true, "protocols": ["TCP", "UDP"]}, "gracefulTermination": {"enabled": true},` +
		`"nodePort": {"enabled": true, "mode": "SNAT", "dsrMode": "IP Option/Extension", "algorithm": "Random", "portMin": 30000, "portMax": 32767}}}}`
	s, err := ParseStatus(old)
	if err != nil {
		t.Fatal(err)
	}
	d := s.KubeProxyReplacementDetails
	eq(t, "protocols", d.SocketLBProtocols, ptr("TCP, UDP"))
	eq(t, "graceful", d.GracefulTermination, ptr("Enabled"))
	eq(t, "no DSR dispatch for SNAT", d.DSRDispatchMode, (*string)(nil))
	eq(t, "no masquerading", s.Masquerading, (*string)(nil))
	eq(t, "no routing", s.Routing.TunnelProtocol, (*string)(nil))
	eq(t, "no nat46X64", d.NAT4664, (*string)(nil))

	s, err = ParseStatus(`{"kube-proxy-replacement": {"mode": "True", "features": {"hostReachableServices": {}, "gracefulTermination": {}}}}`)
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "socket LB off: no protocols", s.KubeProxyReplacementDetails.SocketLBProtocols, (*string)(nil))
	eq(t, "graceful termination off", s.KubeProxyReplacementDetails.GracefulTermination, ptr("Disabled"))
}
