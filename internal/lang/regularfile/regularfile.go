// Package regularfile reads the files a playbook names (a fixture through
// file(), a write's schema and the files its $ref names, an apply's
// manifests): regular files only. A playbook may come from a stranger, and
// opening a FIFO for reading waits for a writer, so validate would hang on
// a pipe no one writes to; a device (a link to /dev/zero) would be read
// without end. Files are opened with O_NONBLOCK, then refused unless
// regular, and read up to a bound.
package regularfile

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// OpenFlags are the flags to open a file a playbook names with (an
// os.Root's OpenFile takes them too): opening a FIFO returns at once.
const OpenFlags = os.O_RDONLY | syscall.O_NONBLOCK

// NotRegularError is the refusal of a path that is not a regular file.
type NotRegularError struct {
	Path string // "" when the caller names the file itself
	Kind string // "a named pipe (FIFO)", "a directory", ...
}

func (e *NotRegularError) Error() string {
	if e.Path == "" {
		return e.Kind + ", not a regular file"
	}
	return fmt.Sprintf("%s is %s, not a regular file", e.Path, e.Kind)
}

// TooLargeError is the refusal of a file larger than the reader's bound.
type TooLargeError struct{ Max int64 }

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("larger than %d bytes", e.Max)
}

// Read opens path with OpenFlags and reads it as ReadOpened does; a
// missing file gives the *fs.PathError.
func Read(path string, max int64) ([]byte, error) {
	f, err := os.OpenFile(path, OpenFlags, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadOpened(f, path, max)
}

// ReadOpened reads f, opened with OpenFlags, when it is a regular file of
// at most max bytes (no bound when max < 0); path names it in the
// refusal ("" to leave it to the caller).
func ReadOpened(f *os.File, path string, max int64) ([]byte, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, &NotRegularError{Path: path, Kind: Kind(fi.Mode())}
	}
	if max < 0 {
		return io.ReadAll(f)
	}
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, &TooLargeError{Max: max}
	}
	return data, nil
}

// Kind names what a file that is not a regular file is, for messages.
func Kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "a special file"
}
