// Command gen115 writes the Cilium v1.15 variants of the synthetic test
// inputs of package parse from Cilium v1.15.19's printing code (see ../gen
// for v1.20). Nothing here is a capture.
//
//	go run . -out ..
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"math/rand"
	"net"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/cilium/cilium/api/v1/models"
	"github.com/cilium/cilium/pkg/byteorder"
	pkg "github.com/cilium/cilium/pkg/client"
	"github.com/cilium/cilium/pkg/loadbalancer"
	"github.com/cilium/cilium/pkg/maps/ctmap"
	"github.com/cilium/cilium/pkg/maps/lbmap"
	"github.com/cilium/cilium/pkg/tuple"
	"github.com/cilium/cilium/pkg/types"
	"github.com/cilium/cilium/pkg/u8proto"
)

const header = "# synthetic: built from Cilium v1.15.19 source by parse/testdata/synthetic/gen115 (NOT a capture)\n"

var outDir = flag.String("out", "..", "directory that receives <kind>/<name>.txt")

func main() {
	flag.Parse()
	write("cilium-status", "v1.15-verbose", "cilium-dbg status --verbose", status())
	write("cilium-bpf-lb-list", "v1.15", "cilium-dbg bpf lb list", lbList())
	write("cilium-bpf-ct-list", "v1.15", "cilium-dbg bpf ct list global", ctList())
	write("cilium-service-list", "v1.15-table", "cilium-dbg service list", serviceTable())
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

func status() string {
	sr := &models.StatusResponse{
		Kvstore:    &models.Status{State: "Ok", Msg: "Disabled"},
		Kubernetes: &models.K8sStatus{State: "Ok", Msg: "1.29 (v1.29.6+k3s2) [linux/amd64]", K8sAPIVersions: []string{"cilium/v2::CiliumNode", "core/v1::Pods"}},
		KubeProxyReplacement: &models.KubeProxyReplacement{
			Mode:    "True",
			Devices: []string{"eth0"},
			DeviceList: []*models.KubeProxyReplacementDeviceListItems0{
				{Name: "eth0", IP: []string{"", "", "", "10.0.2.15", "10.0.2.16", "fe80::1"}},
			},
			DirectRoutingDevice: "eth0",
			Features: &models.KubeProxyReplacementFeatures{
				ExternalIPs:         &models.KubeProxyReplacementFeaturesExternalIPs{Enabled: true},
				GracefulTermination: &models.KubeProxyReplacementFeaturesGracefulTermination{Enabled: true},
				HostPort:            &models.KubeProxyReplacementFeaturesHostPort{Enabled: true},
				Nat46X64:            &models.KubeProxyReplacementFeaturesNat46X64{},
				NodePort: &models.KubeProxyReplacementFeaturesNodePort{Enabled: true, Mode: "SNAT", Algorithm: "Random",
					Acceleration: "Disabled", PortMin: 30000, PortMax: 32767},
				SessionAffinity: &models.KubeProxyReplacementFeaturesSessionAffinity{Enabled: true},
				SocketLB:        &models.KubeProxyReplacementFeaturesSocketLB{Enabled: true},
				SocketLBTracing: &models.KubeProxyReplacementFeaturesSocketLBTracing{Enabled: true},
			},
		},
		HostFirewall:  &models.HostFirewall{Mode: "Disabled"},
		CniChaining:   &models.CNIChainingStatus{Mode: "none"},
		Cilium:        &models.Status{State: "Ok", Msg: "1.15.19 (v1.15.19-8d3a1e2f)"},
		NodeMonitor:   &models.MonitorStatus{Cpus: 2, Npages: 64, Pagesize: 4096},
		Ipam:          &models.IPAMStatus{Status: "3/254 allocated from 10.42.0.0/24,", Allocations: models.AllocationMap{"10.42.0.1": "router"}},
		HostRouting:   &models.HostRouting{Mode: "Legacy"},
		Masquerading:  &models.Masquerading{Enabled: true, Mode: "BPF", EnabledProtocols: &models.MasqueradingEnabledProtocols{IPV4: true}, SnatExclusionCidrV4: "10.42.0.0/16"},
		Controllers:   models.ControllerStatuses{{Name: "sync-lb-maps-with-k8s-services", Status: &models.ControllerStatusStatus{SuccessCount: 1}}},
		IdentityRange: &models.IdentityRange{MinIdentity: 256, MaxIdentity: 65535},
		Hubble:        &models.HubbleStatus{State: "Ok", Msg: "", Observer: &models.HubbleStatusObserver{CurrentFlows: 4095, MaxFlows: 4095, SeenFlows: 12345, Uptime: 0}},
		Encryption:    &models.EncryptionStatus{Mode: "Disabled"},
	}
	var buf bytes.Buffer
	w := tabwriter.NewWriter(&buf, 2, 0, 3, ' ', 0)
	pkg.FormatStatusResponse(w, sr, pkg.StatusAllDetails)
	fmt.Fprint(w, "Cluster health:\tProbe disabled\n")
	w.Flush()
	return buf.String()
}

func lbList() string {
	type row struct{ k, v string }
	var rows []row
	add := func(ip string, port uint16, id uint16, flags loadbalancer.ServiceFlags, bes []string) {
		k := lbmap.NewService4Key(net.ParseIP(ip), port, u8proto.ANY, 0, 0).ToNetwork()
		rows = append(rows, row{k.String(), fmt.Sprintf("%s:%d (%d) (%d) [%s] %s", "0.0.0.0", 0, id, 0, flags, "")})
		for i, b := range bes {
			k := lbmap.NewService4Key(net.ParseIP(ip), port, u8proto.ANY, 0, uint16(i+1)).ToNetwork()
			host, p, _ := net.SplitHostPort(b)
			rows = append(rows, row{k.String(), fmt.Sprintf("%s:%s (%d) (%d)", host, p, id, i+1)})
		}
	}
	cip := loadbalancer.NewSvcFlag(&loadbalancer.SvcFlagParam{SvcType: loadbalancer.SVCTypeClusterIP})
	add("10.43.0.10", 53, 2, cip, []string{"10.42.0.12:53"})
	add("10.43.77.5", 80, 7, cip, []string{"10.42.0.31:8080", "10.42.0.32:8080"})
	add("10.43.7.7", 80, 11, cip, nil)
	np := loadbalancer.NewSvcFlag(&loadbalancer.SvcFlagParam{SvcType: loadbalancer.SVCTypeNodePort})
	add("0.0.0.0", 30780, 10, np, []string{"10.42.0.31:8080"})
	rnd := rand.New(rand.NewSource(5))
	rnd.Shuffle(len(rows), func(i, j int) { rows[i], rows[j] = rows[j], rows[i] })
	var buf bytes.Buffer
	w := tabwriter.NewWriter(&buf, 5, 0, 3, ' ', 0)
	fmt.Fprintf(w, "%s\t%s\n", "SERVICE ADDRESS", "BACKEND ADDRESS (REVNAT_ID) (SLOT)")
	for _, r := range rows {
		fmt.Fprintf(w, "%s\t%s\t\n", r.k, r.v)
	}
	w.Flush()
	return buf.String()
}

func ctList() string {
	line := func(flags uint8, src, dst string, sport, dport uint16, e ctmap.CtEntry, revnat uint16) string {
		var k ctmap.CtKey4Global
		s, d := types.IPv4{}, types.IPv4{}
		copy(s[:], net.ParseIP(src).To4())
		copy(d[:], net.ParseIP(dst).To4())
		if flags&tuple.TUPLE_F_SERVICE != 0 {
			k.TupleKey4Global = tuple.TupleKey4Global{TupleKey4: tuple.TupleKey4{SourceAddr: s, DestAddr: d, DestPort: sport, SourcePort: dport, NextHeader: u8proto.TCP, Flags: flags}}
		} else {
			k.TupleKey4Global = tuple.TupleKey4Global{TupleKey4: tuple.TupleKey4{DestAddr: s, SourceAddr: d, SourcePort: sport, DestPort: dport, NextHeader: u8proto.TCP, Flags: flags}}
		}
		var sb strings.Builder
		k.Dump(&sb, true)
		e.RevNAT = byteorder.HostToNetwork16(revnat)
		sb.WriteString(e.StringWithTimeDiff(nil))
		return sb.String()
	}
	e := ctmap.CtEntry{RxPackets: 6, RxBytes: 811, TxPackets: 7, TxBytes: 922, Lifetime: 21850, Flags: ctmap.SeenNonSyn,
		RxFlagsSeen: 0x1a, TxFlagsSeen: 0x1a, SourceSecurityID: 30125, LastRxReport: 300, LastTxReport: 300, IfIndex: 0}
	svc := e
	svc.Flags = ctmap.RxClosing | ctmap.TxClosing | ctmap.SeenNonSyn | ctmap.DSR
	var out strings.Builder
	out.WriteString(line(0, "10.42.0.40", "10.42.0.32", 40404, 8080, e, 0))
	out.WriteString(line(tuple.TUPLE_F_IN, "10.42.0.40", "10.42.0.32", 40404, 8080, e, 0))
	out.WriteString(line(tuple.TUPLE_F_SERVICE, "10.42.0.40", "10.43.77.5", 40404, 80, svc, 7))
	out.WriteString("\n\n")
	return out.String()
}

func serviceTable() string {
	type s struct {
		id  int64
		fe  string
		typ string
		bes []string
	}
	list := []s{
		{7, "10.43.77.5:80", "ClusterIP", []string{"10.42.0.31:8080", "10.42.0.32:8080"}},
		{10, "0.0.0.0:30780", "NodePort", []string{"10.42.0.31:8080"}},
		{11, "10.43.7.7:80", "ClusterIP", nil},
	}
	var buf bytes.Buffer
	w := tabwriter.NewWriter(&buf, 5, 0, 3, ' ', 0)
	fmt.Fprintln(w, "ID\tFrontend\tService Type\tBackend\t")
	for _, x := range list {
		host, port, _ := net.SplitHostPort(x.fe)
		var p uint16
		fmt.Sscan(port, &p)
		m := &models.FrontendAddress{IP: host, Port: p, Protocol: "TCP", Scope: "external"}
		feA, err := loadbalancer.NewL3n4AddrFromModel(m)
		if err != nil {
			log.Fatal(err)
		}
		var bes []string
		for i, b := range x.bes {
			h, bp, _ := net.SplitHostPort(b)
			var q uint16
			fmt.Sscan(bp, &q)
			ip := h
			beA, err := loadbalancer.NewL3n4AddrFromBackendModel(&models.BackendAddress{IP: &ip, Port: q})
			if err != nil {
				log.Fatal(err)
			}
			bes = append(bes, fmt.Sprintf("%d => %s (%s)", i+1, beA.String(), "active"))
		}
		if len(bes) == 0 {
			fmt.Fprintln(w, fmt.Sprintf("%d\t%s\t%s\t\t", x.id, feA.String(), x.typ))
			continue
		}
		fmt.Fprintln(w, fmt.Sprintf("%d\t%s\t%s\t%s\t", x.id, feA.String(), x.typ, bes[0]))
		for _, b := range bes[1:] {
			fmt.Fprintln(w, fmt.Sprintf("\t\t\t%s\t", b))
		}
	}
	w.Flush()
	return buf.String()
}

var _ = json.Marshal
