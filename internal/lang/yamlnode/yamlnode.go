// Package yamlnode words YAML nodes for messages ("a list", "the string
// \"x\""), so the loader and the spec checker describe what they found
// the same way.
package yamlnode

import (
	"fmt"

	"gopkg.in/yaml.v3"
)

// Describe names a node's YAML type for messages ("a list", "the string \"x\"").
func Describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.AliasNode:
		return "an alias"
	case yaml.ScalarNode:
		switch n.Tag {
		case "!!null":
			return "null"
		case "!!bool":
			return "the boolean " + n.Value
		case "!!int", "!!float":
			return "the number " + n.Value
		}
		v := n.Value
		if len(v) > 40 {
			v = v[:37] + "..."
		}
		return fmt.Sprintf("the string %q", v)
	}
	return "nothing"
}
