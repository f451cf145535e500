package parse

import (
	"slices"
	"strconv"
	"strings"
)

const kindTCFilter = "tc-filter-show"

// TCFilter is one "filter ..." line of `tc filter show dev X ingress`.
//
// For each bpf filter tc prints two lines: a head line naming the
// protocol/pref/kind/chain ("filter protocol all pref 1 bpf chain 0") and
// the filter itself with its handle and program. Head is true for the
// first kind.
type TCFilter struct {
	// Protocol is the protocol the filter matches: "all", "ip", ...
	Protocol string `json:"protocol" expr:"protocol"`
	// Pref is the filter's priority ("pref N"); lower runs first.
	Pref int `json:"pref" expr:"pref"`
	// Kind is the classifier: "bpf", "u32", "flower", "matchall", ...
	Kind string `json:"kind" expr:"kind"`
	// Chain is the filter chain's number ("chain N"; 0 by default).
	Chain int `json:"chain" expr:"chain"`
	// Head is true for a line without a handle: the pref/chain head
	// line tc prints before the filters of that priority.
	Head bool `json:"head" expr:"head"`
	// Handle is the filter's handle ("0x1"); null on a head line.
	Handle *string `json:"handle" expr:"handle"`
	// For bpf filters: Name is the filter name (Cilium 1.16+:
	// "cil_from_container-lxc..."), ProgName and ProgID the program.
	// Name is null when tc printed none (head lines, other kinds).
	Name *string `json:"name" expr:"name"`
	// DirectAction is true when tc printed "direct-action" (the
	// program returns the verdict itself, as Cilium's do).
	DirectAction bool `json:"directAction" expr:"directAction"`
	// HW is "not_in_hw", "in_hw", "skip_hw" or "skip_sw": whether the
	// filter is offloaded to the NIC; null when not printed.
	HW *string `json:"hw" expr:"hw"`
	// ProgID is the program's id ("id N", as bpftool prog show knows
	// it); null when not printed (head lines, filters that are not bpf,
	// kernels that print only the tag).
	ProgID *int `json:"progID" expr:"progID"`
	// ProgName is the program's name ("name cil_from_container"); null
	// when not printed.
	ProgName *string `json:"progName" expr:"progName"`
	// Tag is the program's tag, a hash of its instructions ("tag
	// 1a2b3c4d5e6f7a8b"); null when not printed.
	Tag *string `json:"tag" expr:"tag"`
	// Jited is true when tc printed "jited": the program runs
	// JIT-compiled.
	Jited bool `json:"jited" expr:"jited"`
	// Details are the indented lines tc prints under some filters
	// (actions, u32 keys), trimmed.
	Details []string `json:"details" expr:"details"`
	// Text is the line as printed, trailing space trimmed.
	Text string `json:"text" expr:"text"`
}

// TCFilters is the parsed `tc filter show`.
type TCFilters struct {
	// Lines is the number of non-empty output lines: 0 under tcx, where
	// Cilium attaches no tc filters and the lab expects no output.
	Lines int `json:"lines" expr:"lines"`
	// Filters are the filter lines, head lines included, in printed
	// order; empty for empty output.
	Filters []TCFilter `json:"filters" expr:"filters"`
}

// BPF returns the bpf filters (not the head lines).
func (t TCFilters) BPF() []TCFilter {
	out := []TCFilter{}
	for _, f := range t.Filters {
		if f.Kind == "bpf" && !f.Head {
			out = append(out, f)
		}
	}
	return out
}

// ParseTCFilterShow parses `tc filter show dev X ingress|egress`. Empty
// output is valid and means no filters (the tcx case). Lines look like
//
//	filter protocol all pref 1 bpf chain 0
//	filter protocol all pref 1 bpf chain 0 handle 0x1 cil_from_container-lxc1 direct-action not_in_hw id 4773 name cil_from_container tag 1a2b3c4d5e6f7a8b jited
func ParseTCFilterShow(text string) (TCFilters, error) {
	if err := refuseCut(kindTCFilter, "filters", text, ParseTCFilterShow, func(t TCFilters) int { return len(t.Filters) }); err != nil {
		return TCFilters{}, err
	}
	out := TCFilters{Filters: []TCFilter{}}
	r := newLineReader(text)
	for {
		line, ok := r.next()
		if !ok {
			break
		}
		if isBlank(line) {
			continue
		}
		out.Lines++
		if line[0] == ' ' || line[0] == '\t' {
			if len(out.Filters) == 0 {
				return TCFilters{}, newError(kindTCFilter, r.num, line, `expected "filter ..."`)
			}
			f := &out.Filters[len(out.Filters)-1]
			f.Details = append(f.Details, strings.TrimSpace(line))
			continue
		}
		f, err := parseTCFilterLine(line)
		if err != nil {
			return TCFilters{}, newError(kindTCFilter, r.num, line, err.Error())
		}
		out.Filters = append(out.Filters, f)
	}
	return out, nil
}

// tcLineMsg is the error for a line that is not a filter of tc's.
const tcLineMsg = errString(`expected "filter protocol P pref N KIND chain N [handle H ...]"`)

// parseTCFilterLine reads one filter line: its head (tcFilterHead), the
// handle and, for bpf filters, the options naming the program
// (tcBPFOptions).
func parseTCFilterLine(line string) (TCFilter, error) {
	t := strings.Fields(line)
	if len(t) < 2 || t[0] != "filter" {
		return TCFilter{}, tcLineMsg
	}
	f := TCFilter{Details: []string{}, Text: strings.TrimRight(line, " \t")}
	i, err := tcFilterHead(t, &f)
	if err != nil {
		return TCFilter{}, err
	}
	if i >= len(t) {
		f.Head = true
		return f, nil
	}
	if (t[i] == "handle" || t[i] == "fh") && i+1 < len(t) {
		f.Handle = &t[i+1]
		i += 2
	}
	if f.Kind != "bpf" {
		return f, nil
	}
	if err := tcBPFOptions(t[i:], &f); err != nil {
		return TCFilter{}, err
	}
	return f, nil
}

// tcFilterHead reads the words after "filter" up to the handle and
// returns the index of the first word after them.
//
// tc/tc_filter.c print_filter: "filter [parent P] protocol P pref N
// KIND chain N" ("chain" is missing in iproute2 before 4.13), then
// "handle H" (or u32's "fh H") and the kind's options; a line that
// stops before the handle is the head line.
func tcFilterHead(t []string, f *TCFilter) (int, error) {
	i := 1
	for i < len(t) {
		var err error
		switch t[i] {
		case "parent", "protocol", "pref", "chain":
			if i+1 >= len(t) {
				return 0, tcLineMsg
			}
			switch t[i] {
			case "protocol":
				f.Protocol = t[i+1]
			case "pref":
				f.Pref, err = strconv.Atoi(t[i+1])
			case "chain":
				f.Chain, err = strconv.Atoi(t[i+1])
			}
			i += 2
		default:
			if f.Kind != "" {
				return i, nil
			}
			f.Kind = t[i]
			i++
		}
		if err != nil {
			return 0, tcLineMsg
		}
	}
	if f.Kind == "" {
		return 0, tcLineMsg
	}
	if !slices.Contains(tcKinds, f.Kind) {
		// "filter protocol all p" is "pref" cut short, not a kind "p".
		return 0, errString("unknown filter kind " + strconv.Quote(shortToken(f.Kind)) + " (line cut short?); " + string(tcLineMsg))
	}
	return i, nil
}

// tcKinds are the kernel's filter classifiers (net/sched/cls_*.c) that
// iproute2 prints by name.
var tcKinds = []string{"basic", "bpf", "cgroup", "flow", "flower", "fw", "matchall", "route", "rsvp", "rsvp6", "tcindex", "u32"}

// tcBPFOptions reads the options of a bpf filter after its handle
// (tc/f_bpf.c bpf_print_opt): [flowid X] [NAME] [direct-action]
// [skip_hw|skip_sw|in_hw|not_in_hw] [id N name P tag T [jited]] or
// [tag T].
func tcBPFOptions(t []string, f *TCFilter) error {
	for i := 0; i < len(t); i++ {
		switch t[i] {
		case "flowid":
			i++
		case "direct-action":
			f.DirectAction = true
		case "skip_hw", "skip_sw", "in_hw", "not_in_hw":
			f.HW = &t[i]
		case "id":
			if i+1 >= len(t) {
				return tcLineMsg
			}
			n, err := strconv.Atoi(t[i+1])
			if err != nil {
				return tcLineMsg
			}
			f.ProgID = &n
			i++
		case "name":
			if i+1 < len(t) {
				f.ProgName = &t[i+1]
				i++
			}
		case "tag":
			if i+1 < len(t) {
				f.Tag = &t[i+1]
				i++
			}
		case "jited":
			f.Jited = true
		default:
			if f.Name == nil && f.ProgID == nil && !f.DirectAction {
				f.Name = &t[i]
			}
		}
	}
	if f.ProgID == nil && f.Tag == nil {
		// iproute2 prints "id N" (and older kernels at least "tag T")
		// for every bpf filter; a line without either was cut.
		return errString(`bpf filter without "id N" or "tag T"`)
	}
	if f.ProgName != nil && (f.Tag == nil || !isProgTag(*f.Tag)) {
		// bpf_dump_prog_info prints "name N tag T" together, T being
		// the program's 8-byte tag in hex: a shorter one was cut.
		return errString(`bpf filter "name N" without a 16-digit "tag T" after it (line cut short?)`)
	}
	return nil
}

// isProgTag reports whether s is a BPF program tag as iproute2 and bpftool
// print it: 16 hex digits.
func isProgTag(s string) bool {
	if len(s) != 16 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !(s[i] >= '0' && s[i] <= '9' || s[i] >= 'a' && s[i] <= 'f') {
			return false
		}
	}
	return true
}
