package parse

import (
	"strconv"
	"strings"
)

const kindStatus = "cilium-status"

// Status is the text of `cilium-dbg status` or `cilium-dbg status --verbose`.
//
// The typed fields cover what labs ask about (kube-proxy replacement, routing,
// masquerading, attach and device mode). Every other top-level "Label: value"
// line is still available through Fields / Field, and the indented lines that
// follow a label (allocated addresses, controller tables, ...) through Blocks,
// so that new or rarely used lines need no parser change.
type Status struct {
	// KubeProxyReplacement is the mode: "True" or "False" since Cilium 1.15;
	// "Strict", "Partial", "Probe" or "Disabled" before 1.14.
	KubeProxyReplacement string `json:"kubeProxyReplacement" expr:"kubeProxyReplacement"`
	// KubeProxyReplacementDevices are the devices in brackets after the
	// mode; empty when the mode is False.
	KubeProxyReplacementDevices []StatusDevice `json:"kubeProxyReplacementDevices" expr:"kubeProxyReplacementDevices"`
	// KubeProxyReplacementDetails is the block printed by --verbose.
	KubeProxyReplacementDetails KPRDetails `json:"kubeProxyReplacementDetails" expr:"kubeProxyReplacementDetails"`

	// Routing is the "Routing:" line: how pod traffic crosses nodes and
	// reaches the host; its fields are null when the line is missing.
	Routing StatusRouting `json:"routing" expr:"routing"`
	// Masquerading is the "Masquerading:" line's value, e.g. "BPF
	// [eth0] 10.42.0.0/16 [IPv4: Enabled, IPv6: Disabled]" or
	// "IPTables [IPv4: Enabled, IPv6: Disabled]" (with -o json, the
	// masquerading object written as that line); null when Cilium
	// printed neither (the agent prints it once its status collector
	// has run).
	Masquerading *string `json:"masquerading" expr:"masquerading"`
	// AttachMode is "TCX" or "Legacy TC", how Cilium attaches its tc
	// programs (1.16+); null when not printed.
	AttachMode *string `json:"attachMode" expr:"attachMode"`
	// DeviceMode is the operational datapath mode ("veth", "netkit",
	// "netkit-l2"; 1.16+); null when not printed.
	DeviceMode *string `json:"deviceMode" expr:"deviceMode"`
	// DeviceModeConfigured is the configured datapath mode ("auto")
	// where it differs from DeviceMode, as "veth [Configured: auto]"
	// prints it (with -o json, configured-datapath-mode when it is not
	// datapath-mode); null when Cilium printed no "[Configured: ...]":
	// the mode is then the configured one.
	DeviceModeConfigured *string `json:"deviceModeConfigured" expr:"deviceModeConfigured"`

	// Fields maps every top-level label (without the colon) to its value,
	// whitespace runs collapsed to one space: "Cilium" -> "Ok 1.20.1 (...)".
	Fields map[string]string `json:"fields" expr:"fields"`
	// Blocks maps a top-level label to the indented lines printed under it
	// (trimmed), e.g. "Allocated addresses" -> ["10.42.0.1 (router)", ...].
	Blocks map[string][]string `json:"blocks" expr:"blocks"`
}

// Field returns the value of a top-level "Label: value" line, or "" when
// the label is not in the output. The label is matched without its colon and
// case-insensitively, so Field("attach mode") finds "Attach Mode:".
func (s Status) Field(label string) string {
	label = strings.TrimSuffix(strings.TrimSpace(label), ":")
	if v, ok := s.Fields[label]; ok {
		return v
	}
	for k, v := range s.Fields {
		if strings.EqualFold(k, label) {
			return v
		}
	}
	return ""
}

// StatusDevice is one kube-proxy-replacement device: "eth0 10.0.2.15
// fe80::1 (Direct Routing)".
type StatusDevice struct {
	// Name is the device's name ("eth0").
	Name string `json:"name" expr:"name"`
	// IPs are its addresses as printed ("10.0.2.15", "fe80::1"); empty
	// when none was printed.
	IPs []string `json:"ips" expr:"ips"`
	// DirectRouting is true for the device marked "(Direct Routing)",
	// the one Cilium routes node-to-node traffic through.
	DirectRouting bool `json:"directRouting" expr:"directRouting"`
}

// StatusRouting is "Routing: Network: Tunnel [vxlan] Host: BPF".
type StatusRouting struct {
	// Network is "Native" (pod traffic routed as is) or "Tunnel"
	// (encapsulated between nodes); null when not printed (1.15 prints
	// only "Host Routing:").
	Network *string `json:"network" expr:"network"`
	// TunnelProtocol is the tunnel's protocol in brackets after Tunnel,
	// "vxlan" or "geneve" (with -o json, tunnel-protocol for Tunnel
	// routing); null for Native, for which status prints none, and when
	// the line is missing.
	TunnelProtocol *string `json:"tunnelProtocol" expr:"tunnelProtocol"`
	// Host is "BPF" (host routing in eBPF) or "Legacy" (through the
	// host's stack); null when not printed.
	Host *string `json:"host" expr:"host"`
}

// KPRDetails is the "KubeProxyReplacement Details:" block of
// `status --verbose`. Lines Cilium did not print are null.
type KPRDetails struct {
	// Present is false when the output has no details block (status
	// without --verbose).
	Present bool `json:"present" expr:"present"`
	// Status is the "Status:" line, "True" or "False": whether
	// kube-proxy replacement is on; null when not printed.
	Status *string `json:"status" expr:"status"`
	// SocketLB is "Socket LB:", "Enabled" or "Disabled": whether
	// services are load-balanced at connect() (socket LB); null when not
	// printed.
	SocketLB *string `json:"socketLB" expr:"socketLB"`
	// SocketLBTracing is "Socket LB Tracing:", "Enabled" or "Disabled";
	// null when not printed.
	SocketLBTracing *string `json:"socketLBTracing" expr:"socketLBTracing"`
	// SocketLBCoverage is "Socket LB Coverage:", "Full" (pods and host)
	// or "Hostns-only" (the host's own sockets only); null when not
	// printed.
	SocketLBCoverage *string `json:"socketLBCoverage" expr:"socketLBCoverage"`
	// SocketLBProtocols is "Socket LB Protocols:" ("TCP, UDP"; with -o
	// json, hostReachableServices' protocols), printed only up to about
	// 1.14, when socket LB was on; null when not printed (every version
	// since).
	SocketLBProtocols *string `json:"socketLBProtocols" expr:"socketLBProtocols"`
	// Devices are the "Devices:" line's devices, the same as the top
	// line's; empty when not printed.
	Devices []StatusDevice `json:"devices" expr:"devices"`
	// Mode is the NodePort mode, "SNAT", "DSR" or "Hybrid"; null when
	// NodePort is off (not printed).
	Mode *string `json:"mode" expr:"mode"`
	// DSRDispatchMode is "DSR Dispatch Mode:", "IP Option/Extension",
	// "IPIP" or "Geneve"; null when not printed: Cilium prints it for
	// Mode DSR and Hybrid only (with -o json, nodePort.dsrMode is
	// printed for SNAT too, and not read then).
	DSRDispatchMode *string `json:"dsrDispatchMode" expr:"dsrDispatchMode"`
	// BackendSelection is "Backend Selection:", "Random" or "Maglev
	// (Table Size: 16381)"; null when NodePort is off.
	BackendSelection *string `json:"backendSelection" expr:"backendSelection"`
	// SessionAffinity is "Session Affinity:", "Enabled" or "Disabled";
	// null when not printed.
	SessionAffinity *string `json:"sessionAffinity" expr:"sessionAffinity"`
	// GracefulTermination is "Graceful Termination:", "Enabled" or
	// "Disabled" (with -o json, features.gracefulTermination); null when
	// not printed: 1.15 to 1.19 print it, 1.20 does not.
	GracefulTermination *string `json:"gracefulTermination" expr:"gracefulTermination"`
	// NAT4664 is "NAT46/64 Support:", "Disabled" or "Enabled" (with -o
	// json, features.nat46X64.enabled). Cilium prints "Disabled" on the
	// line and, when enabled, no value but a sub-block ("- Services:",
	// "- Gateway:", in Fields as "NAT46/64 Support.Gateway"), which is
	// read as "Enabled", the rule by which FormatStatusResponse chooses
	// the sub-block. null when not printed (without the details block,
	// or by a version without the line).
	NAT4664 *string `json:"nat4664" expr:"nat4664"`
	// XDPAcceleration is "XDP Acceleration:", "Disabled", "Generic",
	// "Native" or "Best-Effort"; null when NodePort is off.
	XDPAcceleration *string `json:"xdpAcceleration" expr:"xdpAcceleration"`
	// Services maps each "- Name: value" line under "Services:", e.g.
	// "ClusterIP" -> "Enabled", "NodePort" -> "Enabled (Range: 30000-32767)".
	Services map[string]string `json:"services" expr:"services"`
	// Annotations lists the "- name" lines under "Annotations:" (1.20+);
	// empty when Cilium printed "(n/a)" or no such line.
	Annotations []string `json:"annotations" expr:"annotations"`
	// Fields maps every label in the block to its value. "- Item: value"
	// lines of a sub-list are keyed "Parent.Item", e.g. "Services.NodePort"
	// or "NAT46/64 Support.Gateway"; items without a value (annotations)
	// are only in their typed list.
	Fields map[string]string `json:"fields" expr:"fields"`
}

// ParseStatus parses `cilium-dbg status [--verbose]`.
//
// Lines at column 0 are "Label:<padding>value". Cilium prints them through
// text/tabwriter, so the padding after the colon and inside values (the
// "Cilium: Ok   1.20.1" cells, the Masquerading columns) is runs of spaces
// whose width depends on the other lines. Values are therefore cut after the
// first ": " and split or collapsed on runs of whitespace, never on a single
// space. The kube-proxy-replacement device list needs this too: Cilium
// builds each device's IP list starting with one empty string per address (a
// make+append slip in status_collector.go), so the name is followed by 1+N
// spaces ("eth0   10.0.2.15 fe80::1").
//
// `cilium-dbg status -o json` is accepted too (see parseStatusJSON).
func ParseStatus(text string) (Status, error) {
	return jsonOrText(kindStatus, text, parseStatusJSON, parseStatusText)
}

// parseStatusText reads the text form: the labels at column 0 with the
// indented lines of their blocks, and the KubeProxyReplacement details
// block of --verbose (KPRDetails.addLine).
func parseStatusText(text string) (Status, error) {
	if err := refuseCut(kindStatus, "lines", text, parseStatusText, func(s Status) int { return len(s.Fields) }); err != nil {
		return Status{}, err
	}
	s := Status{
		KubeProxyReplacementDevices: []StatusDevice{},
		KubeProxyReplacementDetails: newKPRDetails(),
		Fields:                      map[string]string{},
		Blocks:                      map[string][]string{},
	}
	r := newLineReader(text)
	current := ""      // label whose indented lines we are collecting
	inDetails := false // inside "KubeProxyReplacement Details:"
	detailParent := "" // label of the current "- item" sub-list in the details
	for {
		line, ok := r.next()
		if !ok {
			break
		}
		if isBlank(line) {
			continue
		}
		indented := line[0] == ' ' || line[0] == '\t'
		if inDetails && indented {
			if err := s.KubeProxyReplacementDetails.addLine(line, &detailParent); err != nil {
				return Status{}, newError(kindStatus, r.num, line, err.Error())
			}
			continue
		}
		inDetails = false
		if indented {
			if current != "" {
				s.Blocks[current] = append(s.Blocks[current], strings.TrimSpace(line))
			}
			continue
		}
		label, value, ok := splitLabel(line)
		if !ok {
			// Column-0 lines without a label exist (the health table's
			// "Name IP Node Endpoints" header); they belong to the block of
			// the label above.
			if current != "" {
				s.Blocks[current] = append(s.Blocks[current], strings.TrimSpace(line))
			}
			continue
		}
		current = label
		if label == "KubeProxyReplacement Details" {
			inDetails = true
			detailParent = ""
			s.KubeProxyReplacementDetails.Present = true
			continue
		}
		if err := s.setLabel(label, value); err != nil {
			return Status{}, newError(kindStatus, r.num, line, err.Error())
		}
	}
	known := s.KubeProxyReplacementDetails.Present
	for _, a := range statusAnchors {
		if _, ok := s.Fields[a]; ok {
			known = true
		}
	}
	if !known {
		return Status{}, newError(kindStatus, 0, firstLine(text), `no KubeProxyReplacement, Cilium, NodeMonitor or other cilium-dbg status line found`)
	}
	return s, nil
}

// setLabel keeps a column-0 label's value in Fields (the first one, when
// a label is printed twice) and in the typed field it fills. It fails on
// a device list that cannot be whole (see parseDevices).
func (s *Status) setLabel(label, value string) (err error) {
	if _, dup := s.Fields[label]; !dup {
		s.Fields[label] = collapseSpace(value)
	}
	switch label {
	case "KubeProxyReplacement":
		s.KubeProxyReplacement, s.KubeProxyReplacementDevices, err = parseKPRLine(value)
	case "Routing":
		host := s.Routing.Host
		s.Routing = parseRouting(value)
		if s.Routing.Host == nil {
			s.Routing.Host = host
		}
	case "Host Routing":
		// Cilium <= 1.15 printed the host routing on a line of its
		// own ("Host Routing: BPF"); later versions in "Routing:".
		if s.Routing.Host == nil {
			s.Routing.Host = orNull(collapseSpace(value))
		}
	case "Masquerading":
		s.Masquerading = orNull(collapseSpace(value))
	case "Attach Mode":
		s.AttachMode = orNull(collapseSpace(value))
	case "Device Mode":
		s.DeviceMode, s.DeviceModeConfigured = parseDeviceMode(value)
	}
	return err
}

func newKPRDetails() KPRDetails {
	return KPRDetails{
		Devices:     []StatusDevice{},
		Services:    map[string]string{},
		Annotations: []string{},
		Fields:      map[string]string{},
	}
}

// addLine handles one indented line of the details block:
//
//	"  Socket LB:   Enabled"          label and value
//	"    DSR Dispatch Mode:   IPIP"  deeper label, still a plain field
//	"  Services:"                     parent of a "- item" list
//	"  - NodePort:   Enabled (Range: 30000-32767) "
//	"  - service.cilium.io/node"      annotation item without value
func (d *KPRDetails) addLine(line string, parent *string) error {
	t := strings.TrimSpace(line)
	if item, ok := strings.CutPrefix(t, "- "); ok || t == "-" {
		if *parent == "" {
			return errString(`"- item" line outside a list`)
		}
		name, value, hasValue := splitLabel(item)
		if !hasValue {
			name, value = strings.TrimSpace(item), ""
		}
		value = collapseSpace(value)
		if hasValue {
			d.Fields[*parent+"."+name] = value
		}
		switch *parent {
		case "NAT46/64 Support":
			// FormatStatusResponse prints the sub-block for enabled
			// NAT46/64 only; the label line has no value then.
			enabled := "Enabled"
			d.NAT4664 = &enabled
		case "Services":
			d.Services[name] = value
		case "Annotations":
			d.Annotations = append(d.Annotations, name)
		}
		return nil
	}
	label, value, ok := splitLabel(t)
	if !ok {
		return errString(`expected "Label: value" in KubeProxyReplacement Details`)
	}
	value = collapseSpace(value)
	if value == "" {
		// "Services:", "Annotations:", "NAT46/64 Support:" start a list.
		*parent = label
	} else if !strings.HasPrefix(line, "    ") {
		// A deeper-indented line ("    DSR Dispatch Mode:", "    Prefixes:")
		// does not end the list it is part of; a new label does.
		*parent = ""
	}
	if _, dup := d.Fields[label]; !dup {
		d.Fields[label] = value
	}
	switch label {
	case "Status":
		d.Status = orNull(value)
	case "Socket LB":
		d.SocketLB = orNull(value)
	case "Socket LB Tracing":
		d.SocketLBTracing = orNull(value)
	case "Socket LB Coverage":
		d.SocketLBCoverage = orNull(value)
	case "Socket LB Protocols":
		d.SocketLBProtocols = orNull(value)
	case "Devices":
		var err error
		if d.Devices, err = parseDevices(value); err != nil {
			return err
		}
	case "Mode":
		d.Mode = orNull(value)
	case "DSR Dispatch Mode":
		d.DSRDispatchMode = orNull(value)
	case "Backend Selection":
		d.BackendSelection = orNull(value)
	case "Session Affinity":
		d.SessionAffinity = orNull(value)
	case "Graceful Termination":
		d.GracefulTermination = orNull(value)
	case "NAT46/64 Support":
		d.NAT4664 = orNull(value)
	case "XDP Acceleration":
		d.XDPAcceleration = orNull(value)
	case "Annotations":
		// "Annotations: (n/a)" means none; the list stays empty.
	}
	return nil
}

// splitLabel cuts "Label:<spaces>value" at the first colon that ends the
// line or is followed by whitespace. Values may contain colons themselves
// ("Routing: Network: Native Host: BPF", "Kubernetes APIs: [\"cilium/v2::...\"]"),
// labels never contain ": ".
func splitLabel(line string) (label, value string, ok bool) {
	for i := 0; i < len(line); i++ {
		if line[i] != ':' {
			continue
		}
		if i+1 == len(line) || line[i+1] == ' ' || line[i+1] == '\t' {
			label = strings.TrimSpace(line[:i])
			if !isLabel(label) {
				return "", "", false
			}
			return label, strings.TrimSpace(line[i+1:]), true
		}
	}
	return "", "", false
}

// isLabel accepts the labels Cilium prints: a letter, then letters,
// digits, spaces and a little punctuation ("NAT46/64 Support", "CNI Config
// file", "Clock Source for BPF", "service.cilium.io/node").
func isLabel(s string) bool {
	if s == "" || len(s) > 64 || !(s[0] >= 'A' && s[0] <= 'Z' || s[0] >= 'a' && s[0] <= 'z') {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || strings.IndexByte(" /-().-_", c) >= 0) {
			return false
		}
	}
	return true
}

// statusAnchors are labels cilium-dbg status always prints (or that a lab
// greps for); output with none of them is not cilium-dbg status.
var statusAnchors = []string{"KubeProxyReplacement", "Cilium", "NodeMonitor", "Proxy Status", "Global Identity Range",
	"Controller Status", "Kubernetes", "KVStore"}

// parseKPRLine reads the value of "KubeProxyReplacement:", e.g.
// "True   [eth0   10.0.2.15 fe80::1 (Direct Routing), eth1   192.168.1.2]".
// A "[" without its "]" is a line cut short.
func parseKPRLine(value string) (mode string, devices []StatusDevice, err error) {
	devices = []StatusDevice{}
	mode, rest := cutField(strings.TrimSpace(value))
	if list, ok := strings.CutPrefix(rest, "["); ok {
		list, ok = strings.CutSuffix(list, "]")
		if !ok {
			return "", nil, errString(`device list "[..." without its "]" (line cut short?)`)
		}
		if devices, err = parseDevices(list); err != nil {
			return "", nil, err
		}
	}
	return mode, devices, nil
}

// parseDevices reads "eth0   10.0.2.15 fe80::1 (Direct Routing), eth1 ...".
// Devices are separated by ", "; inside a device the name and IPs are split
// on runs of whitespace (see ParseStatus for why the runs vary). Cilium
// prints each address with net.IP's String, so a word after the name that
// is not an IP address ("1", the start of "10.0.2.15") is refused: the
// line was cut there.
func parseDevices(s string) ([]StatusDevice, error) {
	devices := []StatusDevice{}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue // Cilium versions that printed a trailing ", "
		}
		d := StatusDevice{IPs: []string{}}
		if p, ok := strings.CutSuffix(part, "(Direct Routing)"); ok {
			d.DirectRouting = true
			part = p
		}
		f := strings.Fields(part)
		if len(f) == 0 {
			continue
		}
		d.Name = f[0]
		for _, ip := range f[1:] {
			if !validIP(ip) {
				return nil, errString("device " + strconv.Quote(shortToken(d.Name)) + ": expected IP addresses, got " + strconv.Quote(shortToken(ip)))
			}
		}
		d.IPs = append(d.IPs, f[1:]...)
		devices = append(devices, d)
	}
	return devices, nil
}

// parseRouting reads "Network: Tunnel [vxlan]   Host: BPF".
func parseRouting(value string) StatusRouting {
	var r StatusRouting
	v := collapseSpace(value)
	host := ""
	if i := strings.Index(v, "Host:"); i >= 0 {
		host = strings.TrimSpace(v[i+len("Host:"):])
		v = v[:i]
	}
	r.Host = orNull(host)
	network := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(v), "Network:"))
	if name, proto, ok := strings.Cut(network, "["); ok {
		r.TunnelProtocol = orNull(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(proto), "]")))
		network = strings.TrimSpace(name)
	}
	r.Network = orNull(network)
	return r
}

// parseDeviceMode reads "veth" or "veth [Configured: auto]".
func parseDeviceMode(value string) (mode, configured *string) {
	v := collapseSpace(value)
	m, rest, ok := strings.Cut(v, " [Configured:")
	if ok {
		configured = orNull(strings.TrimSpace(strings.TrimSuffix(rest, "]")))
	}
	return orNull(m), configured
}

// firstLine returns the first non-blank line of text, for error messages.
func firstLine(text string) string {
	r := newLineReader(text)
	for {
		line, ok := r.next()
		if !ok {
			return ""
		}
		if !isBlank(line) {
			return line
		}
	}
}
