package parse

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"text/tabwriter"
)

// policyTableText prints rows as cilium-dbg 1.20's formatMap does
// (cilium-dbg/cmd/bpf_policy_get.go: tabwriter.NewWriter(w, 5, 0, 3, ' ',
// 0), one Fprintf per row, a label continuation as "\t\t%s\t\t\t\t\t\t\t\n"),
// so the inputs below have the padding the tool gives them.
func policyTableText(numeric bool, rows ...string) string {
	var b bytes.Buffer
	w := tabwriter.NewWriter(&b, 5, 0, 3, ' ', 0)
	peer := "LABELS (source:key[=value])"
	if numeric {
		peer = "IDENTITY"
	}
	fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n",
		"POLICY", "DIRECTION", peer, "PORT/PROTO", "PROXY PORT", "AUTH TYPE", "BYTES", "PACKETS", "PREFIX", "COOKIE")
	for _, r := range rows {
		if l, ok := strings.CutPrefix(r, "+"); ok {
			fmt.Fprintf(w, "\t\t%s\t\t\t\t\t\t\t\n", l)
			continue
		}
		fmt.Fprintln(w, strings.Join(strings.Fields(r), "\t"))
	}
	w.Flush()
	return b.String()
}

// Every shape of bpf policy get is read as printed, and what it does not
// print stays null; another command's output, a row cut or misaligned, a
// verdict or direction cilium-dbg never prints are refused with the line.
func TestPolicyGet(t *testing.T) {
	tests := []struct {
		name, in string
		want     string // "verdict dir peer portProto port-portEnd proxy packets/bytes prefix" per entry, or "error: ..."
	}{
		{"numeric, counters and -", policyTableText(true,
			"Allow Ingress 0 ANY NONE disabled 2448 36 0 0",
			"Allow Ingress 17897 8080/TCP NONE disabled - - 24 0"),
			"Allow Ingress 0 ANY - 0 36/2448 0 | Allow Ingress 17897 8080/TCP 8080-8080 0 -/- 24"},
		{"labels, one line per label", policyTableText(false,
			"Deny Ingress k8s:app=intruder 8080-8095/TCP NONE disabled 120 2 12 0",
			"+k8s:io.kubernetes.pod.namespace=lab",
			"Allow Ingress ANY ANY NONE disabled - - 0 0",
			"Allow Egress reserved:host UDP 15001 spire 0 0 8 7"),
			"Deny Ingress [k8s:app=intruder k8s:io.kubernetes.pod.namespace=lab] 8080-8095/TCP 8080-8095 0 2/120 12 | " +
				"Allow Ingress [ANY] ANY - 0 -/- 0 | Allow Egress [reserved:host] UDP - 15001 0/0 8"},
		{"an identity the agent could not resolve is printed as its number", policyTableText(false,
			"Allow Ingress 4242 ANY NONE disabled - - 0 0"), "Allow Ingress 4242 ANY - 0 -/- 0"},
		{"1.17: no COOKIE, reserved:unknown", "POLICY   DIRECTION   LABELS (source:key[=value])   PORT/PROTO   PROXY PORT   AUTH TYPE   BYTES     PACKETS   PREFIX   \n" +
			"Allow    Ingress     reserved:unknown              8/ICMP       NONE         disabled    1965348   29778     24       \n",
			"Allow Ingress [reserved:unknown] 8/ICMP 8-8 0 29778/1965348 24"},
		{"empty map", policyTableText(true) + policyStatsEmpty + "\n", ""},
		{"--all", "Endpoint ID: 12\nPath: /sys/fs/bpf/tc/globals/cilium_policy_v3_00012\n\n" + policyTableText(true, "Allow Egress 0 ANY NONE disabled 1 1 0 0") +
			"\n\nEndpoint ID: 7\nPath: /sys/fs/bpf/tc/globals/cilium_policy_v3_00007\n\n" + policyTableText(true, "Allow Ingress 1 ANY NONE disabled - - 0 0") + "\n\n",
			"@12 Allow Egress 0 ANY - 0 1/1 0 | @7 Allow Ingress 1 ANY - 0 -/- 0"},
		{"json: ports in network byte order, no counters", `[
  {"ProxyPortNetwork": 0, "Flags": 193, "AuthRequirement": 0, "Precedence": 0, "Cookie": 0, "Packets": 18446744073709551615, "Bytes": 18446744073709551615,
   "Key": {"Prefixlen": 64, "Identity": 17897, "TrafficDirection": 0, "Nexthdr": 6, "DestPortNetwork": 36895}},
  {"ProxyPortNetwork": 0, "Flags": 0, "AuthRequirement": 0, "Precedence": 0, "Cookie": 0, "Packets": 36, "Bytes": 2448,
   "Key": {"Prefixlen": 40, "Identity": 0, "TrafficDirection": 1, "Nexthdr": 0, "DestPortNetwork": 0}},
  {"ProxyPortNetwork": 0, "Flags": 0, "AuthRequirement": 129, "Cookie": 3, "Packets": 1, "Bytes": 60,
   "Key": {"Prefixlen": 60, "Identity": 5, "TrafficDirection": 0, "Nexthdr": 17, "DestPortNetwork": 36895}}
]`, "Deny Ingress 17897 8080/TCP 8080-8080 0 -/- 24 | Allow Egress 0 ANY - 0 36/2448 0 | Allow Ingress 5 8080-8095/UDP 8080-8095 0 1/60 20"},
		{"json, empty map", "[]\n", ""},

		{"empty", "", "error: empty input"},
		{"another command", "ENDPOINT   POLICY (ingress)   POLICY (egress)\n", "error: line 1: expected the header"},
		{"before deny policies", "DIRECTION   LABELS (source:key[=value])   PORT/PROTO   PROXY PORT   BYTES   PACKETS   \nIngress     reserved:host                 ANY          NONE         0       0         \n",
			"error: line 1: a table without the POLICY column"},
		{"a verdict cilium-dbg never prints", policyTableText(true, "Audit Ingress 0 ANY NONE disabled - - 0 0"), "error: line 2: expected POLICY Allow or Deny"},
		{"a direction cilium-dbg never prints", policyTableText(true, "Allow Sideways 0 ANY NONE disabled - - 0 0"), "error: line 2: expected DIRECTION Ingress or Egress"},
		{"a counter that is not a number", policyTableText(true, "Allow Ingress 0 ANY NONE disabled 1k 3 0 0"), "error: line 2: expected BYTES as a number or -"},
		{"a prefix longer than the key's 24 bits", policyTableText(true, "Allow Ingress 0 ANY NONE disabled - - 32 0"), "error: line 2: expected PREFIX as a prefix length"},
		{"a label under a numeric row", policyTableText(false, "Allow Ingress 4242 ANY NONE disabled - - 0 0", "+k8s:app=x"), "error: line 3: a label under a row whose peer is a numeric identity"},
		{"a label continuation with -n", policyTableText(true, "Allow Ingress 1 ANY NONE disabled - - 0 0", "+2"), "error: line 3: expected a row starting with Allow or Deny"},
		{"a port range backwards", policyTableText(true, "Allow Ingress 1 90-80/TCP NONE disabled - - 12 0"), "error: line 2: expected a port range"},
		{"a cut inside a row", policyTableText(true, "Allow Ingress 1 ANY NONE disabled - - 0 0") + "Allow    Ingr",
			"error: line 3: output ends mid-line, without a final newline (truncated); 1 complete entries before it"},
		{"the empty line before any header", policyStatsEmpty + "\n", "error: line 1: the empty map's line before the table's header"},
		{"json without its key", `[{"Flags": 0, "Packets": 1, "Bytes": 2}]`, "error: neither JSON (element 0: expected a policy map entry"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := ParsePolicyGet(tt.in)
			if strings.HasPrefix(tt.want, "error: ") {
				if err == nil || !strings.Contains(err.Error(), strings.TrimPrefix(tt.want, "error: ")) {
					t.Fatalf("err %v, want one containing %q (got %+v)", err, strings.TrimPrefix(tt.want, "error: "), p)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, e := range p.Entries {
				got = append(got, describePolicyEntry(e))
			}
			if s := strings.Join(got, " | "); s != tt.want {
				t.Errorf("got  %s\nwant %s", s, tt.want)
			}
			if p.Empty != (len(p.Entries) == 0) {
				t.Errorf("empty = %v with %d entries", p.Empty, len(p.Entries))
			}
		})
	}
}

func describePolicyEntry(e PolicyMapEntry) string {
	var b strings.Builder
	if e.EndpointID != nil {
		fmt.Fprintf(&b, "@%d ", *e.EndpointID)
	}
	peer := fmt.Sprint(e.Labels)
	if e.Identity != nil {
		if len(e.Labels) != 0 {
			return "both identity and labels"
		}
		peer = fmt.Sprint(*e.Identity)
	}
	ports := "-"
	if e.Port != nil {
		ports = fmt.Sprintf("%d-%d", *e.Port, *e.PortEnd)
	}
	counters := "-/-"
	if e.Packets != nil {
		counters = fmt.Sprintf("%d/%d", *e.Packets, *e.Bytes)
	}
	prefix := "null"
	if e.PrefixLen != nil {
		prefix = fmt.Sprint(*e.PrefixLen)
	}
	fmt.Fprintf(&b, "%s %s %s %s %s %d %s %s", e.Verdict, e.Direction, peer, e.PortProto, ports, e.ProxyPort, counters, prefix)
	return b.String()
}

// The methods a lab asserts with find the entry a rule made and the
// traffic it decided, on the real map of the testbed.
func TestPolicyGetMethods(t *testing.T) {
	p, err := ParsePolicyGet(policyTableText(true,
		"Deny Ingress 99 ANY NONE disabled 60 1 0 0",
		"Allow Ingress 0 ANY NONE disabled 2448 36 0 0",
		"Allow Ingress 17897 8080/TCP NONE disabled 300 5 24 0",
		"Allow Egress 0 ANY NONE disabled - - 0 0"))
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "len(Ingress)", len(p.Ingress()), 3)
	eq(t, "len(Egress)", len(p.Egress()), 1)
	eq(t, "len(Denies)", len(p.Denies()), 1)
	eq(t, "len(ForIdentity(17897))", len(p.ForIdentity(17897)), 1)
	eq(t, "len(Matched)", len(p.Matched()), 3)
	eq(t, "PacketsOf(ingress, 17897, 8080/TCP)", p.PacketsOf("ingress", 17897, "8080/tcp"), 5)
	eq(t, "PacketsOf(egress, 0, ANY)", p.PacketsOf("Egress", 0, "ANY"), 0)
	eq(t, "PacketsOf of no entry", p.PacketsOf("Egress", 17897, "ANY"), 0)
	if p.Find("ingress", 17897, "80/TCP") != nil {
		t.Error("Find found an entry for a port the map does not have")
	}
	l, err := ParsePolicyGet(policyTableText(false, "Allow Ingress k8s:app=frontend 8080/TCP NONE disabled 300 5 24 0", "+k8s:io.kubernetes.pod.namespace=lab"))
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "len(WithLabel(namespace))", len(l.WithLabel("k8s:io.kubernetes.pod.namespace=lab")), 1)
	eq(t, "len(WithLabel(other))", len(l.WithLabel("k8s:app=intruder")), 0)
}

// The testbed's api policy map read three ways in one run (labels, -n,
// -o json: testbed/examples/capture-policy.sh) is one map: the same
// entries in the same order, the identities of -n and JSON equal, the
// JSON's ports read from network byte order as the table prints them,
// and the frontend's entry, by label and by the identity its
// CiliumEndpoint has, the one that counted packets.
func TestPolicyGetRealAgree(t *testing.T) {
	read := func(name string) PolicyGet {
		t.Helper()
		p, err := ParsePolicyGet(input(t, "real/policy/"+name))
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	labels, numeric, raw := read("cilium-dbg_bpf_policy_get_api.txt"), read("cilium-dbg_bpf_policy_get_n_api.txt"), read("cilium-dbg_bpf_policy_get_api_json.txt")
	if len(labels.Entries) != len(numeric.Entries) || len(raw.Entries) != len(numeric.Entries) || len(numeric.Entries) < 8 {
		t.Fatalf("%d, %d and %d entries", len(labels.Entries), len(numeric.Entries), len(raw.Entries))
	}
	for i, n := range numeric.Entries {
		l, j := labels.Entries[i], raw.Entries[i]
		key := func(e PolicyMapEntry) string {
			return fmt.Sprintf("%s %s %s %d", e.Verdict, e.Direction, e.PortProto, *e.PrefixLen)
		}
		if key(l) != key(n) || key(j) != key(n) || *j.Identity != *n.Identity {
			t.Errorf("entry %d: labels %q, -n %q (identity %d), json %q (identity %d)", i, key(l), key(n), *n.Identity, key(j), *j.Identity)
		}
	}
	if len(numeric.Denies()) != 3 || *numeric.Denies()[0].Port != 9000 || *numeric.Denies()[0].PortEnd != 9007 {
		t.Errorf("the deny policy's range 9000-9010 makes 3 entries (9000-9007, 9008-9009, 9010): %+v", numeric.Denies())
	}
	const frontend = 34727 // kubectl_get_cep.txt
	if e := numeric.Find("ingress", frontend, "8080/TCP"); e == nil || e.Packets == nil || *e.Packets == 0 {
		t.Errorf("the frontend's entry: %+v", e)
	}
	if got := labels.WithLabel("k8s:app=frontend"); len(got) != 1 || got[0].PortProto != "8080/TCP" {
		t.Errorf("entries of label k8s:app=frontend: %+v", got)
	}
	if !strings.Contains(input(t, "real/policy/kubectl_get_cep.txt"), fmt.Sprintf("frontend              %d", frontend)) {
		t.Error("kubectl_get_cep.txt does not give the frontend identity 34727")
	}
}
