package parse

import (
	"strconv"
	"strings"
)

const kindBpftoolLink = "bpftool-link-show"

// BpftoolLink is one link of `bpftool link show`.
type BpftoolLink struct {
	// ID is the link's id, the number before the colon.
	ID int `json:"id" expr:"id"`
	// Type is the link type name ("tcx", "xdp", "netkit", "cgroup", ...).
	// bpftool versions that do not know a type print "type N"; Type is
	// then derived from the kernel's enum bpf_link_type (11 = tcx,
	// 13 = netkit) and TypeID is N.
	Type string `json:"type" expr:"type"`
	// TypeID is N of a link printed as "type N"; null when bpftool
	// printed the type's name.
	TypeID *int `json:"typeID" expr:"typeID"`
	// ProgID is the id of the program the link holds ("prog N").
	ProgID int `json:"progID" expr:"progID"`
	// Device, Ifindex and AttachType come from the indented detail lines
	// of newer bpftool versions: "ifindex lxc3a6f7d4e8c73(26)
	// attach_type tcx_ingress". Each is null when no detail line printed
	// it (Device also when bpftool printed the index alone).
	Device     *string `json:"device" expr:"device"`
	Ifindex    *int    `json:"ifindex" expr:"ifindex"`
	AttachType *string `json:"attachType" expr:"attachType"`
	// Details holds every "key value" pair of the link's lines, raw, as
	// printed ("prog" -> "4773", "attach_type" -> "tcx_ingress").
	Details map[string]string `json:"details" expr:"details"`
}

// BpftoolLinks is the parsed `bpftool link show`.
type BpftoolLinks []BpftoolLink

// OfType returns the links of the given type ("tcx").
func (l BpftoolLinks) OfType(t string) BpftoolLinks {
	out := BpftoolLinks{}
	for _, x := range l {
		if x.Type == t {
			out = append(out, x)
		}
	}
	return out
}

// bpfLinkTypes is the kernel's enum bpf_link_type, for "type N" output.
var bpfLinkTypes = map[int]string{
	1: "raw_tracepoint", 2: "tracing", 3: "cgroup", 4: "iter", 5: "netns", 6: "xdp",
	7: "perf_event", 8: "kprobe_multi", 9: "struct_ops", 10: "netfilter", 11: "tcx",
	12: "uprobe_multi", 13: "netkit", 14: "sockmap",
}

// ParseBpftoolLinkShow parses `bpftool link show`:
//
//	3: type 11  prog 4              (bpftool 7.1, tcx unknown to it)
//	5: tcx  prog 4773
//		ifindex lxc3a6f7d4e8c73(26)  attach_type tcx_ingress
//
// Fields are separated by two spaces; detail lines start with a tab and
// hold "key value" pairs.
func ParseBpftoolLinkShow(text string) (BpftoolLinks, error) {
	if err := refuseCut(kindBpftoolLink, "links", text, ParseBpftoolLinkShow, func(l BpftoolLinks) int { return len(l) }); err != nil {
		return nil, err
	}
	out := BpftoolLinks{}
	r := newLineReader(text)
	for {
		line, ok := r.next()
		if !ok {
			break
		}
		if isBlank(line) {
			continue
		}
		if line[0] == '\t' || line[0] == ' ' {
			if len(out) == 0 {
				return nil, newError(kindBpftoolLink, r.num, line, "detail line before any link")
			}
			l := &out[len(out)-1]
			f := strings.Fields(line)
			for i := 0; i+1 < len(f); i += 2 {
				l.Details[f[i]] = f[i+1]
				switch f[i] {
				case "ifindex":
					if dev, idx, ok := parseDevIndex(f[i+1]); ok {
						l.Ifindex = &idx
						if dev != "" {
							l.Device = &dev
						}
					} else if n, err := strconv.Atoi(f[i+1]); err == nil {
						l.Ifindex = &n
					}
				case "attach_type":
					l.AttachType = &f[i+1]
				}
			}
			continue
		}
		idText, rest, ok := strings.Cut(line, ":")
		id, err := strconv.Atoi(idText)
		if !ok || err != nil {
			return nil, newError(kindBpftoolLink, r.num, line, `expected "ID: type  prog N"`)
		}
		l := BpftoolLink{ID: id, Details: map[string]string{}}
		f := strings.Fields(rest)
		i := 0
		if len(f) >= 2 && f[0] == "type" {
			n, err := strconv.Atoi(f[1])
			if err != nil {
				return nil, newError(kindBpftoolLink, r.num, line, `expected "type N"`)
			}
			l.TypeID = &n
			l.Type = bpfLinkTypes[n]
			if l.Type == "" {
				l.Type = "type " + f[1]
			}
			i = 2
		} else if len(f) >= 1 {
			l.Type = f[0]
			i = 1
		}
		for ; i+1 < len(f); i += 2 {
			l.Details[f[i]] = f[i+1]
			if f[i] == "prog" {
				if l.ProgID, err = strconv.Atoi(f[i+1]); err != nil {
					return nil, newError(kindBpftoolLink, r.num, line, `expected "prog N"`)
				}
			}
		}
		if l.Type == "" {
			return nil, newError(kindBpftoolLink, r.num, line, `expected "ID: type  prog N"`)
		}
		if _, ok := l.Details["prog"]; !ok {
			return nil, newError(kindBpftoolLink, r.num, line, `link without "prog N" (bpftool prints it for every link)`)
		}
		out = append(out, l)
	}
	return out, nil
}
