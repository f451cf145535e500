// Package outdir holds a run's output directory. Every file operation of a
// run inside it (outputs, their temporary files, the journal, reports
// written there) and every learner file `labrun check` reads goes through
// an os.Root opened on it: a symbolic link or a ".." cannot carry a read or
// a write outside, even when the directory's contents change while labrun
// works in it (a learner swapping a directory for a link).
//
// labrun runs as root on a learner's machine, and output directories are
// often fixed paths under /tmp, so the directory itself is checked when it
// is opened: not a link, not owned by another non-root user, not writable
// by other users. One it makes is created owner-only.
package outdir

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"unicode"

	"github.com/labrun/labrun/internal/lang/osroot"
)

// StateDir is the directory inside the output directory that labrun keeps
// for itself; a write path may not lead into it.
const StateDir = ".labrun"

// JournalFile is the journal's path inside the output directory.
const JournalFile = StateDir + "/journal.jsonl"

// Dir is an open output directory.
type Dir struct {
	// Path is the directory's absolute path, for messages and results.
	Path string
	root *os.Root // nil when a directory opened for reading is missing

	mu  sync.Mutex // parallel steps write at once
	run *RunStatus // the manifest of the run writing here (StartRun)
}

// Create opens the output directory of a run that writes into it, making
// it owner-only when missing (its parents as needed). An existing
// directory must be a real directory that no other user can change. The
// temporary files of writes an earlier run did not finish (it was killed
// between creating one and renaming it into place) are removed.
func Create(path string) (*Dir, error) {
	path, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("cannot create output directory: %w", err)
	}
	// Mkdir makes the directory or finds one already there, in one step:
	// nobody can slip a link in between a check and the creation.
	if err := os.Mkdir(path, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("cannot create output directory: %w", err)
	}
	d, err := open(path)
	if err != nil {
		return nil, err
	}
	if err := d.checkOwner(); err != nil {
		d.Close()
		return nil, err
	}
	if err := d.removeTemps(); err != nil {
		d.Close()
		return nil, err
	}
	return d, nil
}

// tempSuffix begins the end of a temporary file's name: ".NAME.tmp-"
// and 16 hexadecimal digits (createTemp).
const tempSuffix = ".tmp-"

// isTemp reports whether name is one createTemp makes.
func isTemp(name string) bool {
	i := strings.LastIndex(name, tempSuffix)
	if !strings.HasPrefix(name, ".") || i < 2 {
		return false
	}
	b, err := hex.DecodeString(name[i+len(tempSuffix):])
	return err == nil && len(b) == 8
}

// removeTemps removes the temporary files that writes interrupted by a
// crash or a SIGKILL left behind (a large output's can be hundreds of
// MB). Only regular files named as createTemp names them are removed; the
// walk stays in the root and does not follow links.
func (d *Dir) removeTemps() error {
	return fs.WalkDir(d.root.FS(), ".", func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			if p == "." {
				return d.explain(p, err)
			}
			// A directory that vanished or became a link while the walk
			// went on (a learner's doing) holds nothing of ours to remove.
			return nil
		}
		if !e.Type().IsRegular() || !isTemp(e.Name()) {
			return nil
		}
		if err := d.root.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("cannot remove %s, left by an interrupted write: %w", d.Abs(p), unwrap(err))
		}
		return nil
	})
}

// Open opens an existing output directory for reading (labrun check, the
// journal of labrun eval). A missing directory gives a Dir whose files are
// all missing, so that check reports each one.
func Open(path string) (*Dir, error) {
	path, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	d, err := open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return &Dir{Path: path}, nil
	}
	return d, err
}

// open opens path as a root, refusing a link in its place: the link
// could lead anywhere, and who planted it is unknown. The directory
// opened must be the one that was checked.
func open(path string) (*Dir, error) {
	before, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if before.Mode()&fs.ModeSymlink != 0 {
		return nil, fmt.Errorf("output directory %s is a symbolic link; refusing to follow it", path)
	}
	if !before.IsDir() {
		return nil, fmt.Errorf("output directory %s is not a directory", path)
	}
	root, err := os.OpenRoot(path)
	if err != nil {
		return nil, fmt.Errorf("cannot open output directory: %w", err)
	}
	after, err := root.Stat(".")
	if err != nil || !os.SameFile(before, after) {
		root.Close()
		return nil, fmt.Errorf("output directory %s changed while it was opened; refusing to use it", path)
	}
	return &Dir{Path: path, root: root}, nil
}

// checkOwner refuses a directory another non-root user owns or can write
// to: that user could plant links or replace files between two writes.
// Group write is allowed only for labrun's own group (a user's private
// group under umask 002).
func (d *Dir) checkOwner() error {
	fi, err := d.root.Stat(".")
	if err != nil {
		return err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	if uid := int(st.Uid); uid != 0 && uid != os.Geteuid() {
		return fmt.Errorf("output directory %s is owned by user %d; refusing to write into it", d.Path, uid)
	}
	perm := fi.Mode().Perm()
	if perm&0o002 != 0 || (perm&0o020 != 0 && int(st.Gid) != os.Getegid()) {
		return fmt.Errorf("output directory %s can be written by other users (mode %s); refusing to write into it", d.Path, fi.Mode())
	}
	return nil
}

// Close releases the directory.
func (d *Dir) Close() error {
	if d == nil || d.root == nil {
		return nil
	}
	return d.root.Close()
}

// Resolve turns a write path of a playbook into a clean path relative to
// the output directory dir (absolute; "" when not known yet, which refuses
// every absolute path): relative paths are taken from dir, absolute ones
// must lie inside it. It refuses what cannot name a file of
// the lab's own inside dir: an empty path, a NUL byte, the directory
// itself, a path leading out of it, and labrun's own state directory;
// and what would not name the file it seems to: a control character (a
// newline in a file name), and a last element that names a directory
// (dir/, dir/., dir/..), which filepath.Clean would turn into the
// directory's own name. Links are not looked at here: every operation of
// Dir resolves them inside the root when it opens the file.
func Resolve(dir, p string) (string, error) {
	switch {
	case p == "":
		return "", errors.New("output path is empty")
	case strings.IndexByte(p, 0) >= 0:
		return "", fmt.Errorf("output path %q holds a NUL byte", p)
	case strings.IndexFunc(p, unicode.IsControl) >= 0:
		return "", fmt.Errorf("output path %q holds a control character; file names here are printable text", p)
	}
	outside := fmt.Errorf("output path %s is outside the output directory %s", p, dir)
	if dir == "" {
		outside = fmt.Errorf("output path %s is outside the output directory", p)
	}
	rel := filepath.Clean(p)
	if filepath.IsAbs(rel) {
		r, err := filepath.Rel(filepath.Clean(dir), rel)
		if err != nil || dir == "" {
			return "", outside
		}
		rel = r
	}
	switch {
	case rel == ".":
		return "", fmt.Errorf("output path %s names the output directory itself, not a file in it", p)
	case rel == ".." || strings.HasPrefix(rel, "../"):
		return "", outside
	case rel == StateDir || strings.HasPrefix(rel, StateDir+"/"):
		return "", fmt.Errorf("output path %s is inside %s, which labrun keeps for its journal", p, StateDir)
	}
	if last := p[strings.LastIndexByte(p, '/')+1:]; last == "" || last == "." || last == ".." {
		return "", fmt.Errorf("output path %s ends with /%s, which names a directory; expected a file name after the last /", p, last)
	}
	return rel, nil
}

// Resolve is the package Resolve on this directory.
func (d *Dir) Resolve(p string) (string, error) { return Resolve(d.Path, p) }

// Abs is the absolute path of rel, for messages and results.
func (d *Dir) Abs(rel string) string { return filepath.Join(d.Path, rel) }

// WriteFile stores data at rel (from Resolve) so that a reader sees the
// old content or the whole new one, never a part: through a temporary
// file beside it, synced and renamed into place. Missing parent
// directories are made. Modes follow the umask (0666 and 0777 before it),
// as any file a tool writes. Once a run has started (StartRun), the file
// is in its manifest when WriteFile returns.
func (d *Dir) WriteFile(rel string, data []byte) error {
	if err := d.write(rel, data); err != nil {
		return err
	}
	return d.record(rel)
}

// write is WriteFile without the manifest.
func (d *Dir) write(rel string, data []byte) error {
	if d.root == nil {
		return &fs.PathError{Op: "write", Path: d.Abs(rel), Err: fs.ErrNotExist}
	}
	parent := filepath.Dir(rel)
	if err := d.root.MkdirAll(parent, 0o777); err != nil {
		return d.explain(rel, err)
	}
	if fi, err := d.root.Lstat(rel); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return fmt.Errorf("output path %s is a symbolic link; refusing to replace it", rel)
	}
	tmp, f, err := d.createTemp(rel)
	if err != nil {
		return d.explain(rel, err)
	}
	ok := false
	defer func() {
		if !ok {
			f.Close()
			d.root.Remove(tmp)
		}
	}()
	if _, err := f.Write(data); err != nil {
		return fmt.Errorf("write %s: %w", d.Abs(rel), unwrap(err))
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("write %s: %w", d.Abs(rel), unwrap(err))
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", d.Abs(rel), unwrap(err))
	}
	if err := d.root.Rename(tmp, rel); err != nil {
		return d.explain(rel, err)
	}
	ok = true
	// Sync the directory so the rename itself survives a crash.
	if dir, err := d.root.Open(parent); err == nil {
		dir.Sync()
		dir.Close()
	}
	return nil
}

// createTemp makes a new file beside rel with a name no one can guess.
func (d *Dir) createTemp(rel string) (string, *os.File, error) {
	for range 10 {
		var b [8]byte
		rand.Read(b[:])
		name := filepath.Join(filepath.Dir(rel), "."+filepath.Base(rel)+tempSuffix+hex.EncodeToString(b[:]))
		f, err := d.root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
		if !errors.Is(err, fs.ErrExist) {
			return name, f, err
		}
	}
	return "", nil, fmt.Errorf("cannot create a temporary file beside %s", rel)
}

// Exists reports whether anything is at rel (from Resolve) inside the
// directory, a link included: labrun check takes a task whose file exists
// as started, and grading then says what is wrong with the file.
func (d *Dir) Exists(rel string) bool {
	if d.root == nil {
		return false
	}
	_, err := d.root.Lstat(rel)
	return err == nil
}

// List lists the directory's entries as the directory holds them (a link
// is listed as a link, not followed); none for a missing directory.
func (d *Dir) List() ([]fs.DirEntry, error) {
	if d.root == nil {
		return nil, nil
	}
	return fs.ReadDir(d.root.FS(), ".")
}

// ReadFile reads a learner's file rel (from Resolve) inside the directory:
// a regular file of at most limit bytes. A link leading out, a device or a
// pipe is refused, so check never blocks on a FIFO or reads what the
// learner may not.
func (d *Dir) ReadFile(rel string, limit int64) ([]byte, error) {
	if d.root == nil {
		return nil, &fs.PathError{Op: "open", Path: d.Abs(rel), Err: fs.ErrNotExist}
	}
	f, err := d.root.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, d.explain(rel, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file (%s)", rel, fi.Mode().Type())
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s is larger than %d bytes", rel, limit)
	}
	return data, nil
}

// OpenJournal opens the journal owner-only: afresh (truncated) for a new
// run, for appending when a run resumes. A link in its place is refused.
func (d *Dir) OpenJournal(fresh bool) (*os.File, error) {
	if err := d.root.MkdirAll(StateDir, 0o700); err != nil {
		return nil, d.explain(JournalFile, err)
	}
	if fi, err := d.root.Lstat(JournalFile); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return nil, fmt.Errorf("journal %s is a symbolic link; refusing to follow it", d.Abs(JournalFile))
	}
	flags := os.O_CREATE | os.O_WRONLY | os.O_APPEND
	if fresh {
		flags = os.O_CREATE | os.O_WRONLY | os.O_TRUNC
	}
	f, err := d.root.OpenFile(JournalFile, flags, 0o600)
	if err != nil {
		return nil, d.explain(JournalFile, err)
	}
	// A journal an older labrun left readable by all becomes owner-only.
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// ReadJournal reads the journal, refusing a link in its place.
func (d *Dir) ReadJournal() ([]byte, error) {
	if d.root != nil {
		if fi, err := d.root.Lstat(JournalFile); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			return nil, fmt.Errorf("journal %s is a symbolic link; refusing to follow it", d.Abs(JournalFile))
		}
	}
	return d.ReadFile(JournalFile, 1<<30)
}

// explain rewords an error of the root for rel: os.Root says only "path
// escapes from parent" when a link leads out.
func (d *Dir) explain(rel string, err error) error {
	if osroot.Escapes(err) {
		return fmt.Errorf("output path %s leaves the output directory through a symbolic link", rel)
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return &fs.PathError{Op: pe.Op, Path: d.Abs(rel), Err: pe.Err}
	}
	return err
}

func unwrap(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// WriteFile stores data atomically at path, a file named on the command
// line (a report outside the output directory), through a root opened on
// its directory.
func WriteFile(path string, data []byte) error {
	path, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	root, err := os.OpenRoot(filepath.Dir(path))
	if err != nil {
		return err
	}
	d := &Dir{Path: filepath.Dir(path), root: root}
	defer d.Close()
	return d.WriteFile(filepath.Base(path), data)
}
