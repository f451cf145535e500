package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"

	"github.com/labrun/labrun/internal/heavy/bpfmaps"
)

// Layout of Cilium 1.20's conntrack maps (see bpfmaps/layout.go).
const (
	ctKeySize   = 14 // struct ipv4_ct_tuple
	ctValueSize = 56 // struct ct_entry
	ctEntries   = 200_000
)

// benchBPF compares reading the conntrack map with package bpfmaps (what
// the bpfmap action does) against `cilium-dbg bpf ct list global`:
//
//   - at 200k entries, on a synthetic map with Cilium's layout in a private
//     bpffs (as bpfmaps' BenchmarkConntrackDump200k builds it): labrun's
//     reader against the cilium-dbg binary of the test cluster run on this
//     host with that bpffs as its only one (in a private mount namespace).
//     No exec is involved on either side; through kubectl exec cilium-dbg
//     would also have to ship its ~50 MB of text. The live agent's map is not
//     filled with 200k fake connections: that would disturb the
//     datapath of the running cluster.
//   - on the live map, at the size it has: the reader on the agent's
//     bpffs (read-only, as the host sees it) against kubectl exec of
//     cilium-dbg in the agent.
func benchBPF(ctx context.Context, b *bench) ([]Row, error) {
	if os.Geteuid() != 0 {
		return nil, errors.New("reading and creating BPF maps needs root")
	}
	root := filepath.Join(b.work, "bpffs")
	if err := os.MkdirAll(root, 0o700); err != nil {
		return nil, err
	}
	if err := unix.Mount("bpf", root, "bpf", 0, "mode=0700"); err != nil {
		return nil, fmt.Errorf("mount a private bpffs on %s: %w", root, err)
	}
	defer unix.Unmount(root, unix.MNT_DETACH)
	if err := fillCT(root, ctEntries); err != nil {
		return nil, err
	}

	readCT := func(root string, want int) ([]time.Duration, int, error) { return readConntrack(b.n, root, want) }
	synth, _, err := readCT(root, ctEntries)
	if err != nil {
		return nil, err
	}
	// cilium-dbg (not being the agent) reads the maps of the first bpffs in
	// its mount table: in a mount namespace of its own, every other bpffs
	// (such as the test cluster's) is unmounted, leaving the private one.
	script := `for m in $(findmnt -rn -t bpf -o TARGET); do [ "$m" = "$1" ] || umount -l "$m" || exit; done; exec "$2" bpf ct list global`
	dbgArgv := []string{"unshare", "--mount", "--propagation", "private", "--", "sh", "-c", script, "sh", root, b.ciliumDbg}
	var dbgBytes int
	dbg, err := timeN(b.n, func() (time.Duration, error) {
		p, err := runProc(ctx, dbgArgv, procOpts{})
		if err != nil {
			return 0, err
		}
		dbgBytes = len(p.stdout)
		if n := countCTLines(p.stdout); n != ctEntries {
			return 0, fmt.Errorf("cilium-dbg listed %d entries, want %d%s", n, ctEntries, tail(p.stderr))
		}
		return p.wall, nil
	})
	if err != nil {
		return nil, err
	}

	live, size, err := readCT(b.bpffs, 0)
	if err != nil {
		return nil, err
	}
	var liveDbgCount int
	kubectl := []string{b.kubectl, "--kubeconfig", b.kubeconfig, "-n", "kube-system", "exec", "ds/cilium", "-c", agent.Container, "--",
		"cilium-dbg", "bpf", "ct", "list", "global"}
	liveDbg, err := timeN(b.n, func() (time.Duration, error) {
		p, err := runProc(ctx, kubectl, procOpts{})
		liveDbgCount = countCTLines(p.stdout)
		return p.wall, err
	})
	if err != nil {
		return nil, err
	}

	return []Row{
		compare("conntrack map, 200k entries (synthetic map, no exec on either side)",
			durations("bpfmaps reader", "ms", synth), durations("cilium-dbg bpf ct list global", "ms", dbg), 0).
			withNote("A map with Cilium 1.20's layout filled with 200k TCP entries in a private bpffs; cilium-dbg is the test cluster's own binary, run on this host "+
				"with that bpffs as its only one. Through kubectl exec it would also have to send its %d MB of text. The live agent's map is not filled with 200k fake entries: "+
				"that would disturb the running cluster's datapath.", dbgBytes>>20),
		compare(fmt.Sprintf("conntrack map, live agent (%d entries)", size),
			durations("bpfmaps reader", "ms", live), durations("kubectl exec cilium-dbg bpf ct list global", "ms", liveDbg), 0).
			withNote("The agent's own map as it is (cilium-dbg listed %d entries in the last run), read-only through the test cluster's bpffs as the host sees it (%s).", liveDbgCount, b.bpffs),
	}, nil
}

// readConntrack times n reads of the conntrack maps under root with
// package bpfmaps, as the bpfmap action reads them (open, dump, close),
// and returns the entries of the last; a read of other than want entries
// (when want > 0) is an error.
func readConntrack(n int, root string, want int) ([]time.Duration, int, error) {
	var got int
	d, err := timeN(n, func() (time.Duration, error) {
		start := time.Now()
		r, err := bpfmaps.Open(root)
		if err != nil {
			return 0, err
		}
		defer r.Close()
		es, err := r.Conntrack()
		if err != nil {
			return 0, err
		}
		got = len(es)
		if want > 0 && got != want {
			return 0, fmt.Errorf("bpfmaps read %d entries, want %d", got, want)
		}
		return time.Since(start), nil
	})
	return d, got, err
}

// countCTLines counts the entry lines of `cilium-dbg bpf ct list`.
func countCTLines(out []byte) int {
	n := 0
	for line := range bytes.Lines(out) {
		if f := bytes.Fields(line); len(f) > 2 && (string(f[1]) == "OUT" || string(f[1]) == "IN" || string(f[1]) == "SVC") {
			n++
		}
	}
	return n
}

// fillCT creates Cilium's two global IPv4 conntrack maps (LRU hashes of
// Cilium's default sizes) pinned under root/tc/globals, and puts n distinct
// TCP entries (clients 10.x.y.z:port to one VIP:80, alternately OUT and IN)
// into the TCP map with one batch update. The maps stay pinned until the
// bpffs is unmounted.
func fillCT(root string, n int) error {
	dir := filepath.Join(root, "tc", "globals")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var tcp *ebpf.Map
	for _, m := range []struct {
		name string
		max  uint32
		key  uint32
	}{
		{bpfmaps.MapCTTCP, 1 << 19, ctKeySize}, {bpfmaps.MapCTAny, 1 << 18, ctKeySize},
		// cilium-dbg without an agent to ask assumes IPv6 too and wants
		// its (empty) maps: struct ipv6_ct_tuple is 38 bytes.
		{"cilium_ct6_global", 1 << 19, 38}, {"cilium_ct_any6_global", 1 << 18, 38},
	} {
		em, err := ebpf.NewMap(&ebpf.MapSpec{Type: ebpf.LRUHash, KeySize: m.key, ValueSize: ctValueSize, MaxEntries: m.max})
		if err != nil {
			return fmt.Errorf("create %s: %w", m.name, err)
		}
		defer em.Close()
		if err := em.Pin(filepath.Join(dir, m.name)); err != nil {
			return err
		}
		if m.name == bpfmaps.MapCTTCP {
			tcp = em
		}
	}
	keys := make([][ctKeySize]byte, n)
	vals := make([][ctValueSize]byte, n)
	for i := range n {
		k, v := &keys[i], &vals[i]
		// The key holds the reply direction's addresses: daddr is the
		// original source (the client).
		copy(k[0:4], []byte{10, byte(i >> 16), byte(i >> 8), byte(i)})
		copy(k[4:8], []byte{10, 43, 0, 5})
		binary.BigEndian.PutUint16(k[8:], 80)
		binary.BigEndian.PutUint16(k[10:], uint16(i))
		k[12] = unix.IPPROTO_TCP
		k[13] = byte(i % 2)                                  // 0 OUT, 1 IN
		binary.LittleEndian.PutUint64(v[16:], uint64(i))     // packets
		binary.LittleEndian.PutUint64(v[24:], uint64(i)*100) // bytes
		binary.LittleEndian.PutUint32(v[32:], uint32(i))     // lifetime
		binary.LittleEndian.PutUint16(v[36:], 0x10)          // seen_non_syn
		binary.BigEndian.PutUint16(v[38:], 2)                // rev_nat_index
		v[42], v[43] = 0x1b, 0x1a                            // tx, rx flags seen
		binary.LittleEndian.PutUint32(v[44:], 12345)         // src_sec_id
	}
	if _, err := tcp.BatchUpdate(keys, vals, nil); err != nil {
		return fmt.Errorf("fill %s: %w", bpfmaps.MapCTTCP, err)
	}
	return nil
}
