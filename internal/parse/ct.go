package parse

import (
	"bufio"
	"io"
	"runtime"
	"strconv"
	"strings"
	"sync"
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
// Every Cilium version prints expires, the counters, the Rx/Tx flags and
// reports, Flags, RevNAT and SourceSecurityID; a line without one of them
// is incomplete and refused. Fields only some versions print are pointers,
// null when the line did not print them, never a made-up 0: the split
// counters RxPackets, RxBytes, TxPackets, TxBytes and IfIndex (up to 1.15),
// BackendID (2024 on) and NatPort (1.20). Packets and Bytes are printed
// since 1.16; for older lines they are the sum of the Rx and Tx counters,
// which is what the single counters of 1.16 count. key=value pairs this
// parser does not know are kept in Extra.
type CTEntry struct {
	Protocol  string `json:"protocol" expr:"protocol"`   // TCP, UDP, ICMP, ICMPv6, SCTP, ... (Cilium's u8proto names)
	Direction string `json:"direction" expr:"direction"` // OUT, IN or SVC
	Related   bool   `json:"related" expr:"related"`     // "related" keyword (ICMP errors etc.)
	Service   bool   `json:"service" expr:"service"`     // "service" keyword of Cilium <= 1.11
	Src       Addr   `json:"src" expr:"src"`
	Dst       Addr   `json:"dst" expr:"dst"`

	Expires      int64 `json:"expires" expr:"expires"`           // expiry in the datapath clock (seconds or jiffies), not a duration
	Remaining    int64 `json:"remaining" expr:"remaining"`       // seconds left, only with `ct list -d`; 0 when HasRemaining is false
	HasRemaining bool  `json:"hasRemaining" expr:"hasRemaining"` // whether "(remaining: N sec(s))" was printed

	Packets      int64  `json:"packets" expr:"packets"`     // printed (1.16+) or RxPackets+TxPackets (<= 1.15)
	Bytes        int64  `json:"bytes" expr:"bytes"`         // printed (1.16+) or RxBytes+TxBytes (<= 1.15)
	RxPackets    *int64 `json:"rxPackets" expr:"rxPackets"` // <= 1.15; null otherwise
	RxBytes      *int64 `json:"rxBytes" expr:"rxBytes"`     // <= 1.15; null otherwise
	TxPackets    *int64 `json:"txPackets" expr:"txPackets"` // <= 1.15; null otherwise
	TxBytes      *int64 `json:"txBytes" expr:"txBytes"`     // <= 1.15; null otherwise
	RxFlagsSeen  int    `json:"rxFlagsSeen" expr:"rxFlagsSeen"`
	LastRxReport int64  `json:"lastRxReport" expr:"lastRxReport"`
	TxFlagsSeen  int    `json:"txFlagsSeen" expr:"txFlagsSeen"`
	LastTxReport int64  `json:"lastTxReport" expr:"lastTxReport"`
	// Flags is the raw flag word; FlagNames the names Cilium printed in
	// brackets (RxClosing, TxClosing, SeenNonSyn, NodePort, ...; an unknown
	// bit prints as "Unknown=0x0800").
	Flags            int      `json:"flags" expr:"flags"`
	FlagNames        []string `json:"flagNames" expr:"flagNames"`
	RevNAT           int      `json:"revNAT" expr:"revNAT"`
	SourceSecurityID int      `json:"sourceSecurityID" expr:"sourceSecurityID"`
	// BackendID is a 64-bit id; JSON shows it as a string above 2^53 so
	// that jq and JavaScript do not round it (see ExactUint).
	BackendID *ExactUint `json:"backendID" expr:"backendID"` // 2024 on; null otherwise
	NatPort   *int       `json:"natPort" expr:"natPort"`     // 1.20 on; null otherwise
	IfIndex   *int       `json:"ifIndex" expr:"ifIndex"`     // <= 1.15; null otherwise
	// Extra holds key=value pairs this parser does not know (fields of a
	// newer Cilium), values as printed. Entries without any share one
	// empty map: treat it as read-only.
	Extra map[string]string `json:"extra" expr:"extra"`
}

// ExactUint is an unsigned 64-bit integer printed exactly in JSON: as a
// number up to 2^53, where every consumer of JSON numbers (jq, JavaScript)
// is exact, and as a decimal string above it, where they would round.
type ExactUint uint64

// maxExactJSON is 2^53, the largest integer a float64 holds exactly with
// all integers below it.
const maxExactJSON = 1 << 53

// MarshalJSON prints n as a number up to 2^53 and as a string above.
func (n ExactUint) MarshalJSON() ([]byte, error) {
	b := strconv.AppendUint(nil, uint64(n), 10)
	if n <= maxExactJSON {
		return b, nil
	}
	return strconv.AppendQuote(nil, string(b)), nil
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
	for i := range l.Entries {
		e := &l.Entries[i] // not a copy of every entry
		if direction != "" && e.Direction != direction && !strings.EqualFold(e.Direction, direction) {
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
// fmt.Println), so blank lines are skipped. Output cut mid-line is refused
// as truncated (see refuseCut). Strings in the result share the input's
// memory and optional fields are carved from shared blocks, so the parser
// allocates little beyond the entries slice.
func ParseCTList(text string) (CTList, error) {
	if err := refuseCut(kindCTList, "entries", text, ParseCTList, func(l CTList) int { return len(l.Entries) }); err != nil {
		return CTList{}, err
	}
	chunks := ctChunks(text)
	if len(chunks) == 1 {
		return parseCTLines(text, 0, make([]CTEntry, 0, strings.Count(text, "\n")+1))
	}
	// A big table (a busy node's is 200,000 lines) is parsed in chunks
	// of lines on all CPUs at once. First each chunk counts its lines
	// and its entries, so that the entries slice is allocated once at its
	// exact length and every chunk parses straight into its own part of
	// it: no pass over the whole text on one CPU, and nothing to move
	// afterwards. The first error in line order wins.
	type part struct {
		lines, entries int
		list           CTList
		err            error
	}
	parts := make([]part, len(chunks))
	var wg sync.WaitGroup
	for i, c := range chunks {
		wg.Go(func() { parts[i].lines, parts[i].entries = countCTLines(c) })
	}
	wg.Wait()
	total := 0
	for _, p := range parts {
		total += p.entries
	}
	all := make([]CTEntry, total)
	line, at := 0, 0
	for i, c := range chunks {
		p := &parts[i]
		dst, first := all[at:at:at+p.entries], line
		wg.Go(func() { p.list, p.err = parseCTLines(c, first, dst) })
		line, at = line+p.lines, at+p.entries
	}
	wg.Wait()
	l := CTList{Entries: all, Warnings: []string{}}
	for _, p := range parts {
		if p.err != nil {
			return CTList{}, p.err
		}
		l.Warnings = append(l.Warnings, p.list.Warnings...)
	}
	return l, nil
}

// ctChunks cuts a listing into the chunks ParseCTList parses at once:
// pieces of whole lines of at least 1 MB, four per CPU rather than one, so
// that on a machine whose CPUs also run other work a CPU that gets less
// time parses fewer chunks instead of holding up the whole table with its
// one.
func ctChunks(text string) []string { return splitLines(text, 4*runtime.GOMAXPROCS(0), 1<<20) }

// countCTLines counts the lines of text and those of them that are
// entries, as parseCTLines classifies them (ctSkip).
func countCTLines(text string) (lines, entries int) {
	r := newLineReader(text)
	for {
		line, ok := r.next()
		if !ok {
			return r.num, entries
		}
		if !ctSkip(line) {
			entries++
		}
	}
}

// ctSkip reports whether a line of the listing is not an entry: a blank
// line or a warning.
func ctSkip(line string) bool { return isBlank(line) || isCTWarning(line) }

// splitLines cuts text into at most n pieces of whole lines, each at least
// min bytes long (one piece when text is shorter than 2*min).
func splitLines(text string, n, min int) []string {
	var out []string
	for len(out) < n-1 && len(text) >= 2*min {
		cut := len(text) / (n - len(out))
		if cut < min {
			cut = min
		}
		nl := strings.IndexByte(text[cut:], '\n')
		if nl < 0 {
			break
		}
		out = append(out, text[:cut+nl+1])
		text = text[cut+nl+1:]
	}
	return append(out, text)
}

// parseCTLines parses the lines of text, the first of which is line
// firstLine+1 of the whole output, appending the entries to entries, whose
// capacity must be at least the number of entries (countCTLines).
func parseCTLines(text string, firstLine int, entries []CTEntry) (CTList, error) {
	l := CTList{Entries: entries, Warnings: []string{}}
	var p ctParser
	r := newLineReader(text)
	for {
		line, ok := r.next()
		if !ok {
			break
		}
		if ctSkip(line) {
			if !isBlank(line) {
				l.Warnings = append(l.Warnings, line)
			}
			continue
		}
		l.Entries = append(l.Entries, CTEntry{})
		if err := p.line(line, &l.Entries[len(l.Entries)-1]); err != nil {
			return CTList{}, newError(kindCTList, firstLine+r.num, line, err.Error())
		}
	}
	return l, nil
}

// ScanCTList reads `cilium-dbg bpf ct list global` from rd and calls fn for
// every entry, without holding the whole table in memory. It stops at the
// first parse error or error returned by fn; a last line without its
// newline is a truncation error, after fn has seen every complete entry.
// Warning lines are skipped.
func ScanCTList(rd io.Reader, fn func(CTEntry) error) error {
	br := bufio.NewReaderSize(rd, 64*1024)
	var p ctParser
	num, n := 0, 0
	for {
		line, err := br.ReadString('\n')
		if line == "" && err != nil {
			if err == io.EOF {
				return nil
			}
			return err
		}
		num++
		cut := err == io.EOF
		line = strings.TrimSuffix(strings.TrimSuffix(line, "\n"), "\r")
		if cut && !isBlank(line) {
			e := newError(kindCTList, num, line, "output ends mid-line, without a final newline (truncated); "+strconv.Itoa(n)+" complete entries before it")
			e.Truncated = true
			return e
		}
		if !isBlank(line) && !isCTWarning(line) {
			var e CTEntry
			if perr := p.line(line, &e); perr != nil {
				return newError(kindCTList, num, line, perr.Error())
			}
			if ferr := fn(e); ferr != nil {
				return ferr
			}
			n++
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

func isCTWarning(line string) bool {
	return strings.HasPrefix(line, "Unable to open ") && strings.HasSuffix(strings.TrimSpace(line), "Skipping.")
}

const ctLineMsg = errString(`expected "PROTO OUT|IN|SVC src -> dst [related] expires=N key=value..."`)

// ctParser holds what the lines of one listing share: blocks the optional
// fields point into (one allocation per thousand values instead of one per
// value) and the flag-name lists already seen (a busy table has a handful
// of distinct flag sets, so entries share them; treat them as read-only).
type ctParser struct {
	ints  slab[int]
	int64 slab[int64]
	ids   slab[ExactUint]
	flags map[string][]string
}

// slab hands out pointers into blocks of values.
type slab[T any] struct{ block []T }

func (s *slab[T]) new(v T) *T {
	if len(s.block) == cap(s.block) {
		s.block = make([]T, 0, 1024)
	}
	s.block = append(s.block, v)
	return &s.block[len(s.block)-1]
}

// noExtra is the Extra map of every entry without unknown keys.
var noExtra = map[string]string{}

// The keys every version prints, as bits of ctParser.line's seen mask.
const (
	ctExpires = 1 << iota
	ctPackets
	ctBytes
	ctRxPackets
	ctRxBytes
	ctTxPackets
	ctTxBytes
	ctRxFlagsSeen
	ctLastRxReport
	ctTxFlagsSeen
	ctLastTxReport
	ctFlags
	ctRevNAT
	ctSourceSecurityID
)

// ctRequired lists them in printing order, for the error naming the
// missing ones. The counters are either Packets and Bytes (1.16+) or the
// four split ones (<= 1.15).
var ctRequired = []struct {
	bit  int
	name string
}{
	{ctExpires, "expires"}, {ctRxFlagsSeen, "RxFlagsSeen"}, {ctLastRxReport, "LastRxReport"},
	{ctTxFlagsSeen, "TxFlagsSeen"}, {ctLastTxReport, "LastTxReport"}, {ctFlags, "Flags"}, {ctRevNAT, "RevNAT"},
	{ctSourceSecurityID, "SourceSecurityID"},
}

const (
	ctNew   = ctPackets | ctBytes
	ctSplit = ctRxPackets | ctRxBytes | ctTxPackets | ctTxBytes
)

// line parses one entry into e, which must be zero: in one pass when the
// line is laid out as Cilium 1.16 and later print nearly every line
// (fast), else token by token (general).
func (p *ctParser) line(line string, e *CTEntry) error {
	if p.fast(line, e) {
		return nil
	}
	*e = CTEntry{}
	return p.general(line, e)
}

// fast reads a line laid out exactly as Cilium 1.16 and later print it,
// over IPv4, keys in their printed order and nothing else:
//
//	PROTO DIR a.b.c.d:port -> a.b.c.d:port expires=N Packets=N Bytes=N
//	RxFlagsSeen=0xH LastRxReport=N TxFlagsSeen=0xH LastTxReport=N
//	Flags=0xH [ names ] RevNAT=N SourceSecurityID=N [BackendID=N] [NatPort=N]
//
// in one pass, each number read as its digits go by. On anything else
// (another version's keys, IPv6, related, remaining, an unknown key, a
// long or signed number, a doubled space, a malformed line) it returns
// false, with e partly set, and general reads the line from the start and
// decides; so fast never accepts what general would refuse or read
// otherwise (FuzzCTFast checks that they agree).
func (p *ctParser) fast(line string, e *CTEntry) bool {
	c := ctCursor{s: line}
	e.Protocol, e.Direction = c.word(), c.word()
	if !ctProtoDir(e) {
		return false
	}
	var ok bool
	if e.Src, ok = addr4(c.word()); !ok || c.word() != "->" {
		return false
	}
	if e.Dst, ok = addr4(c.word()); !ok {
		return false
	}
	var n [9]uint64
	var h [3]uint32
	if !c.key("expires=") || !c.dec(&n[0]) || !c.key("Packets=") || !c.dec(&n[1]) || !c.key("Bytes=") || !c.dec(&n[2]) ||
		!c.key("RxFlagsSeen=0x") || !c.hex(&h[0]) || !c.key("LastRxReport=") || !c.dec(&n[3]) ||
		!c.key("TxFlagsSeen=0x") || !c.hex(&h[1]) || !c.key("LastTxReport=") || !c.dec(&n[4]) ||
		!c.key("Flags=0x") || !c.hex(&h[2]) || !c.key("[ ") {
		return false
	}
	// "[ RxClosing SeenNonSyn ] ", as general reads it after the "[" token
	end := strings.IndexByte(line[c.pos:], ']')
	if end < 0 {
		return false
	}
	names := line[c.pos : c.pos+end]
	c.pos += end + 1
	if !c.key(" RevNAT=") || !c.dec(&n[5]) || !c.key("SourceSecurityID=") || !c.dec(&n[6]) {
		return false
	}
	backend, natPort := c.key("BackendID="), false
	if backend && !c.dec(&n[7]) {
		return false
	}
	if natPort = c.key("NatPort="); natPort && !c.dec(&n[8]) {
		return false
	}
	if c.pos != len(line) {
		return false
	}
	e.Expires, e.Packets, e.Bytes = int64(n[0]), int64(n[1]), int64(n[2])
	e.RxFlagsSeen, e.LastRxReport = int(h[0]), int64(n[3])
	e.TxFlagsSeen, e.LastTxReport = int(h[1]), int64(n[4])
	e.Flags, e.FlagNames = int(h[2]), p.flagNames(names)
	e.RevNAT, e.SourceSecurityID = int(n[5]), int(n[6])
	if backend {
		e.BackendID = p.ids.new(ExactUint(n[7]))
	}
	if natPort {
		e.NatPort = p.ints.new(int(n[8]))
	}
	e.Extra = noExtra
	return true
}

// ctCursor is fast's position in a line.
type ctCursor struct {
	s   string
	pos int
}

// word returns the text up to the next space or the end, and moves past
// that space.
func (c *ctCursor) word() string {
	i := c.pos
	for i < len(c.s) && c.s[i] != ' ' {
		i++
	}
	w := c.s[c.pos:i]
	c.pos = min(i+1, len(c.s))
	return w
}

// key moves past text when the line goes on with it.
func (c *ctCursor) key(text string) bool {
	if !strings.HasPrefix(c.s[c.pos:], text) {
		return false
	}
	c.pos += len(text)
	return true
}

// dec reads 1 to 18 decimal digits up to the next space or the end, and
// moves past that space.
func (c *ctCursor) dec(n *uint64) bool {
	i, v := c.pos, uint64(0)
	for ; i < len(c.s) && c.s[i] != ' '; i++ {
		d := c.s[i] - '0'
		if d > 9 {
			return false
		}
		v = v*10 + uint64(d)
	}
	if i == c.pos || i-c.pos > 18 {
		return false
	}
	*n, c.pos = v, min(i+1, len(c.s))
	return true
}

// hex is dec for 1 to 8 hex digits.
func (c *ctCursor) hex(n *uint32) bool {
	i := c.pos
	for i < len(c.s) && c.s[i] != ' ' {
		i++
	}
	v, ok := shortHex(c.s[c.pos:i])
	if !ok {
		return false
	}
	*n, c.pos = v, min(i+1, len(c.s))
	return true
}

// general parses one entry into e. It walks the line token by token
// (tokens are separated by single spaces; Cilium prints exactly one) and
// keeps substrings of line rather than copies.
func (p *ctParser) general(line string, e *CTEntry) error {
	t := tokenizer{s: line}
	e.Protocol, e.Direction = t.next(), t.next()
	if !ctProtoDir(e) {
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
	e.Extra = noExtra
	seen := 0
	for {
		tok, eq := t.nextKV()
		if tok == "" {
			if t.done() {
				break
			}
			continue // a doubled space
		}
		if eq > 0 {
			bit, err := p.set(e, tok[:eq], tok[eq+1:], &t)
			if err != nil {
				return err
			}
			if seen&bit != 0 {
				return errString(tok[:eq] + "= printed twice")
			}
			seen |= bit
			continue
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
		return errString("unexpected " + strconv.Quote(shortToken(tok)) + `, expected key=value`)
	}
	return ctComplete(e, seen)
}

// ctProtoDir reports whether an entry's first two words are a protocol
// name and a direction.
func ctProtoDir(e *CTEntry) bool {
	switch e.Direction {
	case "OUT", "IN", "SVC":
		return isProtoName(e.Protocol)
	}
	return false
}

// ctComplete checks that every key all versions print was printed and
// derives Packets and Bytes for the split counters of <= 1.15.
func ctComplete(e *CTEntry, seen int) error {
	var missing []string
	for _, r := range ctRequired {
		if seen&r.bit == 0 {
			missing = append(missing, r.name+"=")
		}
	}
	switch {
	case seen&ctNew == ctNew:
	case seen&ctSplit == ctSplit:
		e.Packets = *e.RxPackets + *e.TxPackets
		e.Bytes = *e.RxBytes + *e.TxBytes
	case seen&ctSplit != 0:
		for _, k := range []struct {
			bit  int
			name string
		}{{ctRxPackets, "RxPackets"}, {ctRxBytes, "RxBytes"}, {ctTxPackets, "TxPackets"}, {ctTxBytes, "TxBytes"}} {
			if seen&k.bit == 0 {
				missing = append(missing, k.name+"=")
			}
		}
	default:
		if seen&ctPackets == 0 {
			missing = append(missing, "Packets=")
		}
		if seen&ctBytes == 0 {
			missing = append(missing, "Bytes=")
		}
	}
	if len(missing) > 0 {
		return errString("incomplete entry: missing " + strings.Join(missing, ", ") + " (every Cilium version prints them)")
	}
	return nil
}

func shortToken(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}

// set stores one key=value pair and returns the key's bit (0 for keys not
// every version prints). Flags is followed by its names in brackets, which
// it consumes from t.
func (p *ctParser) set(e *CTEntry, key, val string, t *tokenizer) (int, error) {
	var err error
	var bit int
	switch key {
	case "expires":
		bit = ctExpires
		e.Expires, err = parseInt64(val)
	case "Packets":
		bit = ctPackets
		e.Packets, err = parseInt64(val)
	case "Bytes":
		bit = ctBytes
		e.Bytes, err = parseInt64(val)
	case "RxPackets", "RxBytes", "TxPackets", "TxBytes":
		var n int64
		n, err = parseInt64(val)
		v := p.int64.new(n)
		switch key {
		case "RxPackets":
			bit, e.RxPackets = ctRxPackets, v
		case "RxBytes":
			bit, e.RxBytes = ctRxBytes, v
		case "TxPackets":
			bit, e.TxPackets = ctTxPackets, v
		default:
			bit, e.TxBytes = ctTxBytes, v
		}
	case "RxFlagsSeen":
		bit = ctRxFlagsSeen
		e.RxFlagsSeen, err = parseHexInt(val)
	case "TxFlagsSeen":
		bit = ctTxFlagsSeen
		e.TxFlagsSeen, err = parseHexInt(val)
	case "LastRxReport":
		bit = ctLastRxReport
		e.LastRxReport, err = parseInt64(val)
	case "LastTxReport":
		bit = ctLastTxReport
		e.LastTxReport, err = parseInt64(val)
	case "Flags":
		bit = ctFlags
		if e.Flags, err = parseHexInt(val); err != nil {
			break
		}
		if t.peek() == "[" {
			t.next()
			// "[ RxClosing TxClosing SeenNonSyn ]"
			rest := t.s[t.pos:]
			end := strings.IndexByte(rest, ']')
			if end < 0 {
				return 0, errString(`unterminated "Flags=... [ names ]"`)
			}
			e.FlagNames = p.flagNames(rest[:end])
			t.pos += end + 1
		}
	case "RevNAT":
		bit = ctRevNAT
		e.RevNAT, err = parseInt(val)
	case "SourceSecurityID":
		bit = ctSourceSecurityID
		e.SourceSecurityID, err = parseInt(val)
	case "BackendID":
		n, ok := shortDecimal(val)
		if !ok {
			n, err = strconv.ParseUint(val, 10, 64)
		}
		e.BackendID = p.ids.new(ExactUint(n))
	case "NatPort":
		var n int
		n, err = parseInt(val)
		e.NatPort = p.ints.new(n)
	case "IfIndex":
		var n int
		n, err = parseInt(val)
		e.IfIndex = p.ints.new(n)
	default:
		if len(e.Extra) == 0 {
			e.Extra = map[string]string{}
		}
		e.Extra[key] = val
		return 0, nil
	}
	if err != nil {
		return 0, errString("bad number in " + key + "=" + shortToken(val))
	}
	return bit, nil
}

// flagNames splits the names between Flags' brackets, reusing the list of
// an earlier entry with the same names.
func (p *ctParser) flagNames(names string) []string {
	if f, ok := p.flags[names]; ok {
		return f
	}
	f := make([]string, 0, countWords(names))
	for rest := names; rest != ""; {
		var name string
		name, rest, _ = strings.Cut(rest, " ")
		if name != "" {
			f = append(f, name)
		}
	}
	if p.flags == nil {
		p.flags = map[string][]string{}
	}
	p.flags[names] = f
	return f
}

// parseInt64 is strconv.ParseInt(s, 10, 64) for the decimal numbers of a
// CT line. Nearly all are short runs of digits, read here directly; the
// rest (a sign, 19 digits or more, anything not a digit) go to strconv,
// which decides and words the error exactly as before.
func parseInt64(s string) (int64, error) {
	if n, ok := shortDecimal(s); ok {
		return int64(n), nil
	}
	return strconv.ParseInt(s, 10, 64)
}

// parseInt is strconv.Atoi with parseInt64's fast path.
func parseInt(s string) (int, error) {
	if n, ok := shortDecimal(s); ok {
		return int(n), nil
	}
	return strconv.Atoi(s)
}

// shortDecimal reads 1 to 18 decimal digits, which cannot overflow an
// int64; ok is false for anything else.
func shortDecimal(s string) (uint64, bool) {
	if len(s) == 0 || len(s) > 18 {
		return 0, false
	}
	var n uint64
	for i := 0; i < len(s); i++ {
		d := s[i] - '0'
		if d > 9 {
			return 0, false
		}
		n = n*10 + uint64(d)
	}
	return n, true
}

// parseHexInt reads Cilium's %#02x / %#04x values ("0x1a", "0x0013"); a
// plain decimal is accepted too. Up to 8 hex digits (which fit 32 bits)
// are read directly; anything else goes to strconv.ParseUint as before.
func parseHexInt(s string) (int, error) {
	if h, ok := strings.CutPrefix(s, "0x"); ok {
		if n, ok := shortHex(h); ok {
			return int(n), nil
		}
		n, err := strconv.ParseUint(h, 16, 32)
		return int(n), err
	}
	if n, ok := shortDecimal(s); ok && n <= 1<<32-1 {
		return int(n), nil
	}
	n, err := strconv.ParseUint(s, 10, 32)
	return int(n), err
}

// shortHex reads 1 to 8 hex digits; ok is false for anything else.
func shortHex(s string) (uint32, bool) {
	if len(s) == 0 || len(s) > 8 {
		return 0, false
	}
	var n uint32
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		n = n<<4 | uint32(c)
	}
	return n, true
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

// nextKV is next for a key=value token: it also returns the offset of
// the token's first '=' (-1 when it has none), found in the same pass
// over the bytes. Tokens are short, so a plain loop beats a call to
// strings.IndexByte per token and then another per '='.
func (t *tokenizer) nextKV() (string, int) {
	s, start, eq := t.s, t.pos, -1
	i := start
	for ; i < len(s) && s[i] != ' '; i++ {
		if s[i] == '=' && eq < 0 {
			eq = i - start
		}
	}
	t.pos = i
	if i < len(s) {
		t.pos++
	}
	return s[start:i], eq
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
