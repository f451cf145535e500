package kube

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"sigs.k8s.io/yaml"

	"github.com/labrun/labrun/internal/boundary/cluster"
)

// Manifest is one object decoded from a file or from inline text, with
// where it came from so that errors can point at it.
type Manifest struct {
	// Source is the file path or the label given to inline text.
	Source string `json:"source"`
	// Document is the 1-based position of the document in Source, counting
	// only documents with content.
	Document int `json:"document"`
	// Line is the 1-based line where the document starts in Source.
	Line int `json:"line"`
	// Object is the decoded object.
	Object *unstructured.Unstructured `json:"object"`

	// source is the index of the cluster.ManifestSource it came from,
	// for an apply's cluster.InvalidObjectError.
	source   int
	fromFile bool
}

// Where says where the manifest came from: "web.yaml document 2 (line 14)".
func (m Manifest) Where() string {
	return fmt.Sprintf("%s document %d (line %d)", m.Source, m.Document, m.Line)
}

// DecodeFiles reads manifests from files and directories, in the order
// given. A directory contributes its *.yaml, *.yml and *.json files sorted
// by name (not recursively), which makes the apply order predictable: name
// files 00-namespace.yaml, 10-crd.yaml, ... to order them.
func DecodeFiles(paths ...string) ([]Manifest, error) {
	var out []Manifest
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("read manifests: %w", err)
		}
		files := []string{p}
		if st.IsDir() {
			files, err = cluster.ManifestFiles(p)
			if err != nil {
				return nil, fmt.Errorf("read manifests: %w", err)
			}
			if len(files) == 0 {
				return nil, fmt.Errorf("read manifests: directory %s has no *.yaml, *.yml or *.json file", p)
			}
		}
		for _, f := range files {
			data, err := cluster.ReadManifest(f)
			if err != nil {
				return nil, fmt.Errorf("read manifests: %w", err)
			}
			ms, err := DecodeText(f, data)
			if err != nil {
				return nil, err
			}
			out = append(out, ms...)
		}
	}
	return out, nil
}

// DecodeText decodes inline YAML or JSON, possibly several documents
// separated by "---" lines. Empty documents (only whitespace or comments)
// are skipped; a "kind: List" is expanded into its items. source labels the
// text in errors, e.g. "playbook.yaml step 3".
func DecodeText(source string, data []byte) ([]Manifest, error) {
	var out []Manifest
	n := 0
	for _, doc := range splitDocuments(data) {
		if isEmptyDocument(doc.text) {
			continue
		}
		// Count only documents with content, so that "document 1" is the
		// first one a person sees even after a leading "---".
		n++
		doc.index = n
		where := fmt.Sprintf("%s document %d (line %d)", source, doc.index, doc.line)
		// YAML to JSON, then JSON with integers kept as int64 (as the API
		// machinery expects in unstructured objects, e.g. spec.replicas).
		js, err := yaml.YAMLToJSON(doc.text)
		if err != nil {
			return nil, fmt.Errorf("%s: invalid YAML/JSON: %w", where, err)
		}
		var obj map[string]any
		if err := utiljson.Unmarshal(js, &obj); err != nil {
			return nil, fmt.Errorf("%s: not an object: %w", where, err)
		}
		if obj == nil {
			continue // e.g. a document that is just "null" or "~"
		}
		u := &unstructured.Unstructured{Object: obj}
		if u.IsList() {
			items, err := listItems(u, where)
			if err != nil {
				return nil, err
			}
			for _, it := range items {
				out = append(out, Manifest{Source: source, Document: doc.index, Line: doc.line, Object: it})
			}
			continue
		}
		if err := checkObject(u, where); err != nil {
			return nil, err
		}
		out = append(out, Manifest{Source: source, Document: doc.index, Line: doc.line, Object: u})
	}
	return out, nil
}

func listItems(u *unstructured.Unstructured, where string) ([]*unstructured.Unstructured, error) {
	raw, _ := u.Object["items"].([]any)
	var items []*unstructured.Unstructured
	for i, r := range raw {
		m, ok := r.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s: item %d of the List is not an object", where, i+1)
		}
		it := &unstructured.Unstructured{Object: m}
		if err := checkObject(it, fmt.Sprintf("%s item %d", where, i+1)); err != nil {
			return nil, err
		}
		items = append(items, it)
	}
	return items, nil
}

// checkObject rejects documents that cannot be applied, before anything is
// sent, so that a typo fails with the file and document rather than with a
// server message about an empty name.
func checkObject(u *unstructured.Unstructured, where string) error {
	var missing []string
	if u.GetAPIVersion() == "" {
		missing = append(missing, "apiVersion")
	}
	if u.GetKind() == "" {
		missing = append(missing, "kind")
	}
	if u.GetName() == "" {
		missing = append(missing, "metadata.name")
	}
	if len(missing) > 0 {
		return fmt.Errorf("%s: missing %s", where, strings.Join(missing, ", "))
	}
	return nil
}

type document struct {
	index int // 1-based position among the non-empty documents
	line  int // 1-based line where the document starts
	text  []byte
}

// splitDocuments splits multi-document YAML on separator lines, with the
// rules of client-go's YAML reader: a line starting with "---" followed only
// by whitespace or a comment. It is reimplemented here to know the line
// where each document starts, for error messages.
func splitDocuments(data []byte) []document {
	var docs []document
	cur := document{line: 1}
	var buf bytes.Buffer
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64*1024), len(data)+1)
	lineNo := 0
	for sc.Scan() {
		lineNo++
		line := sc.Text()
		if isSeparator(line) {
			cur.text = bytes.Clone(buf.Bytes())
			docs = append(docs, cur)
			buf.Reset()
			cur = document{line: lineNo + 1}
			continue
		}
		buf.WriteString(line)
		buf.WriteByte('\n')
	}
	cur.text = bytes.Clone(buf.Bytes())
	docs = append(docs, cur)
	return docs
}

func isSeparator(line string) bool {
	if !strings.HasPrefix(line, "---") {
		return false
	}
	rest := strings.TrimSpace(line[3:])
	return rest == "" || strings.HasPrefix(rest, "#")
}

func isEmptyDocument(b []byte) bool {
	for _, line := range strings.Split(string(b), "\n") {
		t := strings.TrimSpace(line)
		if t != "" && !strings.HasPrefix(t, "#") {
			return false
		}
	}
	return true
}
