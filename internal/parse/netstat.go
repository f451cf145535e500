package parse

import (
	"strconv"
	"strings"
)

const kindNetstat = "netstat"

// NetstatConn is one row of `netstat -tn` / `netstat -tln` (net-tools or
// busybox).
type NetstatConn struct {
	// Proto is tcp, tcp6 (net-tools; busybox prints tcp for both), udp,
	// ...
	Proto string `json:"proto" expr:"proto"`
	// RecvQ and SendQ are the Recv-Q and Send-Q columns, in bytes: data
	// received and not yet read by the program, and data sent and not
	// yet acknowledged by the peer.
	RecvQ int `json:"recvQ" expr:"recvQ"`
	SendQ int `json:"sendQ" expr:"sendQ"`
	// Local and Foreign are the Local Address and Foreign Address
	// columns ("0.0.0.0:*" prints port 0).
	Local   Addr `json:"local" expr:"local"`
	Foreign Addr `json:"foreign" expr:"foreign"`
	// State is ESTABLISHED, LISTEN, TIME_WAIT, ...; null when not
	// printed (udp).
	State *string `json:"state" expr:"state"`
	// Program is the "PID/Program name" column of -p ("1234/python3",
	// "-"), null without -p.
	Program *string `json:"program" expr:"program"`
}

// NetstatList is the parsed netstat output.
type NetstatList []NetstatConn

// Match returns the connections whose local or foreign address matches
// addr ("ip:port", ":port", "ip"). IPv4-mapped addresses
// ("::ffff:10.0.0.1", as busybox prints IPv4 peers of IPv6 sockets) match
// their IPv4 form.
func (l NetstatList) Match(addr string) NetstatList {
	return matchEnds(l, addr, func(c NetstatConn) (Addr, Addr) { return c.Local, c.Foreign })
}

// ParseNetstat parses `netstat -tn` style output from net-tools or busybox:
//
//	Active Internet connections (w/o servers)
//	Proto Recv-Q Send-Q Local Address           Foreign Address         State
//	tcp        0      0 10.42.0.40:40404        10.43.77.5:80           ESTABLISHED
//	tcp        0      0 ::ffff:10.42.0.32:8080  ::ffff:10.42.0.40:40404 ESTABLISHED
//
// Header lines are optional. Addresses have no brackets even for IPv6, so
// the port is after the last colon (":::*" is any address, any port).
// net-tools shortens long IPv6 addresses to fit the column unless called
// with -W/--wide; such addresses may not parse.
func ParseNetstat(text string) (NetstatList, error) {
	if err := refuseCut(kindNetstat, "connections", text, ParseNetstat, func(l NetstatList) int { return len(l) }); err != nil {
		return nil, err
	}
	out := NetstatList{}
	r := newLineReader(text)
	for {
		line, ok := r.next()
		if !ok {
			break
		}
		if isBlank(line) {
			continue
		}
		f := strings.Fields(line)
		if f[0] == "Active" || f[0] == "Proto" {
			continue
		}
		if !strings.HasPrefix(f[0], "tcp") && !strings.HasPrefix(f[0], "udp") && !strings.HasPrefix(f[0], "raw") && !strings.HasPrefix(f[0], "sctp") {
			return nil, newError(kindNetstat, r.num, line, `expected "PROTO RECV-Q SEND-Q LOCAL FOREIGN [STATE]"`)
		}
		if len(f) < 5 {
			return nil, newError(kindNetstat, r.num, line, `expected "PROTO RECV-Q SEND-Q LOCAL FOREIGN [STATE]"`)
		}
		c := NetstatConn{Proto: f[0]}
		var err1, err2, err3, err4 error
		c.RecvQ, err1 = strconv.Atoi(f[1])
		c.SendQ, err2 = strconv.Atoi(f[2])
		c.Local, err3 = ParseAddr(f[3])
		c.Foreign, err4 = ParseAddr(f[4])
		if err1 != nil || err2 != nil {
			return nil, newError(kindNetstat, r.num, line, "expected numeric Recv-Q and Send-Q")
		}
		if err3 != nil || err4 != nil {
			return nil, newError(kindNetstat, r.num, line, "bad address: "+errAddr.Error())
		}
		rest := f[5:]
		// A TCP row has a state; UDP rows usually do not. With -p the
		// last column is "PID/Program name" or "-".
		if len(rest) > 0 && isNetstatState(rest[0]) {
			c.State = &rest[0]
			rest = rest[1:]
		}
		if len(rest) > 0 {
			p := strings.Join(rest, " ")
			c.Program = &p
		}
		out = append(out, c)
	}
	return out, nil
}

func isNetstatState(s string) bool {
	switch s {
	case "ESTABLISHED", "SYN_SENT", "SYN_RECV", "FIN_WAIT1", "FIN_WAIT2", "TIME_WAIT", "CLOSE",
		"CLOSE_WAIT", "LAST_ACK", "LISTEN", "CLOSING", "UNKNOWN", "ESTAB", "CLOSED":
		return true
	}
	return false
}
