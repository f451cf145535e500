package parse

import (
	"encoding/json"
	"net/netip"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/labrun/labrun/internal/parse/parsetest"
)

// fuzzParser runs the registered parser kind on arbitrary input. It checks
// that the parser never panics, that every failure is a *parse.Error for
// this kind with a bounded message, and that every success is a value of
// the registered type with no nil slices or maps whose JSON size stays
// within a fixed factor of the input (bounded memory: no amplification).
func fuzzParser(f *testing.F, kind string, seeds ...string) {
	p, ok := Lookup(kind)
	if !ok {
		f.Fatalf("no parser %s", kind)
	}
	for _, in := range goldenInputs(f) {
		if in.kind == kind {
			f.Add(in.body)
		}
	}
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		v, err := p.Parse(text)
		if err != nil {
			var pe *Error
			if !asError(err, &pe) || pe.Parser != kind {
				t.Fatalf("error %v (%T) is not a *parse.Error for %s", err, err, kind)
			}
			if len(pe.Text) > maxErrorText+3 {
				t.Fatalf("error text not bounded: %d bytes", len(pe.Text))
			}
			if v != nil {
				t.Fatalf("value %v returned with error", v)
			}
			return
		}
		if reflect.TypeOf(v) != p.Result {
			t.Fatalf("result %T, want %v", v, p.Result)
		}
		checkNoNil(t, reflect.ValueOf(v), "result")
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatalf("result does not marshal: %v", err)
		}
		if len(b) > 4096+200*len(text) {
			t.Fatalf("%d bytes of input gave %d bytes of JSON", len(text), len(b))
		}
	})
}

func FuzzParseStatus(f *testing.F) {
	fuzzParser(f, kindStatus, "KubeProxyReplacement:   True   [eth0   10.0.2.15 (Direct Routing), ]\nKubeProxyReplacement Details:\n  Services:\n  - NodePort:   Enabled \n  Annotations:\n  - a\n")
}

func FuzzParseServiceList(f *testing.F) {
	fuzzParser(f, kindServiceList, "ID   Frontend   Service Type   Backend\n1    1.1.1.1:1/TCP   ClusterIP   1 => 2.2.2.2:2/TCP (active)\n", `[{"spec":{"frontend-address":{"ip":"1.1.1.1"},"backend-addresses":null}}]`)
}

func FuzzParseLBList(f *testing.F) {
	fuzzParser(f, kindLBList, "SERVICE ADDRESS   BACKEND ADDRESS\n1.1.1.1:1   0.0.0.0:0 (1) [X]\n            2.2.2.2:2 (1)\n", `{"1.1.1.1:1/TCP (0)": ["0.0.0.0:0 (1) (0) [X] "], "1.1.1.1:1/TCP": ["2.2.2.2:2/TCP (1)"]}`)
}

func FuzzParseCTList(f *testing.F) {
	fuzzParser(f, kindCTList, "TCP OUT 1.1.1.1:1 -> 2.2.2.2:2 related expires=1 (remaining: -3 sec(s)) Flags=0x1 [ A  B ] X=y \n")
}

func FuzzParseEndpointGet(f *testing.F) {
	fuzzParser(f, kindEndpointGet, `[{"id":1,"status":{"networking":{"addressing":[{"ipv4":"1.1.1.1"}]}}}]`, `{"id":1,"status":{}}`)
}

func FuzzParseEndpointList(f *testing.F) {
	fuzzParser(f, kindEndpointList)
}

func FuzzParseMapList(f *testing.F) {
	fuzzParser(f, kindMapList)
}

func FuzzParseConfig(f *testing.F) {
	fuzzParser(f, kindConfig, "#### Read-only configurations ####\nA : 1\nM\n\tk : v\n##### Read-write configurations #####\nA : 2\n")
}

func FuzzParseBpftoolNetShow(f *testing.F) {
	fuzzParser(f, kindBpftoolNet, "xdp:\ne(1) generic id 1 driver id 2\ntc:\n(2) tcx/ingress prog_id 3 link_id\n", `[{"xdp":[{"multi_attachments":[{"mode":"x","id":1}]}],"netfilter":[{"pf":3,"hook":9}]}]`)
}

func FuzzParseBpftoolLinkShow(f *testing.F) {
	fuzzParser(f, kindBpftoolLink, "1: type 99  prog 2\n\tifindex x(1)  attach_type y\n")
}

func FuzzParseCgroupTree(f *testing.F) {
	fuzzParser(f, kindCgroupTree, "CgroupPath\nID  AttachType  AttachFlags  Name\n/a\n    1  connect4  multi  x\n2 cgroup_inet4_connect\n")
}

func FuzzParseTCFilterShow(f *testing.F) {
	fuzzParser(f, kindTCFilter, "filter parent ffff: protocol ip pref 2 u32 chain 0 fh 800: ht divisor 1\n  match x\n")
}

func FuzzParseIPTablesSave(f *testing.F) {
	fuzzParser(f, kindIPTables, "*nat\n:A - [1:2]\n[3:4] -A A -m comment --comment \"a \\\" -j B\" -j C\nCOMMIT\n")
}

func FuzzParseSS(f *testing.F) {
	fuzzParser(f, kindSS, "tcp LISTEN 0 1 [fe80::1%eth0]:22 *:* users:((\"a b\",pid=1,fd=2))\n\tinfo\n")
}

func FuzzParseNetstat(f *testing.F) {
	fuzzParser(f, kindNetstat, "udp 0 0 0.0.0.0:68 0.0.0.0:* -\n")
}

func FuzzParseCurl(f *testing.F) {
	fuzzParser(f, kindCurl, "http_code=000\ntime_total=1e-3\nexitcode=7\n", `{"http_code":200,"exitcode":0,"time_total":1.5,"x":[1,{"a":null}]}`)
}

func FuzzParseAddr(f *testing.F) {
	for _, s := range []string{"10.0.0.1:80", "[fd00::1%eth0]:22", "::ffff:1.2.3.4:5", "*:*", "1.1.1.1@2:3/TCP/i"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if a, err := ParseAddr(s); err == nil {
			// String must parse back to the same address.
			b, err := ParseAddr(a.String())
			if err != nil || !reflect.DeepEqual(b, a) {
				t.Fatalf("ParseAddr(%q) = %+v; String %q reparses to %+v, %v", s, a, a.String(), b, err)
			}
		}
		if a, err := ParseL4Addr(s); err == nil {
			b, err := ParseL4Addr(a.String())
			if err != nil || !reflect.DeepEqual(b, a) {
				t.Fatalf("ParseL4Addr(%q) = %+v; String %q reparses to %+v, %v", s, a, a.String(), b, err)
			}
		}
		_ = Addr{IP: s}.Match(s)
	})
}

// The conntrack parser's fast paths for numbers and IPv4 addresses agree
// with strconv and net/netip, which decide everything they pass on:
// the same value, and an error exactly when they give one; what addr4
// accepts, the full address parser reads the same.
func FuzzFastPaths(f *testing.F) {
	for _, s := range []string{"0", "42", "007", "-1", "+5", "999999999999999999", "9223372036854775808", "0x1a", "0xffffffff", "0x100000000", "0xG", "1.2.3.4", "01.2.3.4", "256.1.1.1", "1.2.3", "1.2.3.4.5", "::1", "1..2.3", "", "10.0.0.1:80", "10.0.0.1:65536", "10.0.0.1:", "1.2.3.4:5:6", "01.2.3.4:80", "1.2.3.4:*", "1.2.3.4%eth0:22", "1.2.3:4"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := parseInt64(s)
		want, werr := strconv.ParseInt(s, 10, 64)
		if (err == nil) != (werr == nil) || n != want {
			t.Errorf("parseInt64(%q) = %d, %v; strconv: %d, %v", s, n, err, want, werr)
		}
		i, err := parseInt(s)
		wantI, werr := strconv.Atoi(s)
		if (err == nil) != (werr == nil) || i != wantI {
			t.Errorf("parseInt(%q) = %d, %v; strconv: %d, %v", s, i, err, wantI, werr)
		}
		h, err := parseHexInt(s)
		var wantH uint64
		if rest, ok := strings.CutPrefix(s, "0x"); ok {
			wantH, werr = strconv.ParseUint(rest, 16, 32)
		} else {
			wantH, werr = strconv.ParseUint(s, 10, 32)
		}
		if (err == nil) != (werr == nil) || uint64(h) != wantH {
			t.Errorf("parseHexInt(%q) = %d, %v; strconv: %d, %v", s, h, err, wantH, werr)
		}
		ip, err := netip.ParseAddr(s)
		if got, want := validIP(s), err == nil && ip.Zone() == ""; got != want {
			t.Errorf("validIP(%q) = %v, netip says %v", s, got, want)
		}
		// what addr4 reads, parseAddr reads the same
		if a, ok := addr4(s); ok {
			if b, err := parseAddr(s); err != nil || !reflect.DeepEqual(a, b) {
				t.Errorf("addr4(%q) = %+v; parseAddr: %+v, %v", s, a, b, err)
			}
		}
	})
}

// FuzzCTFast: where the conntrack parser's one-pass reader accepts a
// line, the general reader reads the same entry.
func FuzzCTFast(f *testing.F) {
	for _, line := range ctFastVariants {
		f.Add(line)
	}
	for _, line := range strings.Split(parsetest.CTLines(30), "\n") {
		f.Add(line)
	}
	f.Fuzz(func(t *testing.T, line string) { ctFastAgrees(t, line) })
}

func FuzzParseIPCacheList(f *testing.F) {
	fuzzParser(f, kindIPCacheList, "10.0.0.1/32 identity=1 encryptkey=0 tunnelendpoint=0.0.0.0 flags=<none>\n", `{"10.0.0.0/8":["identity=2 encryptkey=0 tunnelendpoint=0.0.0.0 flags=<none>"]}`)
}

// FuzzCutMidLine is the cut invariant of TestCutMidLineRefused on any
// input a parser accepts: the text cut at a byte that is not just after a
// newline is refused naming a line (or nothing complete was left), or
// reads exactly as the whole text (a JSON document that lost only its
// final newline); and the text coloured as grep --color=always colours it
// reads as the plain text. kind picks the parser (modulo the registry).
func FuzzCutMidLine(f *testing.F) {
	kinds := map[string]uint8{}
	for i, p := range All {
		kinds[p.Kind] = uint8(i)
	}
	for _, in := range goldenInputs(f) {
		if !in.expectError && !in.mayFail {
			f.Add(kinds[in.kind], in.body, uint(len(in.body)/2))
		}
	}
	f.Fuzz(func(t *testing.T, kind uint8, text string, at uint) {
		p := All[int(kind)%len(All)]
		full, err := p.Parse(text)
		if err != nil {
			return
		}
		fullJSON := mustJSON(toJSONValue(t, full))
		if coloured, err := p.Parse(grepColour(text)); err != nil || mustJSON(toJSONValue(t, coloured)) != fullJSON {
			t.Fatalf("coloured: %v, %v; plain: %.200s", err, coloured, fullJSON)
		}
		i := int(at % uint(len(text)+1))
		if i == 0 || text[i-1] == '\n' {
			return
		}
		if why := midLineCutWrong(t, p, text[:i], fullJSON, false); why != "" {
			t.Fatal(why)
		}
	})
}

func FuzzParsePolicyGet(f *testing.F) {
	fuzzParser(f, kindPolicyGet,
		"POLICY   DIRECTION   IDENTITY   PORT/PROTO   PROXY PORT   AUTH TYPE   BYTES   PACKETS   PREFIX   COOKIE\nAllow    Ingress     0          ANY          NONE         disabled    2448    36        0        0\n",
		`[{"ProxyPortNetwork":0,"Flags":0,"AuthRequirement":0,"Cookie":0,"Packets":1,"Bytes":2,"Key":{"Prefixlen":64,"Identity":1,"TrafficDirection":0,"Nexthdr":6,"DestPortNetwork":36895}}]`)
}

func FuzzParseMonitor(f *testing.F) {
	fuzzParser(f, kindMonitor,
		"xx drop (Policy denied) flow 0x1 to endpoint 7, ifindex 9, file bpf_lxc.c:10, , identity 5->6: 10.0.0.1:4000 -> 10.0.0.2:8080 tcp SYN\n",
		`{"type":"drop","mark":"0x1","reason":"Policy denied","source":7,"bytes":74,"srcLabel":5,"dstLabel":6,"dstID":7,"Ifindex":3,"summary":{"tcp":"TCP","l3":{"src":"10.0.0.1","dst":"10.0.0.2"},"l4":{"src":"40000","dst":"8080"}}}`+"\n")
}

func FuzzParseTcpdump(f *testing.F) {
	fuzzParser(f, kindTcpdump,
		"06:54:24.044196 veth0 Out IP 10.98.0.1.47323 > 10.98.0.2.8472: OTV, flags [I] (0x08), overlay 0, instance 42\nIP 10.97.0.1.55710 > 10.97.0.2.8080: Flags [S], seq 1, win 1, length 0\n",
		"1796626468.921763 IP6 fd98::1 > fd98::2: ICMP6, echo request, id 5928, seq 0, length 64\n")
}

func FuzzParseHubbleObserve(f *testing.F) {
	fuzzParser(f, kindHubble,
		`{"flow":{"verdict":"DROPPED","IP":{"source":"10.0.0.1","destination":"10.0.0.2"},"l4":{"TCP":{"source_port":1,"destination_port":2,"flags":{"SYN":true}}},"source":{"identity":5},"drop_reason_desc":"POLICY_DENIED"}}`+"\n",
		`{"lost_events":{"num_events_lost":"3"}}`+"\n")
}
