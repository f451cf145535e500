package parse

// The table `cilium-dbg bpf lb list` prints, with or without
// --frontends, --backends or --revnat, in both layouts (see ParseLBList).

import (
	"strconv"
	"strings"
)

// parseLBListText reads the table. The header is optional: rows of grep'd
// output describe themselves (frontend, then its value), except the
// indented value lines of the grouped layout, which need the row above.
func parseLBListText(text string) (LBList, error) {
	if err := refuseCut(kindLBList, "rows", text, parseLBListText, func(l LBList) int { return len(l.Entries) }); err != nil {
		return LBList{}, err
	}
	l := LBList{Entries: []LBEntry{}, FrontendRows: []LBFrontendRow{}, BackendRows: []LBBackendRow{}, RevNATRows: []LBRevNATRow{}}
	r := newLineReader(text)
	sawLine := false
	var current *L4Addr // grouped layout: the key of the lines below
	for {
		line, ok := r.next()
		if !ok {
			break
		}
		if isBlank(line) {
			continue
		}
		if !sawLine {
			sawLine = true
			if strings.HasPrefix(line, "SERVICE ADDRESS") {
				continue
			}
			if strings.HasPrefix(line, "ID ") {
				continue // --backends and --revnat; their rows tell which
			}
			if strings.HasPrefix(line, "SOURCE RANGE") {
				return LBList{}, newError(kindLBList, r.num, line, "this is --source-ranges output; the default listing, --frontends, --backends and --revnat are read")
			}
		}
		if err := l.addTextRow(line, &current); err != nil {
			return LBList{}, newError(kindLBList, r.num, line, err.Error())
		}
	}
	if !sawLine {
		return LBList{}, newError(kindLBList, 0, "", "empty input")
	}
	return l, nil
}

// addTextRow reads one non-blank row of the table: a row of --frontends,
// --backends or --revnat, or one of the default listing in either layout.
// current is the key of the grouped layout's indented value lines, which
// a key row sets.
func (l *LBList) addTextRow(line string, current **L4Addr) error {
	if mode, ok, err := l.addOtherRow(line); ok || err != nil {
		if err != nil {
			return err
		}
		if l.Mode != "" && l.Mode != mode {
			return errString("a --" + mode + " row among " + l.Mode + " rows")
		}
		l.Mode = mode
		return nil
	}
	if line[0] == ' ' || line[0] == '\t' {
		// Grouped layout: another value of the current key.
		if *current == nil {
			return errString("value line before any service address")
		}
		e, err := parseLBValue(strings.TrimSpace(line), **current, -1)
		if err != nil {
			return err
		}
		l.Layout = "grouped"
		l.Entries = append(l.Entries, e)
		return nil
	}
	f := strings.Fields(line)
	fe, err := ParseL4Addr(f[0])
	if err != nil {
		return errString(`expected "ip:port/PROTO (slot)" as service address, or the header "SERVICE ADDRESS   BACKEND ADDRESS ..."`)
	}
	if len(f) >= 2 && isParenInt(f[1]) {
		*current = nil
		return l.addSlotRow(line, fe, f[1])
	}
	// Grouped layout: key then its first value on the same line.
	if len(f) < 2 {
		return errString("service address without value")
	}
	*current = &fe
	_, value := cutField(line)
	e, err := parseLBValue(strings.TrimSpace(value), fe, -1)
	if err != nil {
		return err
	}
	l.Layout = "grouped"
	return l.addService(e)
}

// addSlotRow reads a row of the slots layout of Cilium 1.15 and later:
// the frontend fe, its slot ("(1)") and the value.
func (l *LBList) addSlotRow(line string, fe L4Addr, slotField string) error {
	slot, _ := strconv.Atoi(slotField[1 : len(slotField)-1])
	_, afterKey := cutField(line)
	_, value := cutField(afterKey)
	value = strings.TrimSpace(value)
	if value == "" {
		return errString("service address without value")
	}
	e, err := parseLBValue(value, fe, slot)
	if err != nil {
		return err
	}
	if l.Layout == "" {
		l.Layout = "slots"
	}
	return l.addService(e)
}

// addService appends an entry of the default listing, which a row of
// --frontends, --backends or --revnat before it contradicts.
func (l *LBList) addService(e LBEntry) error {
	if l.Mode != "" && l.Mode != "services" {
		return errString("a service row among " + l.Mode + " rows")
	}
	l.Mode = "services"
	l.Entries = append(l.Entries, e)
	return nil
}

// addOtherRow reads a row of --frontends, --backends or --revnat, telling
// which; ok is false for rows of the default listing.
//
//	10.96.0.1:443/TCP (0)   0 1[0] (1) [0x0 0x0]     --frontends
//	12                      TCP://10.42.0.17         --backends
//	7                       10.43.77.5:80            --revnat
func (l *LBList) addOtherRow(line string) (mode string, ok bool, err error) {
	first, rest := cutField(line)
	rest = strings.TrimSpace(rest)
	if id, err := strconv.Atoi(first); err == nil {
		value, extra := cutField(rest)
		if extra != "" || value == "" {
			return "", false, errString(`expected "ID   PROTO://ip" (--backends) or "ID   ip:port" (--revnat)`)
		}
		if proto, addr, isBackend := strings.Cut(value, "://"); isBackend {
			ip, zone := addr, (*string)(nil)
			if i := strings.IndexByte(addr, '['); i > 0 && strings.HasSuffix(addr, "]") {
				ip, zone = addr[:i], orNull(addr[i+1:len(addr)-1])
			}
			if !isProtoName(proto) && proto != "ANY" || !validIP(ip) {
				return "", false, errString(`expected "ID   PROTO://ip[zone]" (--backends)`)
			}
			l.BackendRows = append(l.BackendRows, LBBackendRow{ID: id, Protocol: proto, IP: ip, Zone: zone})
			return "backends", true, nil
		}
		a, err := ParseL4Addr(value)
		if err != nil {
			return "", false, errString(`expected "ID   ip:port" (--revnat)`)
		}
		a.Scope = nil // a reverse NAT address has no scope
		l.RevNATRows = append(l.RevNATRows, LBRevNATRow{ID: id, Address: a})
		return "revnat", true, nil
	}
	// --frontends: "ip:port/PROTO (slot)   BackendID Count[QCount] (RevNAT) [0xFlags 0xFlags2]"
	slotText, value := cutField(rest)
	if id, _ := cutField(value); !isParenInt(slotText) || !isDigits(id) {
		return "", false, nil // a backend address, not a backend ID
	}
	fe, err := ParseL4Addr(first)
	if err != nil {
		return "", false, nil
	}
	row := LBFrontendRow{Frontend: fe}
	row.Slot, _ = strconv.Atoi(slotText[1 : len(slotText)-1])
	const msg = errString(`expected "BACKEND_ID COUNT[QCOUNT] (REVNAT) [0xFLAGS 0xFLAGS2]" (--frontends)`)
	f := strings.Fields(value)
	if len(f) != 5 || !isParenInt(f[2]) || !strings.HasPrefix(f[3], "[") || !strings.HasSuffix(f[4], "]") {
		return "", false, msg
	}
	count, qcount, _ := strings.Cut(strings.TrimSuffix(f[1], "]"), "[")
	var errs [6]error
	row.BackendID, errs[0] = strconv.Atoi(f[0])
	row.Count, errs[1] = strconv.Atoi(count)
	row.QCount, errs[2] = strconv.Atoi(qcount)
	row.RevNAT, errs[3] = strconv.Atoi(f[2][1 : len(f[2])-1])
	row.Flags, errs[4] = parseHexInt(f[3][1:])
	row.Flags2, errs[5] = parseHexInt(f[4][:len(f[4])-1])
	for _, err := range errs {
		if err != nil {
			return "", false, msg
		}
	}
	l.FrontendRows = append(l.FrontendRows, row)
	return "frontends", true, nil
}

func isParenInt(s string) bool {
	if len(s) < 3 || s[0] != '(' || s[len(s)-1] != ')' {
		return false
	}
	_, err := strconv.Atoi(s[1 : len(s)-1])
	return err == nil
}

// parseLBValue reads the BACKEND ADDRESS cell. slot is the key's slot, or
// -1 in the grouped layout, where the value tells: 0.0.0.0:0 / [::]:0 is
// the service entry.
//
//	0.0.0.0:0 (2) (0) [ClusterIP, non-routable]            slot 0
//	0.0.0.0:0 (30) (0) [LoadBalancer, l7-load-balancer] (L7LB Proxy Port: 15001)
//	10.42.0.12:53/UDP (2) (1)                              slot 1
//	backend 99 not found
//	0.0.0.0:0 (26) [ClusterIP]   /   10.42.2.234:44134 (26)  grouped layout
func parseLBValue(v string, fe L4Addr, slot int) (LBEntry, error) {
	const msg = errString(`expected "ip:port[/PROTO] (revnat) (slot) [flags]" or "backend N not found"`)
	e := LBEntry{Frontend: fe, Flags: []string{}}
	if slot >= 0 {
		e.Slot = &slot
	}
	if rest, ok := strings.CutPrefix(v, "backend "); ok {
		id, ok := strings.CutSuffix(rest, " not found")
		n, err := strconv.Atoi(id)
		if !ok || err != nil {
			return LBEntry{}, msg
		}
		e.NotFound, e.BackendID = true, &n
		return e, nil
	}
	addr, rest := cutField(v)
	be, err := ParseL4Addr(addr)
	if err != nil {
		return LBEntry{}, msg
	}
	// Numbers in parentheses: (revnat) then, in the slot layout, (slot).
	var nums []int
	rest = strings.TrimSpace(rest)
	for strings.HasPrefix(rest, "(") {
		tok, after := cutField(rest)
		if !isParenInt(tok) {
			break
		}
		n, _ := strconv.Atoi(tok[1 : len(tok)-1])
		nums = append(nums, n)
		rest = strings.TrimSpace(after)
	}
	if len(nums) == 0 || len(nums) > 2 {
		return LBEntry{}, msg
	}
	e.RevNAT = &nums[0]
	isService := be.Port == 0 && (be.IP == "0.0.0.0" || be.IP == "::")
	if slot >= 0 {
		if len(nums) != 2 || nums[1] != slot {
			return LBEntry{}, errString("value slot does not match the key's slot")
		}
	} else if len(nums) == 2 {
		// The grouped layout of 1.15 prints the slot in the value:
		// "172.18.0.3:6443 (1) (1)".
		e.Slot = &nums[1]
		if isService != (nums[1] == 0) {
			return LBEntry{}, errString("slot 0 is the service's own 0.0.0.0:0 / [::]:0 entry, and only it")
		}
	} else if isService {
		// the grouped layout without slots: 0.0.0.0:0 is the service's
		// own row, slot 0
		zero := 0
		e.Slot = &zero
	}
	if e.IsService() {
		if strings.HasPrefix(rest, "[") {
			end := strings.IndexByte(rest, ']')
			if end < 0 {
				return LBEntry{}, msg
			}
			for _, fl := range strings.Split(rest[1:end], ",") {
				if fl = strings.TrimSpace(fl); fl != "" {
					e.Flags = append(e.Flags, fl)
				}
			}
			rest = strings.TrimSpace(rest[end+1:])
		}
		if p, ok := strings.CutPrefix(rest, "(L7LB Proxy Port: "); ok {
			n, err := strconv.Atoi(strings.TrimSuffix(p, ")"))
			if err != nil || !strings.HasSuffix(p, ")") {
				return LBEntry{}, msg
			}
			e.L7ProxyPort = &n
			rest = ""
		}
	} else {
		hp := be.HostPort()
		e.Backend, e.BackendProtocol = &hp, be.Protocol
	}
	if rest != "" {
		return LBEntry{}, msg
	}
	return e, nil
}
