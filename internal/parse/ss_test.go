package parse

import (
	"strings"
	"testing"
)

func TestSSLocalCaptures(t *testing.T) {
	l, err := ParseSS(input(t, "local/ss/Htln.txt"))
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "count", len(l), 3)
	listen := "LISTEN"
	eq(t, "v4", l[0], Socket{State: &listen, RecvQ: 0, SendQ: 5, Local: Addr{IP: "127.0.0.1", Port: 8080}, Peer: Addr{IP: "0.0.0.0"}, Info: []string{}})
	eq(t, "v6 bracketed", l[1].Local, Addr{IP: "::1", Port: 2222})
	eq(t, "recv-q", l[1].RecvQ, 1)
	eq(t, "any family", l[2].Local, Addr{IP: "*", Port: 8081})
	eq(t, "LocalPort", len(l.LocalPort(8081)), 1)
	eq(t, "no listener", len(l.LocalPort(30780)), 0)

	withHeader, err := ParseSS(input(t, "local/ss/tln-header.txt"))
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "header skipped", withHeader, l)

	p, err := ParseSS(input(t, "local/ss/Htnp.txt"))
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "process", strings.HasPrefix(*p[0].Process, `users:(("python3",pid=`), true)
	eq(t, "mapped", p[4].Local.Unmap().String(), "127.0.0.1:8081")
	eq(t, "Match holder port", len(p.Match(":40404")), 2)
	eq(t, "Match mapped peer by v4", len(p.Match("127.0.0.1:52410")), 2)

	empty, err := ParseSS(input(t, "local/ss/Htln-sport-empty.txt"))
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "empty", empty, SocketList{})
}

func TestSSShapes(t *testing.T) {
	text := "tcp   LISTEN 0      4096   [fe80::1%eth0]:22   [::]:*\n" +
		"udp   UNCONN 0      0      10.0.0.1%eth0:53     0.0.0.0:*    users:((\"my daemon\",pid=12,fd=3))\n" +
		"ESTAB 0      0      10.42.0.40:40404   10.43.77.5:80\n" +
		"\t cubic wscale:7,7 rto:204\n"
	l, err := ParseSS(text)
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "netid", deref(l[0].Netid), "tcp")
	eq(t, "zone", l[0].Local, Addr{IP: "fe80::1", Port: 22, Zone: ptr("eth0")})
	eq(t, "zone string", l[0].Local.String(), "[fe80::1%eth0]:22")
	eq(t, "v4 zone", l[1].Local, Addr{IP: "10.0.0.1", Port: 53, Zone: ptr("eth0")})
	eq(t, "process with space", deref(l[1].Process), `users:(("my daemon",pid=12,fd=3))`)
	eq(t, "no netid", l[2].Netid, (*string)(nil))
	eq(t, "info line", l[2].Info, []string{"cubic wscale:7,7 rto:204"})
	_, err = ParseSS("LISTEN 0 5 127.0.0.1:8080\n")
	wantError(t, err, kindSS, 1, "[STATE] RECV-Q")
	_, err = ParseSS("LISTEN x 5 127.0.0.1:8080 0.0.0.0:*\n")
	wantError(t, err, kindSS, 1, "numeric")
	_, err = ParseSS("LISTEN 0 5 localhost:http 0.0.0.0:*\n")
	wantError(t, err, kindSS, 1, "bad address")
}
