package parse

import (
	"fmt"
	"strings"
	"testing"
)

// tcpdump's lines are read one by one, as a stream hands them over: each
// transport, the interface and direction of -i any, the timestamps of
// -tt and -tttt, a tunnel packet and the one it carried; what a line does
// not print is null, and a line of an option labrun does not read is
// refused, saying which.
func TestTcpdump(t *testing.T) {
	tests := []struct {
		name, in string
		want     string // one packet a " | ", or "error: ..."
	}{
		{"tcp SYN", "06:53:42.629046 IP 10.98.0.1.42272 > 10.98.0.2.8080: Flags [S], seq 522599886, win 64240, options [mss 1460,sackOK,TS val 2080554081 ecr 0,nop,wscale 10], length 0\n",
			"06:53:42.629046 -/- IP tcp 10.98.0.1:42272 > 10.98.0.2:8080 flags=S len=0 icmp=-"},
		{"tcp data with the application's text", "06:53:42.629181 IP 10.98.0.1.42272 > 10.98.0.2.8080: Flags [P.], seq 1:79, ack 1, win 63, options [nop,nop,TS val 1 ecr 2], length 78: HTTP: GET / HTTP/1.1\n",
			"06:53:42.629181 -/- IP tcp 10.98.0.1:42272 > 10.98.0.2:8080 flags=P. len=78 icmp=-"},
		{"-i any: interface and direction", "06:53:42.653934 veth0 In  IP 10.98.0.2.8081 > 10.98.0.1.59112: Flags [R.], seq 0, ack 2665941984, win 0, length 0\n",
			"06:53:42.653934 veth0/In IP tcp 10.98.0.2:8081 > 10.98.0.1:59112 flags=R. len=0 icmp=-"},
		{"-i any, an interface of five letters and more", "06:53:42.653934 lxc5c1d6e6d3a7e Out IP 10.42.0.5.40000 > 10.42.1.7.8080: Flags [S], seq 1, win 1, length 0\n",
			"06:53:42.653934 lxc5c1d6e6d3a7e/Out IP tcp 10.42.0.5:40000 > 10.42.1.7:8080 flags=S len=0 icmp=-"},
		{"IPv6 with ports", "06:53:42.671733 IP6 fd98::1.41472 > fd98::2.8082: Flags [S], seq 1, win 64800, length 0\n",
			"06:53:42.671733 -/- IP6 tcp fd98::1:41472 > fd98::2:8082 flags=S len=0 icmp=-"},
		{"udp", "06:53:42.686026 IP 10.98.0.1.37006 > 10.98.0.2.9999: UDP, length 6\n",
			"06:53:42.686026 -/- IP udp 10.98.0.1:37006 > 10.98.0.2:9999 flags=- len=6 icmp=-"},
		{"dns: udp printed as its application, its length its own", "06:54:22.391607 IP 10.98.0.1.39573 > 10.98.0.2.53: 4660+ A? www.example.com. (33)\n",
			"06:54:22.391607 -/- IP udp 10.98.0.1:39573 > 10.98.0.2:53 flags=- len=- icmp=-"},
		{"icmp echo", "06:54:20.188026 IP 10.98.0.1 > 10.98.0.2: ICMP echo request, id 5476, seq 0, length 64\n",
			"06:54:20.188026 -/- IP icmp 10.98.0.1:- > 10.98.0.2:- flags=- len=64 icmp=echo request"},
		{"icmp port unreachable", "06:53:43.386288 IP 10.98.0.2 > 10.98.0.1: ICMP 10.98.0.2 udp port 9998 unreachable, length 42\n",
			"06:53:43.386288 -/- IP icmp 10.98.0.2:- > 10.98.0.1:- flags=- len=42 icmp=destination unreachable"},
		{"icmp6 behind a hop-by-hop header", "06:53:41.396806 IP6 fe80::1 > ff02::16: HBH ICMP6, multicast listener report v2, 1 group record(s), length 28\n",
			"06:53:41.396806 -/- IP6 icmp6 fe80::1:- > ff02::16:- flags=- len=28 icmp=multicast listener report v2"},
		{"icmp6 neighbor solicitation", "06:53:40.744062 IP6 fd98::1 > ff02::1:ff00:2: ICMP6, neighbor solicitation, who has fd98::2, length 32\n",
			"06:53:40.744062 -/- IP6 icmp6 fd98::1:- > ff02::1:ff00:2:- flags=- len=32 icmp=neighbor solicitation"},
		{"arp", "06:53:40.583517 ARP, Request who-has 10.98.0.2 tell 10.98.0.1, length 28\n",
			"06:53:40.583517 -/- ARP - -:- > -:- flags=- len=28 icmp=-"},
		{"-tttt and -tt", "2026-12-07 06:54:27.345673 IP 10.98.0.1.43940 > 10.98.0.2.8080: Flags [S], seq 1, win 1, length 0\n1796626468.921763 IP 10.98.0.1 > 10.98.0.2: ICMP echo request, id 6564, seq 0, length 64\n",
			"2026-12-07 06:54:27.345673 -/- IP tcp 10.98.0.1:43940 > 10.98.0.2:8080 flags=S len=0 icmp=- | 1796626468.921763 -/- IP icmp 10.98.0.1:- > 10.98.0.2:- flags=- len=64 icmp=echo request"},
		{"a tunnel packet and the pod's packet it carried", "06:54:24.044196 IP 10.98.0.1.47323 > 10.98.0.2.8472: OTV, flags [I] (0x08), overlay 0, instance 42\nIP 10.97.0.1.55710 > 10.97.0.2.8080: Flags [S], seq 941174916, win 64860, length 0\n",
			"06:54:24.044196 -/- IP udp 10.98.0.1:47323 > 10.98.0.2:8472 flags=- len=- icmp=- inner=[IP tcp 10.97.0.1:55710 > 10.97.0.2:8080 flags=S]"},
		{"a packet of another link-layer protocol is kept as printed", "06:54:24.044196 LLDP, length 110: labrun-node\n", "other: 06:54:24.044196 LLDP, length 110: labrun-node"},
		{"nothing", "", ""},

		{"without -n: names", "06:53:42.629046 IP node1.42272 > node2.http: Flags [S], seq 1, win 1, length 0\n", "error: line 1: expected a numeric source address (tcpdump -n)"},
		{"without -n: a port by name", "06:53:42.629046 IP 10.0.0.1.42272 > 10.0.0.2.http: Flags [S], seq 1, win 1, length 0\n", "error: line 1: expected a numeric destination address (tcpdump -n)"},
		{"-e", "06:54:30.499943 4a:56:5a:18:b7:13 > de:05:ea:9f:9a:64, ethertype IPv4 (0x0800), length 98: 10.98.0.1 > 10.98.0.2: ICMP echo request, id 6767, seq 0, length 64\n",
			"error: line 1: expected the packet's network header, not a link-level one: tcpdump's -e output is not read"},
		{"-v", "06:53:42.629046 IP (tos 0x0, ttl 64, id 0, offset 0, flags [DF], proto TCP (6), length 60)\n    10.98.0.1.42272 > 10.98.0.2.8080: Flags [S], length 0\n",
			"error: line 1: expected IP|IP6 SRC > DST: tcpdump's verbose output (-v), the IP header in parentheses, is not read"},
		{"an indented line", "    10.98.0.1.42272 > 10.98.0.2.8080: Flags [S], length 0\n", "error: line 1: expected a packet line, not an indented one: tcpdump's verbose output (-v) is not read"},
		{"-t: no timestamp", "IP 10.98.0.1 > 10.98.0.2: ICMP echo request, id 1, seq 0, length 64\n", "error: line 1: expected a packet line with its timestamp before the packet a tunnel carried"},
		{"a tunnel inside a tunnel", "06:54:24.044196 IP 10.98.0.1.47323 > 10.98.0.2.8472: OTV, flags [I] (0x08), overlay 0, instance 42\nIP 10.97.0.1.40000 > 10.97.0.2.4789: VXLAN, flags [I] (0x08), vni 43\nIP 10.96.0.1 > 10.96.0.2: ICMP echo request, id 1, seq 0, length 64\n",
			"06:54:24.044196 -/- IP udp 10.98.0.1:47323 > 10.98.0.2:8472 flags=- len=- icmp=- inner=[IP udp 10.97.0.1:40000 > 10.97.0.2:4789 flags=-] inner=[IP icmp 10.96.0.1:- > 10.96.0.2:- flags=-]"},
		{"tcpdump's stderr is not its output", "listening on eth0, link-type EN10MB (Ethernet), snapshot length 262144 bytes\n", "error: line 1: expected a packet line: TIMESTAMP [INTERFACE DIRECTION] IP|IP6|ARP"},
		{"a TCP packet without ports", "06:53:42.629046 IP 10.0.0.1 > 10.0.0.2: Flags [S], seq 1, win 1, length 0\n", "error: line 1: expected SRC.PORT > DST.PORT for a tcp packet"},
		{"cut mid-line", "06:53:42.629046 IP 10.98.0.1.42272 > 10.98.0.2.80", "error: line 1: output ends mid-line"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseTcpdump(tt.in)
			if strings.HasPrefix(tt.want, "error: ") {
				if err == nil || !strings.Contains(err.Error(), strings.TrimPrefix(tt.want, "error: ")) {
					t.Fatalf("err %v, want one containing %q (got %+v)", err, strings.TrimPrefix(tt.want, "error: "), got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if s := describeTcpdump(got); s != tt.want {
				t.Errorf("got  %s\nwant %s", s, tt.want)
			}
		})
	}
}

func describeTcpdump(td Tcpdump) string {
	str := func(p *string) string {
		if p == nil {
			return "-"
		}
		return *p
	}
	num := func(p *int) string {
		if p == nil {
			return "-"
		}
		return fmt.Sprint(*p)
	}
	headers := func(h TcpdumpHeaders) string {
		return fmt.Sprintf("%s %s %s:%s > %s:%s flags=%s", h.Network, str(h.Protocol), str(h.SrcIP), num(h.SrcPort), str(h.DstIP), num(h.DstPort), str(h.TCPFlags))
	}
	var out []string
	for _, p := range td.Packets {
		s := fmt.Sprintf("%s %s/%s %s len=%s icmp=%s", p.Time, str(p.Interface), str(p.Direction), headers(p.TcpdumpHeaders), num(p.Length), str(p.ICMPType))
		for _, in := range p.Inner {
			s += " inner=[" + headers(in) + "]"
		}
		out = append(out, s)
	}
	for _, o := range td.Others {
		out = append(out, "other: "+o)
	}
	return strings.Join(out, " | ")
}

// The methods a lab asserts with pick the packets of one flow, on the
// wire or inside a tunnel.
func TestTcpdumpMethods(t *testing.T) {
	td, err := ParseTcpdump(input(t, "local/tcpdump/l_n_i_any.txt"))
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "SYNs to the peer's 8080", len(td.PacketsTo("10.98.0.2", 8080)) > 0 && *td.PacketsTo("10.98.0.2", 8080)[0].TCPFlags == "S", true)
	eq(t, "the peer's first packet: the echo reply", *td.PacketsFrom("10.98.0.2")[0].ICMPType, "echo reply")
	// the ping through the VXLAN device on 8472: once on vxlan0, once
	// inside the tunnel packet on veth0
	inner := td.PacketsTo("10.97.0.2", 0)
	ifaces := map[string]int{}
	for _, p := range inner {
		ifaces[*p.Interface]++
	}
	if ifaces["vxlan0"] == 0 || ifaces["veth0"] == 0 {
		t.Errorf("packets to 10.97.0.2 by interface: %v; want some on vxlan0 and some inside veth0's tunnel packets", ifaces)
	}
	eq(t, "to nowhere", len(td.PacketsTo("192.0.2.1", 0)), 0)
	eq(t, "Events", td.Events(), len(td.Packets))
}
