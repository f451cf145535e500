package parse

import "testing"

func TestParseAddr(t *testing.T) {
	good := []struct {
		in   string
		want Addr
		str  string
	}{
		{"10.0.0.1:80", Addr{IP: "10.0.0.1", Port: 80}, "10.0.0.1:80"},
		{"[fd00::1]:80", Addr{IP: "fd00::1", Port: 80}, "[fd00::1]:80"},
		{"fd00::1:80", Addr{IP: "fd00::1", Port: 80}, "[fd00::1]:80"},
		{"[::]:80", Addr{IP: "::", Port: 80}, "[::]:80"},
		{"*:80", Addr{IP: "*", Port: 80}, "*:80"},
		{"0.0.0.0:*", Addr{IP: "0.0.0.0"}, "0.0.0.0:0"},
		{":::*", Addr{IP: "::"}, "[::]:0"},
		{"[fe80::1%eth0]:22", Addr{IP: "fe80::1", Port: 22, Zone: ptr("eth0")}, "[fe80::1%eth0]:22"},
		{"10.0.0.1%lxc1:53", Addr{IP: "10.0.0.1", Port: 53, Zone: ptr("lxc1")}, "10.0.0.1%lxc1:53"},
		{"::ffff:10.0.0.1:8080", Addr{IP: "::ffff:10.0.0.1", Port: 8080}, "[::ffff:10.0.0.1]:8080"},
		{"1.2.3.4:65535", Addr{IP: "1.2.3.4", Port: 65535}, "1.2.3.4:65535"},
	}
	for _, c := range good {
		a, err := ParseAddr(c.in)
		if err != nil {
			t.Errorf("ParseAddr(%q): %v", c.in, err)
			continue
		}
		eq(t, c.in, a, c.want)
		eq(t, c.in+" String", a.String(), c.str)
	}
	for _, in := range []string{"", "10.0.0.1", "10.0.0.1:", ":80", "10.0.0.1:65536", "10.0.0.1:-1", "host:80", "[fd00::1]80",
		"[10.0.0.1]:80", "999.1.1.1:1", "10.0.0.1%:1", "fd00::1",
		// a zone is an interface name: nothing that delimits an address
		"::%]::0", "[fe80::1%a]b]:22", "fe80::1%a:b:22", "10.0.0.1%a b:1", "10.0.0.1%a/b:1"} {
		if a, err := ParseAddr(in); err == nil {
			t.Errorf("ParseAddr(%q) = %+v, want error", in, a)
		}
	}
}

func TestAddrMatchAndUnmap(t *testing.T) {
	a := Addr{IP: "::ffff:10.42.0.40", Port: 40404}
	eq(t, "unmap", a.Unmap(), Addr{IP: "10.42.0.40", Port: 40404})
	eq(t, "unmap v4 noop", Addr{IP: "10.0.0.1", Port: 1}.Unmap(), Addr{IP: "10.0.0.1", Port: 1})
	for q, want := range map[string]bool{
		"10.42.0.40:40404": true, ":40404": true, "10.42.0.40": true, "::ffff:10.42.0.40": true,
		":40405": false, "10.42.0.41": false, "": true, "garbage": false, ":x": false,
	} {
		eq(t, "Match("+q+")", a.Match(q), want)
	}
	eq(t, "v6 compress", Addr{IP: "fd00:0:0::1", Port: 1}.Match("[fd00::1]:1"), true)
}

func TestParseL4Addr(t *testing.T) {
	for in, want := range map[string]L4Addr{
		"10.43.0.10:53/UDP":     {IP: "10.43.0.10", Port: 53, Protocol: ptr("UDP"), Scope: ptr("external")},
		"0.0.0.0:30780/TCP/i":   {IP: "0.0.0.0", Port: 30780, Protocol: ptr("TCP"), Scope: ptr("internal")},
		"[fd00::a]:53/UDP":      {IP: "fd00::a", Port: 53, Protocol: ptr("UDP"), Scope: ptr("external")},
		"10.43.0.10:53":         {IP: "10.43.0.10", Port: 53, Scope: ptr("external")},
		"10.0.0.1@2:80/TCP":     {IP: "10.0.0.1@2", Port: 80, Protocol: ptr("TCP"), Scope: ptr("external")},
		"[fd00::1@3]:80/SCTP/i": {IP: "fd00::1@3", Port: 80, Protocol: ptr("SCTP"), Scope: ptr("internal")},
	} {
		got, err := ParseL4Addr(in)
		if err != nil {
			t.Errorf("ParseL4Addr(%q): %v", in, err)
			continue
		}
		eq(t, in, got, want)
		eq(t, in+" String", got.String(), in)
	}
	for _, in := range []string{"", "10.0.0.1:80/tcp", "10.0.0.1:80/", "*:80/TCP", "10.0.0.1@:80/TCP", "10.0.0.1:80/TCP/x"} {
		if a, err := ParseL4Addr(in); err == nil {
			t.Errorf("ParseL4Addr(%q) = %+v, want error", in, a)
		}
	}
}

func TestErrorFormat(t *testing.T) {
	e := newError("cilium-bpf-ct-list", 17, "garbage here", `expected "TCP|UDP|... OUT|IN|SVC src -> dst"`)
	eq(t, "format", e.Error(), `parse cilium-bpf-ct-list: line 17: expected "TCP|UDP|... OUT|IN|SVC src -> dst": "garbage here"`)
	long := newError("x", 1, string(make([]byte, 1000)), "m")
	if len(long.Text) > maxErrorText+3 {
		t.Errorf("error text not shortened: %d bytes", len(long.Text))
	}
	eq(t, "no line", newError("x", 0, "", "empty input").Error(), "parse x: empty input")
	eq(t, "utf8 cut", shorten(string(make([]byte, 119))+"é漢字"), string(make([]byte, 119))+"...")
}
