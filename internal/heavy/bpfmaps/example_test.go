package bpfmaps_test

import (
	"fmt"
	"log"

	"github.com/labrun/labrun/internal/heavy/bpfmaps"
)

// A playbook action opens one Reader for the run and re-reads through it;
// the maps stay open between polls.
func Example() {
	r, err := bpfmaps.Open("/sys/fs/bpf") // or the test cluster's bpffs
	if err != nil {
		log.Fatal(err) // e.g. "reading pinned BPF maps needs root: ..."
	}
	defer r.Close()

	// One service, with point lookups (cheap enough for an `until` poll).
	fe, err := r.LookupFrontend("10.43.0.5:80/TCP")
	if err != nil {
		log.Fatal(err)
	}
	if fe != nil {
		fmt.Println(fe.FlagsText, fe.Backends())
	}

	// Conntrack entries of port 8080, printed as cilium-dbg prints them.
	ct, err := r.Conntrack()
	if err != nil {
		log.Fatal(err)
	}
	for _, e := range ct.Matching(8080) {
		fmt.Println(e.Line)
	}
}
