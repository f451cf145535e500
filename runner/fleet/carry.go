package fleet

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/labrun/labrun/runner"
)

// CarryFiles reads the files the Job's ConfigMaps carry besides the
// playbook and the targets file: the included ones and the learners'
// (cut by shard, j.Pods of them). The playbook is then loaded, for the
// first target, from a copy of what the pods will have, so that a file it
// reads and nobody included is found here, not in every pod.
func CarryFiles(j *Job, ts *Targets, includes []string) error {
	for _, p := range includes {
		if !filepath.IsLocal(p) {
			return fmt.Errorf("--include %s: expected a path inside the playbook's directory, relative to it", p)
		}
		data, err := os.ReadFile(filepath.Join(filepath.Dir(j.Playbook), p))
		if err != nil {
			return fmt.Errorf("--include %s: %v", p, err)
		}
		j.Includes = append(j.Includes, File{Path: filepath.ToSlash(filepath.Clean(p)), Data: data})
	}
	if ts.OutputsVar != "" {
		var err error
		if j.Outputs, err = ReadOutputs(ts, j.Pods); err != nil {
			return err
		}
		j.OutputsVar = ts.OutputsVar
	}
	stage, err := os.MkdirTemp("", "labrun-fleet-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(stage)
	files := append([]File{{Path: filepath.Base(j.Playbook), Data: j.PlaybookData}}, j.Includes...)
	for _, f := range files {
		p := filepath.Join(stage, filepath.FromSlash(f.Path))
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			return err
		}
		if err := os.WriteFile(p, f.Data, 0o600); err != nil {
			return err
		}
	}
	if _, err := runner.Load(filepath.Join(stage, files[0].Path), ts.Options(ts.List[0], runner.Options{Set: j.Set})); err != nil {
		return fmt.Errorf("the Job's pods could not load the playbook with only the files it carries (give each file the playbook reads with --include PATH):\n%s",
			strings.ReplaceAll(err.Error(), stage+string(filepath.Separator), ""))
	}
	return nil
}
