package bpfmaps

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"

	"github.com/labrun/labrun/internal/boundary/bpfentries"
)

// DefaultRoot is where Cilium mounts bpffs by default. Labs whose cluster
// runs with its own bpffs mount pass that mount to [Open] instead.
const DefaultRoot = "/sys/fs/bpf"

// globalsDir is where Cilium pins its global maps under the bpffs root
// (pkg/bpf/bpffs_linux.go: TCGlobalsPath = <root>/tc/globals).
const globalsDir = "tc/globals"

// Sentinel errors, for errors.Is. The error values returned by this package
// carry a full human message and unwrap to one of these.
var (
	// ErrNeedRoot: the process lacks the privileges to open pinned maps.
	ErrNeedRoot = errors.New("reading pinned BPF maps needs root")
	// ErrNotBPFFS: the root does not exist or is not a bpffs mount.
	ErrNotBPFFS = errors.New("not a bpffs")
	// ErrMapNotFound: the map is not pinned under <root>/tc/globals.
	ErrMapNotFound = errors.New("no pinned map")
	// ErrUnsupportedLayout: the map's key/value size or type is not the
	// Cilium 1.20 layout this package decodes.
	ErrUnsupportedLayout = errors.New("unsupported Cilium map layout")
)

// mapError is an error with a complete message that unwraps to a sentinel
// (and optionally to the underlying cause).
type mapError struct {
	kind  error
	msg   string
	cause error
}

func (e *mapError) Error() string { return e.msg }

func (e *mapError) Unwrap() []error {
	if e.cause != nil {
		return []error{e.kind, e.cause}
	}
	return []error{e.kind}
}

// Reader reads Cilium's pinned maps under one bpffs root. It opens maps on
// first use and keeps them open, so that repeated reads (an `until` poll)
// cost only the lookups themselves. Before each read it stats the pin, so a
// map that Cilium re-created (agent restart, map migration) is re-opened
// instead of reading the orphaned old one. A Reader is safe for concurrent
// use; Close it when done.
type Reader struct {
	root string
	dir  string

	mu     sync.Mutex
	maps   map[string]*openMap
	closed bool
}

// Reader is what the bpfmap action reads through.
var _ bpfentries.Reader = (*Reader)(nil)

// Opener returns a function that opens a Reader per bpffs root on first
// use and returns the same one afterwards, so that a run's until polls
// re-read through maps that are already open.
func Opener() func(root string) (bpfentries.Reader, error) {
	var mu sync.Mutex
	readers := map[string]*Reader{}
	return func(root string) (bpfentries.Reader, error) {
		mu.Lock()
		defer mu.Unlock()
		if r, ok := readers[root]; ok {
			return r, nil
		}
		r, err := Open(root)
		if err != nil {
			return nil, err
		}
		readers[root] = r
		return r, nil
	}
}

type openMap struct {
	name string
	m    *ebpf.Map
	dev  uint64
	ino  uint64
	// batch is false once the kernel refused BatchLookup for this map, so
	// later reads go straight to iteration.
	batch bool
}

// Open checks privileges and the bpffs root (DefaultRoot if root is "")
// and returns a Reader for the maps under <root>/tc/globals. Passing the
// tc/globals directory itself works too. Maps are opened lazily, so a
// missing map is reported by the call that needs it.
func Open(root string) (*Reader, error) {
	if root == "" {
		root = DefaultRoot
	}
	if err := checkPrivileges(); err != nil {
		return nil, err
	}
	if err := checkBPFFS(root); err != nil {
		return nil, err
	}
	root = filepath.Clean(root)
	dir := filepath.Join(root, globalsDir)
	// Accept the globals directory itself (a common copy-paste from
	// `ls /sys/fs/bpf/tc/globals`) as long as it does not contain a
	// tc/globals of its own.
	if strings.HasSuffix(root, string(filepath.Separator)+globalsDir) {
		if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
			dir = root
			root = filepath.Dir(filepath.Dir(root))
		}
	}
	return &Reader{
		root: root,
		dir:  dir,
		maps: map[string]*openMap{},
	}, nil
}

// Root returns the bpffs root the reader was opened on.
func (r *Reader) Root() string { return r.root }

// Dir returns the directory the maps are read from (<root>/tc/globals).
func (r *Reader) Dir() string { return r.dir }

// Close closes every map the reader opened. The pinned maps are untouched.
func (r *Reader) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	var errs []error
	for name, om := range r.maps {
		if err := om.m.Close(); err != nil {
			errs = append(errs, err)
		}
		delete(r.maps, name)
	}
	r.closed = true
	return errors.Join(errs...)
}

// checkPrivileges fails early, with a message that says what to do, when
// the calling thread has neither CAP_BPF nor CAP_SYS_ADMIN in its effective
// set (not root, or root in a restricted container). Cilium's pins are
// root-only files, and kernels with unprivileged BPF disabled refuse bpf()
// without CAP_BPF, so such a process would otherwise get a bare EPERM or
// EACCES on the first map.
func checkPrivileges() error {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		// Cannot tell; let the kernel decide on open.
		return nil
	}
	has := func(c uint) bool { return data[c/32].Effective&(1<<(c%32)) != 0 }
	if has(unix.CAP_BPF) || has(unix.CAP_SYS_ADMIN) {
		return nil
	}
	uid := unix.Geteuid()
	who := "uid " + strconv.Itoa(uid)
	if uid == 0 {
		who = "root"
	}
	return &mapError{kind: ErrNeedRoot, msg: fmt.Sprintf(
		"%s: running as %s without CAP_BPF or CAP_SYS_ADMIN (run labrun with sudo on the node)",
		ErrNeedRoot.Error(), who)}
}

// checkBPFFS verifies that root exists and lives on a bpffs (statfs magic
// BPF_FS_MAGIC). Pinned maps can only be opened from a bpffs, and pointing
// at the wrong mount is the most common mistake with per-cluster mounts.
func checkBPFFS(root string) error {
	var st unix.Statfs_t
	if err := unix.Statfs(root, &st); err != nil {
		if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) {
			return &mapError{kind: ErrNotBPFFS, cause: err, msg: fmt.Sprintf(
				"bpffs root %s does not exist; pass the bpffs Cilium pins its maps on (default %s)", root, DefaultRoot)}
		}
		if errors.Is(err, unix.EACCES) || errors.Is(err, unix.EPERM) {
			return &mapError{kind: ErrNeedRoot, cause: err, msg: fmt.Sprintf(
				"%s: stat %s: %v", ErrNeedRoot.Error(), root, err)}
		}
		return fmt.Errorf("bpffs root %s: %w", root, err)
	}
	if uint32(st.Type) != unix.BPF_FS_MAGIC {
		return &mapError{kind: ErrNotBPFFS, msg: fmt.Sprintf(
			"%s is not a bpffs (filesystem magic %#x, want %#x); pass the bpffs Cilium pins its maps on (default %s)",
			root, uint32(st.Type), uint32(unix.BPF_FS_MAGIC), DefaultRoot)}
	}
	return nil
}

// get returns the open map for name, opening (or re-opening, if the pin now
// points to another map) as needed. Callers hold r.mu.
func (r *Reader) get(name string) (*openMap, error) {
	if r.closed {
		return nil, errors.New("bpfmaps: reader is closed")
	}
	path := filepath.Join(r.dir, name)
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		if om := r.maps[name]; om != nil {
			_ = om.m.Close()
			delete(r.maps, name)
		}
		return nil, r.openError(name, path, err)
	}
	if om := r.maps[name]; om != nil {
		if om.dev == uint64(st.Dev) && om.ino == st.Ino {
			return om, nil
		}
		_ = om.m.Close()
		delete(r.maps, name)
	}

	m, err := ebpf.LoadPinnedMap(path, &ebpf.LoadPinOptions{ReadOnly: true})
	if err != nil {
		return nil, r.openError(name, path, err)
	}
	if err := checkLayout(name, m); err != nil {
		_ = m.Close()
		return nil, err
	}
	om := &openMap{name: name, m: m, dev: uint64(st.Dev), ino: st.Ino, batch: true}
	r.maps[name] = om
	return om, nil
}

func (r *Reader) openError(name, path string, err error) error {
	switch {
	case errors.Is(err, os.ErrNotExist):
		return &mapError{kind: ErrMapNotFound, cause: err, msg: fmt.Sprintf(
			"%s %s under %s; is Cilium running with this bpffs?", ErrMapNotFound.Error(), name, r.dir)}
	case errors.Is(err, os.ErrPermission):
		return &mapError{kind: ErrNeedRoot, cause: err, msg: fmt.Sprintf(
			"%s: open %s: %v", ErrNeedRoot.Error(), path, err)}
	}
	return fmt.Errorf("open pinned map %s: %w", path, err)
}

// checkLayout compares the kernel's key size, value size and map type with
// the layout this package decodes, so a different Cilium version fails
// loudly instead of decoding garbage.
func checkLayout(name string, m *ebpf.Map) error {
	want := layoutFor(name)
	var probs []string
	if m.KeySize() != want.keySize {
		probs = append(probs, fmt.Sprintf("key size %d (want %d)", m.KeySize(), want.keySize))
	}
	if m.ValueSize() != want.valueSize {
		probs = append(probs, fmt.Sprintf("value size %d (want %d)", m.ValueSize(), want.valueSize))
	}
	typeOK := false
	for _, t := range want.types {
		typeOK = typeOK || m.Type() == t
	}
	if !typeOK {
		probs = append(probs, fmt.Sprintf("type %s (want %s)", m.Type(), want.typeNames()))
	}
	if len(probs) == 0 {
		return nil
	}
	return &mapError{kind: ErrUnsupportedLayout, msg: fmt.Sprintf(
		"%s: %s %s; this reader decodes Cilium 1.20 layouts",
		ErrUnsupportedLayout.Error(), name, strings.Join(probs, ", "))}
}

// batchSize is the number of entries fetched per BPF_MAP_LOOKUP_BATCH. It
// is large enough that 200k CT entries take ~50 syscalls and small enough
// (a few hundred KiB of buffer) to be cheap for tiny maps.
const batchSize = 4096

// dumpMap calls fn for every entry of the map. K and V must be byte arrays
// of exactly the key and value size, which checkLayout guarantees.
func dumpMap[K, V any](om *openMap, fn func(k *K, v *V)) error {
	return dumpChunks(om, func(ks []K, vs []V) {
		for i := range ks {
			fn(&ks[i], &vs[i])
		}
	})
}

// dumpChunks calls fn with successive chunks of entries. The chunks are
// never reused, so fn may keep them (the CT reader does, to decode all
// entries into one exactly sized slice afterwards). It uses BatchLookup
// when the kernel supports it for this map type and falls back to
// key-by-key iteration otherwise (map types without batch ops on older
// kernels).
func dumpChunks[K, V any](om *openMap, fn func(ks []K, vs []V)) error {
	if om.batch {
		done, err := dumpBatch(om, fn)
		if done || err != nil {
			return err
		}
		om.batch = false
	}
	n := chunkLen(om)
	ks, vs := make([]K, 0, n), make([]V, 0, n)
	var k K
	var v V
	it := om.m.Iterate()
	for it.Next(&k, &v) {
		ks, vs = append(ks, k), append(vs, v)
		if len(ks) == n {
			fn(ks, vs)
			ks, vs = make([]K, 0, n), make([]V, 0, n)
		}
	}
	if err := it.Err(); err != nil {
		return fmt.Errorf("iterate %s: %w", om.name, err)
	}
	if len(ks) > 0 {
		fn(ks, vs)
	}
	return nil
}

// chunkLen is the number of entries per batch: batchSize, or less for
// maps that cannot hold that many.
func chunkLen(om *openMap) int {
	if max := int(om.m.MaxEntries()); max > 0 && max < batchSize {
		return max
	}
	return batchSize
}

// dumpBatch returns done=false (and no error) when batching is not
// supported and nothing was delivered yet, so the caller can iterate.
func dumpBatch[K, V any](om *openMap, fn func(ks []K, vs []V)) (done bool, err error) {
	n := chunkLen(om)
	keys := make([]K, n)
	vals := make([]V, n)
	var cursor ebpf.MapBatchCursor
	delivered := 0
	for {
		cnt, err := om.m.BatchLookup(&cursor, keys, vals, nil)
		if cnt > 0 {
			fn(keys[:cnt:cnt], vals[:cnt:cnt])
			delivered += cnt
		}
		switch {
		case errors.Is(err, ebpf.ErrKeyNotExist):
			return true, nil
		case err == nil:
		case errors.Is(err, unix.ENOSPC) && cnt == 0:
			// A hash bucket holds more entries than the buffer; the
			// kernel did not advance the cursor, so retry bigger.
			n *= 2
		case delivered == 0 && (errors.Is(err, ebpf.ErrNotSupported) ||
			errors.Is(err, unix.EINVAL) || errors.Is(err, syscall.ENOTSUP)):
			return false, nil
		default:
			return true, fmt.Errorf("batch lookup %s: %w", om.name, err)
		}
		if cnt > 0 || len(keys) != n {
			keys, vals = make([]K, n), make([]V, n)
		}
	}
}

// PolicyEndpoints lists the endpoint IDs that have a policy map pinned
// (cilium_policy_v3_NNNNN), in ascending order.
func (r *Reader) PolicyEndpoints() ([]uint16, error) {
	ents, err := os.ReadDir(r.dir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, &mapError{kind: ErrMapNotFound, cause: err, msg: fmt.Sprintf(
				"no pinned maps under %s; is Cilium running with this bpffs?", r.dir)}
		}
		if errors.Is(err, os.ErrPermission) {
			return nil, &mapError{kind: ErrNeedRoot, cause: err, msg: fmt.Sprintf(
				"%s: %v", ErrNeedRoot.Error(), err)}
		}
		return nil, err
	}
	ids := []uint16{}
	for _, e := range ents {
		rest, ok := strings.CutPrefix(e.Name(), PolicyMapBase)
		if !ok || len(rest) != 5 {
			continue
		}
		id, err := strconv.ParseUint(rest, 10, 16)
		if err != nil {
			continue
		}
		ids = append(ids, uint16(id))
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	return ids, nil
}
