package eval

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// maxFileSize bounds what file() reads: fixtures, not data sets.
const maxFileSize = 16 << 20

// FileFunction is file(path): the text of a file of the lab, path relative
// to dir (the playbook's directory), for fixtures an expression compares
// with (fromJSON(file("want.json"))). Every read goes through an os.Root
// opened on dir, so neither "..", an absolute path nor a symbolic link
// leads out of the playbook's directory; only regular files of at most 16
// MiB are read. A constant path is checked when the playbook is validated.
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
			return "", fmt.Errorf("file(%q): %v", path, err)
		}
		defer root.Close()
		f, err := root.Open(path)
		if err != nil {
			return "", fmt.Errorf("file(%q): %v", path, plainPathError(err))
		}
		defer f.Close()
		st, err := f.Stat()
		if err != nil {
			return "", fmt.Errorf("file(%q): %v", path, err)
		}
		if st.IsDir() {
			return "", fmt.Errorf("file(%q): a directory, not a file", path)
		}
		if !st.Mode().IsRegular() {
			return "", fmt.Errorf("file(%q): not a regular file (%s)", path, st.Mode().Type())
		}
		if st.Size() > maxFileSize {
			return "", fmt.Errorf("file(%q): %d bytes; file() reads at most %d", path, st.Size(), maxFileSize)
		}
		b, err := io.ReadAll(io.LimitReader(f, maxFileSize+1))
		if err != nil {
			return "", fmt.Errorf("file(%q): %v", path, err)
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
	if strings.Contains(err.Error(), "escapes from parent") {
		return fmt.Errorf("it leads out of the playbook's directory")
	}
	return err
}
