package parse

import "testing"

func TestTCFilterShow(t *testing.T) {
	f, err := ParseTCFilterShow(input(t, "local/tc-filter-show/legacy-ingress.txt"))
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "lines", f.Lines, 2)
	eq(t, "filters", len(f.Filters), 2)
	eq(t, "head", f.Filters[0].Head, true)
	eq(t, "head line has no handle", f.Filters[0].Handle, (*string)(nil))
	b := f.BPF()
	eq(t, "bpf filters", len(b), 1)
	eq(t, "name", deref(b[0].Name), "cap_tc_in:[*fsobj]")
	eq(t, "prog", deref(b[0].ProgName), "cap_tc_in")
	eq(t, "da", b[0].DirectAction, true)
	eq(t, "hw", deref(b[0].HW), "not_in_hw")
	eq(t, "pref", b[0].Pref, 49152)
	eq(t, "handle", deref(b[0].Handle), "0x1")
	eq(t, "jited", b[0].Jited, true)
	eq(t, "tag", deref(b[0].Tag), "59f4a931744dcdc6")

	for _, name := range []string{"local/tc-filter-show/tcx-ingress.txt", "local/tc-filter-show/noqdisc.txt"} {
		e, err := ParseTCFilterShow(input(t, name))
		if err != nil {
			t.Fatal(err)
		}
		eq(t, name+" lines", e.Lines, 0)
		eq(t, name+" filters", e.Filters, []TCFilter{})
	}
}

func TestTCFilterShowCilium(t *testing.T) {
	text := "filter protocol all pref 1 bpf chain 0 \n" +
		"filter protocol all pref 1 bpf chain 0 handle 0x1 cil_from_container-lxc3a6f7d4e8c73 direct-action not_in_hw id 4773 name cil_from_contai tag 1a2b3c4d5e6f7a8b jited \n" +
		"filter parent ffff: protocol ip pref 2 u32 chain 0 \n" +
		"filter parent ffff: protocol ip pref 2 u32 chain 0 fh 800: ht divisor 1 \n" +
		"  match 0a000001/ffffffff at 16\n"
	f, err := ParseTCFilterShow(text)
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "lines", f.Lines, 5)
	b := f.BPF()
	eq(t, "cilium filter name", deref(b[0].Name), "cil_from_container-lxc3a6f7d4e8c73")
	eq(t, "prog id", deref(b[0].ProgID), 4773)
	eq(t, "u32 kind", f.Filters[2].Kind, "u32")
	eq(t, "details", f.Filters[3].Details, []string{"match 0a000001/ffffffff at 16"})
	_, err = ParseTCFilterShow("qdisc clsact ffff: parent ffff:fff1\n")
	wantError(t, err, kindTCFilter, 1, "expected \"filter protocol")
	_, err = ParseTCFilterShow("  match x\n")
	wantError(t, err, kindTCFilter, 1, "expected \"filter ...\"")
}

func TestTCFilterShowOldIproute(t *testing.T) {
	// iproute2 before 4.13 printed no chain; old Cilium named filters after
	// the ELF section.
	f, err := ParseTCFilterShow("filter protocol all pref 1 bpf \nfilter protocol all pref 1 bpf handle 0x1 bpf_lxc.o:[from-container] direct-action not_in_hw tag 3f2c4b1a0e9d8c7b \n")
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "head", f.Filters[0].Head, true)
	eq(t, "head line has no handle", f.Filters[0].Handle, (*string)(nil))
	eq(t, "name", deref(f.BPF()[0].Name), "bpf_lxc.o:[from-container]")
	eq(t, "tag", deref(f.BPF()[0].Tag), "3f2c4b1a0e9d8c7b")
	eq(t, "no id printed", f.BPF()[0].ProgID, (*int)(nil))
}
