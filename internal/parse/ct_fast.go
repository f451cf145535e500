package parse

import "strings"

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
		e.BackendID = p.ids.new(uint64(n[7]))
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
