package fleet

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/labrun/labrun/internal/leaf/outdir"
)

// File is a file a Job's ConfigMap carries: its path in the volume and
// its bytes; Key is its key in the ConfigMap, when not derived from the
// path.
type File struct {
	Path string
	Data []byte
	Key  string
}

// outputsMount is where a Job's pod finds the learners' files: the
// outputs ConfigMap's directory of the pod's own shard, mounted by
// subPathExpr, holding <target name>/<file> for each target of the
// shard.
const outputsMount = "/outputs"

// maxConfigMap is the most a ConfigMap's data may hold.
const maxConfigMap = 1 << 20

// varName is what --outputs may name.
var varName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// SetOutputs reads --outputs VAR=DIR into ts: each target's variable VAR
// is then DIR/<its name>.
func (ts *Targets) SetOutputs(flag string) error {
	v, dir, ok := strings.Cut(flag, "=")
	if !ok || !varName.MatchString(v) || dir == "" {
		return fmt.Errorf("--outputs %q: expected VAR=DIR, the playbook variable that names a learner's output directory and the directory holding one per target, by its name", flag)
	}
	ts.OutputsVar, ts.OutputsDir = v, dir
	return nil
}

// ReadOutputs reads each target's files (OutputsDir/<name>/, its output
// directory: files, not directories, but for labrun's own state) as the
// Job's outputs ConfigMap carries them, cut by shard (shards of them): the
// file at <shard>/<name>/<file> under the key <index>.<file>, and an
// empty <shard>/.shard, so the shard's directory exists even when none of
// its learners has files (whose check then finds none, as check --targets
// does). A directory that is missing is a learner with no files.
func ReadOutputs(ts *Targets, shards int) ([]File, error) {
	var out []File
	size := 0
	for k := range shards {
		shard := strconv.Itoa(k)
		out = append(out, File{Path: shard + "/.shard", Key: "shard-" + shard})
		for _, i := range (Shard{Index: k, Of: shards}).Indexes(len(ts.List)) {
			t := ts.List[i]
			files, err := readLearner(filepath.Join(ts.OutputsDir, t.Name), shard+"/"+t.Name+"/", strconv.Itoa(i)+".")
			if err != nil {
				return nil, fmt.Errorf("target %q: %v", t.Name, err)
			}
			for _, f := range files {
				if size += len(f.Data) + len(f.Key); size > maxConfigMap {
					return nil, fmt.Errorf("the learners' files under %s pass %d bytes, the most a ConfigMap holds: grade this class with check --targets", ts.OutputsDir, maxConfigMap)
				}
			}
			out = append(out, files...)
		}
	}
	return out, nil
}

// readLearner reads one learner's files, each at prefix + its name, under
// the key keyPrefix + its name. The
// directory is untrusted: it is opened as a root (a link in its place
// refused) and each file read through it, so a file swapped for a link
// after the listing cannot lead out.
func readLearner(dir, prefix, keyPrefix string) ([]File, error) {
	d, err := outdir.Open(dir)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	entries, err := d.List()
	if err != nil {
		return nil, err
	}
	var out []File
	for _, e := range entries {
		path := filepath.Join(dir, e.Name())
		switch {
		case e.Name() == outdir.StateDir:
			continue
		case !e.Type().IsRegular():
			return nil, fmt.Errorf("%s is not a regular file: a Job carries a learner's files, not directories or links", path)
		case !configKey.MatchString(e.Name()):
			return nil, fmt.Errorf("%s: a file's name a ConfigMap can carry is letters, digits, '-', '_' and '.'", path)
		}
		data, err := d.ReadFile(e.Name(), maxConfigMap)
		if err != nil {
			return nil, err
		}
		if !utf8.Valid(data) {
			return nil, fmt.Errorf("%s is not UTF-8 text, which a ConfigMap's data is", path)
		}
		out = append(out, File{Path: prefix + e.Name(), Data: data, Key: keyPrefix + e.Name()})
	}
	return out, nil
}
