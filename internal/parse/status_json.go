package parse

import (
	"encoding/json"
	"strconv"
	"strings"
)

// jsonStatus is the part of models.StatusResponse (`cilium-dbg status -o
// json`) that ParseStatus reads.
type jsonStatus struct {
	Cilium     *struct{ State, Msg string } `json:"cilium"`
	Kubernetes *struct{ State, Msg string } `json:"kubernetes"`
	KPR        *jsonKPR                     `json:"kube-proxy-replacement"`
	Routing    *struct {
		Inter  string  `json:"inter-host-routing-mode"`
		Intra  string  `json:"intra-host-routing-mode"`
		Tunnel *string `json:"tunnel-protocol"`
	} `json:"routing"`
	AttachMode       string            `json:"attach-mode"`
	DatapathMode     string            `json:"datapath-mode"`
	ConfiguredDPMode *string           `json:"configured-datapath-mode"`
	Masquerading     *jsonMasquerading `json:"masquerading"`
}

// jsonMasquerading is models.Masquerading.
type jsonMasquerading struct {
	Enabled          bool `json:"enabled"`
	EnabledProtocols *struct {
		IPv4 bool `json:"ipv4"`
		IPv6 bool `json:"ipv6"`
	} `json:"enabledProtocols"`
	IPMasqAgent         bool   `json:"ip-masq-agent"`
	Mode                string `json:"mode"`
	SnatExclusionCidrV4 string `json:"snat-exclusion-cidr-v4"`
	SnatExclusionCidrV6 string `json:"snat-exclusion-cidr-v6"`
}

// text writes the masquerading object as FormatStatusResponse writes its
// "Masquerading:" line, whitespace runs collapsed as the text form's are:
// "BPF [eth0] 10.42.0.0/16 [IPv4: Enabled, IPv6: Disabled]". The BPF
// mode lists the kube-proxy-replacement devices, kpr (nil when the
// document has none).
func (m *jsonMasquerading) text(kpr *jsonKPR) string {
	enabled := func(on bool) string {
		if on {
			return "Enabled"
		}
		return "Disabled"
	}
	p := m.EnabledProtocols
	switch {
	case p == nil:
		return enabled(m.Enabled)
	case !p.IPv4 && !p.IPv6:
		return enabled(false)
	}
	status := ""
	switch m.Mode {
	case "BPF":
		status = "BPF"
		if m.IPMasqAgent {
			status = "BPF (ip-masq-agent)"
		}
		if kpr != nil {
			names := make([]string, 0, len(kpr.DeviceList))
			for _, d := range kpr.DeviceList {
				names = append(names, d.Name)
			}
			status += " [" + strings.Join(names, ", ") + "] " + m.SnatExclusionCidrV4 + " " + m.SnatExclusionCidrV6
		}
	case "iptables":
		status = "IPTables"
	}
	return collapseSpace(status + " [IPv4: " + enabled(p.IPv4) + ", IPv6: " + enabled(p.IPv6) + "]")
}

// jsonKPR is the status's kube-proxy-replacement object.
type jsonKPR struct {
	Mode       string `json:"mode"`
	DeviceList []struct {
		Name string   `json:"name"`
		IP   []string `json:"ip"`
	} `json:"deviceList"`
	DirectRoutingDevice string           `json:"directRoutingDevice"`
	Features            *jsonKPRFeatures `json:"features"`
}

// jsonKPRFeatures is the kube-proxy-replacement's features object.
type jsonKPRFeatures struct {
	Annotations           []string `json:"annotations"`
	BpfSocketLBHostnsOnly bool     `json:"bpfSocketLBHostnsOnly"`
	ExternalIPs           *enabled `json:"externalIPs"`
	GracefulTermination   *enabled `json:"gracefulTermination"`
	HostPort              *enabled `json:"hostPort"`
	// HostReachableServices is socket LB as Cilium up to 1.14 named
	// it, with the protocols it covered.
	HostReachableServices *struct {
		Enabled   bool     `json:"enabled"`
		Protocols []string `json:"protocols"`
	} `json:"hostReachableServices"`
	Nat46X64 *enabled `json:"nat46X64"`
	NodePort *struct {
		Enabled      bool   `json:"enabled"`
		Mode         string `json:"mode"`
		Algorithm    string `json:"algorithm"`
		Acceleration string `json:"acceleration"`
		DsrMode      string `json:"dsrMode"`
		LutSize      int    `json:"lutSize"`
		PortMin      int    `json:"portMin"`
		PortMax      int    `json:"portMax"`
	} `json:"nodePort"`
	SessionAffinity *enabled `json:"sessionAffinity"`
	SocketLB        *enabled `json:"socketLB"`
	SocketLBTracing *enabled `json:"socketLBTracing"`
}

type enabled struct {
	Enabled bool `json:"enabled"`
}

func (e *enabled) text() string {
	if e != nil && e.Enabled {
		return "Enabled"
	}
	return "Disabled"
}

// parseStatusJSON reads `cilium-dbg status -o json` into the same Status
// the text gives, rendering values the way pkg/client FormatStatusResponse
// does ("Enabled", "Full", "TCX", ...), so that one expression works on
// both. Only the typed fields are filled; Fields has the few top-level
// labels derived here and Blocks is empty. A typed field whose line the
// text would not print is null here too (a tunnel protocol for Native
// routing, a configured device mode that is the operational one).
func parseStatusJSON(text string) (Status, error) {
	var js jsonStatus
	if err := json.Unmarshal([]byte(text), &js); err != nil {
		return Status{}, jsonError(kindStatus, text, err)
	}
	s := Status{
		KubeProxyReplacementDevices: []StatusDevice{},
		KubeProxyReplacementDetails: newKPRDetails(),
		Fields:                      map[string]string{},
		Blocks:                      map[string][]string{},
	}
	if js.Cilium != nil {
		s.Fields["Cilium"] = collapseSpace(js.Cilium.State + " " + js.Cilium.Msg)
	}
	if js.Kubernetes != nil {
		s.Fields["Kubernetes"] = collapseSpace(js.Kubernetes.State + " " + js.Kubernetes.Msg)
	}
	if js.KPR != nil {
		s.readKPRJSON(js.KPR)
	}
	if r := js.Routing; r != nil {
		s.Routing = StatusRouting{Network: orNull(r.Inter), Host: orNull(r.Intra)}
		if strings.EqualFold(r.Inter, "Tunnel") {
			s.Routing.TunnelProtocol = r.Tunnel
		}
	}
	if m := js.Masquerading; m != nil {
		text := m.text(js.KPR)
		s.Masquerading = &text
		s.Fields["Masquerading"] = text
	}
	switch js.AttachMode {
	case "":
	case "tcx":
		s.AttachMode = orNull("TCX")
	default:
		s.AttachMode = orNull("Legacy TC")
	}
	s.DeviceMode = orNull(js.DatapathMode)
	if c := js.ConfiguredDPMode; c != nil && *c != "" && *c != js.DatapathMode {
		s.DeviceModeConfigured = c
	}
	if s.KubeProxyReplacement == "" && len(s.Fields) == 0 {
		return Status{}, newError(kindStatus, 0, "", "JSON has no kube-proxy-replacement, cilium or kubernetes status; is this cilium-dbg status -o json?")
	}
	return s, nil
}

// readKPRJSON reads the kube-proxy-replacement object: its mode, its
// devices and, with --verbose's features, the details block.
func (s *Status) readKPRJSON(k *jsonKPR) {
	s.KubeProxyReplacement = k.Mode
	s.Fields["KubeProxyReplacement"] = k.Mode
	devs := []StatusDevice{}
	for _, d := range k.DeviceList {
		dev := StatusDevice{Name: d.Name, IPs: []string{}, DirectRouting: d.Name == k.DirectRoutingDevice}
		for _, ip := range d.IP {
			if ip != "" { // the leading empty strings of status_collector.go
				dev.IPs = append(dev.IPs, ip)
			}
		}
		devs = append(devs, dev)
	}
	if k.Mode != "False" {
		s.KubeProxyReplacementDevices = devs
	}
	if f := k.Features; f != nil {
		d := &s.KubeProxyReplacementDetails
		d.Present = true
		d.Status = orNull(k.Mode)
		if k.Mode != "False" {
			d.Devices = s.KubeProxyReplacementDevices
		}
		d.readFeaturesJSON(f)
	}
}

// readFeaturesJSON renders the features the way FormatStatusResponse
// prints them in the details block.
func (d *KPRDetails) readFeaturesJSON(f *jsonKPRFeatures) {
	d.SocketLB = orNull(f.SocketLB.text())
	d.SocketLBTracing = orNull(f.SocketLBTracing.text())
	d.SocketLBCoverage = orNull("Full")
	if f.BpfSocketLBHostnsOnly {
		d.SocketLBCoverage = orNull("Hostns-only")
	}
	d.SessionAffinity = orNull(f.SessionAffinity.text())
	if f.Nat46X64 != nil {
		nat := f.Nat46X64.text()
		d.NAT4664 = &nat
	}
	if f.GracefulTermination != nil {
		d.GracefulTermination = orNull(f.GracefulTermination.text())
	}
	if h := f.HostReachableServices; h != nil && h.Enabled && len(h.Protocols) > 0 {
		p := strings.Join(h.Protocols, ", ")
		d.SocketLBProtocols = &p
	}
	nodePort, lb := "Disabled", "Disabled"
	if np := f.NodePort; np != nil && np.Enabled {
		d.Mode = orNull(np.Mode)
		if np.Mode == "DSR" || np.Mode == "Hybrid" {
			d.DSRDispatchMode = orNull(np.DsrMode)
		}
		d.BackendSelection = orNull(np.Algorithm)
		if np.Algorithm == "Maglev" {
			d.BackendSelection = orNull("Maglev (Table Size: " + strconv.Itoa(np.LutSize) + ")")
		}
		d.XDPAcceleration = orNull(np.Acceleration)
		nodePort = "Enabled (Range: " + strconv.Itoa(np.PortMin) + "-" + strconv.Itoa(np.PortMax) + ")"
		lb = "Enabled"
	}
	d.Services = map[string]string{"ClusterIP": "Enabled", "NodePort": nodePort, "LoadBalancer": lb,
		"externalIPs": f.ExternalIPs.text(), "HostPort": f.HostPort.text()}
	d.Annotations = append(d.Annotations, f.Annotations...)
}
