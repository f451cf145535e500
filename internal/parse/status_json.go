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
		Inter  string `json:"inter-host-routing-mode"`
		Intra  string `json:"intra-host-routing-mode"`
		Tunnel string `json:"tunnel-protocol"`
	} `json:"routing"`
	AttachMode       string `json:"attach-mode"`
	DatapathMode     string `json:"datapath-mode"`
	ConfiguredDPMode string `json:"configured-datapath-mode"`
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
	Nat46X64              *enabled `json:"nat46X64"`
	NodePort              *struct {
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
// labels derived here and Blocks is empty. Masquerading is null (its
// text form is built from several JSON fields and devices).
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
			s.Routing.TunnelProtocol = orNull(r.Tunnel)
		}
	}
	switch js.AttachMode {
	case "":
	case "tcx":
		s.AttachMode = orNull("TCX")
	default:
		s.AttachMode = orNull("Legacy TC")
	}
	s.DeviceMode = orNull(js.DatapathMode)
	if js.ConfiguredDPMode != "" && js.ConfiguredDPMode != js.DatapathMode {
		s.DeviceModeConfigured = orNull(js.ConfiguredDPMode)
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
	d.NAT4664 = orNull(f.Nat46X64.text())
	if f.GracefulTermination != nil {
		d.GracefulTermination = orNull(f.GracefulTermination.text())
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
