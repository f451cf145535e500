// Package entries holds what a lab reads from Cilium's BPF maps: the
// decoded entries (conntrack, services and their backend slots, backends,
// reverse NAT, ipcache, policy, session affinity, socket reverse NAT) with the methods expressions call on them,
// and the Reader interface that yields them. It links no BPF library, so
// the bpfmap action's spec and result, and with them `labrun validate`,
// do not either; package bpfmaps implements Reader with cilium/ebpf.
//
// Every exported field carries both `json` and `expr` tags with the same
// lowerCamel name, so results can be printed as JSON and used in expr-lang
// lab expressions alike. Slices in results are never nil.
package bpfentries

import (
	"strconv"
	"strings"
)

// Reader reads Cilium's maps under one bpffs root.
type Reader interface {
	Services() (Frontends, error)
	Backends() (Backends, error)
	RevNATs() (RevNATs, error)
	Conntrack() (CTEntries, error)
	Policy(endpointID uint16) (PolicyEntries, error)
	IPCache() (IPCacheEntries, error)
	Affinity() (Affinities, error)
	SockRevNAT() (SockRevNATs, error)
}

// HostPort joins ip and port as cilium-dbg prints them, with brackets
// around an IPv6 address.
func HostPort(ip string, port uint16) string {
	if strings.Contains(ip, ":") {
		return "[" + ip + "]:" + strconv.Itoa(int(port))
	}
	return ip + ":" + strconv.Itoa(int(port))
}
