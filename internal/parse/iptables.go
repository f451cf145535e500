package parse

import (
	"sort"
	"strconv"
	"strings"
)

const kindIPTables = "iptables-save"

// IPTables is the parsed output of `iptables-save` (or `ip6tables-save`,
// with or without -c counters).
type IPTables struct {
	// Tables are the "*name" ... "COMMIT" blocks in printed order (one
	// without a name for grep'd lines).
	Tables []IPTable `json:"tables" expr:"tables"`
	// Lines holds every line of the input as printed (comments, "*table",
	// "COMMIT" included) so that CountContaining equals `grep -c`.
	Lines []string `json:"lines" expr:"lines"`
}

// IPTable is one "*name" ... "COMMIT" block, or the lines of grep'd
// output (`iptables-save | grep CILIUM`) that came without their "*name"
// line.
type IPTable struct {
	// Name is filter, nat, mangle, raw or security; null for grep'd lines,
	// whose table the output does not say (a chain such as INPUT is in
	// several).
	Name *string `json:"name" expr:"name"`
	// Chains are the table's ":NAME POLICY [p:b]" declarations, Rules
	// its "-A" lines, each in printed order.
	Chains []IPChain `json:"chains" expr:"chains"`
	Rules  []IPRule  `json:"rules" expr:"rules"`
}

// IPChain is a ":NAME POLICY [packets:bytes]" declaration. Packets and
// Bytes are null when the line printed no counters.
type IPChain struct {
	// Name is the chain's name ("INPUT", "CILIUM_INPUT").
	Name string `json:"name" expr:"name"`
	// Policy is the built-in chain's policy, ACCEPT, DROP, ..., or "-"
	// for a user chain.
	Policy string `json:"policy" expr:"policy"`
	// Packets and Bytes are the chain's "[packets:bytes]" counters, what
	// its policy matched (real with -c; without it iptables-save prints
	// [0:0]); null when the line printed no counters.
	Packets *int64 `json:"packets" expr:"packets"`
	Bytes   *int64 `json:"bytes" expr:"bytes"`
}

// IPRule is one "-A CHAIN ..." line.
type IPRule struct {
	// Chain is the chain the rule is appended to, the word after "-A".
	Chain string `json:"chain" expr:"chain"`
	// Text is the line as printed without the "[p:b] " counters of -c,
	// e.g. `-A INPUT -m comment --comment "cilium-feeder: CILIUM_INPUT" -j CILIUM_INPUT`.
	Text string `json:"text" expr:"text"`
	// Target is the -j or -g argument (ACCEPT, CILIUM_INPUT, ...); ""
	// for a rule without one.
	Target string `json:"target" expr:"target"`
	// Packets and Bytes are the "[p:b]" counters that iptables-save -c
	// prints before a rule; null without -c (never a 0 nobody printed).
	Packets *int64 `json:"packets" expr:"packets"`
	Bytes   *int64 `json:"bytes" expr:"bytes"`
}

// CountContaining returns the number of lines containing s, like
// `iptables-save | grep -c s` (case-sensitive, any line).
func (t IPTables) CountContaining(s string) int {
	n := 0
	for _, l := range t.Lines {
		if strings.Contains(l, s) {
			n++
		}
	}
	return n
}

// CountContainingIn counts the chain declarations and rules of table
// (filter, nat, ...) that contain s.
func (t IPTables) CountContainingIn(table, s string) int {
	n := 0
	for _, tb := range t.Tables {
		if !tb.is(table) {
			continue
		}
		for _, c := range tb.Chains {
			if strings.Contains(chainLine(c), s) {
				n++
			}
		}
		for _, r := range tb.Rules {
			if strings.Contains(r.Text, s) {
				n++
			}
		}
	}
	return n
}

func chainLine(c IPChain) string {
	if c.Packets == nil || c.Bytes == nil {
		return ":" + c.Name + " " + c.Policy
	}
	return ":" + c.Name + " " + c.Policy + " [" + strconv.FormatInt(*c.Packets, 10) + ":" + strconv.FormatInt(*c.Bytes, 10) + "]"
}

// Chains returns the names of the chains, in any table, that start with
// prefix, sorted and without duplicates.
func (t IPTables) Chains(prefix string) []string {
	seen := map[string]bool{}
	out := []string{}
	for _, tb := range t.Tables {
		for _, c := range tb.Chains {
			if strings.HasPrefix(c.Name, prefix) && !seen[c.Name] {
				seen[c.Name] = true
				out = append(out, c.Name)
			}
		}
	}
	sort.Strings(out)
	return out
}

// Table returns the table called name, or a zero IPTable.
func (t IPTables) Table(name string) IPTable {
	for _, tb := range t.Tables {
		if tb.is(name) {
			return tb
		}
	}
	return IPTable{Chains: []IPChain{}, Rules: []IPRule{}}
}

// is reports whether the table is called name (never, for grep'd lines).
func (tb IPTable) is(name string) bool { return tb.Name != nil && *tb.Name == name }

// Rules returns the rules of chain in table ("" for any table).
func (t IPTables) Rules(table, chain string) []IPRule {
	out := []IPRule{}
	for _, tb := range t.Tables {
		if table != "" && !tb.is(table) {
			continue
		}
		for _, r := range tb.Rules {
			if r.Chain == chain {
				out = append(out, r)
			}
		}
	}
	return out
}

// ParseIPTablesSave parses `iptables-save [-c]`. Empty output is valid
// (no tables loaded, e.g. a nft-only host queried with iptables-legacy).
// Chain and rule lines before any "*table" line are grep'd output
// (`iptables-save | grep CILIUM`): they are read into one table whose name
// is null, since the output does not say which table they are from.
func ParseIPTablesSave(text string) (IPTables, error) {
	if err := refuseCut(kindIPTables, "lines", text, ParseIPTablesSave, func(t IPTables) int { return len(t.Lines) }); err != nil {
		return IPTables{}, err
	}
	out := IPTables{Tables: []IPTable{}, Lines: []string{}}
	r := newLineReader(text)
	var cur *IPTable
	sawTable := false // a "*table" line was read
	for {
		line, ok := r.next()
		if !ok {
			break
		}
		out.Lines = append(out.Lines, line)
		t := strings.TrimSpace(line)
		switch {
		case t == "" || strings.HasPrefix(t, "#"):
		case strings.HasPrefix(t, "*"):
			if cur != nil {
				return IPTables{}, newError(kindIPTables, r.num, line, `"*table" before the previous table's COMMIT`)
			}
			sawTable = true
			name := t[1:]
			out.Tables = append(out.Tables, IPTable{Name: &name, Chains: []IPChain{}, Rules: []IPRule{}})
			cur = &out.Tables[len(out.Tables)-1]
		case t == "COMMIT":
			if cur == nil {
				return IPTables{}, newError(kindIPTables, r.num, line, "COMMIT outside a table")
			}
			cur = nil
		case strings.HasPrefix(t, ":"):
			tb := out.tableOf(cur, sawTable)
			if tb == nil {
				return IPTables{}, newError(kindIPTables, r.num, line, "chain declaration outside a table")
			}
			c, err := parseChainDecl(t)
			if err != nil {
				return IPTables{}, newError(kindIPTables, r.num, line, err.Error())
			}
			tb.Chains = append(tb.Chains, c)
		default:
			tb := out.tableOf(cur, sawTable)
			if tb == nil {
				return IPTables{}, newError(kindIPTables, r.num, line, "rule outside a table")
			}
			rule, err := parseRule(t)
			if err != nil {
				return IPTables{}, newError(kindIPTables, r.num, line, err.Error())
			}
			tb.Rules = append(tb.Rules, rule)
		}
	}
	if cur != nil {
		e := newError(kindIPTables, r.num, "", "output ends before the COMMIT of *"+*cur.Name+" (truncated)")
		e.Truncated = true
		return IPTables{}, e
	}
	return out, nil
}

// tableOf is the table a chain or rule line belongs to: the open table
// cur, else, in grep'd output (no "*table" line read yet), the table of
// unknown name that holds such lines (the first of t.Tables); nil for a
// line after a COMMIT, which no iptables-save prints.
func (t *IPTables) tableOf(cur *IPTable, sawTable bool) *IPTable {
	if cur != nil {
		return cur
	}
	if sawTable {
		return nil
	}
	if len(t.Tables) == 0 {
		t.Tables = append(t.Tables, IPTable{Chains: []IPChain{}, Rules: []IPRule{}})
	}
	return &t.Tables[0]
}

// parseChainDecl reads ":CILIUM_INPUT - [0:0]".
func parseChainDecl(t string) (IPChain, error) {
	const msg = errString(`expected ":CHAIN POLICY [packets:bytes]"`)
	f := strings.Fields(t[1:])
	if len(f) < 2 || f[0] == "" {
		return IPChain{}, msg
	}
	c := IPChain{Name: f[0], Policy: f[1]}
	if len(f) >= 3 {
		p, b, ok := parseCounters(f[2])
		if !ok {
			return IPChain{}, msg
		}
		c.Packets, c.Bytes = &p, &b
	}
	return c, nil
}

func parseCounters(s string) (int64, int64, bool) {
	if !strings.HasPrefix(s, "[") || !strings.HasSuffix(s, "]") {
		return 0, 0, false
	}
	ps, bs, ok := strings.Cut(s[1:len(s)-1], ":")
	if !ok {
		return 0, 0, false
	}
	p, err1 := strconv.ParseInt(ps, 10, 64)
	b, err2 := strconv.ParseInt(bs, 10, 64)
	return p, b, err1 == nil && err2 == nil
}

// parseRule reads "[p:b] -A CHAIN ..." (counters only with -c). The target
// is the word after the last " -j " or " -g " outside quotes.
func parseRule(t string) (IPRule, error) {
	const msg = errString(`expected "-A CHAIN ..."`)
	var r IPRule
	if strings.HasPrefix(t, "[") {
		c, rest, _ := strings.Cut(t, " ")
		p, b, ok := parseCounters(c)
		if !ok {
			return IPRule{}, msg
		}
		r.Packets, r.Bytes = &p, &b
		t = strings.TrimSpace(rest)
	}
	f := strings.Fields(t)
	if len(f) < 2 || (f[0] != "-A" && f[0] != "-I") {
		return IPRule{}, msg
	}
	r.Chain, r.Text = f[1], t
	words := splitQuoted(t)
	for i := 0; i+1 < len(words); i++ {
		if words[i] == "-j" || words[i] == "-g" || words[i] == "--jump" || words[i] == "--goto" {
			r.Target = words[i+1]
		}
	}
	return r, nil
}

// splitQuoted splits on spaces outside double quotes (iptables-save quotes
// comments), so that a comment mentioning "-j" is not taken as the target.
func splitQuoted(s string) []string {
	var out []string
	var b strings.Builder
	inQuote := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\' && inQuote && i+1 < len(s):
			b.WriteByte(c)
			b.WriteByte(s[i+1])
			i++
		case c == '"':
			inQuote = !inQuote
			b.WriteByte(c)
		case c == ' ' && !inQuote:
			if b.Len() > 0 {
				out = append(out, b.String())
				b.Reset()
			}
		default:
			b.WriteByte(c)
		}
	}
	if b.Len() > 0 {
		out = append(out, b.String())
	}
	return out
}
