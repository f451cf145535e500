package parse

import "testing"

func TestBpftoolNetShowLocalCaptures(t *testing.T) {
	n, err := ParseBpftoolNetShow(input(t, "local/bpftool-net-show/all.txt"))
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "count", len(n.Attachments), 3)
	eq(t, "xdp", n.Attachments[0], NetAttachment{Section: "xdp", Device: ptr("xdpcap0"), Ifindex: ptr(7), Attach: "xdp", Mode: ptr("generic"), ProgID: n.Attachments[0].ProgID})
	in := n.Find("legacy0", "clsact/ingress")
	eq(t, "legacy program", in.Program, ptr("cap_tc_in:[*fsobj]"))
	eq(t, "legacy ifindex", in.Ifindex, ptr(5))
	if in.ProgID == 0 {
		t.Error("legacy prog id not parsed")
	}
	// bpftool 7.1 does not list tcx attachments: the tc section is empty.
	tcx, err := ParseBpftoolNetShow(input(t, "local/bpftool-net-show/dev-tcx.txt"))
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "tcx invisible to bpftool 7.1", tcx.Attachments, []NetAttachment{})

	// JSON and text give the same attachments.
	js, err := ParseBpftoolNetShow(input(t, "local/bpftool-net-show/json.txt"))
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "json count", len(js.Attachments), 3)
	all, err := ParseBpftoolNetShow(input(t, "local/bpftool-net-show/all.txt"))
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "json == text", js.Attachments, all.Attachments)
	pretty, err := ParseBpftoolNetShow(input(t, "local/bpftool-net-show/json-pretty.txt"))
	if err != nil {
		t.Fatal(err)
	}
	legacy, err := ParseBpftoolNetShow(input(t, "local/bpftool-net-show/dev-legacy.txt"))
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "pretty json == text", pretty.Attachments, legacy.Attachments)
}

func TestBpftoolNetShowTCXAndNetfilter(t *testing.T) {
	// bpftool >= 7.3 (net.c __show_dev_tc_bpf, show_link_netfilter).
	text := "xdp:\n\ntc:\n" +
		"lxc3a6f7d4e8c73(26) tcx/ingress cil_from_container prog_id 4773 link_id 29 \n" +
		"lxc3a6f7d4e8c73(26) tcx/egress cil_to_container prog_id 4780 prog_flags 4 link_id 30 link_flags 8 \n" +
		"eth0(2) clsact/ingress cil_from_netdev-eth0 id 1234\n" +
		"lxc9(9) clsact/ingress bpf_lxc.o:[from-container] id 99 act [gact id 1] \n" +
		"(5) clsact/egress prog id 7\n" +
		"nk0(12) netkit/primary cil_from_container prog_id 81 link_id 5 \n" +
		"\nflow_dissector:\nid 42\n\nnetfilter:\n\n\tip prerouting prio -128 prog_id 10\n\tip6 output prio 0 flags 0x1 prog_id 11\n\n"
	n, err := ParseBpftoolNetShow(text)
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "unparsed", n.Unparsed, []string{})
	eq(t, "tcx", n.Find("lxc3a6f7d4e8c73", "tcx/ingress"), NetAttachment{Section: "tc", Device: ptr("lxc3a6f7d4e8c73"), Ifindex: ptr(26), Attach: "tcx/ingress", Program: ptr("cil_from_container"), ProgID: 4773, LinkID: ptr(29)})
	eq(t, "tcx egress with flags", n.Find("", "tcx/egress").LinkID, ptr(30))
	legacy := n.Find("eth0", "")
	eq(t, "legacy id", legacy.ProgID, 1234)
	eq(t, "legacy: no link", legacy.LinkID, (*int)(nil))
	eq(t, "base program", legacy.BaseProgram(), ptr("cil_from_netdev"))
	eq(t, "old style name", n.Find("lxc9", "").Program, ptr("bpf_lxc.o:[from-container]"))
	nameless := n.Find("", "clsact/egress")
	eq(t, "no device name", []any{nameless.Device, nameless.Ifindex}, []any{(*string)(nil), ptr(5)})
	eq(t, "netkit", n.Find("nk0", "netkit/primary").ProgID, 81)
	eq(t, "flow dissector", n.Find("", "flow_dissector"), NetAttachment{Section: "flow_dissector", Attach: "flow_dissector", ProgID: 42})
	nf := n.Find("", "netfilter")
	eq(t, "netfilter", nf, NetAttachment{Section: "netfilter", Attach: "netfilter", Hook: ptr("ip prerouting"), Priority: ptr(-128), ProgID: 10})
	tcx := n.Find("lxc3a6f7d4e8c73", "tcx/ingress")
	eq(t, "tc: no mode, hook or priority", []any{tcx.Mode, tcx.Hook, tcx.Priority}, []any{(*string)(nil), (*string)(nil), (*int)(nil)})
	eq(t, "devices", len(n.Device("lxc3a6f7d4e8c73")), 2)
	eq(t, "missing", n.Find("nope", "").ProgID, 0)
}

// bpftool -j prints a mode for xdp only and pf, hook and prio for
// netfilter only (net.c xdp_dump_prog_id, netfilter_dump_json): the
// other attachments' mode, hook and priority are null, as in the text.
func TestBpftoolNetShowJSONOnlyWhatIsPrinted(t *testing.T) {
	js, err := ParseBpftoolNetShow(`[{"xdp":[{"devname":"eth0","ifindex":2,"mode":"driver","id":42}],` +
		`"tc":[{"devname":"lxc1","ifindex":26,"kind":"tcx/ingress","name":"cil_from_container","prog_id":4773,"prog_flags":[],"link_id":29,"link_flags":[]}],` +
		`"flow_dissector":[],"netfilter":[{"pf":2,"hook":0,"prio":-128,"flags":0,"id":10}]}]`)
	if err != nil {
		t.Fatal(err)
	}
	text, err := ParseBpftoolNetShow("xdp:\neth0(2) driver id 42 \n\ntc:\n" +
		"lxc1(26) tcx/ingress cil_from_container prog_id 4773 link_id 29 \n\nflow_dissector:\n\nnetfilter:\n\n\tip prerouting prio -128 prog_id 10\n")
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "json == text", js.Attachments, text.Attachments)
	eq(t, "xdp", js.Attachments[0], NetAttachment{Section: "xdp", Device: ptr("eth0"), Ifindex: ptr(2), Attach: "xdp", Mode: ptr("driver"), ProgID: 42})
	eq(t, "tc", js.Attachments[1], NetAttachment{Section: "tc", Device: ptr("lxc1"), Ifindex: ptr(26), Attach: "tcx/ingress", Program: ptr("cil_from_container"), ProgID: 4773, LinkID: ptr(29)})
	eq(t, "netfilter", js.Attachments[2], NetAttachment{Section: "netfilter", Attach: "netfilter", ProgID: 10, Hook: ptr("ip prerouting"), Priority: ptr(-128)})
}

// What bpftool 7.5 does not print is null, in the -j and the plain form
// alike: XDP, the flow dissector and netfilter have no program name and
// no link, the flow dissector and netfilter no device. A tcx program
// attached without a link has link id 0: -j prints it, the plain form
// leaves it out. -j writes an attached flow dissector's id straight into
// its array, which is not JSON; it is read all the same.
func TestBpftoolNetShowNullWhereNotPrinted(t *testing.T) {
	for _, name := range []string{"v7.5-xdp-tc-netfilter", "v7.5-unlinked-tcx-flow-dissector"} {
		text, err := ParseBpftoolNetShow(input(t, "synthetic/bpftool-net-show/"+name+".txt"))
		if err != nil {
			t.Fatal(err)
		}
		js, err := ParseBpftoolNetShow(input(t, "synthetic/bpftool-net-show/"+name+"-json.txt"))
		if err != nil {
			t.Fatal(err)
		}
		eq(t, name+": json == text", js.Attachments, text.Attachments)
		eq(t, name+": unparsed", text.Unparsed, []string{})
	}
	n, err := ParseBpftoolNetShow(input(t, "synthetic/bpftool-net-show/v7.5-xdp-tc-netfilter-json.txt"))
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "xdp", n.Find("eth0", "xdp"), NetAttachment{Section: "xdp", Device: ptr("eth0"), Ifindex: ptr(2), Attach: "xdp", Mode: ptr("driver"), ProgID: 301})
	eq(t, "xdp in two modes", len(n.Device("eth1")), 2)
	eq(t, "legacy tc", n.Find("", "clsact/ingress"), NetAttachment{Section: "tc", Device: ptr("lxc9b1c2d3e4f5a"), Ifindex: ptr(28), Attach: "clsact/ingress", Program: ptr("cil_from_container-lxc9b1c2d3e4f5a"), ProgID: 4790})
	eq(t, "netfilter", n.Find("", "netfilter"), NetAttachment{Section: "netfilter", Attach: "netfilter", Hook: ptr("ip prerouting"), Priority: ptr(-128), ProgID: 10})
	eq(t, "xdp program", n.Find("eth0", "xdp").BaseProgram(), (*string)(nil))

	n, err = ParseBpftoolNetShow(input(t, "synthetic/bpftool-net-show/v7.5-unlinked-tcx-flow-dissector-json.txt"))
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "tcx without a link", n.Find("veth1", "tcx/ingress").LinkID, ptr(0))
	eq(t, "flow dissector", n.Find("", "flow_dissector"), NetAttachment{Section: "flow_dissector", Attach: "flow_dissector", ProgID: 42})
	pretty, err := ParseBpftoolNetShow("[{\n        \"xdp\": [],\n        \"tc\": [],\n        \"flow_dissector\": [\n            \"id\": 42\n        ],\n        \"netfilter\": []\n    }\n]\n")
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "-jp flow dissector", pretty.Attachments, []NetAttachment{{Section: "flow_dissector", Attach: "flow_dissector", ProgID: 42}})
}

func TestBpftoolNetShowUnknownLinesAndErrors(t *testing.T) {
	n, err := ParseBpftoolNetShow("xdp:\n\ntc:\nsomething new here\n")
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "unparsed kept", n.Unparsed, []string{"tc: something new here"})
	_, err = ParseBpftoolNetShow("")
	wantError(t, err, kindBpftoolNet, 0, "no \"xdp:\"")
	_, err = ParseBpftoolNetShow("lxc1(3) weird\n")
	wantError(t, err, kindBpftoolNet, 1, "section header")
	_, err = ParseBpftoolNetShow("[{\"tc\": 5}]")
	wantError(t, err, kindBpftoolNet, 1, "invalid JSON")
}

func TestBpftoolLinkShow(t *testing.T) {
	l, err := ParseBpftoolLinkShow(input(t, "local/bpftool-link-show/show.txt"))
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "count", len(l), 3)
	eq(t, "type 11 is tcx", l[0].Type, "tcx")
	eq(t, "type id", deref(l[0].TypeID), 11)
	eq(t, "tcx links", len(l.OfType("tcx")), 2)
	eq(t, "xdp", l[2].Type, "xdp")
	if l[0].ProgID == 0 {
		t.Error("prog id not parsed")
	}
	newer, err := ParseBpftoolLinkShow("29: tcx  prog 4773  \n\tifindex lxc3a6f7d4e8c73(26)  attach_type tcx_ingress  \n")
	if err != nil {
		t.Fatal(err)
	}
	ifindex := 26
	eq(t, "newer", newer[0], BpftoolLink{ID: 29, Type: "tcx", ProgID: 4773, Device: ptr("lxc3a6f7d4e8c73"), Ifindex: &ifindex, AttachType: ptr("tcx_ingress"),
		Details: map[string]string{"prog": "4773", "ifindex": "lxc3a6f7d4e8c73(26)", "attach_type": "tcx_ingress"}})
	_, err = ParseBpftoolLinkShow("\tifindex 3\n")
	wantError(t, err, kindBpftoolLink, 1, "before any link")
	_, err = ParseBpftoolLinkShow("x: tcx prog 1\n")
	wantError(t, err, kindBpftoolLink, 1, "expected")
}
