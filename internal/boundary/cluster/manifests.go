package cluster

import (
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/labrun/labrun/internal/lang/regularfile"
)

// ManifestExts are the file name endings a directory of manifests
// contributes (ManifestSource.Path).
var ManifestExts = []string{".yaml", ".yml", ".json"}

// ManifestFiles lists the manifest files of a directory a ManifestSource
// names, in the order they are applied: its *.yaml, *.yml and *.json
// files (not below it) sorted by name, so that 00-namespace.yaml comes
// before 10-crd.yaml. kube applies them; the permissions of an apply are
// read from them.
func ManifestFiles(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var files []string
	for _, e := range entries {
		if e.IsDir() || !slices.Contains(ManifestExts, strings.ToLower(filepath.Ext(e.Name()))) {
			continue
		}
		files = append(files, filepath.Join(dir, e.Name()))
	}
	slices.Sort(files)
	return files, nil
}

// ReadManifest reads a manifest file a playbook names: a regular file
// only. It is opened with O_NONBLOCK, since opening a FIFO for reading
// waits for a writer, and a step (or labrun rbac) would hang on a pipe no
// one writes to; a FIFO, a device or a socket (a link to /dev/zero
// included) is refused. A missing file gives the *fs.PathError.
func ReadManifest(path string) ([]byte, error) { return regularfile.Read(path, -1) }
