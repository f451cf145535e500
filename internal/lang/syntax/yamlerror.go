package syntax

import (
	"github.com/labrun/labrun/internal/lang/yamlnode"
)

// yamlError places yaml.v3's syntax error for data, the text of file, at
// its cause and words it for the author (yamlnode.SyntaxError).
func yamlError(file string, err error, data []byte) error {
	return yamlnode.SyntaxError(file, data, err)
}
