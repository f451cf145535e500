package kubeschema

import (
	"bytes"
	"errors"
	"io"
	"regexp"
	"strconv"

	"github.com/labrun/labrun/internal/lang/diag"
	"gopkg.in/yaml.v3"
)

// Doc is one YAML document of a manifest file or text, with the line
// it starts on (1-based, of the whole text).
type Doc struct {
	Line int
	Node *Node
}

// Documents reads the documents of manifest text (a file's, or an apply's
// manifest), skipping empty ones, as labrun's apply does; at places a
// line and column of the text. A document YAML cannot read ends the list
// with an error at its line.
func Documents(data []byte, at func(line, col int) diag.Pos) ([]Doc, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var out []Doc
	for {
		var doc yaml.Node
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, yamlError(err, at)
		}
		if len(doc.Content) == 0 {
			continue
		}
		n := FromYAML(doc.Content[0], at)
		if n.Kind == Scalar && n.Value == nil {
			continue // a document that is only null
		}
		out = append(out, Doc{Line: doc.Content[0].Line, Node: n})
	}
}

// yamlLine finds the line yaml.v3 names in its error ("yaml: line 3: ...").
var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// yamlError places a YAML error on its line.
func yamlError(err error, at func(line, col int) diag.Pos) error {
	if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
		line, _ := strconv.Atoi(m[1])
		return diag.Errorf(at(line, 1), "invalid YAML: %s", m[2])
	}
	return diag.Errorf(at(1, 1), "invalid YAML: %v", err)
}

// Plain is the value a Node holds as Go data (map[string]any, []any,
// scalars); ok is false when a part of it is known only at run time.
func (n *Node) Plain() (any, bool) {
	switch n.Kind {
	case Map:
		m := make(map[string]any, len(n.Keys))
		for i, k := range n.Keys {
			v, ok := n.Vals[i].Plain()
			if !ok {
				return nil, false
			}
			m[k] = v
		}
		return m, true
	case List:
		l := make([]any, len(n.Items))
		for i, it := range n.Items {
			v, ok := it.Plain()
			if !ok {
				return nil, false
			}
			l[i] = v
		}
		return l, true
	case Scalar:
		return n.Value, true
	}
	return nil, false
}

// IsCRD reports whether an object is a CustomResourceDefinition.
func (n *Node) IsCRD() bool {
	av, _ := n.Lookup("apiVersion").text()
	k, _ := n.Lookup("kind").text()
	return av == "apiextensions.k8s.io/v1" && k == "CustomResourceDefinition"
}

// Describe names an object for messages: `Deployment web`, or its kind
// alone when its name is not known before the run. The name is not
// quoted: a message's quotes are what its excerpt underlines (diag).
func (n *Node) Describe() string {
	k, _ := n.Lookup("kind").text()
	if k == "" {
		k = "object"
	}
	if name, ok := n.Lookup("metadata").Lookup("name").text(); ok {
		return k + " " + name
	}
	return k
}
