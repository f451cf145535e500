package bpfmaps

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"
)

// These tests run against the real kernel: they mount a private bpffs in a
// temporary directory, create maps with Cilium's exact layouts there, pin
// them under <tmp>/tc/globals/<name>, and read them back through the
// package. Nothing touches /sys/fs/bpf.

// privateBPFFS mounts a fresh bpffs on a temp dir and unmounts it in
// cleanup. It skips the test, with the reason, when the kernel or the
// sandbox refuses (not root, no bpffs support).
func privateBPFFS(t testing.TB) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to mount a private bpffs and create BPF maps")
	}
	dir := t.TempDir()
	if err := unix.Mount("bpf", dir, "bpf", 0, "mode=0700"); err != nil {
		t.Skipf("kernel refused to mount a private bpffs on %s: %v", dir, err)
	}
	t.Cleanup(func() {
		if err := unix.Unmount(dir, unix.MNT_DETACH); err != nil {
			t.Errorf("unmount private bpffs %s: %v", dir, err)
		}
	})
	if err := os.MkdirAll(filepath.Join(dir, globalsDir), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// createPinned creates a map and pins it as <root>/tc/globals/<name>. The
// returned map stays open (for filling) and is closed in cleanup; the pin
// disappears with the bpffs.
func createPinned(t testing.TB, root, name string, spec ebpf.MapSpec) *ebpf.Map {
	t.Helper()
	spec.Name = "" // kernel names are limited to 15 chars; not needed
	m, err := ebpf.NewMap(&spec)
	if err != nil {
		if errors.Is(err, unix.EPERM) || errors.Is(err, ebpf.ErrNotSupported) {
			t.Skipf("kernel refused to create a %s map: %v", spec.Type, err)
		}
		t.Fatalf("create %s: %v", name, err)
	}
	t.Cleanup(func() { _ = m.Close() })
	if err := m.Pin(filepath.Join(root, globalsDir, name)); err != nil {
		t.Fatalf("pin %s: %v", name, err)
	}
	return m
}

// Map specs as Cilium creates them (type, sizes, flags).
func specServices() ebpf.MapSpec {
	// lbmaps.go NewService4Map: Hash, BPF_F_RDONLY_PROG; lb.h L277.
	return ebpf.MapSpec{Type: ebpf.Hash, KeySize: sizeofLB4Key, ValueSize: sizeofLB4Service,
		MaxEntries: 65536, Flags: unix.BPF_F_RDONLY_PROG}
}

func specBackends() ebpf.MapSpec {
	return ebpf.MapSpec{Type: ebpf.Hash, KeySize: sizeofBackendKey, ValueSize: sizeofLB4Backend, MaxEntries: 65536}
}

func specRevNAT() ebpf.MapSpec {
	return ebpf.MapSpec{Type: ebpf.Hash, KeySize: sizeofRevNATKey, ValueSize: sizeofLB4RevNAT, MaxEntries: 65536}
}

func specCT(max uint32) ebpf.MapSpec {
	// ctmap.go L373: LRU hash, preallocated (LRU_MEM_FLAVOR 0).
	return ebpf.MapSpec{Type: ebpf.LRUHash, KeySize: sizeofCTTuple4, ValueSize: sizeofCTEntry, MaxEntries: max}
}

func specPolicy() ebpf.MapSpec {
	// policymap.go newPolicyMap: LPM trie, BPF_F_NO_PREALLOC|BPF_F_RDONLY_PROG.
	return ebpf.MapSpec{Type: ebpf.LPMTrie, KeySize: sizeofPolicyKey, ValueSize: sizeofPolicyEntry,
		MaxEntries: 16384, Flags: unix.BPF_F_NO_PREALLOC | unix.BPF_F_RDONLY_PROG}
}

func specIPCache() ebpf.MapSpec {
	// ipcache.go newIPCacheMap: LPM trie, BPF_F_NO_PREALLOC|BPF_F_RDONLY_PROG.
	return ebpf.MapSpec{Type: ebpf.LPMTrie, KeySize: sizeofIPCacheKey, ValueSize: sizeofRemoteEndpointInfo,
		MaxEntries: 512000, Flags: unix.BPF_F_NO_PREALLOC | unix.BPF_F_RDONLY_PROG}
}

// ciliumBytes encodes one of the mirror structs of cilium_types_test.go the
// way Cilium's Go code hands it to the kernel: the struct's memory in host
// byte order (Cilium passes unsafe pointers; these structs have no padding,
// so binary.Write produces the same bytes).
func ciliumBytes(t testing.TB, v any) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := binary.Write(&buf, binary.NativeEndian, v); err != nil {
		t.Fatalf("encode %T: %v", v, err)
	}
	return buf.Bytes()
}

func put(t testing.TB, m *ebpf.Map, k, v any) {
	t.Helper()
	if err := m.Put(ciliumBytes(t, k), ciliumBytes(t, v)); err != nil {
		t.Fatalf("put %+v: %v", k, err)
	}
}

func openReader(t testing.TB, root string) *Reader {
	t.Helper()
	r, err := Open(root)
	if err != nil {
		t.Fatalf("Open(%s): %v", root, err)
	}
	t.Cleanup(func() { _ = r.Close() })
	return r
}

func ip4(a, b, c, d byte) [4]byte { return [4]byte{a, b, c, d} }

// htons converts a host-order port to the network-order value Cilium
// stores in a uint16 field (byteorder.HostToNetwork16).
func htons(v uint16) uint16 {
	var b [2]byte
	binary.BigEndian.PutUint16(b[:], v)
	return binary.NativeEndian.Uint16(b[:])
}

// ptr is a pointer to v, for the nullable fields of the entries.
func ptr[T any](v T) *T { return &v }
