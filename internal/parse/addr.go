package parse

import (
	"errors"
	"net/netip"
	"strconv"
	"strings"
)

// Addr is an IP address and a port as the tools print them: "10.0.0.1:80",
// "[fd00::1]:80", and for sockets also "*:80" or "0.0.0.0:*" (port 0) and
// link-local zones ("fe80::1%eth0").
//
// IP is kept as printed (not normalised), so "::ffff:10.0.0.1" stays an
// IPv4-mapped IPv6 address; use Unmap to compare it with plain IPv4.
type Addr struct {
	// IP is the address as printed, without brackets or zone:
	// "10.0.0.1", "fd00::1", or "*" for any address.
	IP string `json:"ip" expr:"ip"`
	// Port is the port; 0 when printed as "*" (any port).
	Port int `json:"port" expr:"port"`
	// Zone is the interface of a scoped address ("fe80::1%eth0" gives
	// "eth0"); null when the address has none (the usual case).
	Zone *string `json:"zone" expr:"zone"`
}

// String returns "ip:port", with brackets around IPv6 ("[fd00::1]:80") and
// the zone after a '%' when there is one.
func (a Addr) String() string {
	ip := a.IP
	if a.Zone != nil {
		ip += "%" + *a.Zone
	}
	if strings.Contains(a.IP, ":") {
		return "[" + ip + "]:" + strconv.Itoa(a.Port)
	}
	return ip + ":" + strconv.Itoa(a.Port)
}

// Is6 reports whether the address is IPv6 (including IPv4-mapped IPv6).
func (a Addr) Is6() bool { return strings.Contains(a.IP, ":") }

// Unmap returns the address with an IPv4-mapped IPv6 IP ("::ffff:10.0.0.1",
// as netstat prints IPv4 peers of IPv6 sockets) turned into plain IPv4.
// Other addresses are returned unchanged.
func (a Addr) Unmap() Addr {
	if ip, err := netip.ParseAddr(a.IP); err == nil && ip.Is4In6() {
		a.IP = ip.Unmap().String()
	}
	return a
}

// Match reports whether the address matches query, which is one of
// "ip:port", "[v6]:port", ":port" (any IP) or "ip" (any port). IPv4-mapped
// IPv6 addresses match their IPv4 form.
func (a Addr) Match(query string) bool {
	q, ok := parseQuery(query)
	return ok && q.match(a)
}

type addrQuery struct {
	ip   string // "" = any
	port int    // -1 = any
}

func parseQuery(query string) (addrQuery, bool) {
	query = strings.TrimSpace(query)
	if query == "" {
		return addrQuery{port: -1}, true
	}
	if strings.HasPrefix(query, ":") && !strings.HasPrefix(query, "::") {
		p, err := parsePort(query[1:])
		if err != nil {
			return addrQuery{}, false
		}
		return addrQuery{port: p}, true
	}
	if a, err := ParseAddr(query); err == nil {
		return addrQuery{ip: canonIP(a.IP), port: a.Port}, true
	}
	if ip, err := netip.ParseAddr(query); err == nil {
		return addrQuery{ip: canonIP(ip.String()), port: -1}, true
	}
	return addrQuery{}, false
}

func (q addrQuery) match(a Addr) bool {
	if q.port >= 0 && a.Port != q.port {
		return false
	}
	return q.ip == "" || canonIP(a.IP) == q.ip
}

// canonIP normalises an IP for comparison: IPv4-mapped IPv6 becomes IPv4 and
// IPv6 is compressed; text that is not an IP is returned unchanged.
func canonIP(s string) string {
	if ip, err := netip.ParseAddr(s); err == nil {
		return ip.Unmap().WithZone("").String()
	}
	return s
}

var errAddr = errors.New(`expected "ip:port" or "[ipv6]:port"`)

// ParseAddr parses "ip:port". It accepts the forms the tools print:
//
//	10.0.0.1:80            IPv4
//	[fd00::1]:80           bracketed IPv6 (ss, Cilium's service tables)
//	fd00::1:80             bare IPv6; the port is after the last colon
//	                       (cilium-dbg bpf ct list, netstat)
//	[fe80::1%eth0]:22      zones (ss), also 10.0.0.1%eth0:22
//	*:80, 0.0.0.0:*        wildcards (ss); a "*" port is 0
//
// The IP must be a valid IPv4 or IPv6 address or "*".
func ParseAddr(s string) (Addr, error) {
	if a, ok := addr4(s); ok {
		return a, nil
	}
	return parseAddr(s)
}

// addr4 reads "a.b.c.d:port", the form of nearly every address in the
// tables (a busy conntrack table has 400,000), in one pass with the rules
// of isDottedQuad and parsePort. ok is false for anything else, which
// parseAddr then reads (and refuses) in full, so the two cannot disagree
// on what they both accept.
func addr4(s string) (Addr, bool) {
	fields, n, digits := 0, 0, 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '.' || c == ':' {
			if digits == 0 || n > 255 || digits > 1 && s[i-digits] == '0' {
				return Addr{}, false
			}
			fields, n, digits = fields+1, 0, 0
			if c == '.' {
				continue
			}
			if fields != 4 {
				return Addr{}, false
			}
			p, err := parsePort(s[i+1:])
			if err != nil {
				return Addr{}, false
			}
			return Addr{IP: s[:i], Port: p}, true
		}
		d := c - '0'
		if d > 9 || digits == 3 {
			return Addr{}, false
		}
		n, digits = n*10+int(d), digits+1
	}
	return Addr{}, false
}

// parseAddr is ParseAddr for every form.
func parseAddr(s string) (Addr, error) {
	var host, port string
	if strings.HasPrefix(s, "[") {
		end := strings.Index(s, "]:")
		if end < 0 {
			return Addr{}, errAddr
		}
		host, port = s[1:end], s[end+2:]
		if !strings.Contains(host, ":") {
			return Addr{}, errAddr
		}
	} else {
		i := strings.LastIndexByte(s, ':')
		if i <= 0 {
			return Addr{}, errAddr
		}
		host, port = s[:i], s[i+1:]
	}
	var a Addr
	if i := strings.IndexByte(host, '%'); i >= 0 {
		zone := host[i+1:]
		if !validZone(zone) {
			return Addr{}, errAddr
		}
		host, a.Zone = host[:i], &zone
	}
	if host != "*" && !validIP(host) {
		return Addr{}, errAddr
	}
	a.IP = host
	if port == "*" {
		return a, nil
	}
	p, err := parsePort(port)
	if err != nil {
		return Addr{}, err
	}
	a.Port = p
	return a, nil
}

// validZone reports whether s can be the zone of a scoped address: an
// interface name as ss prints it ("eth0", "lxc1a2b"), never empty and
// without the characters that delimit an address ("[", "]", ":", "%",
// "/") or blanks, so that Addr.String reads back the same.
func validZone(s string) bool {
	return s != "" && !strings.ContainsAny(s, "[]:%/ \t\n")
}

// validIP reports whether s is an IPv4 or IPv6 address without zone.
// netip.ParseAddr allocates nothing for valid input, which matters for the
// conntrack parser's 200k lines.
func validIP(s string) bool {
	if isDottedQuad(s) {
		return true
	}
	ip, err := netip.ParseAddr(s)
	return err == nil && ip.Zone() == ""
}

// isDottedQuad reports whether s is an IPv4 address in the form
// netip.ParseAddr accepts: four fields of 1-3 digits, each at most 255,
// none with a leading zero. It is the common case of every table, read in
// one pass; false sends s to netip.ParseAddr, which has the last word.
func isDottedQuad(s string) bool {
	fields, n, digits := 0, 0, 0
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] == '.' {
			if digits == 0 || n > 255 || digits > 1 && s[i-digits] == '0' {
				return false
			}
			fields++
			n, digits = 0, 0
			continue
		}
		d := s[i] - '0'
		if d > 9 || digits == 3 {
			return false
		}
		n, digits = n*10+int(d), digits+1
	}
	return fields == 4
}

var errPort = errors.New("expected a port number 0-65535")

func parsePort(s string) (int, error) {
	if s == "" || len(s) > 5 {
		return 0, errPort
	}
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, errPort
		}
		n = n*10 + int(c-'0')
	}
	if n > 65535 {
		return 0, errPort
	}
	return n, nil
}

// L4Addr is an address with its transport protocol, as Cilium prints
// service frontends and backends: "10.43.0.10:53/UDP", "[fd00::1]:80/TCP",
// and "0.0.0.0:30780/TCP/i" for the internal scope of a service whose
// external and internal traffic policies differ. Cilium 1.15 printed no
// protocol ("10.43.0.10:53"); Protocol is then "".
type L4Addr struct {
	// IP is the address without brackets ("10.43.0.10", "fd00::1"),
	// Port the port.
	IP   string `json:"ip" expr:"ip"`
	Port int    `json:"port" expr:"port"`
	// Protocol is "TCP", "UDP", "SCTP" or "ANY"; null when not printed
	// (Cilium 1.15's tables, --revnat).
	Protocol *string `json:"protocol" expr:"protocol"`
	// Scope is "internal" for a frontend printed with "/i" and
	// "external" for one without; null for backends and reverse NAT
	// addresses, which have no scope.
	Scope *string `json:"scope" expr:"scope"`
}

// String returns the address in Cilium's form "ip:port/PROTO[/i]".
func (a L4Addr) String() string {
	s := a.HostPort()
	if a.Protocol != nil {
		s += "/" + *a.Protocol
	}
	if a.Scope != nil && *a.Scope == "internal" {
		s += "/i"
	}
	return s
}

// scopeOf is a frontend's scope as printed: "internal" with "/i",
// "external" without.
func scopeOf(internal bool) *string {
	if internal {
		return orNull("internal")
	}
	return orNull("external")
}

// HostPort returns "ip:port" ("[v6]:port"), the form the lab files use.
func (a L4Addr) HostPort() string { return Addr{IP: a.IP, Port: a.Port}.String() }

// Addr returns the address without protocol and scope.
func (a L4Addr) Addr() Addr { return Addr{IP: a.IP, Port: a.Port} }

var errL4Addr = errors.New(`expected "ip:port[/PROTO][/i]"`)

// ParseL4Addr parses Cilium's "ip:port[/PROTO][/i]". A missing "/i" means
// the external scope. The IP may carry Cilium's cluster suffix "@<id>"
// (clustermesh backends), which is kept in IP.
func ParseL4Addr(s string) (L4Addr, error) {
	var a L4Addr
	rest, internal := strings.CutSuffix(s, "/i")
	a.Scope = scopeOf(internal)
	// The protocol is after the last '/', which cannot be part of ip:port.
	if i := strings.LastIndexByte(rest, '/'); i >= 0 {
		proto := rest[i+1:]
		rest = rest[:i]
		if !isProtoName(proto) {
			return L4Addr{}, errL4Addr
		}
		a.Protocol = &proto
	}
	host, cluster := rest, ""
	if at := strings.IndexByte(rest, '@'); at >= 0 {
		// "10.0.0.1@2:80" or "[fd00::1@2]:80": cut the cluster id out
		// before parsing ip:port.
		end := at + 1
		for end < len(rest) && rest[end] >= '0' && rest[end] <= '9' {
			end++
		}
		if end == at+1 {
			return L4Addr{}, errL4Addr
		}
		cluster = rest[at:end]
		host = rest[:at] + rest[end:]
	}
	ad, err := ParseAddr(host)
	if err != nil || ad.IP == "*" || ad.Zone != nil {
		return L4Addr{}, errL4Addr
	}
	a.IP, a.Port = ad.IP+cluster, ad.Port
	return a, nil
}

// isProtoName accepts Cilium's protocol names (u8proto / L4Type): upper-case
// letters and digits, e.g. TCP, UDP, SCTP, ANY, ICMPv6, or a number.
func isProtoName(s string) bool {
	if s == "" || len(s) > 10 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == 'v') {
			return false
		}
	}
	return true
}

// matchEnds returns the items of l one of whose two addresses (as ends
// returns them: local and remote) matches query ("ip:port", ":port",
// "ip"); an unusable query matches nothing. Never nil.
func matchEnds[S ~[]E, E any](l S, query string, ends func(E) (Addr, Addr)) S {
	out := S{}
	q, ok := parseQuery(query)
	if !ok {
		return out
	}
	for _, e := range l {
		if a, b := ends(e); q.match(a) || q.match(b) {
			out = append(out, e)
		}
	}
	return out
}
