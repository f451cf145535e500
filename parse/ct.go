package parse

import (
	"bufio"
	"io"
	"strconv"
	"strings"
)

const kindCTList = "cilium-bpf-ct-list"

// CTEntry is one line of `cilium-dbg bpf ct list global`:
//
//	TCP OUT 10.42.0.40:40404 -> 10.42.0.32:8080 expires=37600 Packets=12 Bytes=1733
//	  RxFlagsSeen=0x1a LastRxReport=16010 TxFlagsSeen=0x1a LastTxReport=16010
//	  Flags=0x0010 [ SeenNonSyn ] RevNAT=0 SourceSecurityID=30125 BackendID=0 NatPort=0
//
// (one line in the output). Src and Dst are as printed. For OUT and IN
// entries that is the connection's original direction. For SVC entries
// Cilium prints the client address with the client port first and the
// service VIP with the service port second ("TCP SVC client:cport ->
// vip:vport"), so Src is the client and Dst the frontend there too.
//
// Fields absent from the version that printed the line are 0: Packets and
// Bytes exist since Cilium 1.16; up to 1.15 the counters were RxPackets,
// RxBytes, TxPackets, TxBytes and IfIndex. BackendID came in 2024 and NatPort
// in 1.20. key=value pairs this parser does not know are kept in Extra.
type CTEntry struct {
	Protocol  string `json:"protocol" expr:"protocol"`   // TCP, UDP, ICMP, ICMPv6, SCTP, ... (Cilium's u8proto names)
	Direction string `json:"direction" expr:"direction"` // OUT, IN or SVC
	Related   bool   `json:"related" expr:"related"`     // "related" keyword (ICMP errors etc.)
	Service   bool   `json:"service" expr:"service"`     // "service" keyword of Cilium <= 1.11
	Src       Addr   `json:"src" expr:"src"`
	Dst       Addr   `json:"dst" expr:"dst"`

	Expires      int64 `json:"expires" expr:"expires"`           // expiry in the datapath clock (seconds or jiffies), not a duration
	Remaining    int64 `json:"remaining" expr:"remaining"`       // seconds left, only with `ct list -d`
	HasRemaining bool  `json:"hasRemaining" expr:"hasRemaining"` // whether "(remaining: N sec(s))" was printed

	Packets      int64 `json:"packets" expr:"packets"`
	Bytes        int64 `json:"bytes" expr:"bytes"`
	RxPackets    int64 `json:"rxPackets" expr:"rxPackets"` // <= 1.15
	RxBytes      int64 `json:"rxBytes" expr:"rxBytes"`     // <= 1.15
	TxPackets    int64 `json:"txPackets" expr:"txPackets"` // <= 1.15
	TxBytes      int64 `json:"txBytes" expr:"txBytes"`     // <= 1.15
	RxFlagsSeen  int   `json:"rxFlagsSeen" expr:"rxFlagsSeen"`
	LastRxReport int64 `json:"lastRxReport" expr:"lastRxReport"`
	TxFlagsSeen  int   `json:"txFlagsSeen" expr:"txFlagsSeen"`
	LastTxReport int64 `json:"lastTxReport" expr:"lastTxReport"`
	// Flags is the raw flag word; FlagNames the names Cilium printed in
	// brackets (RxClosing, TxClosing, SeenNonSyn, NodePort, ...; an unknown
	// bit prints as "Unknown=0x0800").
	Flags            int      `json:"flags" expr:"flags"`
	FlagNames        []string `json:"flagNames" expr:"flagNames"`
	RevNAT           int      `json:"revNAT" expr:"revNAT"`
	SourceSecurityID int      `json:"sourceSecurityID" expr:"sourceSecurityID"`
	BackendID        int      `json:"backendID" expr:"backendID"`
	NatPort          int      `json:"natPort" expr:"natPort"`
	IfIndex          int      `json:"ifIndex" expr:"ifIndex"` // <= 1.15
	// Extra holds key=value pairs this parser does not know (fields of a
	// newer Cilium), values as printed.
	Extra map[string]string `json:"extra" expr:"extra"`
}

// HasFlag reports whether name (e.g. "SeenNonSyn") is among FlagNames.
func (e CTEntry) HasFlag(name string) bool {
	for _, f := range e.FlagNames {
		if f == name {
			return true
		}
	}
	return false
}

// CTList is the parsed `cilium-dbg bpf ct list global`.
type CTList struct {
	Entries []CTEntry `json:"entries" expr:"entries"`
	// Warnings are the "Unable to open <map>: ... Skipping." lines that
	// cilium-dbg prints (to stderr) for maps that do not exist, kept when
	// stderr was captured together with stdout.
	Warnings []string `json:"warnings" expr:"warnings"`
}

// Find returns the entries with the given direction ("OUT", "IN", "SVC";
// "" for any) whose source or destination matches addr ("ip:port",
// ":port", "ip"; "" for any).
func (l CTList) Find(direction, addr string) []CTEntry {
	out := []CTEntry{}
	q, ok := parseQuery(addr)
	if !ok {
		return out
	}
	for _, e := range l.Entries {
		if direction != "" && !strings.EqualFold(e.Direction, direction) {
			continue
		}
		if q.match(e.Src) || q.match(e.Dst) {
			out = append(out, e)
		}
	}
	return out
}

// Count returns len(Find(direction, addr)) without building the slice.
func (l CTList) Count(direction, addr string) int {
	q, ok := parseQuery(addr)
	if !ok {
		return 0
	}
	n := 0
	for _, e := range l.Entries {
		if direction != "" && !strings.EqualFold(e.Direction, direction) {
			continue
		}
		if q.match(e.Src) || q.match(e.Dst) {
			n++
		}
	}
	return n
}

// ParseCTList parses `cilium-dbg bpf ct list global`. Each map's dump is
// followed by an empty line (cilium-dbg prints every map with
// fmt.Println), so blank lines are skipped. Strings in the result share the
// input's memory; the parser allocates little beyond the entries slice,
// which keeps a 200k-line table well under a second.
func ParseCTList(text string) (CTList, error) {
	l := CTList{Entries: make([]CTEntry, 0, strings.Count(text, "\n")+1), Warnings: []string{}}
	r := newLineReader(text)
	for {
		line, ok := r.next()
		if !ok {
			break
		}
		if err := l.add(line, r.num); err != nil {
			return CTList{}, err
		}
	}
	return l, nil
}

// ScanCTList reads `cilium-dbg bpf ct list global` from rd and calls fn for
// every entry, without holding the whole table in memory. It stops at the
// first parse error or error returned by fn. Warning lines are skipped.
func ScanCTList(rd io.Reader, fn func(CTEntry) error) error {
	br := bufio.NewReaderSize(rd, 64*1024)
	num := 0
	for {
		line, err := br.ReadString('\n')
		if line == "" && err != nil {
			if err == io.EOF {
				return nil
			}
			return err
		}
		num++
		line = strings.TrimRight(line, "\r\n")
		if !isBlank(line) && !isCTWarning(line) {
			var e CTEntry
			if perr := parseCTLine(line, &e); perr != nil {
				return newError(kindCTList, num, line, perr.Error())
			}
			if ferr := fn(e); ferr != nil {
				return ferr
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

func (l *CTList) add(line string, num int) error {
	if isBlank(line) {
		return nil
	}
	if isCTWarning(line) {
		l.Warnings = append(l.Warnings, line)
		return nil
	}
	l.Entries = append(l.Entries, CTEntry{})
	if err := parseCTLine(line, &l.Entries[len(l.Entries)-1]); err != nil {
		return newError(kindCTList, num, line, err.Error())
	}
	return nil
}

func isCTWarning(line string) bool {
	return strings.HasPrefix(line, "Unable to open ") && strings.HasSuffix(strings.TrimSpace(line), "Skipping.")
}

const ctLineMsg = errString(`expected "PROTO OUT|IN|SVC src -> dst [related] expires=N key=value..."`)

// parseCTLine parses one entry into e. It walks the line token by token
// (tokens are separated by single spaces; Cilium prints exactly one) and
// keeps substrings of line rather than copies.
func parseCTLine(line string, e *CTEntry) error {
	t := tokenizer{s: line}
	e.Protocol = t.next()
	if !isProtoName(e.Protocol) {
		return ctLineMsg
	}
	e.Direction = t.next()
	switch e.Direction {
	case "OUT", "IN", "SVC":
	default:
		return ctLineMsg
	}
	var err error
	if e.Src, err = ParseAddr(t.next()); err != nil || e.Src.IP == "*" {
		return errString("source: " + errAddr.Error())
	}
	if t.next() != "->" {
		return ctLineMsg
	}
	if e.Dst, err = ParseAddr(t.next()); err != nil || e.Dst.IP == "*" {
		return errString("destination: " + errAddr.Error())
	}
	e.FlagNames = []string{}
	e.Extra = map[string]string{}
	sawExpires := false
	for {
		tok := t.next()
		if tok == "" {
			if t.done() {
				break
			}
			continue // a doubled space
		}
		switch tok {
		case "related":
			e.Related = true
			continue
		case "service":
			e.Service = true
			continue
		case "(remaining:":
			n, err := strconv.ParseInt(t.next(), 10, 64)
			if err != nil || t.next() != "sec(s))" {
				return errString(`expected "(remaining: N sec(s))"`)
			}
			e.Remaining, e.HasRemaining = n, true
			continue
		}
		key, val, ok := strings.Cut(tok, "=")
		if !ok || key == "" {
			return errString("unexpected " + strconv.Quote(shortToken(tok)) + `, expected key=value`)
		}
		if err := e.set(key, val, &t); err != nil {
			return err
		}
		if key == "expires" {
			sawExpires = true
		}
	}
	if !sawExpires {
		return errString(`missing "expires="`)
	}
	return nil
}

func shortToken(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}

// set stores one key=value pair. Flags is followed by its names in
// brackets, which it consumes from t.
func (e *CTEntry) set(key, val string, t *tokenizer) error {
	var err error
	switch key {
	case "expires":
		e.Expires, err = strconv.ParseInt(val, 10, 64)
	case "Packets":
		e.Packets, err = strconv.ParseInt(val, 10, 64)
	case "Bytes":
		e.Bytes, err = strconv.ParseInt(val, 10, 64)
	case "RxPackets":
		e.RxPackets, err = strconv.ParseInt(val, 10, 64)
	case "RxBytes":
		e.RxBytes, err = strconv.ParseInt(val, 10, 64)
	case "TxPackets":
		e.TxPackets, err = strconv.ParseInt(val, 10, 64)
	case "TxBytes":
		e.TxBytes, err = strconv.ParseInt(val, 10, 64)
	case "RxFlagsSeen":
		e.RxFlagsSeen, err = parseHexInt(val)
	case "TxFlagsSeen":
		e.TxFlagsSeen, err = parseHexInt(val)
	case "LastRxReport":
		e.LastRxReport, err = strconv.ParseInt(val, 10, 64)
	case "LastTxReport":
		e.LastTxReport, err = strconv.ParseInt(val, 10, 64)
	case "Flags":
		if e.Flags, err = parseHexInt(val); err != nil {
			break
		}
		if t.peek() == "[" {
			t.next()
			// "[ RxClosing TxClosing SeenNonSyn ]": size the slice once.
			rest := t.s[t.pos:]
			end := strings.IndexByte(rest, ']')
			if end < 0 {
				return errString(`unterminated "Flags=... [ names ]"`)
			}
			names := rest[:end]
			if n := countWords(names); n > 0 {
				e.FlagNames = make([]string, 0, n)
				for names != "" {
					var name string
					name, names, _ = strings.Cut(names, " ")
					if name != "" {
						e.FlagNames = append(e.FlagNames, name)
					}
				}
			}
			t.pos += end + 1
		}
	case "RevNAT":
		e.RevNAT, err = strconv.Atoi(val)
	case "SourceSecurityID":
		e.SourceSecurityID, err = strconv.Atoi(val)
	case "BackendID":
		e.BackendID, err = strconv.Atoi(val)
	case "NatPort":
		e.NatPort, err = strconv.Atoi(val)
	case "IfIndex":
		e.IfIndex, err = strconv.Atoi(val)
	default:
		e.Extra[key] = val
		return nil
	}
	if err != nil {
		return errString("bad number in " + key + "=" + shortToken(val))
	}
	return nil
}

// parseHexInt reads Cilium's %#02x / %#04x values ("0x1a", "0x0013"); a
// plain decimal is accepted too.
func parseHexInt(s string) (int, error) {
	if h, ok := strings.CutPrefix(s, "0x"); ok {
		n, err := strconv.ParseUint(h, 16, 32)
		return int(n), err
	}
	n, err := strconv.ParseUint(s, 10, 32)
	return int(n), err
}

// tokenizer splits on single spaces. Consecutive spaces yield empty
// tokens, which callers skip; that keeps it allocation-free and simple.
type tokenizer struct {
	s   string
	pos int
}

func (t *tokenizer) done() bool { return t.pos >= len(t.s) }

func (t *tokenizer) next() string {
	if t.pos >= len(t.s) {
		return ""
	}
	rest := t.s[t.pos:]
	if i := strings.IndexByte(rest, ' '); i >= 0 {
		t.pos += i + 1
		return rest[:i]
	}
	t.pos = len(t.s)
	return rest
}

func (t *tokenizer) peek() string {
	save := t.pos
	tok := t.next()
	t.pos = save
	return tok
}

// countWords counts space-separated words without allocating.
func countWords(s string) int {
	n := 0
	inWord := false
	for i := 0; i < len(s); i++ {
		if s[i] == ' ' {
			inWord = false
		} else if !inWord {
			inWord = true
			n++
		}
	}
	return n
}
