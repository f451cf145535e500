// Package osroot tells what an error of an os.Root means. labrun reads and
// writes every file a playbook names, and every learner's file, through an
// os.Root (the playbook's directory for file(), the output directory for
// everything a run writes), and a path that leads out of the root, by ".."
// or by a symbolic link, is refused with an error os does not export. Both
// places word that refusal for the reader, so both ask here.
package osroot

import (
	"errors"
	"io/fs"
	"os"
	"sync"
)

// Escapes reports whether err is os.Root's refusal of a path that leads
// out of the root.
func Escapes(err error) bool {
	sentinel := escapes()
	return sentinel != nil && errors.Is(err, sentinel)
}

// escapes is os.Root's error value for a path that leaves the root (os's
// unexported errPathEscapes), taken once from os.Root itself: ".." of a
// root is refused before any file is opened, so asking a root of the
// temporary directory for it opens nothing but that directory.
var escapes = sync.OnceValue(func() error {
	r, err := os.OpenRoot(os.TempDir())
	if err != nil {
		return nil
	}
	defer r.Close()
	_, err = r.Stat("../labrun-osroot-probe")
	var pe *fs.PathError
	if !errors.As(err, &pe) {
		return nil
	}
	return pe.Err
})
