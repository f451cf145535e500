package parse

// The decimal and hex number readers of the conntrack and LB parsers: short
// runs of digits are read directly, anything else goes to strconv, which
// decides and words the error.

import (
	"strconv"
	"strings"
)

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
