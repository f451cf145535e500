package access

import (
	"bytes"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/labrun/labrun/actions"
	"github.com/labrun/labrun/internal/boundary/cluster"
	"github.com/labrun/labrun/runner"
)

var update = flag.Bool("update", false, "rewrite the golden files of the playbooks' Roles")

// The Roles of the labs in playbooks/, with the variables of the test
// cluster (the e2e test grants them and runs the labs under them), in
// both modes: testdata/NAME.MODE.yaml. The classroom lab is graded a
// namespace per learner by a grader that may not read the cluster: its
// Roles are one Role in its namespace, never a ClusterRole.
func TestPlaybookRoles(t *testing.T) {
	for _, pb := range []struct {
		golden, file, vars string
		namespaceOnly      bool
	}{
		{"cca-datapath", "cca-datapath.yaml", "cca-datapath.testbed.yaml", false},
		{"cca-identity", "cca-identity.yaml", "cca-identity.testbed.yaml", false},
		{"cca-services", "cca-services.yaml", "cca-services.testbed.yaml", false},
		{"cca-identity-cleanup", "cca-identity/cleanup.yaml", "", false},
		{"classroom", "classroom.yaml", "classroom.testbed.yaml", true},
	} {
		var opts runner.Options
		if pb.vars != "" {
			opts.VarsFiles = []string{filepath.Join("../../playbooks", pb.vars)}
		}
		plan, err := runner.Load(filepath.Join("../../playbooks", pb.file), opts)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range []struct {
			name string
			mode actions.Mode
		}{{"run", actions.Solve}, {"check", actions.Check}} {
			t.Run(pb.golden+"."+m.name, func(t *testing.T) {
				needs, err := Derive(plan, Options{Mode: m.mode, Namespace: "default"})
				if err != nil {
					t.Fatal(err)
				}
				var got bytes.Buffer
				header := "labrun rbac --mode " + m.name + " playbooks/" + pb.file
				if err := WriteRoles(&got, needs, RoleName(plan.Playbook.Name, m.name), header); err != nil {
					t.Fatal(err)
				}
				if n := strings.Count(got.String(), "\nkind: Role\n"); pb.namespaceOnly && (n != 1 || strings.Contains(got.String(), "kind: ClusterRole")) {
					t.Errorf("%s needs more than one Role in its namespace:\n%s", pb.file, got.String())
				}
				checkRulesDecode(t, got.Bytes())
				golden := filepath.Join("testdata", pb.golden+"."+m.name+".yaml")
				if *update {
					if err := os.WriteFile(golden, got.Bytes(), 0o644); err != nil {
						t.Fatal(err)
					}
					return
				}
				want, err := os.ReadFile(golden)
				if err != nil {
					t.Fatal(err)
				}
				if got.String() != string(want) {
					t.Errorf("%s differs (go test -update rewrites it):\n%s", golden, got.String())
				}
			})
		}
	}
}

// checkRulesDecode decodes every document of rendered Roles as YAML and
// requires each rule to name a group, a resource and a verb: a bare "*"
// would be read as an alias and fail here.
func checkRulesDecode(t *testing.T, rendered []byte) {
	t.Helper()
	dec := yaml.NewDecoder(bytes.NewReader(rendered))
	for {
		var doc struct {
			Rules []struct {
				APIGroups []string `yaml:"apiGroups"`
				Resources []string `yaml:"resources"`
				Verbs     []string `yaml:"verbs"`
			} `yaml:"rules"`
		}
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			t.Fatalf("the Roles do not decode as YAML: %v\n%s", err, rendered)
		}
		for _, r := range doc.Rules {
			if len(r.APIGroups) != 1 || len(r.Resources) != 1 || len(r.Verbs) == 0 || slices.Contains(r.Verbs, "") || r.Resources[0] == "" {
				t.Errorf("rule %+v does not decode to one group, one resource and its verbs", r)
			}
		}
	}
}

func TestRoleName(t *testing.T) {
	for in, want := range map[string]string{
		"cca-datapath":         "labrun-cca-datapath-check",
		"Stream cut!":          "labrun-stream-cut-check",
		"..":                   "labrun-playbook-check",
		"a_b.c":                "labrun-a-b.c-check",
		strings.Repeat("x", 3): "labrun-xxx-check",
	} {
		if got := RoleName(in, "check"); got != want {
			t.Errorf("RoleName(%q) = %q, want %q", in, got, want)
		}
	}
}

// The header names the playbook, whose name may hold any character: a
// carriage return must not end the comment for a YAML reader (the text
// after it would be read as YAML), nor a control character reach the
// terminal. Both print as escapes; the document stays one comment and
// one Role.
func TestWriteRolesEscapesHeader(t *testing.T) {
	var b bytes.Buffer
	needs := []Need{{Access: cluster.Access{Namespace: "default", Resource: "pods", Verb: "get"}, Steps: []string{"pods"}}}
	if err := WriteRoles(&b, needs, "labrun-x-run", "playbook x\rkind: ClusterRole\x1b[2J\u202e (p.yaml)"); err != nil {
		t.Fatal(err)
	}
	want := "# playbook x\\rkind: ClusterRole\\u001b[2J\\u202e (p.yaml)\n"
	if !strings.HasPrefix(b.String(), want) {
		t.Errorf("header:\n%q\nwant it to start with\n%q", b.String(), want)
	}
	var doc map[string]any
	if err := yaml.Unmarshal(b.Bytes(), &doc); err != nil || doc["kind"] != "Role" {
		t.Errorf("not one Role: %v %v\n%s", err, doc, b.String())
	}
}
