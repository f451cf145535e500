package parse

import (
	"encoding/json"
	"sort"
	"strconv"
	"strings"
)

const kindBpftoolNet = "bpftool-net-show"

// NetAttachment is one program attachment listed by `bpftool net show`.
type NetAttachment struct {
	// Section is the section of bpftool's output the line is in: "xdp",
	// "tc", "flow_dissector" or "netfilter".
	Section string `json:"section" expr:"section"`
	// Device is the interface's name ("lxc3a6f7d4e8c73"), Ifindex its
	// index, the number in brackets after it; "" and 0 when bpftool
	// printed none (flow_dissector, netfilter).
	Device  string `json:"device" expr:"device"`
	Ifindex int    `json:"ifindex" expr:"ifindex"`
	// Attach is where the program is attached: "tcx/ingress",
	// "tcx/egress", "clsact/ingress", "clsact/egress", "netkit/primary",
	// "netkit/peer", or the qdisc kind for classful qdiscs; "xdp",
	// "flow_dissector" or "netfilter" for those sections.
	Attach string `json:"attach" expr:"attach"`
	// Mode is the XDP mode: "driver", "generic" or "offload"; null
	// outside the xdp section.
	Mode *string `json:"mode" expr:"mode"`
	// Program is the name bpftool printed. For tcx it is the program name
	// ("cil_from_container"); for legacy tc it is the filter name, which
	// Cilium 1.16+ sets to "<prog>-<device>" (see BaseProgram) and older
	// Cilium to "bpf_lxc.o:[from-container]"; null when bpftool printed
	// none (xdp, the flow dissector, netfilter, a program without a name).
	Program *string `json:"program" expr:"program"`
	// ProgID is the program id: "prog_id N" for tcx/netkit/netfilter,
	// "id N" for legacy tc, XDP and the flow dissector.
	ProgID int `json:"progID" expr:"progID"`
	// LinkID is the tcx or netkit link's id ("link_id N"); null for
	// legacy tc, XDP and the flow dissector, which print none.
	LinkID *int `json:"linkID" expr:"linkID"`
	// Hook and Priority are a netfilter program's hook ("ip prerouting")
	// and priority ("prio -128"); null outside the netfilter section.
	Hook     *string `json:"hook" expr:"hook"`
	Priority *int    `json:"priority" expr:"priority"`
}

// BaseProgram returns Program without the "-<device>" suffix that Cilium
// 1.16+ appends to legacy tc filter names, so that legacy and tcx
// attachments compare equal ("cil_from_container"); "" when bpftool
// printed no name.
func (a NetAttachment) BaseProgram() string {
	if a.Program == nil {
		return ""
	}
	if a.Device != "" {
		if p, ok := strings.CutSuffix(*a.Program, "-"+a.Device); ok {
			return p
		}
	}
	return *a.Program
}

// BpftoolNet is the parsed `bpftool net show [dev X]` or `bpftool -j net
// show`.
//
// bpftool before v7.3 (Debian 12 ships v7.1) does not query tcx links, so
// its `net show` lists no tcx attachment at all: the tc section stays empty
// for an endpoint whose programs Cilium attached with tcx. `bpftool link
// show` then lists them as "type 11" (see ParseBpftoolLinkShow).
type BpftoolNet struct {
	// Attachments are the programs attached, one per line of every
	// section, in printed order; empty when bpftool printed none.
	Attachments []NetAttachment `json:"attachments" expr:"attachments"`
	// Unparsed keeps lines this parser did not recognise (a newer
	// bpftool's additions), with their section: "tc: <line>".
	Unparsed []string `json:"unparsed" expr:"unparsed"`
}

// Device returns the attachments on device name.
func (n BpftoolNet) Device(name string) []NetAttachment {
	out := []NetAttachment{}
	for _, a := range n.Attachments {
		if a.Device == name {
			out = append(out, a)
		}
	}
	return out
}

// Find returns the first attachment on device dev at attach point attach
// ("tcx/ingress"); "" matches any device or attach point. It returns a zero
// NetAttachment (ProgID 0) when there is none.
func (n BpftoolNet) Find(dev, attach string) NetAttachment {
	for _, a := range n.Attachments {
		if (dev == "" || a.Device == dev) && (attach == "" || a.Attach == attach) {
			return a
		}
	}
	return NetAttachment{}
}

// ParseBpftoolNetShow parses `bpftool net show [dev X]`, plain or -j JSON
// (told apart by the first character):
//
//	xdp:
//	eth0(2) driver id 42
//
//	tc:
//	lxc3a6f7d4e8c73(26) tcx/ingress cil_from_container prog_id 4773 link_id 29
//	eth0(2) clsact/ingress cil_from_netdev-eth0 id 1234
//
//	flow_dissector:
//
//	netfilter:
//
//		ip prerouting prio -128 prog_id 10
func ParseBpftoolNetShow(text string) (BpftoolNet, error) {
	return jsonOrText(kindBpftoolNet, text, parseBpftoolNetJSON, parseBpftoolNetText)
}

// parseBpftoolNetText reads the plain listing. Lines before any section
// heading (grep'd output such as `bpftool net show | grep lxc`) are read
// when they describe themselves: "dev(idx) tcx/ingress ..." and the other
// attach points with a slash are tc, "dev(idx) driver|generic|offload id N"
// is xdp.
func parseBpftoolNetText(text string) (BpftoolNet, error) {
	if err := refuseCut(kindBpftoolNet, "attachments", text, parseBpftoolNetText, func(n BpftoolNet) int { return len(n.Attachments) }); err != nil {
		return BpftoolNet{}, err
	}
	n := BpftoolNet{Attachments: []NetAttachment{}, Unparsed: []string{}}
	r := newLineReader(text)
	section := ""
	headerless := false // attachment lines read without a section heading
	for {
		line, ok := r.next()
		if !ok {
			break
		}
		t := strings.TrimSpace(line)
		if t == "" {
			continue
		}
		if s, ok := strings.CutSuffix(t, ":"); ok && !strings.ContainsAny(s, " ()") {
			section = s
			continue
		}
		sec := section
		if sec == "" {
			if sec = netLineSection(t); sec == "" {
				return BpftoolNet{}, newError(kindBpftoolNet, r.num, line, `expected a section header such as "xdp:" or "tc:", or a line "dev(N) tcx/ingress ..." / "dev(N) driver id N"`)
			}
			atts, ok := parseNetLine(sec, t)
			if !ok {
				return BpftoolNet{}, newError(kindBpftoolNet, r.num, line, "attachment line without its section, and not one that describes itself")
			}
			n.Attachments = append(n.Attachments, atts...)
			headerless = true
			continue
		}
		atts, ok := parseNetLine(section, t)
		if !ok {
			n.Unparsed = append(n.Unparsed, section+": "+t)
			continue
		}
		n.Attachments = append(n.Attachments, atts...)
	}
	if section == "" && !headerless {
		return BpftoolNet{}, newError(kindBpftoolNet, 0, firstLine(text), `no "xdp:"/"tc:" section found; is this bpftool net show output?`)
	}
	return n, nil
}

// netLineSection tells the section of an attachment line printed without
// its heading, or "" when the line does not say.
func netLineSection(t string) string {
	f := strings.Fields(t)
	if len(f) < 2 {
		return ""
	}
	if _, _, ok := parseDevIndex(f[0]); !ok {
		return ""
	}
	switch {
	case strings.Contains(f[1], "/"):
		return "tc"
	case (f[1] == "driver" || f[1] == "generic" || f[1] == "offload") && len(f) >= 4 && f[2] == "id":
		return "xdp"
	}
	return ""
}

// parseNetLine reads one attachment line of a section.
func parseNetLine(section, t string) ([]NetAttachment, bool) {
	f := strings.Fields(t)
	switch section {
	case "flow_dissector":
		// "id 42"
		if len(f) == 2 && f[0] == "id" {
			id, err := strconv.Atoi(f[1])
			return []NetAttachment{{Section: section, Attach: section, ProgID: id}}, err == nil
		}
		return nil, false
	case "netfilter":
		return netNetfilterLine(f)
	}
	if len(f) < 2 {
		return nil, false
	}
	dev, idx, ok := parseDevIndex(f[0])
	if !ok {
		return nil, false
	}
	if section == "xdp" {
		return netXDPLine(f, dev, idx)
	}
	return netTCLine(section, f, dev, idx)
}

// netNetfilterLine reads the words of a netfilter line:
// "ip prerouting prio -128 [flags 0x1] prog_id 10".
func netNetfilterLine(f []string) ([]NetAttachment, bool) {
	a := NetAttachment{Section: "netfilter", Attach: "netfilter"}
	i := 0
	for ; i < len(f) && f[i] != "prio"; i++ {
	}
	if i == 0 || i+1 >= len(f) {
		return nil, false
	}
	hook := strings.Join(f[:i], " ")
	a.Hook = &hook
	p, err := strconv.Atoi(f[i+1])
	if err != nil {
		return nil, false
	}
	a.Priority = &p
	for j := i + 2; j+1 < len(f); j++ {
		if f[j] == "prog_id" {
			if a.ProgID, err = strconv.Atoi(f[j+1]); err != nil {
				return nil, false
			}
		}
	}
	return []NetAttachment{a}, a.ProgID != 0
}

// netXDPLine reads the words of an xdp line, f[0] being the device
// dev(idx): "eth0(2) driver id 42", several modes at once
// "eth0(2) generic id 1 driver id 2".
func netXDPLine(f []string, dev string, idx int) ([]NetAttachment, bool) {
	var out []NetAttachment
	for i := 1; i < len(f); i += 3 {
		if i+2 >= len(f) || f[i+1] != "id" {
			return nil, false
		}
		id, err := strconv.Atoi(f[i+2])
		if err != nil {
			return nil, false
		}
		out = append(out, NetAttachment{Section: "xdp", Device: dev, Ifindex: idx, Attach: "xdp", Mode: &f[i], ProgID: id})
	}
	return out, len(out) > 0
}

// netTCLine reads the words of a tc line, or of any section's line shaped
// like it: "dev(idx) kind [name] key value ...".
func netTCLine(section string, f []string, dev string, idx int) ([]NetAttachment, bool) {
	a := NetAttachment{Section: section, Device: dev, Ifindex: idx, Attach: f[1]}
	i := 2
	if i < len(f) && f[i] != "id" && f[i] != "prog_id" {
		a.Program = &f[i]
		i++
	}
	for ; i < len(f); i++ {
		var dst *int
		switch f[i] {
		case "id", "prog_id":
			dst = &a.ProgID
		case "link_id":
			a.LinkID = new(int)
			dst = a.LinkID
		case "act":
			i = len(f) // legacy tc actions: " act [name id N] ", not needed
			continue
		default:
			continue // prog_flags/link_flags values and future additions
		}
		if i+1 >= len(f) {
			return nil, false
		}
		n, err := strconv.Atoi(f[i+1])
		if err != nil {
			return nil, false
		}
		*dst = n
		i++
	}
	return []NetAttachment{a}, a.ProgID != 0
}

// parseDevIndex reads "lxc3a6f7d4e8c73(26)" or "(26)" (bpftool prints no
// name when the kernel gave none).
func parseDevIndex(s string) (string, int, bool) {
	open := strings.LastIndexByte(s, '(')
	if open < 0 || !strings.HasSuffix(s, ")") {
		return "", 0, false
	}
	n, err := strconv.Atoi(s[open+1 : len(s)-1])
	if err != nil {
		return "", 0, false
	}
	return s[:open], n, true
}

// parseBpftoolNetJSON reads `bpftool -j net show`: an array holding one
// object with "xdp", "tc", "flow_dissector" and (v7.3+) "netfilter" arrays.
func parseBpftoolNetJSON(text string) (BpftoolNet, error) {
	type entry struct {
		Devname string  `json:"devname"`
		Ifindex int     `json:"ifindex"`
		Kind    string  `json:"kind"`
		Name    *string `json:"name"`
		Mode    *string `json:"mode"`
		ID      int     `json:"id"`
		ProgID  int     `json:"prog_id"`
		LinkID  *int    `json:"link_id"`
		Multi   []struct {
			Mode string `json:"mode"`
			ID   int    `json:"id"`
		} `json:"multi_attachments"`
		PF   *int `json:"pf"`
		Hook *int `json:"hook"`
		Prio *int `json:"prio"`
	}
	var raw []map[string][]entry
	if err := json.Unmarshal([]byte(text), &raw); err != nil {
		return BpftoolNet{}, jsonError(kindBpftoolNet, text, err)
	}
	n := BpftoolNet{Attachments: []NetAttachment{}, Unparsed: []string{}}
	for _, obj := range raw {
		// Go maps are unordered; keep bpftool's section order.
		order := map[string]int{"xdp": 0, "tc": 1, "flow_dissector": 2, "netfilter": 3}
		sections := make([]string, 0, len(obj))
		for s := range obj {
			sections = append(sections, s)
		}
		sort.Slice(sections, func(i, j int) bool {
			oi, iok := order[sections[i]]
			oj, jok := order[sections[j]]
			if iok != jok {
				return iok
			}
			if oi != oj {
				return oi < oj
			}
			return sections[i] < sections[j]
		})
		for _, section := range sections {
			for _, e := range obj[section] {
				a := NetAttachment{Section: section, Device: e.Devname, Ifindex: e.Ifindex, Attach: e.Kind,
					Mode: e.Mode, Program: e.Name, ProgID: e.ID, LinkID: e.LinkID}
				if e.ProgID != 0 {
					a.ProgID = e.ProgID
				}
				switch section {
				case "xdp":
					a.Attach = "xdp"
					if len(e.Multi) > 0 {
						for _, m := range e.Multi {
							b := a
							b.Mode, b.ProgID = &m.Mode, m.ID
							n.Attachments = append(n.Attachments, b)
						}
						continue
					}
				case "flow_dissector", "netfilter":
					a.Attach = section
					if e.Hook != nil && e.PF != nil {
						hook := netfilterHookName(*e.PF, *e.Hook)
						a.Hook, a.Priority = &hook, e.Prio
					}
				}
				n.Attachments = append(n.Attachments, a)
			}
		}
	}
	return n, nil
}

// netfilterHookName renders pf/hook numbers the way bpftool's plain output
// does ("ip prerouting"), so text and JSON results compare equal.
func netfilterHookName(pf, hook int) string {
	pfs := map[int]string{1: "inet", 2: "ip", 3: "arp", 5: "netdev", 7: "bridge", 10: "ip6"}
	inet := []string{"prerouting", "input", "forward", "output", "postrouting"}
	p, ok := pfs[pf]
	if !ok {
		p = "pf: " + strconv.Itoa(pf)
	}
	h := ""
	switch {
	case pf == 3 && hook >= 0 && hook < 2:
		h = []string{"input", "output"}[hook]
	case pf != 3 && pf != 5 && hook >= 0 && hook < len(inet):
		h = inet[hook]
	default:
		return p + ", hook " + strconv.Itoa(hook) + ","
	}
	return p + " " + h
}
