package parse

import (
	"encoding/json"
	"strings"
	"testing"
)

// Tests on the exact lines of public output that earlier versions of these
// parsers read wrong without an error: each value a lab reads must come
// from the text, or the parse must fail naming the line and the reason.

// wantTruncated checks that err is a truncation error of kind at line.
func wantTruncated(t *testing.T, err error, kind string, line int, msg string) {
	t.Helper()
	wantError(t, err, kind, line, msg)
	var pe *Error
	if asError(err, &pe) && !pe.Truncated {
		t.Errorf("error %q is not marked Truncated", err)
	}
}

// A line cut after LastRxReport= printed no Flags, RevNAT or
// SourceSecurityID; RevNAT=0 on an OUT entry is what a lab reads as socket
// LB, so the line must be refused, not read with zeros.
func TestCTCutLineMissingFields(t *testing.T) {
	const cut = "TCP OUT 2a00:23c8:2425:b801:a91:15ff:fe2a:51c4:58786 -> fd85:ee78:d8a6:8607::1:fe5:8000 expires=26627216 Packets=0 Bytes=0 RxFlagsSeen=0x1b LastRxReport=2"
	_, err := ParseCTList(cut + "\n")
	wantError(t, err, kindCTList, 1, "incomplete entry: missing TxFlagsSeen=, LastTxReport=, Flags=, RevNAT=, SourceSecurityID=")
	// Without its newline it is the end of cut output.
	_, err = ParseCTList(cut)
	wantTruncated(t, err, kindCTList, 1, "truncated); 0 complete entries")
}

// A dump cut inside a token names the line and the complete entries before
// it instead of a generic syntax error.
func TestCTCutInsideToken(t *testing.T) {
	text := input(t, "real/cilium-dbg_bpf_ct_list_global.txt")
	full, err := ParseCTList(text)
	if err != nil {
		t.Fatal(err)
	}
	i := strings.Index(text, "RxFlagsSeen")
	lastNL := strings.LastIndexByte(text[:i], '\n')
	before := strings.Count(text[:lastNL+1], "\n")
	_, err = ParseCTList(text[:i+len("RxFla")])
	wantTruncated(t, err, kindCTList, before+1, "truncated); 0 complete entries")
	// Cut in the last line: every earlier entry is counted.
	j := strings.LastIndex(text, "RxFlagsSeen")
	_, err = ParseCTList(text[:j+len("RxFla")])
	wantTruncated(t, err, kindCTList, strings.Count(text[:j], "\n")+1, "truncated); "+itoa(len(full.Entries)-1)+" complete entries")
}

// Cilium <= 1.15 printed RxPackets/RxBytes/TxPackets/TxBytes instead of
// Packets/Bytes: packets and bytes are their sums, never a 0 nobody
// printed, and the fields of newer versions are null.
func TestCTSplitCounters(t *testing.T) {
	const line = "TCP OUT 10.0.0.1:40000 -> 10.0.0.2:80 expires=1000 RxPackets=3 RxBytes=300 RxFlagsSeen=0x1a LastRxReport=900 TxPackets=7 TxBytes=1400 TxFlagsSeen=0x1a LastTxReport=900 Flags=0x0010 [ SeenNonSyn ] RevNAT=4 SourceSecurityID=2 IfIndex=0 \n"
	l, err := ParseCTList(line)
	if err != nil {
		t.Fatal(err)
	}
	e := l.Entries[0]
	eq(t, "packets", e.Packets, int64(10))
	eq(t, "bytes", e.Bytes, int64(1700))
	b, _ := json.Marshal(e)
	for _, want := range []string{`"rxPackets":3`, `"txBytes":1400`, `"backendID":null`, `"natPort":null`, `"ifIndex":0`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("JSON %s lacks %s", b, want)
		}
	}
	_, err = ParseCTList(strings.Replace(line, "TxBytes=1400 ", "", 1))
	wantError(t, err, kindCTList, 1, "missing TxBytes=")
}

// BackendID is one JSON type whatever its size: a number, every digit
// printed (a string above 2^53 made it a number or a string by value).
func TestCTBackendIDOneType(t *testing.T) {
	for _, id := range []string{"0", "9007199254740992", "9007199254740993", "18446744073709551615"} {
		line := "TCP SVC 10.0.0.1:40000 -> 10.96.0.1:443 expires=1000 Packets=0 Bytes=0 RxFlagsSeen=0x00 LastRxReport=0 TxFlagsSeen=0x00 LastTxReport=0 Flags=0x0000 [ ] RevNAT=1 SourceSecurityID=0 BackendID=" + id + " NatPort=0 \n"
		l, err := ParseCTList(line)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(l.Entries[0])
		if !strings.Contains(string(b), `"backendID":`+id+`,`) {
			t.Errorf("BackendID=%s: JSON %s has no number %s", id, b, id)
		}
	}
}

// The v1.20 docs print a TAB after the KPR mode; values are split on
// whitespace runs, never on one space.
func TestStatusTabAfterKPRMode(t *testing.T) {
	s, err := ParseStatus("KubeProxyReplacement:   True\t[eth0 (Direct Routing), eth1]\n")
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "mode", s.KubeProxyReplacement, "True")
	eq(t, "devices", s.KubeProxyReplacementDevices, []StatusDevice{
		{Name: "eth0", IPs: []string{}, DirectRouting: true}, {Name: "eth1", IPs: []string{}}})
}

// Cilium 1.15 printed "Host Routing:" on its own line.
func TestStatusHostRouting115(t *testing.T) {
	s, err := ParseStatus("KubeProxyReplacement:    True   [eth0   10.0.2.15]\nHost Routing:            BPF\n")
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "routing host", deref(s.Routing.Host), "BPF")
}

// A cut last row of the service list is not a service without backends.
func TestServiceListCutRow(t *testing.T) {
	const header = "ID   Frontend                    Service Type   Backend\n"
	const row = "15   10.96.106.135:80/TCP        Cluster"
	_, err := ParseServiceList(header + row + "\n")
	wantError(t, err, kindServiceList, 2, `unknown service type "Cluster"`)
	_, err = ParseServiceList(header + row)
	wantTruncated(t, err, kindServiceList, 2, "truncated); 0 complete services")
}

// The service list of Cilium before 1.10 printed no backend state, and the
// examples of Cilium's docs still show it (the 1.20 kube-proxy-free guide,
// testdata/public/cilium-service-list): refused naming both, not read with
// an empty state.
func TestServiceListNoState(t *testing.T) {
	_, err := ParseServiceList("ID   Frontend            Service Type   Backend\n1    10.96.0.1:443       ClusterIP      1 => 192.168.0.10:6443\n")
	wantError(t, err, kindServiceList, 2, "the form of Cilium before 1.10, also shown in the examples of Cilium's docs")
}

// A tc filter line cut inside its name has no program: refused.
func TestTCFilterCutLine(t *testing.T) {
	const line = "filter protocol all pref 1 bpf chain 0 handle 0x1 bpf_lxc.o:[from-co"
	_, err := ParseTCFilterShow(line + "\n")
	wantError(t, err, kindTCFilter, 1, `without "id N" or "tag T"`)
	_, err = ParseTCFilterShow(line)
	wantTruncated(t, err, kindTCFilter, 1, "truncated")
}

// A bpftool link line cut after its type has no program: refused.
func TestBpftoolLinkCutLine(t *testing.T) {
	_, err := ParseBpftoolLinkShow("8: xdp  \n")
	wantError(t, err, kindBpftoolLink, 1, `without "prog N"`)
	_, err = ParseBpftoolLinkShow("7: tcx  prog 12\n8: xdp  ")
	wantTruncated(t, err, kindBpftoolLink, 2, "truncated); 1 complete links")
}

// The grouped layout of 1.15 prints the slot in the value (PR #31503).
func TestLBListGroupedSlot(t *testing.T) {
	l, err := ParseLBList(input(t, "public/cilium-bpf-lb-list/pr-31503-grouped-1.15.txt"))
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "layout", l.Layout, "grouped")
	api := l.Frontend("10.96.0.1:443")
	eq(t, "backend slot", deref(api.Backends[0].Slot), 1)
	eq(t, "backend", api.Addrs(), []string{"172.18.0.3:6443"})
	eq(t, "slot 0", api.HasSlot0, true)
	eq(t, "l7 proxy port", l.Frontend("10.96.193.7:443").HasSlot0, true)
}

// grep'd output has no header; rows that describe themselves are read.
func TestHeaderlessRows(t *testing.T) {
	lb, err := ParseLBList("10.96.0.1:443/TCP (1)      172.18.0.3:6443/TCP (1) (1)      \n10.96.0.1:443/TCP (0)      0.0.0.0:0 (1) (0) [ClusterIP, non-routable]\n")
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "lb backends", lb.Backends("10.96.0.1:443/TCP"), []string{"172.18.0.3:6443"})

	net, err := ParseBpftoolNetShow("lxc3a6f7d4e8c73(26) tcx/ingress cil_from_container prog_id 4773 link_id 29 \n")
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "net", net.Find("lxc3a6f7d4e8c73", "tcx/ingress").ProgID, 4773)
	eq(t, "net section", net.Attachments[0].Section, "tc")

	svc, err := ParseServiceList("15   10.96.106.135:80/TCP        ClusterIP      1 => 10.244.1.115:80/TCP (active)\n" +
		"                                                2 => 10.244.1.116:80/TCP (active)\n" +
		"16   10.96.55.103:80/TCP         ClusterIP (Remote)\n")
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "svc backends", svc.Frontend("10.96.106.135:80/TCP").BackendAddrs(), []string{"10.244.1.115:80", "10.244.1.116:80"})
	eq(t, "svc remote", svc[1].Remote, true)
	eq(t, "svc no backends", svc[1].Backends, []Backend{})
}

// Text that starts with a bracket is tried as text when it is not JSON,
// and an error names both attempts.
func TestJSONOrTextByTrying(t *testing.T) {
	_, err := ParseBpftoolNetShow("[lxc1(3) weird\n")
	wantError(t, err, kindBpftoolNet, 1, "neither JSON (invalid JSON")
	wantError(t, err, kindBpftoolNet, 1, ") nor text (line 1: expected a section header")
	_, err = ParseServiceList("[{\"spec\": {\"id\": 1,")
	wantTruncated(t, err, kindServiceList, 1, "neither JSON (JSON ends before its closing bracket (truncated output))")
}

// Without a section heading, config keys are in neither section.
func TestConfigWithoutHeading(t *testing.T) {
	c, err := ParseConfig("ServiceNoBackendResponse          : reject\n")
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "value", c.Get("ServiceNoBackendResponse"), "reject")
	eq(t, "not filed as read-write", len(c.ReadWrite), 0)
}

// Every "curl: (N)" line is returned, not only the last.
func TestCurlSeveralErrors(t *testing.T) {
	c, err := ParseCurl("http_code=000\ncurl: (7) Failed to connect to 10.96.0.1 port 80 after 0 ms: Couldn't connect to server\ncurl: (28) Connection timed out after 5001 milliseconds\n")
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "errors", c.Errors, []CurlError{
		{Code: 7, Message: "Failed to connect to 10.96.0.1 port 80 after 0 ms: Couldn't connect to server"},
		{Code: 28, Message: "Connection timed out after 5001 milliseconds"}})
	eq(t, "exit code of the last", deref(c.ExitCode), 28)
}

// The socket-LB hooks a lab checks, in both spellings of bpftool.
func TestCgroupTreeSocketLBHooks(t *testing.T) {
	old, err := ParseCgroupTree(input(t, "public/bpftool-cgroup-tree/gh-cilium-11724-cilium-1.7.txt"))
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "hooks", old.Hooks(), []string{"connect4", "connect6", "post_bind4", "post_bind6", "sendmsg4", "sendmsg6", "recvmsg4", "recvmsg6"})
	eq(t, "cgroup", deref(old.Hook("cgroup_inet4_connect")[0].Cgroup), "/run/cilium/cgroupv2")
	eq(t, "no name printed", old.Hook("connect4")[0].Name, (*string)(nil))
	eq(t, "no flags printed", old.Hook("connect4")[0].AttachFlags, (*string)(nil))
	// bpftool 7: libbpf names, indented rows, flags and names.
	text := "CgroupPath\nID       AttachType      AttachFlags     Name           \n/run/cilium/cgroupv2\n" +
		"    1031     cgroup_inet4_connect multi           cil_sock4_connect              \n" +
		"    1035     cgroup_inet4_getpeername multi           cil_sock4_getpeername          \n"
	now, err := ParseCgroupTree(text)
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "connect4", now.Hook("connect4"), []CgroupProg{{Cgroup: ptr("/run/cilium/cgroupv2"), ID: 1031, AttachType: "cgroup_inet4_connect", Hook: "connect4", AttachFlags: ptr("multi"), Name: ptr("cil_sock4_connect")}})
	eq(t, "getpeername4", deref(now.Hook("getpeername4")[0].Name), "cil_sock4_getpeername")
	_, err = ParseCgroupTree("/run/cilium/cgroupv2\n    1031     cgroup_inet4_conn\n")
	wantError(t, err, kindCgroupTree, 2, `unknown attach type "cgroup_inet4_conn"`)
	_, err = ParseCgroupTree("/run/cilium/cgroupv2\n    1031     cgroup_inet4_conn")
	wantTruncated(t, err, kindCgroupTree, 2, "truncated); 0 complete programs")
}

// --revnat, --backends and --frontends, in the shapes Cilium 1.20's
// printing code gives (shared/cilium FORMATS.md section 3).
func TestLBListOtherListings(t *testing.T) {
	rev, err := ParseLBList("ID   BACKEND ADDRESS (REVNAT_ID) (SLOT)\n7    10.43.77.5:80\n2    [fd00:10:96::a]:53\n")
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "revnat mode", rev.Mode, "revnat")
	eq(t, "revnat rows", rev.RevNATRows, []LBRevNATRow{{ID: 7, Address: L4Addr{IP: "10.43.77.5", Port: 80}},
		{ID: 2, Address: L4Addr{IP: "fd00:10:96::a", Port: 53}}})

	be, err := ParseLBList("ID   BACKEND ADDRESS (REVNAT_ID) (SLOT)\n12   TCP://10.42.0.17\n13   UDP://10.42.0.18[zone-a]\n")
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "backends mode", be.Mode, "backends")
	eq(t, "backend rows", be.BackendRows, []LBBackendRow{{ID: 12, Protocol: "TCP", IP: "10.42.0.17"}, {ID: 13, Protocol: "UDP", IP: "10.42.0.18", Zone: ptr("zone-a")}})

	fe, err := ParseLBList("SERVICE ADDRESS         BACKEND ID\n10.43.77.5:80/TCP (0)   0 2[0] (7) [0x0 0x10]\n10.43.77.5:80/TCP (1)   14 0[0] (7) [0x0 0x0]\n")
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "frontends mode", fe.Mode, "frontends")
	eq(t, "slot 0", fe.FrontendRows[0], LBFrontendRow{Frontend: L4Addr{IP: "10.43.77.5", Port: 80, Protocol: ptr("TCP"), Scope: ptr("external")}, Slot: 0, Count: 2, RevNAT: 7, Flags2: 0x10})
	eq(t, "slot 1 backend id", fe.FrontendRows[1].BackendID, 14)
	_, err = ParseLBList("SERVICE ADDRESS         BACKEND ID\n10.43.77.5:80/TCP (0)   0 2[0] (7) [0x0\n")
	wantError(t, err, kindLBList, 2, "--frontends")
	eq(t, "services mode", mustLB(t, "10.43.77.5:80/TCP (1)   10.42.0.31:8080/TCP (7) (1)\n").Mode, "services")
}

func mustLB(t *testing.T, text string) LBList {
	t.Helper()
	l, err := ParseLBList(text)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// The test cluster's own output of the listings added here (Cilium 1.20.1,
// bpftool 7.5.0).
func TestRealLBListingsAndCgroupTree(t *testing.T) {
	cg, err := ParseCgroupTree(input(t, "real/node_bpftool_cgroup_tree.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for hook, prog := range map[string]string{"connect4": "cil_sock4_connect", "sendmsg4": "cil_sock4_sendmsg",
		"recvmsg4": "cil_sock4_recvmsg", "getpeername4": "cil_sock4_getpeername"} {
		if p := cg.Hook(hook); len(p) != 1 || deref(p[0].Name) != prog {
			t.Errorf("%s: %+v, want one %s", hook, p, prog)
		}
	}
	for file, mode := range map[string]string{"revnat": "revnat", "backends": "backends", "frontends": "frontends"} {
		l, err := ParseLBList(input(t, "real/cilium-dbg_bpf_lb_list_"+file+".txt"))
		if err != nil {
			t.Fatal(err)
		}
		eq(t, file+" mode", l.Mode, mode)
		if n := len(l.RevNATRows) + len(l.BackendRows) + len(l.FrontendRows); n == 0 || len(l.Entries) != 0 {
			t.Errorf("%s: %d rows, %d service entries", file, n, len(l.Entries))
		}
	}
}

// Table cells are cut at rune columns, in ASCII and non-ASCII lines alike.
func TestTableCellsRunes(t *testing.T) {
	tb, ok := newTable("ID   Name   State", []string{"ID", "Name", "State"})
	if !ok {
		t.Fatal("header not found")
	}
	c, ok := tb.cells("1    café   ok")
	eq(t, "non-ASCII", c, []string{"1", "café", "ok"})
	eq(t, "aligned", ok, true)
	c, _ = tb.cells("2    cafe   ok  ")
	eq(t, "ASCII", c, []string{"2", "cafe", "ok"})
	_, ok = tb.cells("3    cafébarr ok")
	eq(t, "word across a column start", ok, false)
}
