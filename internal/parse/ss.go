package parse

import (
	"strconv"
	"strings"
)

const kindSS = "ss"

// Socket is one line of `ss -tn`, `ss -tln`, `ss -Htlnp` and friends.
type Socket struct {
	// Netid is the Netid column, "tcp", "udp", ..., when printed (ss -a
	// or -tu); null otherwise.
	Netid *string `json:"netid" expr:"netid"`
	// State is LISTEN, ESTAB, TIME-WAIT, UNCONN, ...; null when ss
	// printed no State column, as with a state filter (`ss -tn state
	// established`), whose text is not in the output.
	State *string `json:"state" expr:"state"`
	// RecvQ and SendQ are the Recv-Q and Send-Q columns: for a LISTEN
	// socket the connections waiting to be accepted and the backlog;
	// otherwise the bytes received and not yet read, and sent and not
	// yet acknowledged.
	RecvQ int `json:"recvQ" expr:"recvQ"`
	SendQ int `json:"sendQ" expr:"sendQ"`
	// Local and Peer are the Local Address:Port and Peer Address:Port
	// columns ("*" prints as IP "*", a "*" port as 0).
	Local Addr `json:"local" expr:"local"`
	Peer  Addr `json:"peer" expr:"peer"`
	// Process is the users:(("name",pid=N,fd=M)) column of -p, as
	// printed; null without -p (or for a socket of no process).
	Process *string `json:"process" expr:"process"`
	// Info holds the indented lines that -e/-i/-m print under a socket.
	Info []string `json:"info" expr:"info"`
}

// SocketList is the parsed ss output.
type SocketList []Socket

// LocalPort returns the sockets whose local port is port.
func (l SocketList) LocalPort(port int) SocketList {
	out := SocketList{}
	for _, s := range l {
		if s.Local.Port == port {
			out = append(out, s)
		}
	}
	return out
}

// Match returns the sockets whose local or peer address matches addr
// ("ip:port", ":port", "ip"; see Addr.Match).
func (l SocketList) Match(addr string) SocketList {
	return matchEnds(l, addr, func(s Socket) (Addr, Addr) { return s.Local, s.Peer })
}

var ssStates = map[string]bool{
	"LISTEN": true, "ESTAB": true, "SYN-SENT": true, "SYN-RECV": true, "FIN-WAIT-1": true,
	"FIN-WAIT-2": true, "TIME-WAIT": true, "UNCONN": true, "CLOSE-WAIT": true, "LAST-ACK": true,
	"CLOSING": true, "CLOSED": true, "UNKNOWN": true,
}

// ParseSS parses ss socket listings, with or without the header line (-H
// drops it) and with or without the Netid column. Columns are split on runs
// of whitespace: ss right-aligns addresses and pads with spaces. Addresses
// are "10.0.0.1:80", "[::]:80", "*:80" (any family), "0.0.0.0:*" (any
// port, Port 0) and may carry a zone ("[fe80::1%eth0]:22",
// "10.0.0.1%eth0:53"). Empty output is an empty list, the usual answer to
// `ss -Htln 'sport = :30780'`. With a state filter (`ss -tln state
// listening`) ss prints no State column: State is then null.
func ParseSS(text string) (SocketList, error) {
	if err := refuseCut(kindSS, "sockets", text, ParseSS, func(l SocketList) int { return len(l) }); err != nil {
		return nil, err
	}
	out := SocketList{}
	r := newLineReader(text)
	for {
		line, ok := r.next()
		if !ok {
			break
		}
		if isBlank(line) {
			continue
		}
		if line[0] == ' ' || line[0] == '\t' {
			if len(out) == 0 {
				return nil, newError(kindSS, r.num, line, "indented line before any socket")
			}
			out[len(out)-1].Info = append(out[len(out)-1].Info, strings.TrimSpace(line))
			continue
		}
		f := strings.Fields(line)
		if f[0] == "State" || f[0] == "Netid" || f[0] == "Recv-Q" {
			continue // header
		}
		s, err := parseSSLine(line, f)
		if err != nil {
			return nil, newError(kindSS, r.num, line, err.Error())
		}
		out = append(out, s)
	}
	return out, nil
}

// parseSSLine reads one socket line, split into its words f: [NETID]
// [STATE] RECV-Q SEND-Q LOCAL PEER [PROCESS...].
func parseSSLine(line string, f []string) (Socket, error) {
	s := Socket{Info: []string{}}
	i := 0
	if !ssStates[f[0]] && !isDigits(f[0]) {
		s.Netid = &f[0]
		i = 1
	}
	if i < len(f) && ssStates[f[i]] {
		s.State = &f[i]
		i++
	}
	if len(f) < i+4 {
		return Socket{}, errString(`expected "[STATE] RECV-Q SEND-Q LOCAL:PORT PEER:PORT [PROCESS]"`)
	}
	var err1, err2, err3, err4 error
	s.RecvQ, err1 = strconv.Atoi(f[i])
	s.SendQ, err2 = strconv.Atoi(f[i+1])
	s.Local, err3 = ParseAddr(f[i+2])
	s.Peer, err4 = ParseAddr(f[i+3])
	if err1 != nil || err2 != nil {
		return Socket{}, errString("expected numeric Recv-Q and Send-Q")
	}
	if err3 != nil || err4 != nil {
		return Socket{}, errString("bad address: " + errAddr.Error())
	}
	if len(f) > i+4 {
		// The rest of the line, as printed (a process name may
		// contain spaces).
		rest := line
		for k := 0; k <= i+3; k++ {
			rest = strings.TrimLeft(rest, " \t")
			rest = rest[len(f[k]):]
		}
		p := strings.TrimSpace(rest)
		s.Process = &p
	}
	return s, nil
}
