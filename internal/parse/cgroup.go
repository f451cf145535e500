package parse

import (
	"strconv"
	"strings"
)

const kindCgroupTree = "bpftool-cgroup-tree"

// CgroupProg is one program row of `bpftool cgroup tree` (or `bpftool
// cgroup show PATH`).
type CgroupProg struct {
	// Cgroup is the cgroup path line the row is under ("/run/cilium/cgroupv2");
	// null for `cgroup show`, which prints no path.
	Cgroup *string `json:"cgroup" expr:"cgroup"`
	// ID is the program's id (the ID column), as bpftool prog show
	// knows it.
	ID int `json:"id" expr:"id"`
	// AttachType is as printed: libbpf's name in bpftool 7+
	// ("cgroup_inet4_connect"), bpftool's own short name before
	// ("connect4").
	AttachType string `json:"attachType" expr:"attachType"`
	// Hook is the short name of AttachType in both spellings ("connect4",
	// "sendmsg4", "recvmsg4", "getpeername4", "post_bind4", ...), which
	// is what Cilium's socket LB docs and labs name.
	Hook string `json:"hook" expr:"hook"`
	// AttachFlags is the AttachFlags column: "multi" or "override"; null
	// when empty (attached without flags).
	AttachFlags *string `json:"attachFlags" expr:"attachFlags"`
	// Name is the program's name ("cil_sock4_connect"); null when bpftool
	// printed none.
	Name *string `json:"name" expr:"name"`
}

// CgroupTree is the parsed `bpftool cgroup tree`.
type CgroupTree struct {
	// Programs are the program rows of every cgroup, in printed order;
	// empty when no cgroup has a program.
	Programs []CgroupProg `json:"programs" expr:"programs"`
}

// Hook returns the programs attached at hook ("connect4", in either
// spelling: "cgroup_inet4_connect" works too).
func (t CgroupTree) Hook(hook string) []CgroupProg {
	if h, ok := cgroupHooks[hook]; ok {
		hook = h
	}
	out := []CgroupProg{}
	for _, p := range t.Programs {
		if p.Hook == hook {
			out = append(out, p)
		}
	}
	return out
}

// Hooks returns the distinct hooks with a program, in listed order:
// ["connect4", "sendmsg4", "recvmsg4", "getpeername4", ...] on a node
// with Cilium's socket LB.
func (t CgroupTree) Hooks() []string {
	out := []string{}
	seen := map[string]bool{}
	for _, p := range t.Programs {
		if !seen[p.Hook] {
			seen[p.Hook] = true
			out = append(out, p.Hook)
		}
	}
	return out
}

// cgroupHooks maps libbpf's attach type names (bpftool 7+) to the short
// names older bpftool printed (its attach_type_strings); short names map
// to themselves. Other text in the column is refused.
var cgroupHooks = func() map[string]string {
	m := map[string]string{}
	for _, p := range [][2]string{
		{"cgroup_inet_ingress", "ingress"}, {"cgroup_inet_egress", "egress"},
		{"cgroup_inet_sock_create", "sock_create"}, {"cgroup_inet_sock_release", "sock_release"},
		{"cgroup_sock_ops", "sock_ops"}, {"cgroup_device", "device"},
		{"cgroup_inet4_bind", "bind4"}, {"cgroup_inet6_bind", "bind6"},
		{"cgroup_inet4_connect", "connect4"}, {"cgroup_inet6_connect", "connect6"},
		{"cgroup_inet4_post_bind", "post_bind4"}, {"cgroup_inet6_post_bind", "post_bind6"},
		{"cgroup_udp4_sendmsg", "sendmsg4"}, {"cgroup_udp6_sendmsg", "sendmsg6"},
		{"cgroup_udp4_recvmsg", "recvmsg4"}, {"cgroup_udp6_recvmsg", "recvmsg6"},
		{"cgroup_sysctl", "sysctl"}, {"cgroup_getsockopt", "getsockopt"}, {"cgroup_setsockopt", "setsockopt"},
		{"cgroup_inet4_getpeername", "getpeername4"}, {"cgroup_inet6_getpeername", "getpeername6"},
		{"cgroup_inet4_getsockname", "getsockname4"}, {"cgroup_inet6_getsockname", "getsockname6"},
		{"cgroup_unix_connect", "unix_connect"}, {"cgroup_unix_sendmsg", "unix_sendmsg"},
		{"cgroup_unix_recvmsg", "unix_recvmsg"}, {"cgroup_unix_getpeername", "unix_getpeername"},
		{"cgroup_unix_getsockname", "unix_getsockname"}, {"lsm_cgroup", "lsm_cgroup"},
	} {
		m[p[0]], m[p[1]] = p[1], p[1]
	}
	return m
}()

// ParseCgroupTree parses `bpftool cgroup tree` (and `bpftool cgroup show
// PATH`):
//
//	CgroupPath
//	ID       AttachType      AttachFlags     Name
//	/run/cilium/cgroupv2
//	    1031     cgroup_inet4_connect multi           cil_sock4_connect
//	    1035     cgroup_udp4_sendmsg multi           cil_sock4_sendmsg
//
// A line starting with "/" is a cgroup path; program rows under it are
// indented by four spaces below the root and split on whitespace runs: ID,
// attach type, then optional flags (multi, override) and name. Header lines
// are optional (grep'd output).
func ParseCgroupTree(text string) (CgroupTree, error) {
	if err := refuseCut(kindCgroupTree, "programs", text, ParseCgroupTree, func(t CgroupTree) int { return len(t.Programs) }); err != nil {
		return CgroupTree{}, err
	}
	out := CgroupTree{Programs: []CgroupProg{}}
	r := newLineReader(text)
	var cgroup *string
	for {
		line, ok := r.next()
		if !ok {
			break
		}
		t := strings.TrimSpace(line)
		switch {
		case t == "", t == "CgroupPath", strings.HasPrefix(t, "ID ") && strings.Contains(t, "AttachType"):
			continue
		case strings.HasPrefix(t, "/"):
			cgroup = &t
			continue
		}
		f := strings.Fields(t)
		id, err := strconv.Atoi(f[0])
		if err != nil || len(f) < 2 {
			return CgroupTree{}, newError(kindCgroupTree, r.num, line, `expected "ID  ATTACH_TYPE  [FLAGS]  [NAME]" or a cgroup path`)
		}
		hook, ok := cgroupHooks[f[1]]
		if !ok {
			return CgroupTree{}, newError(kindCgroupTree, r.num, line, "unknown attach type "+strconv.Quote(shortToken(f[1]))+
				`; expected a cgroup attach type such as "cgroup_inet4_connect" or "connect4"`)
		}
		p := CgroupProg{Cgroup: cgroup, ID: id, AttachType: f[1], Hook: hook}
		rest := f[2:]
		if len(rest) > 0 && (rest[0] == "multi" || rest[0] == "override") {
			p.AttachFlags, rest = &rest[0], rest[1:]
		}
		if len(rest) > 1 {
			return CgroupTree{}, newError(kindCgroupTree, r.num, line, "more than one program name")
		}
		if len(rest) == 1 {
			p.Name = &rest[0]
		}
		out.Programs = append(out.Programs, p)
	}
	return out, nil
}
