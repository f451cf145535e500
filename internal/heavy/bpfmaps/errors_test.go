package bpfmaps

import (
	"errors"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"

	"github.com/labrun/labrun/internal/boundary/bpfentries"
)

func TestOpenErrors(t *testing.T) {
	if _, err := Open("/nonexistent/labrun-bpffs"); !errors.Is(err, ErrNotBPFFS) ||
		err.Error() != "bpffs root /nonexistent/labrun-bpffs does not exist; pass the bpffs Cilium pins its maps on (default /sys/fs/bpf)" {
		t.Errorf("missing root: %v", err)
	}
	dir := t.TempDir() // tmpfs or disk, not bpffs
	_, err := Open(dir)
	if !errors.Is(err, ErrNotBPFFS) || !strings.HasPrefix(err.Error(), dir+" is not a bpffs (filesystem magic ") {
		t.Errorf("not a bpffs: %v", err)
	}
}

func TestOpenGlobalsDir(t *testing.T) {
	root := privateBPFFS(t)
	fillLB(t, root)
	r := openReader(t, filepath.Join(root, "tc/globals"))
	if r.Root() != root || r.Dir() != filepath.Join(root, "tc/globals") {
		t.Errorf("Root %s Dir %s", r.Root(), r.Dir())
	}
	if _, err := r.RevNATs(); err != nil {
		t.Error(err)
	}
}

func TestMissingMaps(t *testing.T) {
	root := privateBPFFS(t)
	r := openReader(t, root)
	dir := filepath.Join(root, "tc/globals")
	cases := []struct {
		name string
		read func() error
		want string
	}{
		{"conntrack", func() error { _, err := r.Conntrack(); return err },
			"no pinned map cilium_ct4_global under " + dir + "; is Cilium running with this bpffs?"},
		{"services", func() error { _, err := r.Services(); return err },
			"no pinned map cilium_lb4_backends_v3 under " + dir + "; is Cilium running with this bpffs?"},
		{"lookup frontend", func() error { _, err := r.LookupFrontend("10.0.0.1:80/TCP"); return err },
			"no pinned map cilium_lb4_services_v2 under " + dir + "; is Cilium running with this bpffs?"},
		{"policy", func() error { _, err := r.Policy(42); return err },
			"no pinned map cilium_policy_v3_00042 under " + dir + "; is Cilium running with this bpffs?"},
		{"ipcache", func() error { _, err := r.IPCache(); return err },
			"no pinned map cilium_ipcache_v2 under " + dir + "; is Cilium running with this bpffs?"},
		{"ipcache lookup", func() error { _, err := r.LookupIPCache("10.0.0.1"); return err },
			"no pinned map cilium_ipcache_v2 under " + dir + "; is Cilium running with this bpffs?"},
	}
	for _, c := range cases {
		err := c.read()
		if !errors.Is(err, ErrMapNotFound) || err.Error() != c.want {
			t.Errorf("%s: got %v\nwant %s", c.name, err, c.want)
		}
	}

	// Only the TCP CT map present: the non-TCP one is reported.
	createPinned(t, root, MapCTTCP, specCT(16))
	if _, err := r.Conntrack(); !errors.Is(err, ErrMapNotFound) || !strings.Contains(err.Error(), "cilium_ct_any4_global") {
		t.Errorf("conntrack with any map missing: %v", err)
	}
}

func TestUnsupportedLayout(t *testing.T) {
	root := privateBPFFS(t)
	cases := []struct {
		name string
		spec ebpf.MapSpec
		read func(r *Reader) error
		want string
	}{
		{MapCTTCP, ebpf.MapSpec{Type: ebpf.LRUHash, KeySize: 16, ValueSize: 56, MaxEntries: 16},
			func(r *Reader) error { _, err := r.Conntrack(); return err },
			"unsupported Cilium map layout: cilium_ct4_global key size 16 (want 14); this reader decodes Cilium 1.20 layouts"},
		{MapBackends, ebpf.MapSpec{Type: ebpf.Hash, KeySize: 4, ValueSize: 20, MaxEntries: 16},
			func(r *Reader) error { _, err := r.Backends(); return err },
			"unsupported Cilium map layout: cilium_lb4_backends_v3 value size 20 (want 12); this reader decodes Cilium 1.20 layouts"},
		{MapIPCache, ebpf.MapSpec{Type: ebpf.Hash, KeySize: 24, ValueSize: 24, MaxEntries: 16},
			func(r *Reader) error { _, err := r.IPCache(); return err },
			"unsupported Cilium map layout: cilium_ipcache_v2 type Hash (want LPMTrie); this reader decodes Cilium 1.20 layouts"},
		{"cilium_policy_v3_00001", ebpf.MapSpec{Type: ebpf.LPMTrie, KeySize: 16, ValueSize: 8, MaxEntries: 16, Flags: unix.BPF_F_NO_PREALLOC},
			func(r *Reader) error { _, err := r.Policy(1); return err },
			"unsupported Cilium map layout: cilium_policy_v3_00001 key size 16 (want 12), value size 8 (want 12); this reader decodes Cilium 1.20 layouts"},
		{MapRevNAT, ebpf.MapSpec{Type: ebpf.Array, KeySize: 4, ValueSize: 6, MaxEntries: 16},
			func(r *Reader) error { _, err := r.RevNATs(); return err },
			"unsupported Cilium map layout: cilium_lb4_reverse_nat key size 4 (want 2), type Array (want Hash); this reader decodes Cilium 1.20 layouts"},
	}
	for _, c := range cases {
		createPinned(t, root, c.name, c.spec)
	}
	r := openReader(t, root)
	for _, c := range cases {
		err := c.read(r)
		if !errors.Is(err, ErrUnsupportedLayout) || err.Error() != c.want {
			t.Errorf("%s: got %v\nwant %s", c.name, err, c.want)
		}
	}
}

// asUnprivileged runs fn on a dedicated OS thread whose effective UID is
// 65534 (nobody): the kernel then clears the thread's effective
// capabilities, exactly like a non-root labrun. Credentials are per thread
// in Linux, so the raw setresuid affects no other goroutine; the thread is
// restored and then discarded (the goroutine exits while still locked).
func asUnprivileged(t *testing.T, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		runtime.LockOSThread()
		const keep = ^uintptr(0) // -1: leave unchanged
		if _, _, e := unix.RawSyscall(unix.SYS_SETRESUID, keep, 65534, keep); e != 0 {
			t.Errorf("setresuid: %v", e)
			return
		}
		defer unix.RawSyscall(unix.SYS_SETRESUID, keep, 0, keep)
		fn()
	}()
	<-done
}

func TestNotRoot(t *testing.T) {
	root := privateBPFFS(t)
	createPinned(t, root, MapCTTCP, specCT(16))
	createPinned(t, root, MapCTAny, specCT(16))
	r := openReader(t, root) // opened as root; the maps are not opened yet

	asUnprivileged(t, func() {
		_, err := Open(root)
		if !errors.Is(err, ErrNeedRoot) || err.Error() !=
			"reading pinned BPF maps needs root: running as uid 65534 without CAP_BPF or CAP_SYS_ADMIN (run labrun with sudo on the node)" {
			t.Errorf("Open as nobody: %v", err)
		}
		// A reader opened by root, used after privileges are gone: the
		// kernel refuses the pinned file and the error says why.
		_, err = r.Conntrack()
		if !errors.Is(err, ErrNeedRoot) || !strings.HasPrefix(err.Error(), "reading pinned BPF maps needs root: open ") {
			t.Errorf("Conntrack as nobody: %v", err)
		}
	})

	// Back as root the same reader works.
	if _, err := r.Conntrack(); err != nil {
		t.Errorf("Conntrack as root after the unprivileged attempt: %v", err)
	}
}

func TestReaderFollowsRecreatedMap(t *testing.T) {
	root := privateBPFFS(t)
	fillLB(t, root)
	r := openReader(t, root)
	if _, err := r.RevNATs(); err != nil {
		t.Fatal(err)
	}
	// Cilium re-creates a map: unpin the old one, pin a new one.
	path := filepath.Join(root, "tc/globals", MapRevNAT)
	if err := unix.Unlink(path); err != nil {
		t.Fatal(err)
	}
	if _, err := r.RevNATs(); !errors.Is(err, ErrMapNotFound) {
		t.Errorf("after unpin: %v", err)
	}
	m := createPinned(t, root, MapRevNAT, specRevNAT())
	put(t, m, ciliumRevNat4Key{Key: htons(9)}, ciliumRevNat4Value{Address: ip4(10, 43, 9, 9), Port: htons(9090)})
	got, err := r.RevNATs()
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0] != (bpfentries.RevNAT{ID: 9, Address: "10.43.9.9:9090"}) {
		t.Errorf("after re-create: %+v", got)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := r.RevNATs(); err == nil {
		t.Error("read after Close should fail")
	}
}
