package main

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/labrun/labrun/internal/lang/diag"
	"github.com/labrun/labrun/internal/lang/kubeschema"
)

// Every example playbook validates, runs to success, and its grader holds:
// labrun test on the files just written passes check and rejects every
// change to a value (an example whose cleanup removed what check reads
// fails here). Each declares an `out` variable, pointed here at a
// temporary directory.
func TestExamplesRun(t *testing.T) {
	files, err := filepath.Glob("../../examples/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no examples: %v", err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			out := t.TempDir()
			var stdout, stderr bytes.Buffer
			if code := Main([]string{"validate", "-q", f}, &stdout, &stderr); code != 0 {
				t.Fatalf("validate exit %d:\n%s", code, stderr.String())
			}
			code := Main([]string{"run", "--no-progress", "--set", "out=" + out, f}, &stdout, &stderr)
			if code != 0 {
				t.Fatalf("run exit %d:\n%s%s", code, stdout.String(), stderr.String())
			}
			if len(labFiles(t, out)) == 0 {
				t.Errorf("example wrote nothing into its output directory")
			}
			stdout.Reset()
			stderr.Reset()
			if code := Main([]string{"test", "--no-solve", "--no-progress", "--set", "out=" + out, f}, &stdout, &stderr); code != 0 {
				t.Errorf("labrun test --no-solve exit %d:\n%s%s", code, stdout.String(), stderr.String())
			}
		})
	}
}

// The examples and labs that need a cluster validate without one (their
// output schemas, beside each lab, included); the e2e tests run them on
// the test cluster.
func TestClusterExamplesValidate(t *testing.T) {
	examples, err := filepath.Glob("../../examples/cluster/*.yaml")
	if err != nil || len(examples) == 0 {
		t.Fatalf("no cluster examples: %v", err)
	}
	labs, err := filepath.Glob("../../playbooks/*.yaml")
	if err != nil || len(labs) == 0 {
		t.Fatalf("no labs: %v", err)
	}
	for _, f := range append(examples, labs...) {
		if strings.HasSuffix(f, ".testbed.yaml") {
			continue // a vars file, not a playbook
		}
		var stdout, stderr bytes.Buffer
		if code := Main([]string{"validate", "-q", f}, &stdout, &stderr); code != 0 {
			t.Errorf("%s: validate exit %d:\n%s", f, code, stderr.String())
		}
	}
}

// Every playbook shipped (the labs, their cleanup playbooks, the
// examples) validates, its apply steps' manifests checked against the
// schemas of their kinds; every manifest shipped beside them (a lab's
// fixtures, the test cluster's examples that its capture scripts apply
// with kubectl) fits its kind's schema.
func TestShippedPlaybooksAndManifests(t *testing.T) {
	kinds := kubeschema.NewRegistry()
	playbooks, checked := 0, 0
	for _, dir := range []string{"../../playbooks", "../../examples", "../../testbed/examples"} {
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || filepath.Ext(path) != ".yaml" {
				return err
			}
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			if regexp.MustCompile(`(?m)^steps:`).Match(data) {
				playbooks++
				var stdout, stderr bytes.Buffer
				if code := Main([]string{"validate", "-q", path}, &stdout, &stderr); code != 0 {
					t.Errorf("%s: validate exit %d:\n%s", path, code, stderr.String())
				}
				return nil
			}
			docs, err := kubeschema.Documents(data, func(line, col int) diag.Pos { return diag.Pos{File: path, Line: line, Col: col} })
			if err != nil {
				t.Errorf("%s: %v", path, err)
			}
			for _, doc := range docs {
				if doc.Node.Lookup("kind") == nil {
					continue // a vars file
				}
				problems, ok := kinds.Check(doc.Node, kubeschema.Options{})
				if ok {
					checked++
				}
				for _, p := range problems {
					t.Errorf("%s: %s: %s", p.Pos, doc.Node.Describe(), p)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if playbooks < 12 || checked < 15 {
		t.Errorf("%d playbooks validated and %d manifests checked: the walk missed the shipped files", playbooks, checked)
	}
}

// labFiles lists the files a run wrote into out, leaving out labrun's own
// journal directory.
func labFiles(t *testing.T, out string) []string {
	t.Helper()
	entries, err := os.ReadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if e.Name() != ".labrun" {
			names = append(names, e.Name())
		}
	}
	return names
}

// The playbooks docs/labs.md shows as files (```yaml NAME, with the
// files they read beside them) validate, so the cleanup pattern it
// teaches cannot drift from the language.
func TestLabsPagePlaybooksValidate(t *testing.T) {
	const page = "../../docs/labs.md"
	text, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var playbooks []string
	for _, f := range fences(string(text)) {
		if f.name == "" {
			continue
		}
		p := filepath.Join(dir, filepath.FromSlash(f.name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(f.body), 0o644); err != nil {
			t.Fatal(err)
		}
		if f.lang == "yaml" && strings.Contains("\n"+f.body, "\nsteps:") {
			playbooks = append(playbooks, p)
		}
	}
	if len(playbooks) < 2 {
		t.Fatalf("%s shows %d playbooks as files; want the lab and its cleanup playbook", page, len(playbooks))
	}
	for _, p := range playbooks {
		var stdout, stderr bytes.Buffer
		if code := Main([]string{"validate", "-q", p}, &stdout, &stderr); code != 0 {
			t.Errorf("%s: the playbook %s does not validate (exit %d):\n%s", page, strings.TrimPrefix(p, dir+"/"), code, stderr.String())
		}
	}
}
