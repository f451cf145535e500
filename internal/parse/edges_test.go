package parse

import (
	"fmt"
	"strings"
	"testing"
)

// TestCutMidLineRefused is the measurement of issue "honest at the edges",
// item 1, on every capture under testdata: text cut at any byte that is
// not just after a newline (inside a value, inside a line's leading
// spaces, between "\r" and "\n") must be refused as Truncated, with an
// error that names a line; only a cut that loses nothing but the final
// newline of a self-delimiting document (JSON) may read as the full
// output. TestCutAnywhere checks what cuts at line ends give.
func TestCutMidLineRefused(t *testing.T) {
	forEachCapture(t, func(t *testing.T, p Parser, body, fullJSON string) {
		for _, i := range cutPoints(body) {
			if i == 0 || body[i-1] == '\n' {
				continue
			}
			if why := midLineCutWrong(t, p, body[:i], fullJSON, true); why != "" {
				t.Fatal(why)
			}
		}
	})
}

// forEachCapture runs f, as a subtest, on every capture under testdata
// that its parser reads, with its parser and its result as JSON.
func forEachCapture(t *testing.T, f func(t *testing.T, p Parser, body, fullJSON string)) {
	for _, in := range goldenInputs(t) {
		if in.expectError || in.mayFail {
			continue
		}
		t.Run(in.rel, func(t *testing.T) {
			p, _ := Lookup(in.kind)
			full, err := p.Parse(in.body)
			if err != nil {
				t.Fatal(err)
			}
			f(t, p, in.body, mustJSON(toJSONValue(t, full)))
		})
	}
}

// midLineCutWrong says what is wrong with what p makes of cut, text that
// does not end with a newline: "" when it is refused naming a line (marked
// Truncated, when truncated is asked for) or nothing complete was left, or
// when it reads exactly as the full output (fullJSON).
func midLineCutWrong(t *testing.T, p Parser, cut, fullJSON string, truncated bool) string {
	v, err := p.Parse(cut)
	if err == nil {
		if mustJSON(toJSONValue(t, v)) == fullJSON {
			return ""
		}
		last := cut[strings.LastIndexByte(cut, '\n')+1:]
		if p.Kind == kindCurl && !strings.Contains(last, "curl: (") {
			// curl prints its -w text with no newline of its own, so a
			// value cut short ("200 0.0017" of "200 0.001764") looks
			// whole; its error line ends with one (docs/language.md).
			return ""
		}
		return fmt.Sprintf("cut at byte %d (%q) accepted: %.200s", len(cut), tail(cut), mustJSON(v))
	}
	var pe *Error
	switch {
	case !asError(err, &pe):
		return fmt.Sprintf("cut at byte %d: error %v is not a *parse.Error", len(cut), err)
	case noRecordYet(cut) && !pe.Truncated:
		return "" // nothing complete before the cut: refused as empty or headless
	case pe.Line == 0 || truncated && !pe.Truncated:
		return fmt.Sprintf("cut at byte %d (%q): error not marked Truncated or names no line: %v", len(cut), tail(cut), err)
	}
	return ""
}

// TestColourAndCRLF reads every capture the ways a learner's terminal can
// hand it over, each of which must parse to exactly what the plain capture
// parses to: coloured by grep --color=always (each match wrapped in
// ESC[01;31mESC[K ... ESC[mESC[K; here every third word and every line's
// start), coloured whole lines (ESC[32m ... ESC[0m), and with CRLF line
// ends (pasted from Windows).
func TestColourAndCRLF(t *testing.T) {
	forEachCapture(t, func(t *testing.T, p Parser, body, want string) {
		for name, variant := range map[string]string{
			"grep --color=always": grepColour(body),
			"coloured lines":      colourLines(body),
			"CRLF":                strings.ReplaceAll(body, "\n", "\r\n"),
		} {
			v, err := p.Parse(variant)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if got := mustJSON(toJSONValue(t, v)); got != want {
				t.Fatalf("%s: %.300s\nplain: %.300s", name, got, want)
			}
		}
	})
}

const grepOn, grepOff = "\x1b[01;31m\x1b[K", "\x1b[m\x1b[K"

// grepColour colours text the way grep --color=always shows its matches:
// here every third word of each line and each line's first byte.
func grepColour(text string) string {
	var b strings.Builder
	for _, line := range strings.SplitAfter(text, "\n") {
		word, inWord := 0, false
		for i := 0; i < len(line); i++ {
			c := line[i]
			space := c == ' ' || c == '\t' || c == '\n' || c == '\r'
			if !space && !inWord {
				word++
				if word%3 == 1 {
					b.WriteString(grepOn)
				}
			}
			if space && inWord && word%3 == 1 {
				b.WriteString(grepOff)
			}
			inWord = !space
			b.WriteByte(c)
		}
		if inWord && word%3 == 1 {
			b.WriteString(grepOff)
		}
	}
	return b.String()
}

// colourLines wraps every line in a colour, as a coloured terminal prompt
// or a pager's highlight does.
func colourLines(text string) string {
	lines := strings.SplitAfter(text, "\n")
	for i, l := range lines {
		if body, ok := strings.CutSuffix(l, "\n"); ok {
			lines[i] = "\x1b[32m" + body + "\x1b[0m\n"
		}
	}
	return strings.Join(lines, "")
}

// TestEscapeRefused: an escape sequence other than a colour code changes
// what a terminal showed, so it is refused, naming its line and the cause;
// colour codes are taken off in every kind, the same way.
func TestEscapeRefused(t *testing.T) {
	p, _ := Lookup(kindStatus)
	_, err := p.Parse("KubeProxyReplacement:   True\nRouting:   \x1b[2JNetwork: Tunnel\n")
	var pe *Error
	if !asError(err, &pe) || pe.Line != 2 || !strings.Contains(pe.Msg, "not a colour code") {
		t.Fatalf("got %v, want a refusal of line 2's escape sequence", err)
	}
	for _, kind := range []string{kindStatus, kindConfig, kindBpftoolNet} {
		p, _ := Lookup(kind)
		if _, err := p.Parse("\x1b[01;31"); err == nil || !strings.Contains(err.Error(), "not a colour code") {
			t.Errorf("%s: a colour code cut short: %v", kind, err)
		}
	}
	got, err := plainText(kindStatus, grepOn+"KubeProxyReplacement"+grepOff+":   True\n")
	eq(t, "colour taken off", got, "KubeProxyReplacement:   True\n")
	eq(t, "no error", err, error(nil))
}

// TestCutThenNewline: lines cut inside a word and then ended with a
// newline (head -c N; echo, a paste that stopped mid-line) where the
// format shows it: each is refused naming its line, or, for a name that
// may be an empty map, gives no value.
func TestCutThenNewline(t *testing.T) {
	for _, c := range []struct{ kind, text, want string }{
		{kindTCFilter, "filter protocol all p\n", `line 1: unknown filter kind "p"`},
		{kindTCFilter, "filter protocol all pref 1 bpf chain 0 handle 0x1 cil_from_container-lxc1 direct-action not_in_hw id 4773 name cil_from_container tag 1a2b3c\n", `line 1: bpf filter "name N" without a 16-digit "tag T"`},
		{kindStatus, "KubeProxyReplacement:   True   [eth0   1\n", `line 1: device list "[..." without its "]"`},
		{kindStatus, "KubeProxyReplacement:   True   [eth0   1]\n", `line 1: device "eth0": expected IP addresses, got "1"`},
		{kindStatus, "KubeProxyReplacement:   True\nKubeProxyReplacement Details:\n  Devices:    eth0   1\n", `line 3: device "eth0": expected IP addresses, got "1"`},
		{kindCurl, "http_code=000\ncurl: (7) Failed to conn", `line 2: "curl: (N) message" line ends without its newline (truncated)`},
		{kindCurl, "000 0.000512curl: (7", `line 1: "curl: (N) message" line ends without its newline`},
	} {
		p, _ := Lookup(c.kind)
		_, err := p.Parse(c.text)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %q: got %v, want an error with %q", c.kind, c.text, err, c.want)
		}
	}
	cfg, err := ParseConfig("ServiceNoBackendResponse          : reject\nServiceNoBack\nTunnelPort                        : 8472\n")
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "a bare name has no value", cfg.Has("ServiceNoBack"), false)
	eq(t, "a bare name is listed as a map", cfg.Maps, []string{"ServiceNoBack"})
	eq(t, "the keys around it", len(cfg.Values), 2)
}

// TestMissingIsNull: a number the output did not print is null, and a 0
// that was printed stays 0.
func TestMissingIsNull(t *testing.T) {
	svcs, err := ParseServiceList(`[{"spec":{"id":1,"frontend-address":{"ip":"10.43.0.1","port":80,"protocol":"TCP"},` +
		`"backend-addresses":[{"ip":"10.42.0.1","port":80,"weight":0},{"ip":"10.42.0.2","port":80}]}}]` + "\n")
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "weight 0 printed", deref(svcs[0].Backends[0].Weight), 0)
	eq(t, "weight not printed", deref(svcs[0].Backends[1].Weight), nil)
	table, err := ParseServiceList("ID   Frontend         Service Type   Backend\n1    10.43.0.1:80/TCP ClusterIP      1 => 10.42.0.1:80/TCP (active)\n")
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "the table prints no weight", deref(table[0].Backends[0].Weight), nil)
	eps, err := ParseEndpointGet(`[{"id":7,"status":{"state":"waiting-for-identity"}},{"id":8,"status":{"identity":{"id":0}}}]` + "\n")
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "no identity yet", deref(eps[0].Identity), nil)
	eq(t, "identity 0 printed", deref(eps[1].Identity), 0)
	ipt, err := ParseIPTablesSave("-A CILIUM_INPUT -j ACCEPT\n")
	if err == nil {
		eq(t, "no counters without -c", deref(ipt.Rules("", "CILIUM_INPUT")[0].Packets), nil)
	}
}

// TestGrepdIPTablesAndStateFilteredSS reads real captures of the testbed
// (testdata/real) that drop part of the format: iptables-save piped
// through grep, which loses the "*table" lines (the table is then null,
// not guessed), and ss with a state filter, which prints no State column
// (the state is then null; the filter is not in the output).
func TestGrepdIPTablesAndStateFilteredSS(t *testing.T) {
	grepd, err := ParseIPTablesSave(input(t, "real/node_iptables-save_grep_CILIUM.txt"))
	if err != nil {
		t.Fatal(err)
	}
	full, err := ParseIPTablesSave(input(t, "real/node_iptables-save.txt"))
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "one table", len(grepd.Tables), 1)
	eq(t, "its name is not printed", grepd.Tables[0].Name == nil, true)
	eq(t, "grep -c CILIUM", grepd.CountContaining("CILIUM"), full.CountContaining("CILIUM"))
	eq(t, "Cilium's chains", grepd.Chains("CILIUM_"), full.Chains("CILIUM_"))
	eq(t, "every line a chain or a rule", len(grepd.Tables[0].Chains)+len(grepd.Tables[0].Rules), len(grepd.Lines))
	eq(t, "no table is named", grepd.Table("nat").Rules, []IPRule{})
	eq(t, "rules of any table", len(grepd.Rules("", "CILIUM_POST_nat")), len(full.Rules("nat", "CILIUM_POST_nat")))

	filtered, err := ParseSS(input(t, "real/node_ss_tln_state_listening.txt"))
	if err != nil {
		t.Fatal(err)
	}
	plain, err := ParseSS(input(t, "real/node_ss_Htln_beside_state_listening.txt"))
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "same listeners", len(filtered), len(plain))
	for i := range filtered {
		eq(t, "no State column", filtered[i].State == nil, true)
		eq(t, "plain listing has it", deref(plain[i].State), "LISTEN")
		eq(t, "same socket", filtered[i].Local, plain[i].Local)
		eq(t, "same queues", []int{filtered[i].RecvQ, filtered[i].SendQ}, []int{plain[i].RecvQ, plain[i].SendQ})
	}
	estab, err := ParseSS(input(t, "real/node_ss_Htn_state_established.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if len(estab) == 0 || len(estab.LocalPort(2379)) == 0 {
		t.Fatalf("%d established sockets, %d on etcd's 2379", len(estab), len(estab.LocalPort(2379)))
	}
	for _, s := range estab {
		eq(t, "no State column", s.State == nil, true)
	}
}
