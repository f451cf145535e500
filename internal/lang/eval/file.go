package eval

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/labrun/labrun/internal/lang/osroot"
)

// maxFileSize bounds what file() reads: fixtures, not data sets.
const maxFileSize = 16 << 20

// FileFunction is file(path): the text of a file of the lab, path relative
// to dir (the playbook's directory), for fixtures an expression compares
// with (fromJSON(file("want.json"))). Every read goes through an os.Root
// opened on dir, so neither "..", an absolute path nor a symbolic link
// leads out of the playbook's directory; only regular files of at most 16
// MiB are read (a FIFO, a device or a socket is refused without waiting on
// it). A constant path is checked when the playbook is validated.
func FileFunction(dir string) Function {
	read := func(path string) (string, error) {
		if dir == "" {
			return "", fmt.Errorf("file(%q): no playbook directory to read from", path)
		}
		if path == "" || filepath.IsAbs(path) || strings.ContainsRune(path, 0) {
			return "", fmt.Errorf("file(%q): the path must be relative to the playbook's directory %s", path, dir)
		}
		root, err := os.OpenRoot(dir)
		if err != nil {
			return "", fmt.Errorf("file(%q): %w", path, err)
		}
		defer root.Close()
		// O_NONBLOCK: opening a FIFO for reading waits for a writer, and
		// validate would hang on a pipe that no one writes to; the mode
		// check below then refuses it.
		f, err := root.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
		if err != nil {
			return "", fmt.Errorf("file(%q): %w", path, plainPathError(err))
		}
		defer f.Close()
		st, err := f.Stat()
		if err != nil {
			return "", fmt.Errorf("file(%q): %w", path, err)
		}
		if st.IsDir() {
			return "", fmt.Errorf("file(%q): a directory, not a file", path)
		}
		if !st.Mode().IsRegular() {
			return "", fmt.Errorf("file(%q): %s, not a regular file", path, fileKind(st.Mode()))
		}
		if st.Size() > maxFileSize {
			return "", fmt.Errorf("file(%q): %d bytes; file() reads at most %d", path, st.Size(), maxFileSize)
		}
		b, err := io.ReadAll(io.LimitReader(f, maxFileSize+1))
		if err != nil {
			return "", fmt.Errorf("file(%q): %w", path, err)
		}
		return string(b), nil
	}
	f := Unary("file", "The text of a file of the lab, path relative to the playbook's directory and inside it (fromJSON(file(\"want.json\"))); a constant path must exist when the playbook is validated.", read)
	f.CheckConst = func(path string) error {
		_, err := read(path)
		return err
	}
	return f
}

// fileKind names what a path that is not a regular file is, for messages.
func fileKind(m os.FileMode) string {
	switch {
	case m&os.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&os.ModeSocket != 0:
		return "a socket"
	case m&os.ModeDevice != 0:
		return "a device"
	}
	return "a special file"
}

// plainPathError drops the operation and path os.Root puts in front of
// its errors, which file() names itself.
func plainPathError(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		err = pe.Err
	}
	if osroot.Escapes(err) {
		return fmt.Errorf("it leads out of the playbook's directory")
	}
	return err
}
