// Package all registers every action, including those in packages of their
// own (bpfmap, whose reader of Cilium's BPF maps the command hands over in
// Runtime.BPFMaps). Import it for its side effect where the full set is
// needed: the command and the schema.
package all

import (
	_ "github.com/labrun/labrun/actions"        // run, write, Kubernetes actions, ...
	_ "github.com/labrun/labrun/actions/bpfmap" // bpfmap
)
