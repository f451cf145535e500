package playbookschema

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"testing"

	"github.com/labrun/labrun/actions"
	_ "github.com/labrun/labrun/actions/all"
)

var update = flag.Bool("update", false, "rewrite schemas/playbook.schema.json")

const checkedIn = "../schemas/playbook.schema.json"

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
		t.Fatalf("%s is out of date; run: go test ./playbookschema -update", checkedIn)
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
