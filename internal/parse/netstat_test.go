package parse

import "testing"

func TestNetstatCaptures(t *testing.T) {
	bb, err := ParseNetstat(input(t, "local/netstat/tn-busybox.txt"))
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "count", len(bb), 6)
	eq(t, "row", bb[0], NetstatConn{Proto: "tcp", Local: Addr{IP: "127.0.0.1", Port: 40404}, Foreign: Addr{IP: "127.0.0.1", Port: 8080}, State: ptr("ESTABLISHED")})
	eq(t, "bare v6", bb[3].Local, Addr{IP: "::1", Port: 53120})
	eq(t, "mapped (busybox)", bb[4].Local, Addr{IP: "::ffff:127.0.0.1", Port: 8081})
	eq(t, "unmap", bb[4].Foreign.Unmap().String(), "127.0.0.1:52410")
	eq(t, "socket peer of :40404", bb.Match("127.0.0.1:40404")[0].Foreign.String(), "127.0.0.1:8080")

	nt, err := ParseNetstat(input(t, "local/netstat/tn-nettools.txt"))
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "net-tools tcp6", nt[3].Proto, "tcp6")
	eq(t, "net-tools unmaps", nt[4].Local, Addr{IP: "127.0.0.1", Port: 8081})
	eq(t, "same rows as busybox", len(nt), len(bb))

	ls, err := ParseNetstat(input(t, "local/netstat/tln-nettools.txt"))
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "any addr any port", ls[2].Foreign, Addr{IP: "::"})
	eq(t, "listen", ls[2].Local, Addr{IP: "::", Port: 8081})
	eq(t, "state", deref(ls[0].State), "LISTEN")
}

func TestNetstatShapes(t *testing.T) {
	text := "tcp        0      0 10.42.0.40:40404        10.43.77.5:80           ESTABLISHED 17/python3\n" +
		"udp        0      0 0.0.0.0:68              0.0.0.0:*                           -\n" +
		"tcp        0      0 ::ffff:10.42.0.32:8080  ::ffff:10.42.0.40:40404 ESTABLISHED \n"
	l, err := ParseNetstat(text)
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "program", deref(l[0].Program), "17/python3")
	eq(t, "udp no state", l[1].State, (*string)(nil))
	eq(t, "udp program", deref(l[1].Program), "-")
	eq(t, "mapped peer", len(l.Match("10.42.0.40:40404")), 2)
	_, err = ParseNetstat("Kernel IP routing table\n")
	wantError(t, err, kindNetstat, 1, "PROTO RECV-Q")
	_, err = ParseNetstat("tcp 0 0 10.0.0.1:1\n")
	wantError(t, err, kindNetstat, 1, "PROTO RECV-Q")
	_, err = ParseNetstat("tcp 0 0 host:ssh 10.0.0.1:1 ESTABLISHED\n")
	wantError(t, err, kindNetstat, 1, "bad address")
}
