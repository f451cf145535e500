package parse

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestRealCapturesSources reads what the capture's hubble and tcpdump
// sources read on the live tunnel profile (testdata/real/sources, made by
// testbed/examples/capture-sources.sh: api on node 2 behind a policy
// that admits only the frontend on 8080/TCP, frontend and intruder on
// node 1, each asking api once) and checks the captures against each
// other and against the pods and endpoints of the same moment: Hubble in
// node 2's agent saw the intruder's SYNs dropped by policy and the
// frontend's let in, each with the identities kubectl shows; tcpdump on
// node 1 saw the same SYNs leave through cilium_vxlan, inside VXLAN
// packets to node 2 whose VNI is the sender's identity, and only the
// frontend answered.
func TestRealCapturesSources(t *testing.T) {
	const dir = "real/sources/"
	ip, ident := map[string]string{}, map[string]int{}
	for _, line := range strings.Split(input(t, dir+"kubectl_get_pods_wide.txt"), "\n")[1:] {
		if f := strings.Fields(line); len(f) > 5 {
			ip[f[0]] = f[5]
		}
	}
	for _, line := range strings.Split(input(t, dir+"kubectl_get_cep.txt"), "\n")[1:] {
		if f := strings.Fields(line); len(f) > 1 {
			ident[f[0]], _ = strconv.Atoi(f[1])
		}
	}
	if len(ip) != 3 || len(ident) != 3 {
		t.Fatalf("pods %v, identities %v", ip, ident)
	}
	str := func(p *string) string {
		if p == nil {
			return ""
		}
		return *p
	}
	num := func(p *int) int {
		if p == nil {
			return -1
		}
		return *p
	}

	// Hubble, drops only: the intruder's SYNs to api:8080, as a policy
	// verdict (event 5) and a drop (event 1, sub type 133: policy denied)
	drops, err := ParseHubbleObserve(input(t, dir+"hubble_observe_follow_o_jsonpb_verdict_DROPPED.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if len(drops.Flows) == 0 || len(drops.FlowsTo(ip["api"], 8080)) != len(drops.Flows) {
		t.Fatalf("%d drops, %d of them to api:8080", len(drops.Flows), len(drops.FlowsTo(ip["api"], 8080)))
	}
	kinds := map[int]bool{}
	for _, f := range drops.Flows {
		kinds[num(f.EventType)] = true
		if str(f.SrcIP) != ip["intruder"] || num(f.SrcIdentity) != ident["intruder"] || num(f.DstIdentity) != ident["api"] ||
			str(f.SrcPod) != "intruder" || str(f.DstPod) != "api" || str(f.DropReason) != "POLICY_DENIED" ||
			str(f.TrafficDirection) != "INGRESS" || str(f.TCPFlags) != "SYN" || str(f.NodeName) != "labrun-node2" || f.IsReply != nil {
			t.Errorf("drop %+v", f)
		}
		if num(f.EventType) == 1 && num(f.EventSubType) != 133 {
			t.Errorf("a drop event's sub type %d, want 133 (DROP_POLICY)", num(f.EventSubType))
		}
	}
	eq(t, "a policy verdict and a drop event", kinds, map[int]bool{1: true, 5: true})
	eq(t, "the ring buffer's loss read", drops.Lost, 1)

	// Hubble, the whole namespace: the frontend's request let in by the
	// policy, api's answer a reply; nothing of the frontend dropped
	nsFlows, err := ParseHubbleObserve(input(t, dir+"hubble_observe_follow_o_jsonpb_namespace.txt"))
	if err != nil {
		t.Fatal(err)
	}
	admitted, answered := false, false
	for _, f := range nsFlows.FlowsFrom(ip["frontend"]) {
		if str(f.Verdict) != "FORWARDED" {
			t.Errorf("a flow of the frontend %s", str(f.Verdict))
		}
		admitted = admitted || num(f.EventType) == 5 && num(f.DstPort) == 8080 && num(f.SrcIdentity) == ident["frontend"]
	}
	for _, f := range nsFlows.FlowsTo(ip["frontend"], 0) {
		answered = answered || f.IsReply != nil && *f.IsReply && num(f.SrcPort) == 8080 && str(f.DstPod) == "frontend"
	}
	if !admitted || !answered {
		t.Errorf("the frontend admitted %v, answered %v", admitted, answered)
	}

	// tcpdump on node 1's eth0: VXLAN to node 2's 8472, the pods' SYNs
	// inside, the VNI the sender's identity; only the frontend answered
	wire, err := ParseTcpdump(input(t, dir+"node1_tcpdump_l_n_i_eth0_udp_8472.txt"))
	if err != nil {
		t.Fatal(err)
	}
	vni := regexp.MustCompile(`instance (\d+)$`)
	synFrom := map[string]int{}
	answeredTo := map[string]bool{}
	for _, p := range wire.Packets {
		if num(p.DstPort) != 8472 || str(p.Protocol) != "udp" || len(p.Inner) != 1 {
			t.Fatalf("packet %+v", p)
		}
		in := p.Inner[0]
		sm := vni.FindStringSubmatch(p.Info)
		if sm == nil {
			t.Fatalf("no VNI in %q", p.Info)
		}
		for name := range ip {
			if str(in.SrcIP) == ip[name] && sm[1] != strconv.Itoa(ident[name]) {
				t.Errorf("%s's packet in VNI %s, its identity is %d", name, sm[1], ident[name])
			}
		}
		if str(in.TCPFlags) == "S" && num(in.DstPort) == 8080 {
			synFrom[str(in.SrcIP)]++
		}
		if str(in.TCPFlags) == "S." && str(in.SrcIP) == ip["api"] {
			answeredTo[str(in.DstIP)] = true
		}
	}
	if synFrom[ip["intruder"]] < 2 || synFrom[ip["frontend"]] != 1 || answeredTo[ip["intruder"]] || !answeredTo[ip["frontend"]] {
		t.Errorf("SYNs by source %v (the intruder's retried), answered %v", synFrom, answeredTo)
	}
	eq(t, "api's packets inside the tunnel", len(wire.PacketsFrom(ip["api"])) > 0, true)

	// tcpdump on every interface of node 1: each SYN in from the pod's
	// lxc device and out through cilium_vxlan
	everywhere, err := ParseTcpdump(input(t, dir+"node1_tcpdump_l_n_i_any_host_api.txt"))
	if err != nil {
		t.Fatal(err)
	}
	path := map[string][]string{}
	for _, p := range everywhere.PacketsTo(ip["api"], 8080) {
		if str(p.TCPFlags) == "S" {
			path[str(p.SrcIP)] = append(path[str(p.SrcIP)], str(p.Interface)[:3]+" "+str(p.Direction))
		}
	}
	for _, name := range []string{"intruder", "frontend"} {
		if got := strings.Join(path[ip[name]], ", "); !strings.HasPrefix(got, "lxc In, cil Out") {
			t.Errorf("%s's SYN crossed %s", name, got)
		}
	}

	// tcpdump on cilium_vxlan: the pods' own packets, one interface
	vx, err := ParseTcpdump(input(t, dir+"node1_tcpdump_l_n_i_cilium_vxlan.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range vx.Packets {
		if p.Interface != nil || len(p.Inner) != 0 || str(p.Protocol) != "tcp" {
			t.Errorf("packet on cilium_vxlan %+v", p)
		}
	}
	eq(t, "api answered the intruder on cilium_vxlan", len(vx.PacketsTo(ip["intruder"], 0)), 0)
	eq(t, "api answered the frontend on cilium_vxlan", len(vx.PacketsTo(ip["frontend"], 0)) > 0, true)
}
