package actions

import (
	"gopkg.in/yaml.v3"

	"github.com/labrun/labrun/internal/lang/diag"
	"github.com/labrun/labrun/internal/lang/eval"
)

// nullArgs refuses, at validate time, an item of the argument lists under
// keys that YAML reads as no value: ~, null, or an item left empty. A
// program takes only text, and such an item would reach it as "~" or ""
// where the author meant a home directory or forgot an argument; quoted
// ("~"), it is the text as written.
func nullArgs(spec *eval.Value, keys ...string) diag.List {
	var errs diag.List
	for _, key := range keys {
		for i, item := range spec.Lookup(key).Items() {
			n := item.Node
			if n == nil || n.Kind != yaml.ScalarNode || n.Tag != "!!null" {
				continue
			}
			if n.Value == "" {
				errs.Add(item.Pos, `%s item %d is empty, which YAML reads as no value; a program takes only text: give the argument, or "" for an empty one`, key, i+1)
				continue
			}
			errs.Add(item.Pos, `%s item %d is %s, which YAML reads as no value; a program takes only text: quote it ("%s") to pass it as written`, key, i+1, n.Value, n.Value)
		}
	}
	return errs
}
