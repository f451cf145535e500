package parse

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
)

// TestRealCapturesLab reads the captures of the live Cilium 1.20.1 testbed
// (testdata/real, made by testbed/examples/capture.sh for the cca-datapath
// scenario) the way the lab's playbook does, and checks that the parsed
// values agree with each other across commands and with what
// shared/cilium/SEMANTICS.md predicts.
func TestRealCapturesLab(t *testing.T) {
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	status, err := ParseStatus(input(t, "real/cilium-dbg_status_verbose.txt"))
	must(err)
	plain, err := ParseStatus(input(t, "real/cilium-dbg_status.txt"))
	must(err)
	svcs, err := ParseServiceList(input(t, "real/cilium-dbg_service_list_json.txt"))
	must(err)
	table, err := ParseServiceList(input(t, "real/cilium-dbg_service_list.txt"))
	must(err)
	lb, err := ParseLBList(input(t, "real/cilium-dbg_bpf_lb_list.txt"))
	must(err)
	ct, err := ParseCTList(input(t, "real/cilium-dbg_bpf_ct_list_global.txt"))
	must(err)
	ep, err := ParseEndpointGet(input(t, "real/cilium-dbg_endpoint_get_holder_json.txt"))
	must(err)
	eps, err := ParseEndpointList(input(t, "real/cilium-dbg_endpoint_list.txt"))
	must(err)
	maps, err := ParseMapList(input(t, "real/cilium-dbg_map_list.txt"))
	must(err)
	cfg, err := ParseConfig(input(t, "real/cilium-dbg_config_a.txt"))
	must(err)
	net, err := ParseBpftoolNetShow(input(t, "real/node_bpftool_net_show_dev_holder.txt"))
	must(err)
	netAll, err := ParseBpftoolNetShow(input(t, "real/node_bpftool_net_show.txt"))
	must(err)
	tc, err := ParseTCFilterShow(input(t, "real/node_tc_filter_show_dev_holder_ingress.txt"))
	must(err)
	ipt, err := ParseIPTablesSave(input(t, "real/node_iptables-save.txt"))
	must(err)
	listen, err := ParseSS(input(t, "real/node_ss_Htln_sport_30780.txt"))
	must(err)
	holderNet, err := ParseNetstat(input(t, "real/pod_holder_netstat_tn.txt"))
	must(err)
	backendNet, err := ParseNetstat(input(t, "real/pod_web_backend_netstat_tn.txt"))
	must(err)
	ghostCurl, err := ParseCurl(input(t, "real/pod_probe_curl_ghost.txt"))
	must(err)
	npCurl, err := ParseCurl(input(t, "real/node_curl_nodeport_30780.txt"))
	must(err)

	// (1) iptables and KPR.
	eq(t, "kube_proxy_replacement", plain.KubeProxyReplacement, "True")
	eq(t, "verbose agrees", status.KubeProxyReplacement, "True")
	web := svcs.Named("cca-dp", "web")
	if len(web) != 1 {
		t.Fatalf("web frontends: %d", len(web))
	}
	eq(t, "kube_svc_lines", ipt.CountContaining("KUBE-SVC"), 0)
	eq(t, "cluster_ip_lines", ipt.CountContaining(web[0].Frontend.IP), 0)
	if n := ipt.CountContaining("CILIUM"); n < 20 {
		t.Errorf("cilium_lines = %d, want >= 20 (10 chains + 10 feeders)", n)
	}
	eq(t, "Cilium's ten chains", len(ipt.Chains("CILIUM_")), 10)

	// (2)/(3) service id, frontend, backends in the service list and the
	// BPF map agree; N backends give N+1 slots.
	fe := web[0].Frontend.String()
	eq(t, "table has the same id", table.Frontend(fe).ID, web[0].ID)
	svcBackends := web[0].BackendAddrs()
	sort.Strings(svcBackends)
	lbBackends := lb.Backends(fe)
	sort.Strings(lbBackends)
	eq(t, "backends: service list == bpf lb list", lbBackends, svcBackends)
	eq(t, "scaled to 4", len(lbBackends), 4)
	eq(t, "slot 0 present", lb.Frontend(fe).HasSlot0, true)

	// (4) socket LB: OUT holder:40404 -> backend, no SVC entry; netstat
	// in holder sees the backend, the backend sees holder.
	holderIP := *ep[0].Networking.IPv4
	client := Addr{IP: holderIP, Port: 40404}.String()
	out := ct.Find("OUT", client)
	if len(out) != 1 {
		t.Fatalf("OUT entries for %s: %d", client, len(out))
	}
	backend := out[0].Dst.String()
	eq(t, "svc_entries", ct.Count("SVC", ":40404"), 0)
	eq(t, "backend is one of web's", slices.Contains(svcBackends, backend), true)
	eq(t, "socket_peer (holder netstat)", holderNet.Match(client)[0].Foreign.Unmap().String(), backend)
	eq(t, "backend sees holder:40404 (no SNAT)", len(backendNet.Match(client)), 1)
	eq(t, "socket_lb_coverage", deref(status.KubeProxyReplacementDetails.SocketLBCoverage), "Full")

	// (5) endpoint -> device -> tcx program; no tc filter; policy map.
	dev := ep[0].Networking.InterfaceName
	att := net.Find(dev, "tcx/ingress")
	eq(t, "attach", att.Attach, "tcx/ingress")
	eq(t, "program", att.Program, ptr("cil_from_container"))
	eq(t, "ifindex agrees", att.Ifindex, &ep[0].Networking.InterfaceIndex)
	eq(t, "ingress only (no endpoint routes)", len(net.Device(dev)), 1)
	eq(t, "full listing agrees", netAll.Find(dev, "tcx/ingress").ProgID, att.ProgID)
	eq(t, "tc_filter_lines", tc.Lines, 0)
	eq(t, "policy_map", maps.PolicyMap(ep[0].ID), fmt.Sprintf("cilium_policy_v3_%05d", ep[0].ID))
	eq(t, "endpoint list agrees", eps.ByIPv4(holderIP).ID, ep[0].ID)
	eq(t, "attach mode", deref(status.AttachMode), "TCX")

	// (6) NodePort: one 0.0.0.0:30780 entry, no listener, no iptables line.
	np := svcs.Frontend("0.0.0.0:30780/TCP")
	eq(t, "nodeport type", np.Type, "NodePort")
	if np.ID == nil || *np.ID == 0 {
		t.Error("no 0.0.0.0:30780 service with an ID")
	}
	eq(t, "listen_sockets", len(listen), 0)
	eq(t, "iptables_lines", ipt.CountContaining("30780"), 0)
	eq(t, "http_code", deref(npCurl.HTTPCode), 200)

	// (7) ghost: no backends anywhere, reject, curl exits 7 at once.
	ghost := svcs.Named("cca-dp", "ghost")[0]
	eq(t, "ghost backends", len(ghost.Backends), 0)
	eq(t, "ghost slots", lb.Frontend(ghost.Frontend.String()).SlotCount(), 0)
	eq(t, "no_backend_response", cfg.Get("ServiceNoBackendResponse"), "reject")
	// The lab takes curl's exit code from the exec result (here the
	// capture's "# exit:" header); curl's own error line went to stderr,
	// captured apart, and parses too when joined to stdout.
	eq(t, "curl printed no exit code on stdout", ghostCurl.HasExitCode, false)
	eq(t, "curl_exit", captureHeader(t, "real/pod_probe_curl_ghost.txt")["exit"], "7")
	merged, err := ParseCurl(input(t, "real/pod_probe_curl_ghost.txt") + input(t, "real/pod_probe_curl_ghost.txt.stderr"))
	must(err)
	eq(t, "curl_exit from stderr", deref(merged.ExitCode), 7)
	eq(t, "curl message", (*merged.ErrorMsg)[:17], "Failed to connect")
	if ghostCurl.TimeTotal == nil || *ghostCurl.TimeTotal > 1 {
		t.Errorf("ghost curl took %v s; socket LB should refuse at once", deref(ghostCurl.TimeTotal))
	}
}

// TestRealAgentAPI reads the documents the agent's API served on its Unix
// socket (captured in one go with `cilium-dbg map list -o json`, after a
// solve of cca-datapath) with the parsers of the cilium-dbg commands that
// print them, as the lab's playbook does: the two sources of the map list
// agree row for row, the endpoint document is holder's and its policy map
// is in both lists, and the status document gives what the status table
// says on this testbed.
func TestRealAgentAPI(t *testing.T) {
	fromAPI, err := ParseMapList(input(t, "real/agent_api_map.txt"))
	if err != nil {
		t.Fatal(err)
	}
	fromDbg, err := ParseMapList(input(t, "real/cilium-dbg_map_list_json.txt"))
	if err != nil {
		t.Fatal(err)
	}
	names := func(l MapList) []string {
		out := []string{}
		for _, m := range l {
			out = append(out, m.Name)
		}
		sort.Strings(out)
		return out
	}
	eq(t, "map names, API vs cilium-dbg map list -o json", names(fromAPI), names(fromDbg))
	ep, err := ParseEndpointGet(input(t, "real/agent_api_endpoint_holder.txt"))
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "endpoints in GET /v1/endpoint/ID", len(ep), 1)
	eq(t, "holder's label on the endpoint", slices.Contains(ep[0].Labels, "k8s:app=holder"), true)
	if !strings.HasPrefix(ep[0].Networking.InterfaceName, "lxc") || ep[0].Networking.InterfaceIndex <= 0 {
		t.Errorf("holder's host interface: %q index %d", ep[0].Networking.InterfaceName, ep[0].Networking.InterfaceIndex)
	}
	for _, l := range []MapList{fromAPI, fromDbg} {
		eq(t, "holder's policy map", l.PolicyMap(ep[0].ID), fmt.Sprintf("cilium_policy_v3_%05d", ep[0].ID))
	}
	st, err := ParseStatus(input(t, "real/agent_api_healthz.txt"))
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "KubeProxyReplacement", st.KubeProxyReplacement, "True")
	eq(t, "Socket LB Coverage", deref(st.KubeProxyReplacementDetails.SocketLBCoverage), "Full")
	svcs, err := ParseServiceList(input(t, "real/agent_api_service.txt"))
	if err != nil {
		t.Fatal(err)
	}
	web := 0
	for _, s := range svcs {
		if deref(s.Namespace) == "cca-dp" && deref(s.Name) == "web" && s.Type == "ClusterIP" {
			web++
			eq(t, "web's backends after the solve's scale-up", len(s.Backends), 4)
		}
	}
	eq(t, "web's ClusterIP entries", web, 1)
}
