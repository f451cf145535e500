package yamlnode

import (
	"testing"

	"gopkg.in/yaml.v3"
)

func TestDescribe(t *testing.T) {
	for src, want := range map[string]string{
		"{a: 1}": "a mapping",
		"[1]":    "a list",
		"~":      "null",
		"true":   "the boolean true",
		"4.5":    "the number 4.5",
		"soon":   `the string "soon"`,
		"'12345678901234567890123456789012345678901'": `the string "1234567890123456789012345678901234567..."`,
	} {
		var doc yaml.Node
		if err := yaml.Unmarshal([]byte(src), &doc); err != nil {
			t.Fatal(err)
		}
		if got := Describe(doc.Content[0]); got != want {
			t.Errorf("Describe(%s) = %q, want %q", src, got, want)
		}
	}
}
