package playbookschema

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/labrun/labrun/actions"
	_ "github.com/labrun/labrun/actions/all"
	"github.com/labrun/labrun/internal/lang/schemacheck"
	"gopkg.in/yaml.v3"
)

var update = flag.Bool("update", false, "rewrite schemas/playbook.schema.json")

const checkedIn = "../../../../schemas/playbook.schema.json"

// The schema editors use is checked in; it must be what the code generates.
func TestCheckedInSchemaIsCurrent(t *testing.T) {
	got, err := Generate()
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile(checkedIn, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(checkedIn)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s is out of date; run: go test ./cmd/labrun/internal/playbookschema -update", checkedIn)
	}
}

func TestSchemaDescribesEveryAction(t *testing.T) {
	b, err := Generate()
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Defs map[string]struct {
			Required             []string                   `json:"required"`
			Properties           map[string]json.RawMessage `json:"properties"`
			AdditionalProperties json.RawMessage            `json:"additionalProperties"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	step := s.Defs["step"]
	for _, a := range actions.All() {
		if _, ok := step.Properties[a.Name]; !ok {
			t.Errorf("step has no property for action %s", a.Name)
		}
		def, ok := s.Defs["action."+a.Name]
		if !ok {
			t.Errorf("no definition for action %s", a.Name)
			continue
		}
		if len(def.Properties) == 0 && len(def.AdditionalProperties) == 0 {
			t.Errorf("action %s has no spec properties", a.Name)
		}
	}
	if _, ok := s.Defs["action.bpfmap"]; !ok {
		t.Error("the schema lacks actions registered outside package actions")
	}
	if got := s.Defs["action.run"].Required; len(got) != 1 || got[0] != "argv" {
		t.Errorf("run requires %v, want [argv]", got)
	}
}

// Every playbook and example in the repository is valid against the
// schema editors use, and the schema catches the mistakes it should.
func TestPlaybooksMatchSchema(t *testing.T) {
	b, err := Generate()
	if err != nil {
		t.Fatal(err)
	}
	schema, err := schemacheck.Parse("playbook.schema.json", b)
	if err != nil {
		t.Fatalf("the generated schema does not load: %v", err)
	}
	var files []string
	for _, g := range []string{"../../../../playbooks/*.yaml", "../../../../examples/*.yaml", "../../../../examples/cluster/*.yaml"} {
		m, _ := filepath.Glob(g)
		files = append(files, m...)
	}
	checked := 0
	for _, f := range files {
		if strings.HasSuffix(f, ".testbed.yaml") {
			continue // a vars file, not a playbook
		}
		checked++
		if probs := validateYAML(t, schema, readFile(t, f)); len(probs) > 0 {
			t.Errorf("%s: %v", f, probs)
		}
	}
	// loop takes a YAML list or a template; env and secret are lists of names
	for _, src := range []string{"name: a\nvars: {pin: x}\nenv: [HOME]\nsecret: [pin]\nsteps:\n  - id: a\n    run: {argv: [x]}\n", "name: a\nsteps:\n  - id: a\n    loop: [80, 443]\n    run: {argv: [x]}\n", "name: a\nsteps:\n  - id: a\n    loop: ${{ 1..3 }}\n    run: {argv: [x]}\n"} {
		if probs := validateYAML(t, schema, []byte(src)); len(probs) > 0 {
			t.Errorf("%q: %v", src, probs)
		}
	}
	if checked < 5 {
		t.Fatalf("checked %d playbooks, expected the lab's and the examples", checked)
	}
	// A step with no action fails every form of the step's anyOf: one
	// per registered action, then parallel, then assert alone, the last.
	assertForm := len(actions.Names()) + 2
	for _, c := range []struct{ name, src, want string }{
		{"unknown step key", "name: a\nsteps:\n  - id: a\n    paralel: {}\n", "/steps/0/paralel: is not an allowed key"},
		{"one branch", "name: a\nsteps:\n  - id: g\n    parallel:\n      only: [{id: a, run: {argv: [x]}}]\n", "/steps/0/parallel: has 1 keys, expected at least 2"},
		{"branch name", "name: a\nsteps:\n  - id: g\n    parallel:\n      a-b: [{id: a, run: {argv: [x]}}]\n      c: [{id: c, run: {argv: [x]}}]\n", `key "a-b": "a-b" does not match pattern`},
		{"step in a branch", "name: a\nsteps:\n  - id: g\n    parallel:\n      a: [{id: a, rn: {argv: [x]}}]\n      c: [{id: c, run: {argv: [x]}}]\n", "/steps/0/parallel/a/0/rn: is not an allowed key"},
		// a misspelt action key is named as such, with no missing action
		// besides it; a step without one, or with two, is named too
		{"misspelt action", "name: a\nsteps:\n  - id: a\n    rnu: {argv: [x]}\n", "[/steps/0/rnu: is not an allowed key]"},
		{"no action", "name: a\nsteps:\n  - id: a\n    name: x\n", fmt.Sprintf(`form %d: missing key "assert"`, assertForm)},
		{"two actions", "name: a\nsteps:\n  - id: a\n    run: {argv: [x]}\n    sleep: {duration: 1s}\n", "/steps/0/sleep: no value is allowed here"},
		{"loop of a number", "name: a\nsteps:\n  - id: a\n    loop: 5\n    run: {argv: [x]}\n", "/steps/0/loop"},
	} {
		probs := validateYAML(t, schema, []byte(c.src))
		if !strings.Contains(fmt.Sprint(probs), c.want) {
			t.Errorf("%s: problems %v, want one with %q", c.name, probs, c.want)
		}
	}
}

func readFile(t *testing.T, f string) []byte {
	t.Helper()
	b, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func validateYAML(t *testing.T, s *schemacheck.Schema, src []byte) []string {
	t.Helper()
	var doc any
	if err := yaml.Unmarshal(src, &doc); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range s.Validate(doc) {
		out = append(out, p.String())
	}
	return out
}

// Install writes the generated schema, replacing an older copy, and
// refuses a directory that cannot be made.
func TestInstall(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "lab", ".labrun")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, FileName), []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	path, err := Install(dir)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := Generate()
	if got := readFile(t, path); !bytes.Equal(got, want) {
		t.Errorf("%s is not the generated schema", path)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".*")); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
	if _, err := Install(filepath.Join(path, "sub")); err == nil {
		t.Error("installing under a file did not fail")
	}
}

// The modeline is the schema's path as the language server reads it:
// relative to the directory of the playbook it opens. A playbook beside
// the schema's directory is not one folder below it (`labrun schema
// --install .labrun` at a lab repository's top, its playbooks there too).
func TestModeline(t *testing.T) {
	root := t.TempDir()
	t.Chdir(root)
	for _, c := range []struct{ playbooks, schema, want string }{
		{root, filepath.Join(root, ".labrun", FileName), ".labrun/playbook.schema.json"},
		{".", ".labrun/" + FileName, ".labrun/playbook.schema.json"},
		{filepath.Join(root, "playbooks"), filepath.Join(root, ".labrun", FileName), "../.labrun/playbook.schema.json"},
		{"labs/policy", "schemas/" + FileName, "../../schemas/playbook.schema.json"},
		{"labs", filepath.Join(root, "labs", FileName), FileName},
	} {
		got, err := Modeline(c.playbooks, c.schema)
		if err != nil {
			t.Fatal(err)
		}
		if want := "# yaml-language-server: $schema=" + c.want; got != want {
			t.Errorf("Modeline(%s, %s) = %q, want %q", c.playbooks, c.schema, got, want)
		}
	}
}
