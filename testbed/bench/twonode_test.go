package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestTwoNodePerRunKeys checks that each key the two-node labs compare by
// type only names one of the lab's files and a property of that file's
// schema, so a misspelt key cannot silently compare nothing.
func TestTwoNodePerRunKeys(t *testing.T) {
	for _, lab := range []twoNodeLab{servicesLab, identityLab} {
		if len(lab.perRun) == 0 {
			t.Errorf("%s: no per-run keys", lab.name)
		}
		for k := range lab.perRun {
			file, key, ok := strings.Cut(k, " ")
			if !ok || !slices.Contains(lab.files, file) {
				t.Errorf("%s: per-run key %q does not name one of its files %v", lab.name, k, lab.files)
				continue
			}
			schema := filepath.Join("..", "..", "playbooks", lab.name, "schemas", strings.TrimSuffix(file, ".json")+".schema.json")
			data, err := os.ReadFile(schema)
			if err != nil {
				t.Fatal(err)
			}
			var s struct {
				Properties map[string]any `json:"properties"`
			}
			if err := json.Unmarshal(data, &s); err != nil {
				t.Fatalf("%s: %v", schema, err)
			}
			if _, ok := s.Properties[key]; !ok {
				t.Errorf("%s: per-run key %q is not a property of %s", lab.name, k, schema)
			}
		}
	}
}
