package eval

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/labrun/labrun/internal/lang/osroot"
	"github.com/labrun/labrun/internal/lang/regularfile"
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
		f, err := root.OpenFile(path, regularfile.OpenFlags, 0)
		if err != nil {
			return "", fmt.Errorf("file(%q): %w", path, plainPathError(err))
		}
		defer f.Close()
		b, err := regularfile.ReadOpened(f, "", maxFileSize)
		if tl := (*regularfile.TooLargeError)(nil); errors.As(err, &tl) {
			return "", fmt.Errorf("file(%q): file() reads at most %d bytes", path, maxFileSize)
		}
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
