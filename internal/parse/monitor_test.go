package parse

import (
	"fmt"
	"strings"
	"testing"
)

// The monitor's lines are read one by one, as a stream hands them over:
// JSON drops and traces, text drops of every Cilium since 1.2, policy
// verdicts, lost events; a line of another shape is refused with its
// number.
func TestMonitor(t *testing.T) {
	tests := []struct {
		name, in string
		want     string // one "kind: fields" per event, " | " between, or "error: ..."
	}{
		{"json drop (DropNotifyVerbose)",
			`{"cpu":"CPU 01:","type":"drop","mark":"0x9c7b5c2d","reason":"Policy denied","source":1203,"bytes":74,"srcLabel":51234,"dstLabel":17897,"dstID":1203,"Line":2149,"File":5,"ExtError":0,"Ifindex":12,"summary":{"ethernet":"Ethernet\t{...}","ipv4":"IPv4\t{...}","tcp":"TCP\t{...}","l2":{"src":"aa:bb:cc:dd:ee:01","dst":"aa:bb:cc:dd:ee:02"},"l3":{"src":"10.42.0.7","dst":"10.42.0.9"},"l4":{"src":"40312","dst":"8080"}}}` + "\n",
			"drop: Policy denied 51234->17897 ep=1203 dst=1203 if=12 10.42.0.7:40312->10.42.0.9:8080 tcp flags=null"},
		{"json drop without a dissected packet",
			`{"type":"drop","mark":"0x0","reason":"Stale or unroutable IP","source":0,"bytes":98,"srcLabel":0,"dstLabel":0,"dstID":0,"Line":1,"File":1,"ExtError":0,"Ifindex":3}` + "\n",
			"drop: Stale or unroutable IP 0->0 ep=0 dst=0 if=3 :null->:null  flags=null"},
		{"json trace", `{"cpu":"CPU 00:","type":"trace","mark":"0x1","ifindex":"lxc1","state":"new","observationPoint":"to-endpoint","traceSummary":"-> endpoint 1203","source":1203,"bytes":74,"srcLabel":17000,"dstLabel":17897,"dstID":1203,"IpTraceID":0,"summary":{"udp":"UDP","l3":{"src":"10.42.0.7","dst":"10.42.0.9"},"l4":{"src":"5353","dst":"53"}}}` + "\n",
			"trace: to-endpoint new 17000->17897 10.42.0.7:5353->10.42.0.9:53 udp"},
		{"text drop of 1.20, identities by number", "xx drop (Policy denied) flow 0x9c7b5c2d to endpoint 1203, ifindex 12, file bpf_lxc.c:2149, , identity 51234->17897: 10.42.0.7:40312 -> 10.42.0.9:8080 tcp SYN\n",
			"drop: Policy denied 51234->17897 ep=null dst=1203 if=12 10.42.0.7:40312->10.42.0.9:8080 tcp flags=SYN"},
		// cilium/cilium#2907 (v1.0 era): no ifindex, no file
		{"text drop before ifindex and file", "xx drop (Policy denied (L3)) flow 0xcf4aba39 to endpoint 16996, identity 47997->27239: 10.0.111.25:34020 -> 10.0.118.183:80 tcp SYN\n",
			"drop: Policy denied (L3) 47997->27239 ep=null dst=16996 if=null 10.0.111.25:34020->10.0.118.183:80 tcp flags=SYN"},
		{"text drop, identities by name, ICMP", "xx drop (Policy denied) flow 0x0 to endpoint 0, ifindex 4, file bpf_lxc.c:1999, , identity world->host: 192.0.2.1 -> 10.42.0.5 icmp EchoRequest\n",
			"drop: Policy denied 2->1 ep=null dst=0 if=4 192.0.2.1:null->10.42.0.5:null icmp flags=null"},
		{"text drop, IPv6, ip-trace-id", "xx drop (Policy denied by denylist) flow 0x1 to endpoint 7, ifindex 9, file bpf_lxc.c:10,  [ ip-trace-id = 42 ], identity 5->6: [fd00::1]:4000 -> [fd00::2]:443 tcp SYN, ACK\n",
			"drop: Policy denied by denylist 5->6 ep=null dst=7 if=9 fd00::1:4000->fd00::2:443 tcp flags=SYN, ACK"},
		{"policy verdict, numeric", "Policy verdict log: flow 0x9c7b5c2d local EP ID 1203, remote ID 51234, proto 6, ingress, action deny, auth: disabled, match none, 10.42.0.7:40312 -> 10.42.0.9:8080 tcp SYN\n",
			"verdict: ingress deny none 1203<-51234 proto=6 10.42.0.7:40312->10.42.0.9:8080 tcp"},
		{"policy verdict, reserved name, allowed L3-L4", "Policy verdict log: flow 0x0 local EP ID 1203, remote ID host, proto 6, ingress, action allow, auth: disabled, match L3-L4, 10.42.0.1:50000 -> 10.42.0.9:8080 tcp SYN\n",
			"verdict: ingress allow L3-L4 1203<-1 proto=6 10.42.0.1:50000->10.42.0.9:8080 tcp"},
		{"lost events add up", "CPU 01: Lost 7 events\nCPU 00: Lost 1 events\n", "lost 8"},
		{"an event cilium-dbg could not decode", "cannot decode message type '9': unexpected length\n", "other: cannot decode message type '9': unexpected length"},
		{"a JSON event of another type", `{"type":"debug","message":"x"}` + "\n", `other: {"type":"debug","message":"x"}`},
		{"nothing", "", ""},
		{"cilium-dbg's own log line is no event", `time=2026-12-07T04:25:10.53050791Z level=info msg="Initializing dissection cache..."` + "\n", ""},

		{"a trace in text", "-> endpoint 1203 flow 0x1 , identity 1->2 state new ifindex lxc1 orig-ip 10.0.0.1: 10.0.0.1:1 -> 10.0.0.2:2 tcp SYN\n",
			"error: line 1: expected a JSON event, a policy verdict, a drop or a lost-events line"},
		{"a drop line cut before its summary", "xx drop (Policy denied) flow 0x9c7b5c2d to endpoint 1203, ifindex 12\n", `error: line 1: expected "xx drop (REASON)`},
		{"JSON cut short", `{"type":"drop","reason":"Policy`, "error: line 1: output ends mid-line"},
		{"a JSON drop without its identities", `{"type":"drop","reason":"Policy denied","source":1,"bytes":1,"dstID":1}` + "\n", "error: line 1: expected a drop event with source"},
		{"an identity name cilium never prints", "xx drop (Policy denied) flow 0x1 to endpoint 7, identity martian->6: 10.0.0.1:1 -> 10.0.0.2:2 tcp SYN\n", "error: line 1: expected a numeric or reserved source identity"},
		{"a summary address without its port", "xx drop (Policy denied) flow 0x1 to endpoint 7, identity 5->6: 10.0.0.1:x -> 10.0.0.2:2 tcp SYN\n", "error: line 1: expected a port number"},
		{"a summary that is no address", "xx drop (Policy denied) flow 0x1 to endpoint 7, identity 5->6: web -> 10.0.0.2:2 tcp SYN\n", "error: line 1: expected an address IP:PORT"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := ParseMonitor(tt.in)
			if strings.HasPrefix(tt.want, "error: ") {
				if err == nil || !strings.Contains(err.Error(), strings.TrimPrefix(tt.want, "error: ")) {
					t.Fatalf("err %v, want one containing %q (got %+v)", err, strings.TrimPrefix(tt.want, "error: "), m)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if s := describeMonitor(m); s != tt.want {
				t.Errorf("got  %s\nwant %s", s, tt.want)
			}
		})
	}
}

func describeMonitor(m Monitor) string {
	port := func(p *int) string {
		if p == nil {
			return "null"
		}
		return fmt.Sprint(*p)
	}
	ptr := func(p *int) string { return port(p) }
	var out []string
	for _, d := range m.Drops {
		flags := "null"
		if d.TCPFlags != nil {
			flags = *d.TCPFlags
		}
		out = append(out, fmt.Sprintf("drop: %s %d->%d ep=%s dst=%d if=%s %s:%s->%s:%s %s flags=%s", d.Reason, d.SrcIdentity, d.DstIdentity,
			ptr(d.Endpoint), d.DstEndpoint, ptr(d.Ifindex), d.SrcIP, port(d.SrcPort), d.DstIP, port(d.DstPort), d.Protocol, flags))
	}
	for _, v := range m.Verdicts {
		out = append(out, fmt.Sprintf("verdict: %s %s %s %d<-%d proto=%d %s:%s->%s:%s %s", v.Direction, v.Action, v.Match, v.Endpoint, v.RemoteIdentity,
			v.Proto, v.SrcIP, port(v.SrcPort), v.DstIP, port(v.DstPort), v.Protocol))
	}
	for _, tr := range m.Traces {
		out = append(out, fmt.Sprintf("trace: %s %s %d->%d %s:%s->%s:%s %s", tr.ObservationPoint, tr.State, tr.SrcIdentity, tr.DstIdentity,
			tr.SrcIP, port(tr.SrcPort), tr.DstIP, port(tr.DstPort), tr.Protocol))
	}
	for _, o := range m.Others {
		out = append(out, "other: "+o)
	}
	if m.Lost > 0 {
		out = append(out, fmt.Sprintf("lost %d", m.Lost))
	}
	return strings.Join(out, " | ")
}

// The methods a lab asserts with pick the drops of one flow.
func TestMonitorMethods(t *testing.T) {
	m, err := ParseMonitor("xx drop (Policy denied) flow 0x1 to endpoint 7, identity 5->6: 10.0.0.1:4000 -> 10.0.0.2:8080 tcp SYN\n" +
		"xx drop (Policy denied) flow 0x2 to endpoint 7, identity 5->6: 10.0.0.3:4000 -> 10.0.0.2:9090 tcp SYN\n" +
		"Policy verdict log: flow 0x2 local EP ID 7, remote ID 5, proto 6, ingress, action deny, auth: disabled, match none, 10.0.0.3:4000 -> 10.0.0.2:9090 tcp SYN\n")
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "Events", m.Events(), 3)
	eq(t, "len(DropsTo(10.0.0.2, 8080))", len(m.DropsTo("10.0.0.2", 8080)), 1)
	eq(t, "len(DropsTo(10.0.0.2, 0))", len(m.DropsTo("10.0.0.2", 0)), 2)
	eq(t, "len(DropsTo(10.0.0.9, 0))", len(m.DropsTo("10.0.0.9", 0)), 0)
	eq(t, "len(DropsFrom(10.0.0.3))", len(m.DropsFrom("10.0.0.3")), 1)
}
