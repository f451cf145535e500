// Command gen writes the synthetic test inputs of package parse from
// Cilium v1.20.1's own printing code, so that the inputs have exactly the
// shape cilium-dbg prints without a running agent. Where cilium-dbg formats a
// table inline in its cmd package (which cannot be imported), the few printf
// lines are repeated here with a pointer to the original.
//
// Nothing here is a capture: every file gets a "# synthetic:" header.
//
// Run from this directory (needs the Go module proxy the first time):
//
//	go run . -out ..
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"maps"
	"math/rand"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/cilium/cilium/api/v1/models"
	"github.com/cilium/cilium/pkg/byteorder"
	pkg "github.com/cilium/cilium/pkg/client"
	"github.com/cilium/cilium/pkg/loadbalancer"
	lbmaps "github.com/cilium/cilium/pkg/loadbalancer/maps"
	"github.com/cilium/cilium/pkg/maps/ctmap"
	"github.com/cilium/cilium/pkg/option"
	"github.com/cilium/cilium/pkg/tuple"
	"github.com/cilium/cilium/pkg/types"
	"github.com/cilium/cilium/pkg/u8proto"
)

const header = "# synthetic: built from Cilium v1.20.1 source by parse/testdata/synthetic/gen (NOT a capture)\n"

var outDir = flag.String("out", "..", "directory that receives <kind>/<name>.txt")

func main() {
	flag.Parse()
	write("cilium-status", "v1.20-verbose", "cilium-dbg status --verbose", statusVerbose())
	write("cilium-status", "v1.20-plain", "cilium-dbg status", statusPlain())
	write("cilium-status", "v1.20-verbose-tunnel-dsr", "cilium-dbg status --verbose", statusTunnelDSR())
	write("cilium-status", "v1.20-kpr-false", "cilium-dbg status --verbose", statusKPRFalse())
	write("cilium-status", "v1.20-json", "cilium-dbg status -o json", statusJSON(baseStatus()))
	write("cilium-status", "v1.20-json-tunnel-dsr", "cilium-dbg status -o json", statusJSON(tunnelDSRStatus()))

	write("cilium-service-list", "v1.20-json", "cilium-dbg service list -o json", serviceJSON(labServices()))
	write("cilium-service-list", "v1.20-table", "cilium-dbg service list", serviceTable(labServices()))
	write("cilium-service-list", "v1.20-table-ipv6-remote", "cilium-dbg service list", serviceTable(v6Services()))
	write("cilium-service-list", "v1.20-json-ipv6-remote", "cilium-dbg service list -o json", serviceJSON(v6Services()))

	write("cilium-bpf-lb-list", "v1.20", "cilium-dbg bpf lb list", lbList(labServices(), 2))
	write("cilium-bpf-lb-list", "v1.20-scaled", "cilium-dbg bpf lb list", lbList(scaled(labServices()), 3))
	write("cilium-bpf-lb-list", "v1.20-ipv6-l7-notfound", "cilium-dbg bpf lb list", lbListSpecial())

	write("cilium-bpf-ct-list", "v1.20", "cilium-dbg bpf ct list global", ctList(false))
	write("cilium-bpf-ct-list", "v1.20-time-diff", "cilium-dbg bpf ct list global -d", ctList(true))

	write("cilium-endpoint-get", "v1.20-holder", "cilium-dbg endpoint get 1234 -o json", endpointJSON([]*models.Endpoint{holderEndpoint()}))
	write("cilium-endpoint-list", "v1.20", "cilium-dbg endpoint list", endpointList())
	write("cilium-map-list", "v1.20", "cilium-dbg map list", mapList())
	write("cilium-config", "v1.20-all", "cilium-dbg config -a", configAll())
}

func write(kind, name, command, body string) {
	dir := filepath.Join(*outDir, kind)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		log.Fatal(err)
	}
	text := header + "# command: " + command + "\n" + body
	if err := os.WriteFile(filepath.Join(dir, name+".txt"), []byte(text), 0o644); err != nil {
		log.Fatal(err)
	}
}

// ---------------------------------------------------------------- status

func kpr(mode string, hostnsOnly bool) *models.KubeProxyReplacement {
	return &models.KubeProxyReplacement{
		Mode:    mode,
		Devices: []string{"eth0"},
		DeviceList: []*models.KubeProxyReplacementDeviceListItems0{
			// status_collector.go: IP: make([]string, len(dev.Addrs)) and
			// then append, hence the leading empty strings.
			{Name: "eth0", IP: []string{"", "", "10.0.2.15", "fe80::fc:ff:fe00:1"}},
		},
		DirectRoutingDevice: "eth0",
		Features: &models.KubeProxyReplacementFeatures{
			Annotations: []string{
				"service.cilium.io/node",
				"service.cilium.io/node-selector",
				"service.cilium.io/proxy-delegation",
				"service.cilium.io/src-ranges-policy",
				"service.cilium.io/type",
			},
			BpfSocketLBHostnsOnly: hostnsOnly,
			ExternalIPs:           &models.KubeProxyReplacementFeaturesExternalIPs{Enabled: true},
			HostPort:              &models.KubeProxyReplacementFeaturesHostPort{Enabled: true},
			Nat46X64:              &models.KubeProxyReplacementFeaturesNat46X64{},
			NodePort: &models.KubeProxyReplacementFeaturesNodePort{
				Enabled: true, Mode: "SNAT", Algorithm: "Random", Acceleration: "Disabled",
				PortMin: 30000, PortMax: 32767,
			},
			SessionAffinity: &models.KubeProxyReplacementFeaturesSessionAffinity{Enabled: true},
			SocketLB:        &models.KubeProxyReplacementFeaturesSocketLB{Enabled: true},
			SocketLBTracing: &models.KubeProxyReplacementFeaturesSocketLBTracing{Enabled: true},
		},
	}
}

func baseStatus() *models.StatusResponse {
	return &models.StatusResponse{
		Kvstore: &models.Status{State: "Disabled"},
		Kubernetes: &models.K8sStatus{State: "Ok", Msg: "1.36 (v1.36.2+k3s1) [linux/amd64]",
			K8sAPIVersions: []string{"cilium/v2::CiliumNode", "cilium/v2::CiliumEndpoint", "core/v1::Pods",
				"EndpointSliceOrEndpoint", "core/v1::Namespace", "core/v1::Service", "networking.k8s.io/v1::NetworkPolicy"}},
		KubeProxyReplacement: kpr("True", false),
		HostFirewall:         &models.HostFirewall{Mode: "Disabled"},
		Srv6:                 &models.Srv6{},
		CniChaining:          &models.CNIChainingStatus{Mode: "none"},
		CniFile:              &models.Status{Msg: "/host/etc/cni/net.d/05-cilium.conflist"},
		Cilium:               &models.Status{State: "Ok", Msg: "1.20.1 (v1.20.1-2a0b3f9c)"},
		NodeMonitor:          &models.MonitorStatus{Cpus: 2, Npages: 64, Pagesize: 4096},
		Ipam: &models.IPAMStatus{Status: "4/254 allocated from 10.42.0.0/24,",
			Allocations: models.AllocationMap{"10.42.0.1": "router", "10.42.0.12": "kube-system/coredns-7b98449c4-x2tqz",
				"10.42.0.31": "cca-dp/web-6d4cf56db6-8kq2n", "10.42.0.32": "cca-dp/web-6d4cf56db6-t7w4m"}},
		IPv4BigTCP:       &models.IPV4BigTCP{},
		IPv6BigTCP:       &models.IPV6BigTCP{},
		BandwidthManager: &models.BandwidthManager{},
		Routing:          &models.Routing{InterHostRoutingMode: "Native", IntraHostRoutingMode: "BPF"},
		AttachMode:       models.AttachModeTcx,
		DatapathMode:     models.DatapathModeVeth,
		Masquerading: &models.Masquerading{Enabled: true, Mode: "BPF",
			EnabledProtocols:    &models.MasqueradingEnabledProtocols{IPv4: true},
			SnatExclusionCidrV4: "10.42.0.0/16"},
		ClockSource: &models.ClockSource{Mode: "ktime"},
		Controllers: models.ControllerStatuses{
			{Name: "endpoint-1234-regeneration-recovery", Status: &models.ControllerStatusStatus{SuccessCount: 1}},
			{Name: "sync-lb-maps-with-k8s-services", Status: &models.ControllerStatusStatus{SuccessCount: 1}},
			{Name: "ipcache-inject-labels", Status: &models.ControllerStatusStatus{SuccessCount: 3}},
		},
		IdentityRange: &models.IdentityRange{MinIdentity: 256, MaxIdentity: 65535},
		Hubble:        &models.HubbleStatus{State: "Disabled"},
		BpfMaps: &models.BPFMapStatus{DynamicSizeRatio: 0.0025, Maps: []*models.BPFMapProperties{
			{Name: "Auth", Size: 524288}, {Name: "Non-TCP connection tracking", Size: 65536},
			{Name: "TCP connection tracking", Size: 131072}, {Name: "Endpoints", Size: 65535},
			{Name: "IP cache", Size: 512000}, {Name: "IPv4 masquerading agent", Size: 16384},
			{Name: "IPv4 fragmentation", Size: 8192}, {Name: "IPv4 service", Size: 65536},
			{Name: "IPv4 service backend", Size: 65536}, {Name: "IPv4 service reverse NAT", Size: 65536},
			{Name: "Metrics", Size: 1024}, {Name: "NAT", Size: 131072}, {Name: "Neighbor table", Size: 131072},
			{Name: "Global policy", Size: 16384}, {Name: "Session affinity", Size: 65536},
			{Name: "Sock reverse NAT", Size: 65536}},
		},
		Encryption: &models.EncryptionStatus{Mode: "Disabled"},
	}
}

func formatStatus(sr *models.StatusResponse, sd pkg.StatusDetails) string {
	var buf bytes.Buffer
	// cilium-dbg/cmd/status.go: the outer writer and, with the health
	// endpoint disabled (as on the lab's testbed), the final line.
	w := tabwriter.NewWriter(&buf, 2, 0, 3, ' ', 0)
	pkg.FormatStatusResponse(w, sr, sd)
	fmt.Fprint(w, "Cluster health:\tProbe disabled\n")
	w.Flush()
	return buf.String()
}

func statusVerbose() string { return formatStatus(baseStatus(), pkg.StatusAllDetails) }

// statusJSON is what `status -o json` prints for the response sr that
// statusVerbose and statusTunnelDSR print as text (pkg/command
// PrintOutput: json.MarshalIndent).
func statusJSON(sr *models.StatusResponse) string {
	b, err := json.MarshalIndent(sr, "", "  ")
	if err != nil {
		log.Fatal(err)
	}
	return string(b) + "\n"
}

func statusPlain() string { return formatStatus(baseStatus(), pkg.StatusNoDetails) }

func statusTunnelDSR() string { return formatStatus(tunnelDSRStatus(), pkg.StatusAllDetails) }

func tunnelDSRStatus() *models.StatusResponse {
	sr := baseStatus()
	k := kpr("True", true)
	k.Devices = []string{"eth0", "eth1"}
	k.DeviceList = []*models.KubeProxyReplacementDeviceListItems0{
		{Name: "eth0", IP: []string{"", "", "", "192.168.56.10", "192.168.56.11", "fe80::a00:27ff:fe4e:66a1"}},
		{Name: "eth1", IP: []string{"", "10.0.3.15"}},
	}
	k.DirectRoutingDevice = "eth1"
	k.Features.NodePort.Mode = "Hybrid"
	k.Features.NodePort.DsrMode = "Geneve"
	k.Features.NodePort.Algorithm = "Maglev"
	k.Features.NodePort.LutSize = 16381
	k.Features.NodePort.Acceleration = "Native"
	k.Features.SocketLBTracing = &models.KubeProxyReplacementFeaturesSocketLBTracing{}
	k.Features.SessionAffinity = &models.KubeProxyReplacementFeaturesSessionAffinity{}
	k.Features.Nat46X64 = &models.KubeProxyReplacementFeaturesNat46X64{Enabled: true,
		Service: &models.KubeProxyReplacementFeaturesNat46X64Service{Enabled: true},
		Gateway: &models.KubeProxyReplacementFeaturesNat46X64Gateway{Enabled: true, Prefixes: []string{"64:ff9b::/96"}}}
	k.Features.Annotations = nil
	sr.KubeProxyReplacement = k
	sr.Routing = &models.Routing{InterHostRoutingMode: "Tunnel", TunnelProtocol: "vxlan", IntraHostRoutingMode: "Legacy"}
	sr.AttachMode = models.AttachModeTc
	sr.ConfiguredDatapathMode = models.ConfiguredDatapathModeAuto
	sr.Masquerading = &models.Masquerading{Enabled: true, Mode: "iptables",
		EnabledProtocols: &models.MasqueradingEnabledProtocols{IPv4: true, IPv6: true}}
	sr.ClockSource = &models.ClockSource{Mode: "jiffies", Hertz: 250}
	sr.Controllers[1].Status = &models.ControllerStatusStatus{ConsecutiveFailureCount: 2, FailureCount: 2,
		LastFailureMsg: "unable to sync: context deadline exceeded"}
	return sr
}

func statusKPRFalse() string {
	sr := baseStatus()
	k := kpr("False", false)
	k.Features.NodePort = &models.KubeProxyReplacementFeaturesNodePort{}
	k.Features.SocketLB = &models.KubeProxyReplacementFeaturesSocketLB{}
	k.Features.SocketLBTracing = &models.KubeProxyReplacementFeaturesSocketLBTracing{}
	k.Features.ExternalIPs = &models.KubeProxyReplacementFeaturesExternalIPs{}
	k.Features.HostPort = &models.KubeProxyReplacementFeaturesHostPort{}
	sr.KubeProxyReplacement = k
	return formatStatus(sr, pkg.StatusAllDetails)
}

// ---------------------------------------------------------------- services

type svc struct {
	id                int64
	fe                string // "ip:port/PROTO[/i]"
	typ, ns, name     string
	etp, itp, cluster string
	backends          []string // "ip:port"
	states            []string // optional per-backend state
	zones             []string // optional per-backend topology zone
	natPolicy         string   // "Nat46" or "Nat64"; ToModel leaves NONE out
	hcNodePort        uint16   // the Service's healthCheckNodePort
	proxyPort         uint16   // an L7 proxy redirect: ToModel's 127.0.0.1 backend
}

func labServices() []svc {
	return []svc{
		{id: 1, fe: "10.43.0.1:443/TCP", typ: "ClusterIP", ns: "default", name: "kubernetes", backends: []string{"10.0.2.15:6443"}},
		{id: 2, fe: "10.43.0.10:53/UDP", typ: "ClusterIP", ns: "kube-system", name: "kube-dns", backends: []string{"10.42.0.12:53"}},
		{id: 3, fe: "10.43.0.10:53/TCP", typ: "ClusterIP", ns: "kube-system", name: "kube-dns", backends: []string{"10.42.0.12:53"}},
		{id: 4, fe: "10.43.0.10:9153/TCP", typ: "ClusterIP", ns: "kube-system", name: "kube-dns", backends: []string{"10.42.0.12:9153"}},
		{id: 7, fe: "10.43.77.5:80/TCP", typ: "ClusterIP", ns: "cca-dp", name: "web", backends: []string{"10.42.0.31:8080", "10.42.0.32:8080"}},
		{id: 9, fe: "10.43.200.9:80/TCP", typ: "ClusterIP", ns: "cca-dp", name: "web-np", backends: []string{"10.42.0.31:8080", "10.42.0.32:8080"}},
		{id: 10, fe: "0.0.0.0:30780/TCP", typ: "NodePort", ns: "cca-dp", name: "web-np", backends: []string{"10.42.0.31:8080", "10.42.0.32:8080"}},
		{id: 11, fe: "10.43.7.7:80/TCP", typ: "ClusterIP", ns: "cca-dp", name: "ghost"},
		{id: 12, fe: "0.0.0.0:31500/TCP", typ: "NodePort", ns: "cca-dp", name: "web-local", etp: "Local", backends: []string{"10.42.0.31:8080"}, states: []string{"terminating"}},
		{id: 13, fe: "0.0.0.0:31500/TCP/i", typ: "NodePort", ns: "cca-dp", name: "web-local", etp: "Local", backends: []string{"10.42.0.31:8080", "10.42.0.32:8080"}},
	}
}

func scaled(s []svc) []svc {
	for i := range s {
		if s[i].name == "web" {
			s[i].backends = []string{"10.42.0.31:8080", "10.42.0.32:8080", "10.42.0.33:8080", "10.42.0.34:8080"}
		}
	}
	return s
}

func v6Services() []svc {
	return []svc{
		{id: 21, fe: "[fd00:10:96::a]:53/UDP", typ: "ClusterIP", ns: "kube-system", name: "kube-dns", backends: []string{"[fd00:10:244::12]:53", "[fd00:10:244::13]:53"}, states: []string{"active", "quarantined"}},
		{id: 22, fe: "10.96.50.1:443/TCP", typ: "ClusterIP", ns: "shop", name: "api", cluster: "east", backends: []string{"10.1.0.7:8443"}, states: []string{"maintenance"}},
		{id: 23, fe: "192.168.56.200:80/TCP", typ: "LoadBalancer", ns: "shop", name: "front", etp: "Local", backends: []string{"10.42.0.50:80"}, zones: []string{"zone-a"}, hcNodePort: 31999},
		{id: 24, fe: "10.96.9.9:80/TCP", typ: "LocalRedirect", ns: "kube-system", name: "node-local-dns", backends: []string{"10.42.0.60:53"}},
		{id: 25, fe: "10.96.60.6:80/TCP", typ: "ClusterIP", ns: "shop", name: "legacy", natPolicy: "Nat46", backends: []string{"[fd00:10:244::20]:80"}},
		{id: 26, fe: "10.96.70.7:80/TCP", typ: "ClusterIP", ns: "shop", name: "checkout", backends: []string{"10.42.0.70:8080"}, proxyPort: 15001},
		// A frontend without an ID: Frontend.ID is 0 until the BPF
		// reconciler writes the frontend to the datapath, and stays 0 for
		// one it never writes (bpf_reconciler.go isDatapathCandidate: with
		// kube-proxy replacement off, a NodePort); ToModel copies it, the
		// JSON omits it and the table prints 0.
		{id: 0, fe: "0.0.0.0:31080/TCP", typ: "NodePort", ns: "shop", name: "front", etp: "Local", backends: []string{"10.42.0.50:80"}, hcNodePort: 31999},
	}
}

func (s svc) model() *models.Service {
	fe, err := parseL3n4(s.fe)
	if err != nil {
		log.Fatal(err)
	}
	etp, itp := s.etp, s.itp
	if etp == "" {
		etp = "Cluster"
	}
	if itp == "" {
		itp = "Cluster"
	}
	spec := &models.ServiceSpec{
		ID:              s.id,
		FrontendAddress: fe.GetModel(),
		Flags: &models.ServiceSpecFlags{Type: s.typ, TrafficPolicy: etp, ExtTrafficPolicy: etp,
			IntTrafficPolicy: itp, Name: s.name, Namespace: s.ns, Cluster: s.cluster,
			NatPolicy: s.natPolicy, HealthCheckNodePort: s.hcNodePort},
	}
	// frontend.go ToModel: backends are appended to a nil slice, so a
	// service without backends marshals "backend-addresses": null.
	for i, b := range s.backends {
		host, port, _ := net.SplitHostPort(b)
		p, _ := strconv.Atoi(port)
		state := "active"
		if i < len(s.states) {
			state = s.states[i]
		}
		zone := ""
		if i < len(s.zones) {
			zone = s.zones[i]
		}
		w := uint16(100)
		ip := host
		spec.BackendAddresses = append(spec.BackendAddresses, &models.BackendAddress{
			IP: &ip, Port: uint16(p), Protocol: fe.Protocol(), NodeName: "lab-node", Zone: zone, State: state,
			Preferred: true, Weight: &w,
		})
	}
	if s.proxyPort != 0 {
		// ToModel's backend for a proxy redirect: no node, no weight.
		localhost := "127.0.0.1"
		spec.BackendAddresses = append(spec.BackendAddresses, &models.BackendAddress{
			IP: &localhost, Protocol: fe.Protocol(), Port: s.proxyPort, State: "active", Preferred: true,
		})
	}
	return &models.Service{Spec: spec, Status: &models.ServiceStatus{Realized: spec}}
}

func parseL3n4(s string) (loadbalancer.L3n4Addr, error) {
	var a loadbalancer.L3n4Addr
	err := a.ParseFromString(s)
	return a, err
}

func serviceJSON(list []svc) string {
	var ms []*models.Service
	for _, s := range list {
		ms = append(ms, s.model())
	}
	// pkg/command PrintOutput: json.MarshalIndent(data, "", "  ").
	b, err := json.MarshalIndent(ms, "", "  ")
	if err != nil {
		log.Fatal(err)
	}
	return string(b) + "\n"
}

// serviceTable repeats cilium-dbg/cmd/service_list.go printServiceList.
func serviceTable(list []svc) string {
	var buf bytes.Buffer
	w := tabwriter.NewWriter(&buf, 5, 0, 3, ' ', 0)
	fmt.Fprintln(w, "ID\tFrontend\tService Type\tBackend\t")
	for _, s := range list {
		m := s.model()
		feA, err := loadbalancer.NewL3n4AddrFromModel(m.Status.Realized.FrontendAddress)
		if err != nil {
			log.Fatal(err)
		}
		var bes []string
		for i, be := range m.Status.Realized.BackendAddresses {
			beA, err := loadbalancer.NewL3n4AddrFromBackendModel(be)
			if err != nil {
				log.Fatal(err)
			}
			bes = append(bes, fmt.Sprintf("%d => %s (%s)", i+1, beA.String(), be.State))
		}
		typ := m.Spec.Flags.Type
		if m.Spec.Flags.Cluster != "" {
			typ += " (Remote)"
		}
		if len(bes) == 0 {
			fmt.Fprintln(w, fmt.Sprintf("%d\t%s\t%s\t\t", m.Status.Realized.ID, feA.String(), typ))
			continue
		}
		fmt.Fprintln(w, fmt.Sprintf("%d\t%s\t%s\t%s\t", m.Status.Realized.ID, feA.String(), typ, bes[0]))
		for _, b := range bes[1:] {
			fmt.Fprintln(w, fmt.Sprintf("\t\t\t%s\t", b))
		}
	}
	w.Flush()
	return buf.String()
}

// ---------------------------------------------------------------- bpf lb list

type lbRow struct{ key, value string }

func svcFlags(typ string, extra loadbalancer.ServiceFlags) loadbalancer.ServiceFlags {
	p := loadbalancer.SvcFlagParam{SvcType: loadbalancer.SVCType(typ)}
	return loadbalancer.NewSvcFlag(&p) | extra
}

// lbRows builds what bpf_lb_list.go dumpSVC puts into its map, using
// Service4Key.String and ServiceFlags.String from Cilium.
func lbRows(list []svc, nodeIP string) []lbRow {
	var rows []lbRow
	add := func(ip string, port uint16, proto u8proto.U8proto, scope uint8, revnat uint16, flags loadbalancer.ServiceFlags, backends []string, beProto string) {
		key := lbmaps.NewService4Key(net.ParseIP(ip), port, proto, scope, 0)
		k := key.ToNetwork()
		rows = append(rows, lbRow{k.String(), fmt.Sprintf("%s:%d (%d) (%d) [%s] %s", "0.0.0.0", 0, revnat, 0, flags, "")})
		for i, b := range backends {
			k := lbmaps.NewService4Key(net.ParseIP(ip), port, proto, scope, uint16(i+1)).ToNetwork()
			host, p, _ := net.SplitHostPort(b)
			rows = append(rows, lbRow{k.String(), fmt.Sprintf("%s:%s/%s (%d) (%d)", host, p, beProto, revnat, i+1)})
		}
	}
	for _, s := range list {
		fe, err := parseL3n4(s.fe)
		if err != nil {
			log.Fatal(err)
		}
		proto := u8proto.TCP
		if fe.Protocol() == "UDP" {
			proto = u8proto.UDP
		}
		var scope uint8
		var extra loadbalancer.ServiceFlags
		if fe.Scope() == loadbalancer.ScopeInternal {
			scope = loadbalancer.ScopeInternal
		}
		typ := s.typ
		flagsParam := loadbalancer.SvcFlagParam{SvcType: loadbalancer.SVCType(typ),
			SvcExtLocal: s.etp == "Local", SvcIntLocal: s.itp == "Local",
			SvcNatPolicy: loadbalancer.SVCNatPolicyNone}
		if s.name == "web-local" {
			flagsParam.SvcFwdModeDSR = false
			flagsParam.SessionAffinity = false
		}
		flags := loadbalancer.NewSvcFlag(&flagsParam) | extra
		if strings.HasPrefix(s.name, "web-local") {
			flags = loadbalancer.NewSvcFlag(&loadbalancer.SvcFlagParam{SvcType: loadbalancer.SVCTypeNodePort,
				SvcExtLocal: true, SvcIntLocal: false, IsRoutable: scope == 0})
		}
		ip := fe.AddrCluster().String()
		add(ip, fe.Port(), proto, scope, uint16(s.id), flags, s.backends, fe.Protocol())
		if s.typ == "NodePort" && nodeIP != "" && scope == 0 {
			// bpf_reconciler.go copies NodePort frontends to each node
			// address; the copies share the rev NAT id of the surrogate.
			npFlags := loadbalancer.NewSvcFlag(&loadbalancer.SvcFlagParam{SvcType: loadbalancer.SVCTypeNodePort,
				SvcExtLocal: s.etp == "Local", IsRoutable: true})
			add(nodeIP, fe.Port(), proto, scope, uint16(s.id), npFlags, s.backends, fe.Protocol())
		}
	}
	return rows
}

// tablePrinter repeats cilium-dbg/cmd/helpers.go TablePrinter. The map
// iteration order of the real command is random; a seeded shuffle stands in
// for it so that files are stable.
func tablePrinter(first, second string, rows []lbRow, seed int64) string {
	rnd := rand.New(rand.NewSource(seed))
	rnd.Shuffle(len(rows), func(i, j int) { rows[i], rows[j] = rows[j], rows[i] })
	var buf bytes.Buffer
	w := tabwriter.NewWriter(&buf, 5, 0, 3, ' ', 0)
	fmt.Fprintf(w, "%s\t%s\n", first, second)
	for _, r := range rows {
		fmt.Fprintf(w, "%s\t%s\t\n", r.key, r.value)
	}
	w.Flush()
	return buf.String()
}

func lbList(list []svc, seed int64) string {
	return tablePrinter("SERVICE ADDRESS", "BACKEND ADDRESS (REVNAT_ID) (SLOT)", lbRows(list, "10.0.2.15"), seed)
}

func lbListSpecial() string {
	var rows []lbRow
	// IPv6 ClusterIP with one backend (Service6Key.String).
	k6 := lbmaps.NewService6Key(net.ParseIP("fd00:10:96::a"), 53, u8proto.UDP, 0, 0).ToNetwork()
	rows = append(rows, lbRow{k6.String(), fmt.Sprintf("%s:%d (%d) (%d) [%s] %s", "[::]", 0, 21, 0,
		loadbalancer.NewSvcFlag(&loadbalancer.SvcFlagParam{SvcType: loadbalancer.SVCTypeClusterIP}), "")})
	k6b := lbmaps.NewService6Key(net.ParseIP("fd00:10:96::a"), 53, u8proto.UDP, 0, 1).ToNetwork()
	rows = append(rows, lbRow{k6b.String(), fmt.Sprintf("[%s]:%d/%s (%d) (%d)", "fd00:10:244::12", 53, "UDP", 21, 1)})
	// An L7 load-balanced service: slot 0 carries the proxy port.
	fl := loadbalancer.NewSvcFlag(&loadbalancer.SvcFlagParam{SvcType: loadbalancer.SVCTypeLoadBalancer, L7LoadBalancer: true, IsRoutable: true})
	k := lbmaps.NewService4Key(net.ParseIP("192.168.56.200"), 443, u8proto.TCP, 0, 0).ToNetwork()
	rows = append(rows, lbRow{k.String(), fmt.Sprintf("%s:%d (%d) (%d) [%s] %s", "0.0.0.0", 0, 30, 0, fl, fmt.Sprintf("(L7LB Proxy Port: %d)", 15001))})
	// A slot whose backend id is missing from the backends map.
	k2 := lbmaps.NewService4Key(net.ParseIP("10.43.5.5"), 8080, u8proto.TCP, 0, 0).ToNetwork()
	rows = append(rows, lbRow{k2.String(), fmt.Sprintf("%s:%d (%d) (%d) [%s] %s", "0.0.0.0", 0, 31, 0,
		loadbalancer.NewSvcFlag(&loadbalancer.SvcFlagParam{SvcType: loadbalancer.SVCTypeClusterIP, SessionAffinity: true}), "")})
	k3 := lbmaps.NewService4Key(net.ParseIP("10.43.5.5"), 8080, u8proto.TCP, 0, 1).ToNetwork()
	rows = append(rows, lbRow{k3.String(), fmt.Sprintf("backend %d not found", 99)})
	k4 := lbmaps.NewService4Key(net.ParseIP("10.43.5.5"), 8080, u8proto.TCP, 0, 2).ToNetwork()
	rows = append(rows, lbRow{k4.String(), fmt.Sprintf("%s:%d/%s (%d) (%d)", "10.42.0.70", 8080, "TCP", 31, 2)})
	return tablePrinter("SERVICE ADDRESS", "BACKEND ADDRESS (REVNAT_ID) (SLOT)", rows, 7)
}

// ---------------------------------------------------------------- conntrack

type ct struct {
	proto        u8proto.U8proto
	flags        uint8 // tuple flags: IN=1, RELATED=2, SERVICE=4
	src, dst     string
	sport, dport uint16
	entry        ctmap.CtEntry
	backendID    uint64
	revnat       uint16
	natPort      uint16
}

func ct4(c ct, timeDiff bool) string {
	var k ctmap.CtKey4Global
	// Dump(reverse=true) prints DestAddr first for OUT/IN (issue #5848),
	// and for SVC prints SourceAddr:DestPort -> DestAddr:SourcePort.
	src, dst := types.IPv4{}, types.IPv4{}
	copy(src[:], net.ParseIP(c.src).To4())
	copy(dst[:], net.ParseIP(c.dst).To4())
	if c.flags&tuple.TUPLE_F_SERVICE != 0 {
		k.TupleKey4Global = tuple.TupleKey4Global{TupleKey4: tuple.TupleKey4{SourceAddr: src, DestAddr: dst, DestPort: c.sport, SourcePort: c.dport, NextHeader: c.proto, Flags: c.flags}}
	} else {
		k.TupleKey4Global = tuple.TupleKey4Global{TupleKey4: tuple.TupleKey4{DestAddr: src, SourceAddr: dst, SourcePort: c.sport, DestPort: c.dport, NextHeader: c.proto, Flags: c.flags}}
	}
	var sb strings.Builder
	k.Dump(&sb, true)
	e := c.entry
	e.RevNAT = byteorder.HostToNetwork16(c.revnat)
	e.NatPort = byteorder.HostToNetwork16(c.natPort)
	e.Union0[1] = c.backendID
	var rem func(uint32) string
	if timeDiff {
		rem = func(t uint32) string { return fmt.Sprintf("remaining: %d sec(s)", int64(t)-int64(16000)) }
	}
	sb.WriteString(e.StringWithTimeDiff(rem))
	return sb.String()
}

func ct6(c ct, timeDiff bool) string {
	var k ctmap.CtKey6Global
	src, dst := types.IPv6{}, types.IPv6{}
	copy(src[:], net.ParseIP(c.src).To16())
	copy(dst[:], net.ParseIP(c.dst).To16())
	k.TupleKey6Global = tuple.TupleKey6Global{TupleKey6: tuple.TupleKey6{DestAddr: src, SourceAddr: dst, SourcePort: c.sport, DestPort: c.dport, NextHeader: c.proto, Flags: c.flags}}
	var sb strings.Builder
	k.Dump(&sb, true)
	e := c.entry
	e.RevNAT = byteorder.HostToNetwork16(c.revnat)
	sb.WriteString(e.StringWithTimeDiff(nil))
	return sb.String()
}

func ctList(timeDiff bool) string {
	est := ctmap.CtEntry{Packets: 12, Bytes: 1733, Lifetime: 37600, Flags: ctmap.SeenNonSyn, TxFlagsSeen: 0x1a, RxFlagsSeen: 0x1a, SourceSecurityID: 30125, LastTxReport: 16010, LastRxReport: 16010}
	closing := ctmap.CtEntry{Packets: 10, Bytes: 876, Lifetime: 16010, Flags: ctmap.RxClosing | ctmap.TxClosing | ctmap.SeenNonSyn, TxFlagsSeen: 0x1b, RxFlagsSeen: 0x1b, SourceSecurityID: 2, LastTxReport: 15999, LastRxReport: 15999}
	udp := ctmap.CtEntry{Packets: 2, Bytes: 152, Lifetime: 16040, SourceSecurityID: 30125, LastTxReport: 15980}
	tcp := []ct{
		// holder -> web backend after socket LB: OUT from holder's egress and
		// IN at the (same-node) backend's ingress; no SVC entry.
		{proto: u8proto.TCP, src: "10.42.0.40", dst: "10.42.0.32", sport: 40404, dport: 8080, entry: est},
		{proto: u8proto.TCP, flags: tuple.TUPLE_F_IN, src: "10.42.0.40", dst: "10.42.0.32", sport: 40404, dport: 8080, entry: est},
		// Per-packet LB from the host namespace: SVC + OUT with RevNAT.
		{proto: u8proto.TCP, flags: tuple.TUPLE_F_SERVICE, src: "10.0.2.15", dst: "10.43.77.5", sport: 51812, dport: 80, entry: closing, revnat: 7, backendID: 14},
		{proto: u8proto.TCP, src: "10.0.2.15", dst: "10.42.0.31", sport: 51812, dport: 8080, entry: closing, revnat: 7, natPort: 0},
		{proto: u8proto.TCP, flags: tuple.TUPLE_F_IN, src: "10.0.2.15", dst: "10.42.0.12", sport: 40222, dport: 8181, entry: closing},
		{proto: u8proto.TCP, src: "10.42.0.12", dst: "10.0.2.15", sport: 33070, dport: 6443, entry: est, natPort: 33070},
	}
	any := []ct{
		{proto: u8proto.UDP, src: "10.42.0.40", dst: "10.42.0.12", sport: 51234, dport: 53, entry: udp},
		{proto: u8proto.UDP, flags: tuple.TUPLE_F_SERVICE, src: "10.42.0.40", dst: "10.43.0.10", sport: 51234, dport: 53, entry: udp, revnat: 2, backendID: 3},
		{proto: u8proto.ICMP, src: "10.42.0.40", dst: "10.42.0.32", sport: 0, dport: 0x3, entry: udp},
		{proto: u8proto.ICMP, flags: tuple.TUPLE_F_RELATED, src: "10.42.0.40", dst: "10.42.0.32", sport: 0, dport: 0, entry: udp},
		{proto: u8proto.UDP, flags: tuple.TUPLE_F_IN | tuple.TUPLE_F_RELATED, src: "10.42.0.12", dst: "10.42.0.40", sport: 53, dport: 51234, entry: ctmap.CtEntry{Packets: 1, Bytes: 90, Lifetime: 16040, Flags: 0x0800 | ctmap.ProxyRedirect}},
	}
	var out strings.Builder
	// bpf_ct_list.go: fmt.Println(out) per map, so every map's dump is
	// followed by an empty line, even an empty map.
	for _, m := range [][]ct{tcp, any} {
		for _, c := range m {
			out.WriteString(ct4(c, timeDiff))
		}
		out.WriteString("\n")
	}
	v6 := []ct{
		{proto: u8proto.TCP, src: "fd00:10:244::40", dst: "fd00:10:244::32", sport: 40404, dport: 8080, entry: est},
		{proto: u8proto.ICMPv6, src: "fd00:10:244::40", dst: "fd00:10:244::1", sport: 0, dport: 0x80, entry: udp},
	}
	if !timeDiff {
		for _, c := range v6[:1] {
			out.WriteString(ct6(c, false))
		}
		out.WriteString("\n")
		for _, c := range v6[1:] {
			out.WriteString(ct6(c, false))
		}
		out.WriteString("\n")
	}
	return out.String()
}

// ---------------------------------------------------------------- endpoints

func holderEndpoint() *models.Endpoint {
	state := models.EndpointStateReady
	return &models.Endpoint{
		ID: 1234,
		Spec: &models.EndpointConfigurationSpec{
			LabelConfiguration: &models.LabelConfigurationSpec{User: []string{}},
			Options:            models.ConfigurationMap{"Conntrack": "Enabled", "ConntrackAccounting": "Disabled", "Debug": "Disabled", "PolicyAuditMode": "Disabled", "PolicyVerdictNotification": "Enabled", "TraceNotification": "Enabled"},
		},
		Status: &models.EndpointStatus{
			Controllers: models.ControllerStatuses{{Name: "resolve-identity-1234", Status: &models.ControllerStatusStatus{SuccessCount: 1}, UUID: "e8a1c2a0-5f1d-4c1f-9a5e-0a9f3c1b2d3e",
				Configuration: &models.ControllerStatusConfiguration{ErrorRetryBase: 0, Interval: 0}}},
			ExternalIdentifiers: &models.EndpointIdentifiers{CniAttachmentID: "6f0e2f0b0c1d:eth0", ContainerID: "6f0e2f0b0c1d9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a0b9c8d7e6f5a4b",
				ContainerName: "holder", K8sNamespace: "cca-dp", K8sPodName: "holder", PodName: "cca-dp/holder"},
			Health:   &models.EndpointHealth{Bpf: "OK", Connected: true, OverallHealth: "OK", Policy: "OK"},
			Identity: &models.Identity{ID: 30125, Labels: []string{"k8s:app=holder", "k8s:io.cilium.k8s.namespace.labels.kubernetes.io/metadata.name=cca-dp", "k8s:io.cilium.k8s.policy.cluster=default", "k8s:io.cilium.k8s.policy.serviceaccount=default", "k8s:io.kubernetes.pod.namespace=cca-dp"}, LabelsSHA256: "8f0d1c2b3a4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8"},
			Labels: &models.LabelConfigurationStatus{
				Derived:          []string{"k8s:io.kubernetes.pod.namespace=cca-dp"},
				Realized:         &models.LabelConfigurationSpec{User: []string{}},
				SecurityRelevant: []string{"k8s:app=holder", "k8s:io.cilium.k8s.namespace.labels.kubernetes.io/metadata.name=cca-dp", "k8s:io.cilium.k8s.policy.cluster=default", "k8s:io.cilium.k8s.policy.serviceaccount=default", "k8s:io.kubernetes.pod.namespace=cca-dp"},
			},
			Log:        []*models.EndpointStatusChange{{Code: "OK", Message: "Successfully regenerated endpoint program (Reason: policy rules added)", State: "ready", Timestamp: "2026-09-20T08:15:02Z"}},
			NamedPorts: models.NamedPorts{},
			Networking: &models.EndpointNetworking{
				Addressing:             []*models.AddressPair{{IPv4: "10.42.0.40", IPv4PoolName: "default"}},
				ContainerInterfaceName: "eth0",
				HostAddressing:         &models.NodeAddressing{IPv4: &models.NodeAddressingElement{Enabled: true, IP: "10.42.0.1", AllocRange: "10.42.0.0/24", AddressType: "InternalIP"}, IPv6: &models.NodeAddressingElement{}},
				HostMac:                "5a:3c:8e:21:9b:44",
				InterfaceIndex:         26,
				InterfaceName:          "lxc3a6f7d4e8c73",
				Mac:                    "ae:41:0f:7c:2d:90",
			},
			Policy: &models.EndpointPolicyStatus{
				ProxyStatistics: []*models.ProxyStatistics{},
				Realized:        &models.EndpointPolicy{AllowedEgressIdentities: []int64{0}, AllowedIngressIdentities: []int64{0}, Build: 3, PolicyEnabled: "none", PolicyRevision: 3, ID: 30125},
				Spec:            &models.EndpointPolicy{AllowedEgressIdentities: []int64{0}, AllowedIngressIdentities: []int64{0}, Build: 3, PolicyEnabled: "none", PolicyRevision: 3, ID: 30125},
			},
			Realized: &models.EndpointConfigurationSpec{LabelConfiguration: &models.LabelConfigurationSpec{User: []string{}}},
			State:    &state,
		},
	}
}

func endpointJSON(eps []*models.Endpoint) string {
	b, err := json.MarshalIndent(eps, "", "  ")
	if err != nil {
		log.Fatal(err)
	}
	return string(b) + "\n"
}

// endpointList repeats cilium-dbg/cmd/endpoint_list.go printEndpointList.
func endpointList() string {
	type ep struct {
		id       int64
		in, out  string
		identity string
		labels   []string
		v6, v4   string
		state    string
	}
	eps := []ep{
		{105, "Disabled", "Disabled", "1", []string{"k8s:node-role.kubernetes.io/control-plane=true", "k8s:node.kubernetes.io/instance-type=k3s", "reserved:host"}, "", "", "ready"},
		{1234, "Disabled", "Disabled", "30125", []string{"k8s:app=holder", "k8s:io.cilium.k8s.policy.cluster=default", "k8s:io.kubernetes.pod.namespace=cca-dp"}, "", "10.42.0.40", "ready"},
		{2011, "Enabled", "Disabled", "41807", []string{"k8s:app=web", "k8s:io.kubernetes.pod.namespace=cca-dp"}, "", "10.42.0.31", "ready"},
		{3978, "Disabled", "Disabled", "<no label id>", []string{"no labels"}, "", "10.42.0.99", "waiting-for-identity"},
	}
	var buf bytes.Buffer
	w := tabwriter.NewWriter(&buf, 5, 0, 3, ' ', 0)
	fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", "ENDPOINT", "POLICY (ingress)", "POLICY (egress)", "IDENTITY", "LABELS (source:key[=value])", "IPv6", "IPv4", "STATUS")
	fmt.Fprintf(w, "\t%s\t%s\t\t\t\t\t\n", "ENFORCEMENT", "ENFORCEMENT")
	for _, e := range eps {
		for i, l := range e.labels {
			if i == 0 {
				fmt.Fprintf(w, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", e.id, e.in, e.out, e.identity, l, e.v6, e.v4, e.state)
			} else {
				fmt.Fprintf(w, "\t\t\t\t%s\t\t\t\t\n", l)
			}
		}
	}
	w.Flush()
	return buf.String()
}

// ---------------------------------------------------------------- map list

// mapList repeats cilium-dbg/cmd/map_list.go printMapList.
func mapList() string {
	type m struct {
		name    string
		entries int
		errors  int
		cache   bool
	}
	list := []m{
		{"cilium_policy_v3_01234", 4, 0, true},
		{"cilium_policy_v3_02011", 5, 0, true},
		{"cilium_policy_v3_00105", 2, 0, true},
		{"cilium_lb4_services_v2", 0, 0, false},
		{"cilium_lb4_backends_v3", 0, 0, false},
		{"cilium_lb4_reverse_nat", 0, 0, false},
		{"cilium_ct4_global", 0, 0, false},
		{"cilium_ct_any4_global", 0, 0, false},
		{"cilium_ipcache_v2", 31, 1, true},
		{"cilium_runtime_config", 0, 0, false},
	}
	var buf bytes.Buffer
	w := tabwriter.NewWriter(&buf, 5, 0, 3, ' ', 0)
	fmt.Fprintf(w, "Name\tNum entries\tNum errors\tCache enabled\n")
	for _, e := range list {
		entries := "unknown"
		if e.cache {
			entries = strconv.Itoa(e.entries)
		}
		fmt.Fprintf(w, "%s\t%s\t%d\t%t\n", e.name, entries, e.errors, e.cache)
	}
	w.Flush()
	return buf.String()
}

// ---------------------------------------------------------------- config -a

// configAll builds the agent's /config answer the way
// daemon/restapi/config.go does (every exported field of option.Config, by
// reflection), sends it through JSON as the REST API does, and prints it the
// way cilium-dbg/cmd/config.go dumpReadOnlyConfigs/dumpReadWriteConfigs do.
func configAll() string {
	option.Config.CreationTime = time.Date(2026, 9, 20, 8, 0, 0, 0, time.UTC)
	option.Config.ServiceNoBackendResponse = "reject"
	option.Config.IPAM = "kubernetes"
	option.Config.RoutingMode = "native"
	option.Config.EnableIPv4 = true
	option.Config.IPv4NativeRoutingCIDR = nil
	for _, k := range []string{option.DropNotify, option.TraceNotify, option.PolicyVerdictNotify, option.SourceIPVerification} {
		option.Config.Opts.SetBool(k, true)
	}
	for _, k := range []string{option.Debug, option.DebugLB, option.DebugPolicy, option.DebugTagged, option.PolicyAuditMode, option.PolicyTracing} {
		option.Config.Opts.SetBool(k, false)
	}
	option.Config.Opts.SetValidated(option.MonitorAggregation, option.MonitorAggregationLevelMedium)
	m := map[string]any{}
	e := reflect.ValueOf(option.Config).Elem()
	for i := range e.NumField() {
		f := e.Type().Field(i)
		if e.Field(i).Kind() != reflect.Func && f.IsExported() && f.Name != "Opts" {
			m[f.Name] = e.Field(i).Interface()
		}
	}
	m["Devices"] = []string{"eth0"}
	raw, err := json.Marshal(m)
	if err != nil {
		log.Fatal(err)
	}
	var decoded map[string]any
	if err := json.Unmarshal(raw, &decoded); err != nil {
		log.Fatal(err)
	}

	var out strings.Builder
	pr := func(format string, a ...any) { fmt.Fprintf(&out, format, a...) }
	pr("#### Read-only configurations ####\n")
	for _, k := range slices.Sorted(maps.Keys(decoded)) {
		v := decoded[k]
		if sub, ok := v.(map[string]any); ok {
			pr("%s\n", k)
			ms := map[string]string{}
			for sk, sv := range sub {
				ms[sk] = fmt.Sprintf("%v", sv)
			}
			dumpConfig(&out, ms, true)
			continue
		}
		pr("%-34s: %v\n", k, v)
	}
	pr("%-34s: %s\n", "k8s-configuration", "")
	dumpConfig(&out, map[string]string{}, false)
	pr("##### Read-write configurations #####\n")
	mutable := map[string]string{}
	for k, v := range *option.Config.Opts.GetMutableModel() {
		mutable[k] = v
	}
	dumpConfig(&out, mutable, false)
	pr("%-34s: %d\n", "MonitorNumPages", 64)
	pr("%-34s: %s\n", "PolicyEnforcement", "default")
	return out.String()
}

// dumpConfig repeats cilium-dbg/cmd/helpers.go dumpConfig.
func dumpConfig(w io.Writer, opts map[string]string, indented bool) {
	keys := make([]string, 0, len(opts))
	for k := range opts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		value := opts[k]
		format := "%-34s: %s\n"
		if indented {
			format = "\t%-26s: %s\n"
		}
		if enabled, err := option.NormalizeBool(value); err != nil {
			fmt.Fprintf(w, format, k, value)
		} else if enabled == option.OptionDisabled {
			fmt.Fprintf(w, format, k, "Disabled")
		} else {
			fmt.Fprintf(w, format, k, "Enabled")
		}
	}
}
