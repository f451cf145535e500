// Package bpfmap is the bpfmap action: it reads Cilium's pinned BPF maps
// straight from the kernel, through the reader the command hands over in
// Runtime.BPFMaps (package bpfmaps, which links cilium/ebpf). Its spec and
// result use package bpfmaps/entries only, so validation links no BPF
// library.
package bpfmap

import (
	"context"
	"errors"
	"fmt"

	"github.com/labrun/labrun/actions"
	"github.com/labrun/labrun/internal/boundary/bpfentries"
	"github.com/labrun/labrun/internal/lang/diag"
	"github.com/labrun/labrun/internal/lang/eval"
)

// Spec says which of Cilium's maps to read.
type Spec struct {
	Map      string `yaml:"map" required:"true" doc:"What to read: services (frontends with their backend slots resolved), conntrack (TCP and non-TCP CT maps), policy (of one endpoint), ipcache, backends, revnat, affinity (session affinity: the backend each client was given per service) or reversesk (socket LB's reverse NAT: which service a socket's backend stands for)."`
	Endpoint int    `yaml:"endpoint" doc:"Endpoint id whose policy map to read (map: policy)."`
	Root     string `yaml:"root" doc:"bpffs mount Cilium pins under (default /sys/fs/bpf)."`
}

// Result holds what was read; only the field of the chosen map is filled,
// the others are empty lists.
type Result struct {
	// Map is the value of the spec's map key, as written: services,
	// conntrack, policy, ipcache, backends, revnat, affinity or
	// reversesk. It says which field below holds the entries. It is not
	// the name of the pinned map that was read: with map "policy" the
	// map read is cilium_policy_v3_NNNNN of the spec's endpoint (each
	// entry's endpointId is that endpoint), with "services" it is
	// cilium_lb4_services_v2.
	Map string `json:"map" expr:"map"`
	// Services holds what map "services" reads: cilium_lb4_services_v2
	// grouped into frontends, each slot's backend resolved from
	// cilium_lb4_backends_v3 and the service's address from
	// cilium_lb4_reverse_nat. Empty for the other maps.
	Services bpfentries.Frontends `json:"services" expr:"services"`
	// Conntrack holds what map "conntrack" reads: the entries of
	// cilium_ct4_global (TCP), then of cilium_ct_any4_global (the
	// rest). Empty for the other maps.
	Conntrack bpfentries.CTEntries `json:"conntrack" expr:"conntrack"`
	// Policy holds what map "policy" reads: the entries of the spec's
	// endpoint's cilium_policy_v3_NNNNN (NNNNN its id, zero-padded).
	// Empty for the other maps.
	Policy bpfentries.PolicyEntries `json:"policy" expr:"policy"`
	// IPCache holds what map "ipcache" reads: the prefixes of
	// cilium_ipcache_v2. Empty for the other maps.
	IPCache bpfentries.IPCacheEntries `json:"ipcache" expr:"ipcache"`
	// Backends holds what map "backends" reads: cilium_lb4_backends_v3.
	// Empty for the other maps.
	Backends bpfentries.Backends `json:"backends" expr:"backends"`
	// RevNATs holds what map "revnat" reads: cilium_lb4_reverse_nat.
	// Empty for the other maps.
	RevNATs bpfentries.RevNATs `json:"revnats" expr:"revnats"`
	// Affinity holds what map "affinity" reads: cilium_lb4_affinity,
	// each entry's service and backend resolved. Empty for the other
	// maps.
	Affinity bpfentries.Affinities `json:"affinity" expr:"affinity"`
	// ReverseSK holds what map "reversesk" reads:
	// cilium_lb4_reverse_sk. Empty for the other maps.
	ReverseSK bpfentries.SockRevNATs `json:"reversesk" expr:"reversesk"`
}

// A ciliumMap is one of Cilium's maps the action reads: the name the
// spec's map takes, whether it is read for one endpoint (the spec's
// endpoint, then required), and how it is read into its field of the
// result.
type ciliumMap struct {
	name          string
	needsEndpoint bool
	read          func(r bpfentries.Reader, spec *Spec, res *Result) error
}

// maps is every map the action reads, in the order messages list them:
// the one list of them, which check, read and their messages go by (the
// spec's doc describes each; a test keeps it in step).
var maps = []ciliumMap{
	{name: "services", read: func(r bpfentries.Reader, _ *Spec, res *Result) (err error) {
		res.Services, err = r.Services()
		return err
	}},
	{name: "conntrack", read: func(r bpfentries.Reader, _ *Spec, res *Result) (err error) {
		res.Conntrack, err = r.Conntrack()
		return err
	}},
	{name: "policy", needsEndpoint: true, read: func(r bpfentries.Reader, spec *Spec, res *Result) (err error) {
		res.Policy, err = r.Policy(uint16(spec.Endpoint))
		return err
	}},
	{name: "ipcache", read: func(r bpfentries.Reader, _ *Spec, res *Result) (err error) {
		res.IPCache, err = r.IPCache()
		return err
	}},
	{name: "backends", read: func(r bpfentries.Reader, _ *Spec, res *Result) (err error) {
		res.Backends, err = r.Backends()
		return err
	}},
	{name: "revnat", read: func(r bpfentries.Reader, _ *Spec, res *Result) (err error) {
		res.RevNATs, err = r.RevNATs()
		return err
	}},
	{name: "affinity", read: func(r bpfentries.Reader, _ *Spec, res *Result) (err error) {
		res.Affinity, err = r.Affinity()
		return err
	}},
	{name: "reversesk", read: func(r bpfentries.Reader, _ *Spec, res *Result) (err error) {
		res.ReverseSK, err = r.SockRevNAT()
		return err
	}},
}

// mapNames lists the names of maps, for messages.
func mapNames() []string {
	names := make([]string, len(maps))
	for i, m := range maps {
		names[i] = m.name
	}
	return names
}

// lookupMap returns the map the spec names.
func lookupMap(name string) (ciliumMap, bool) {
	for _, m := range maps {
		if m.name == name {
			return m, true
		}
	}
	return ciliumMap{}, false
}

func init() {
	actions.Register(actions.Def[Spec, Result]{
		Name:  "bpfmap",
		Cost:  actions.LocalRead,
		Doc:   "Read Cilium's pinned BPF maps (services, backends, reverse NAT, conntrack, policy, ipcache, session affinity, socket reverse NAT) directly from the kernel, read-only; needs root on the node. Cheap enough to poll with until.",
		Run:   read,
		Check: check,
		Host:  host,
	})
}

// defaultRoot is where Cilium pins its maps, the reader's default
// (bpfmaps.DefaultRoot, which this package does not link).
const defaultRoot = "/sys/fs/bpf"

// host: the maps are pinned in the node's bpffs, and opening a pinned map
// is privileged.
func host(spec *Spec, hc *actions.HostContext) []actions.HostNeed {
	if hc.Unknown("root") {
		return []actions.HostNeed{{
			What:  "Cilium's pinned BPF maps, under a bpffs known only when the step runs, opened read-only",
			InPod: "the pod on the node, a hostPath volume of the node's bpffs mounted at the same path (readOnly is enough), and CAP_BPF and CAP_SYS_ADMIN, or root",
		}}
	}
	root := spec.Root
	if root == "" {
		root = defaultRoot
	}
	return []actions.HostNeed{{
		What:  "Cilium's pinned BPF maps under " + root + " (the node's bpffs), opened read-only",
		InPod: "the pod on the node, a hostPath volume of the node's " + root + " mounted at " + root + " (readOnly is enough), and CAP_BPF and CAP_SYS_ADMIN, or root",
	}}
}

func check(spec *eval.Value, sc *actions.StaticContext) diag.List {
	var errs diag.List
	m := spec.Lookup("map")
	lit, ok := m.Literal()
	if !ok {
		return errs
	}
	name := fmt.Sprint(lit)
	cm, found := lookupMap(name)
	if !found {
		errs.Add(m.Pos, "unknown map %q%s; expected one of %v", name, diag.DidYouMean(name, mapNames()), mapNames())
	}
	if cm.needsEndpoint && spec.Lookup("endpoint") == nil {
		errs.Add(spec.Pos, "map: %s needs endpoint (the endpoint id)", name)
	}
	return errs
}

// ErrNoBPFMaps is returned when labrun has no way to read BPF maps.
var ErrNoBPFMaps = errors.New("no access to BPF maps")

func read(ctx context.Context, rt *actions.Runtime, spec *Spec) (*Result, error) {
	if rt.BPFMaps == nil {
		return nil, ErrNoBPFMaps
	}
	r, err := rt.BPFMaps(spec.Root)
	if err != nil {
		return nil, err
	}
	res := &Result{Map: spec.Map, Services: bpfentries.Frontends{}, Conntrack: bpfentries.CTEntries{}, Policy: bpfentries.PolicyEntries{},
		IPCache: bpfentries.IPCacheEntries{}, Backends: bpfentries.Backends{}, RevNATs: bpfentries.RevNATs{},
		Affinity: bpfentries.Affinities{}, ReverseSK: bpfentries.SockRevNATs{}}
	cm, ok := lookupMap(spec.Map)
	if !ok {
		return nil, fmt.Errorf("unknown map %q; expected one of %v", spec.Map, mapNames())
	}
	if cm.needsEndpoint && (spec.Endpoint <= 0 || spec.Endpoint > 0xffff) {
		return nil, fmt.Errorf("endpoint %d is not an endpoint id", spec.Endpoint)
	}
	return res, cm.read(r, spec, res)
}
