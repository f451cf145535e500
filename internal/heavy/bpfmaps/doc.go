// Package bpfmaps reads Cilium 1.20's pinned BPF maps straight from the
// kernel, read-only, with cilium/ebpf, and decodes them into the plain Go
// structs of package bpfentries; *Reader implements bpfentries.Reader.
//
// Why: on a lab node, exec'ing cilium-dbg is slow (one process per poll,
// an agent round-trip for some commands) and only shows the agent's view.
// Reading the pinned maps shows what the datapath actually uses, and a
// [Reader] keeps the maps open so that an `until` poll re-reads them with a
// few syscalls.
//
// The package deliberately does not import github.com/cilium/cilium: that
// module is huge and drags half of Kubernetes in. Instead every map layout
// is written out here with encoding/binary, next to the C struct it mirrors
// (see layout.go), and each map's key size, value size and type are checked
// when it is opened, so a Cilium version with a different layout produces
// an "unsupported Cilium map layout" error rather than garbage.
//
// Maps covered (all under <bpffs root>/tc/globals/):
//
//   - cilium_lb4_services_v2, cilium_lb4_backends_v3, cilium_lb4_reverse_nat:
//     [Reader.Services], [Reader.Backends], [Reader.RevNATs], [Reader.LookupFrontend]
//   - cilium_ct4_global, cilium_ct_any4_global: [Reader.Conntrack]
//   - cilium_policy_v3_<5-digit endpoint id>: [Reader.Policy], [Reader.PolicyEndpoints]
//   - cilium_ipcache_v2: [Reader.IPCache], [Reader.LookupIPCache]
//   - cilium_lb4_affinity (session affinity): [Reader.Affinity]
//   - cilium_lb4_reverse_sk (socket LB's reverse NAT): [Reader.SockRevNAT]
//
// Strings that cilium-dbg prints (CT lines, `bpf lb list` entries, service
// flags, ipcache values) are reproduced byte for byte from the v1.20.1
// formatting code so a lab can compare them with cilium-dbg output.
package bpfmaps
