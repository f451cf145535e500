package parse

import (
	"strings"
	"testing"
)

func TestIPTablesSave(t *testing.T) {
	text := input(t, "local/iptables-save/plain.txt")
	ipt, err := ParseIPTablesSave(text)
	if err != nil {
		t.Fatal(err)
	}
	// Same answers as `iptables-save | grep -c X`.
	grepC := func(s string) int {
		n := 0
		for _, l := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
			if strings.Contains(l, s) {
				n++
			}
		}
		return n
	}
	for _, s := range []string{"CILIUM", "KUBE-SVC", "KUBE", "10.43.77.5", "cilium-feeder", "COMMIT", "#"} {
		eq(t, "CountContaining("+s+")", ipt.CountContaining(s), grepC(s))
	}
	// 10 chain declarations + 10 feeders + 4 rule bodies mention CILIUM.
	eq(t, "CILIUM lines", ipt.CountContaining("CILIUM"), 24)
	eq(t, "no KUBE-SVC", ipt.CountContaining("KUBE-SVC"), 0)
	eq(t, "tables", len(ipt.Tables), 4)
	eq(t, "filter CILIUM lines", ipt.CountContainingIn("filter", "CILIUM"), 8)
	eq(t, "nat CILIUM lines", ipt.CountContainingIn("nat", "CILIUM"), 7)
	eq(t, "chains", ipt.Chains("CILIUM_"), []string{"CILIUM_FORWARD", "CILIUM_INPUT", "CILIUM_OUTPUT", "CILIUM_OUTPUT_nat",
		"CILIUM_OUTPUT_raw", "CILIUM_POST_mangle", "CILIUM_POST_nat", "CILIUM_PRE_mangle", "CILIUM_PRE_nat", "CILIUM_PRE_raw"})
	f := ipt.Table("filter")
	eq(t, "policy", f.Chains[1].Name+" "+f.Chains[1].Policy, "FORWARD DROP")
	eq(t, "user chain policy", f.Chains[3].Policy, "-")
	rules := ipt.Rules("filter", "INPUT")
	eq(t, "feeder", rules[0].Text, `-A INPUT -m comment --comment "cilium-feeder: CILIUM_INPUT" -j CILIUM_INPUT`)
	eq(t, "target", rules[0].Target, "CILIUM_INPUT")
	eq(t, "CT target", ipt.Rules("raw", "CILIUM_PRE_raw")[0].Target, "CT")
	eq(t, "missing table", ipt.Table("security").Rules, []IPRule{})
}

func TestIPTablesSaveCounters(t *testing.T) {
	ipt, err := ParseIPTablesSave(input(t, "local/iptables-save/counters.txt"))
	if err != nil {
		t.Fatal(err)
	}
	plain, err := ParseIPTablesSave(input(t, "local/iptables-save/plain.txt"))
	if err != nil {
		t.Fatal(err)
	}
	// -c only adds "[p:b] " before rules: same rule texts, and counters
	// only where they were printed.
	withC, without := ipt.Rules("nat", "CILIUM_POST_nat"), plain.Rules("nat", "CILIUM_POST_nat")
	eq(t, "rules", len(withC), len(without))
	for i := range withC {
		eq(t, "rule text", withC[i].Text, without[i].Text)
		if withC[i].Packets == nil || withC[i].Bytes == nil || without[i].Packets != nil || without[i].Bytes != nil {
			t.Errorf("rule %d: counters %v/%v with -c, %v/%v without", i, deref(withC[i].Packets), deref(withC[i].Bytes), deref(without[i].Packets), deref(without[i].Bytes))
		}
	}
	ipt2, err := ParseIPTablesSave("*filter\n:INPUT ACCEPT [12:3456]\n[7:420] -A INPUT -p tcp -m comment --comment \"say -j NOT\" -j ACCEPT\nCOMMIT\n")
	if err != nil {
		t.Fatal(err)
	}
	c := ipt2.Tables[0].Chains[0]
	eq(t, "chain counters", []any{c.Name, c.Policy, deref(c.Packets), deref(c.Bytes)}, []any{"INPUT", "ACCEPT", int64(12), int64(3456)})
	r := ipt2.Tables[0].Rules[0]
	eq(t, "rule counters", []any{deref(r.Packets), deref(r.Bytes)}, []any{int64(7), int64(420)})
	eq(t, "target outside the quoted comment", r.Target, "ACCEPT")
}

func TestIPTablesSaveEmptyAndErrors(t *testing.T) {
	ipt, err := ParseIPTablesSave("")
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "empty", ipt.CountContaining("CILIUM"), 0)
	_, err = ParseIPTablesSave("*filter\n:INPUT ACCEPT [0:0]\n")
	wantError(t, err, kindIPTables, 2, "ends before the COMMIT of *filter (truncated)")
	_, err = ParseIPTablesSave("*filter\nCOMMIT\n-A INPUT -j ACCEPT\n")
	wantError(t, err, kindIPTables, 3, "outside a table")
	_, err = ParseIPTablesSave("*filter\nhello\nCOMMIT\n")
	wantError(t, err, kindIPTables, 2, `expected "-A CHAIN`)
	_, err = ParseIPTablesSave("*filter\n:INPUT ACCEPT [x:0]\nCOMMIT\n")
	wantError(t, err, kindIPTables, 2, "packets:bytes")
}
