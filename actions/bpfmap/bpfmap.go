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
	"github.com/labrun/labrun/internal/bpfmaps/entries"
	"github.com/labrun/labrun/internal/lang/diag"
	"github.com/labrun/labrun/internal/lang/eval"
)

// Spec says which of Cilium's maps to read.
type Spec struct {
	Map      string `yaml:"map" required:"true" doc:"What to read: services (frontends with their backend slots resolved), conntrack (TCP and non-TCP CT maps), policy (of one endpoint), ipcache, backends, revnat, affinity (session affinity: the backend each client was given per service) or reversesk (socket LB's reverse NAT: which service a socket's backend stands for)."`
	Endpoint int    `yaml:"endpoint" doc:"Endpoint id whose policy map to read (map: policy)."`
	Root     string `yaml:"root" doc:"bpffs mount Cilium pins under (default /sys/fs/bpf)."`
}

// Result holds what was read; only the field of the chosen map is filled.
type Result struct {
	Map       string                 `json:"map" expr:"map"`
	Services  entries.Frontends      `json:"services" expr:"services"`
	Conntrack entries.CTEntries      `json:"conntrack" expr:"conntrack"`
	Policy    entries.PolicyEntries  `json:"policy" expr:"policy"`
	IPCache   entries.IPCacheEntries `json:"ipcache" expr:"ipcache"`
	Backends  entries.Backends       `json:"backends" expr:"backends"`
	RevNATs   entries.RevNATs        `json:"revnats" expr:"revnats"`
	Affinity  entries.Affinities     `json:"affinity" expr:"affinity"`
	ReverseSK entries.SockRevNATs    `json:"reversesk" expr:"reversesk"`
}

var kinds = []string{"services", "conntrack", "policy", "ipcache", "backends", "revnat", "affinity", "reversesk"}

func init() {
	actions.Register(actions.Def[Spec, Result]{
		Name:  "bpfmap",
		Cost:  actions.LocalRead,
		Doc:   "Read Cilium's pinned BPF maps (services, backends, reverse NAT, conntrack, policy, ipcache, session affinity, socket reverse NAT) directly from the kernel, read-only; needs root on the node. Cheap enough to poll with until.",
		Run:   read,
		Check: check,
	})
}

func check(spec *eval.Value, sc *actions.StaticContext) diag.List {
	var errs diag.List
	m := spec.Lookup("map")
	lit, ok := m.Literal()
	if !ok {
		return errs
	}
	name := fmt.Sprint(lit)
	found := false
	for _, k := range kinds {
		found = found || k == name
	}
	if !found {
		errs.Add(m.Pos, "unknown map %q%s; expected one of %v", name, diag.DidYouMean(name, kinds), kinds)
	}
	if name == "policy" && spec.Lookup("endpoint") == nil {
		errs.Add(spec.Pos, "map: policy needs endpoint (the endpoint id)")
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
	res := &Result{Map: spec.Map, Services: entries.Frontends{}, Conntrack: entries.CTEntries{}, Policy: entries.PolicyEntries{},
		IPCache: entries.IPCacheEntries{}, Backends: entries.Backends{}, RevNATs: entries.RevNATs{},
		Affinity: entries.Affinities{}, ReverseSK: entries.SockRevNATs{}}
	switch spec.Map {
	case "services":
		res.Services, err = r.Services()
	case "conntrack":
		res.Conntrack, err = r.Conntrack()
	case "policy":
		if spec.Endpoint <= 0 || spec.Endpoint > 0xffff {
			return nil, fmt.Errorf("endpoint %d is not an endpoint id", spec.Endpoint)
		}
		res.Policy, err = r.Policy(uint16(spec.Endpoint))
	case "ipcache":
		res.IPCache, err = r.IPCache()
	case "backends":
		res.Backends, err = r.Backends()
	case "revnat":
		res.RevNATs, err = r.RevNATs()
	case "affinity":
		res.Affinity, err = r.Affinity()
	case "reversesk":
		res.ReverseSK, err = r.SockRevNAT()
	default:
		return nil, fmt.Errorf("unknown map %q; expected one of %v", spec.Map, kinds)
	}
	return res, err
}
