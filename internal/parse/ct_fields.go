package parse

// The key=value fields of a conntrack line: which keys every version
// prints, how each one is stored in a CTEntry (set) and the check that none
// is missing (ctComplete).

import (
	"strconv"
	"strings"
)

// The keys every version prints, as bits of general's seen mask.
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

// set stores one key=value pair and returns the key's bit (0 for keys not
// every version prints). Flags is followed by its names in brackets, which
// it consumes from t. A key this parser does not know goes to Extra.
func (p *ctParser) set(e *CTEntry, key, val string, t *tokenizer) (int, error) {
	var err error
	bit := 0
	switch key {
	case "Flags":
		return p.setFlags(e, val, t)
	case "RxPackets", "RxBytes", "TxPackets", "TxBytes":
		bit, err = p.setSplitCounter(e, key, val)
	case "BackendID", "NatPort", "IfIndex":
		err = p.setOptional(e, key, val)
	default:
		var known bool
		if bit, known, err = setNumber(e, key, val); !known {
			if len(e.Extra) == 0 {
				e.Extra = map[string]string{}
			}
			e.Extra[key] = val
			return 0, nil
		}
	}
	if err != nil {
		return 0, badNumber(key, val)
	}
	return bit, nil
}

// badNumber is the error for a value that is not the number its key holds.
func badNumber(key, val string) error {
	return errString("bad number in " + key + "=" + shortToken(val))
}

// setNumber stores the plain numbers every version prints; known is false
// for any other key.
func setNumber(e *CTEntry, key, val string) (bit int, known bool, err error) {
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
	case "RevNAT":
		bit = ctRevNAT
		e.RevNAT, err = parseInt(val)
	case "SourceSecurityID":
		bit = ctSourceSecurityID
		e.SourceSecurityID, err = parseInt(val)
	default:
		return 0, false, nil
	}
	return bit, true, err
}

// setSplitCounter stores one of the split counters of Cilium <= 1.15
// (RxPackets, RxBytes, TxPackets, TxBytes).
func (p *ctParser) setSplitCounter(e *CTEntry, key, val string) (int, error) {
	n, err := parseInt64(val)
	v := p.int64.new(n)
	switch key {
	case "RxPackets":
		e.RxPackets = v
		return ctRxPackets, err
	case "RxBytes":
		e.RxBytes = v
		return ctRxBytes, err
	case "TxPackets":
		e.TxPackets = v
		return ctTxPackets, err
	default:
		e.TxBytes = v
		return ctTxBytes, err
	}
}

// setOptional stores the keys only some versions print and no line needs:
// BackendID (2024 on), NatPort (1.20) and IfIndex (<= 1.15).
func (p *ctParser) setOptional(e *CTEntry, key, val string) error {
	var err error
	switch key {
	case "BackendID":
		n, ok := shortDecimal(val)
		if !ok {
			n, err = strconv.ParseUint(val, 10, 64)
		}
		e.BackendID = p.ids.new(n)
	case "NatPort":
		var n int
		n, err = parseInt(val)
		e.NatPort = p.ints.new(n)
	default:
		var n int
		n, err = parseInt(val)
		e.IfIndex = p.ints.new(n)
	}
	return err
}

// setFlags stores Flags=0xH and the names Cilium prints after it in
// brackets ("[ RxClosing TxClosing SeenNonSyn ]"), which it consumes from t.
func (p *ctParser) setFlags(e *CTEntry, val string, t *tokenizer) (int, error) {
	var err error
	if e.Flags, err = parseHexInt(val); err != nil {
		return 0, badNumber("Flags", val)
	}
	if t.peek() == "[" {
		t.next()
		rest := t.s[t.pos:]
		end := strings.IndexByte(rest, ']')
		if end < 0 {
			return 0, errString(`unterminated "Flags=... [ names ]"`)
		}
		e.FlagNames = p.flagNames(rest[:end])
		t.pos += end + 1
	}
	return ctFlags, nil
}
