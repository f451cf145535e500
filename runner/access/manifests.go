package access

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/labrun/labrun/actions"
	"github.com/labrun/labrun/internal/boundary/cluster"
	"github.com/labrun/labrun/internal/lang/diag"
)

// What an apply's permissions need of its manifests: the apiVersion, kind
// and namespace of each object, read from the files (as kube.DecodeFiles
// reads them: a directory's cluster.ManifestFiles) and from inline text. A CustomResourceDefinition among them
// teaches the table its kind, for the steps after.

// manifests reads the objects of src, a file or directory relative to
// dir or inline text; at is where the step names it.
func (d *deriver) manifests(src cluster.ManifestSource, at diag.Pos) ([]actions.ManifestObject, error) {
	if src.Path == "" {
		return d.decode("", []byte(src.Text), at)
	}
	path := src.Path
	if !filepath.IsAbs(path) {
		path = filepath.Join(d.dir, path)
	}
	files, err := manifestFiles(path)
	if err != nil {
		return nil, diag.Errorf(at, "read manifests: %v", err)
	}
	var out []actions.ManifestObject
	for _, f := range files {
		data, err := cluster.ReadManifest(f)
		if err != nil {
			return nil, diag.Errorf(at, "read manifests: %v", err)
		}
		objs, err := d.decode(f, data, at)
		if err != nil {
			return nil, err
		}
		out = append(out, objs...)
	}
	return out, nil
}

// manifestFiles is path, or a directory's manifest files, as kube reads
// them.
func manifestFiles(path string) ([]string, error) {
	st, err := os.Stat(path)
	if err != nil || !st.IsDir() {
		return []string{path}, err
	}
	files, err := cluster.ManifestFiles(path)
	if err == nil && len(files) == 0 {
		err = fmt.Errorf("directory %s has no *.yaml, *.yml or *.json file", path)
	}
	return files, err
}

// decode reads the objects of the documents of data, from file ("" for
// inline text, whose objects are placed at at).
func (d *deriver) decode(file string, data []byte, at diag.Pos) ([]actions.ManifestObject, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var out []actions.ManifestObject
	for {
		var doc yaml.Node
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			where := at
			if file != "" {
				where = diag.Pos{File: file}
			}
			return nil, diag.Errorf(where, "read manifests: %v", err)
		}
		if len(doc.Content) == 0 {
			continue
		}
		root := doc.Content[0]
		objs := []*yaml.Node{root}
		if items := field(root, "items"); items != nil && items.Kind == yaml.SequenceNode { // a List, as kube takes it
			objs = items.Content
		}
		for _, o := range objs {
			obj := actions.ManifestObject{APIVersion: scalar(o, "apiVersion"), Kind: scalar(o, "kind"),
				Namespace: scalar(field(o, "metadata"), "namespace"), Name: scalar(field(o, "metadata"), "name"), Pos: at}
			if k := field(o, "kind"); file != "" && k != nil {
				obj.Pos = diag.Pos{File: file, Line: k.Line, Col: k.Column}
			}
			if obj.Kind == "CustomResourceDefinition" {
				d.kinds.add(crdKind(o))
			}
			out = append(out, obj)
		}
	}
}

// crdKind is the kind a CustomResourceDefinition defines.
func crdKind(crd *yaml.Node) kind {
	spec := field(crd, "spec")
	names := field(spec, "names")
	k := kind{
		Resource: cluster.Resource{Group: scalar(spec, "group"), Resource: scalar(names, "plural"),
			Kind: scalar(names, "kind"), Namespaced: scalar(spec, "scope") == "Namespaced"},
		Singular: scalar(names, "singular"),
	}
	if k.Singular == "" {
		k.Singular = strings.ToLower(k.Kind)
	}
	if short := field(names, "shortNames"); short != nil {
		for _, n := range short.Content {
			k.ShortNames = append(k.ShortNames, n.Value)
		}
	}
	if versions := field(spec, "versions"); versions != nil {
		for _, v := range versions.Content {
			if scalar(v, "served") != "false" {
				k.Versions = append(k.Versions, scalar(v, "name"))
			}
		}
	}
	return k
}

// field is the value of key in a mapping node, or nil.
func field(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

// scalar is the text of key's scalar value in a mapping node, or "".
func scalar(n *yaml.Node, key string) string {
	v := field(n, key)
	if v == nil || v.Kind != yaml.ScalarNode {
		return ""
	}
	return v.Value
}
