// Command gen writes builtin.json.gz, the schemas package kubeschema
// checks manifests with, from the sources of the versions the test
// cluster runs (testbed/lib/common.sh): the OpenAPI v3 documents of
// Kubernetes (k8s.io/kubernetes's api/openapi-spec/v3) and Cilium's CRDs
// (github.com/cilium/cilium's pkg/k8s/apis/cilium.io/client/crds), both
// read from the Go module cache (`go mod download` fetches them once).
//
//	go generate ./internal/lang/kubeschema
//
// TestGeneratedMatchesSources fails when the committed file is not what
// this writes.
package main

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/labrun/labrun/internal/lang/kubeschema"
	"gopkg.in/yaml.v3"
)

func main() {
	out := flag.String("o", "builtin.json.gz", "the file to write")
	flag.Parse()
	data, err := generate()
	if err == nil {
		err = os.WriteFile(*out, data, 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

// generate reads the sources from the module cache and returns the
// compressed document.
func generate() ([]byte, error) {
	k8s, err := moduleDir("k8s.io/kubernetes@" + kubeschema.KubernetesVersion)
	if err != nil {
		return nil, err
	}
	cilium, err := moduleDir("github.com/cilium/cilium@" + kubeschema.CiliumVersion)
	if err != nil {
		return nil, err
	}
	doc, err := build(filepath.Join(k8s, "api", "openapi-spec", "v3"), filepath.Join(cilium, "pkg", "k8s", "apis", "cilium.io", "client", "crds"))
	if err != nil {
		return nil, err
	}
	return compress(doc)
}

// moduleDir is where the module cache holds mod (path@version),
// downloading it when it is not there yet.
func moduleDir(mod string) (string, error) {
	cmd := exec.Command("go", "mod", "download", "-json", mod)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("go mod download %s: %v\n%s%s", mod, err, out, stderr.Bytes())
	}
	var info struct{ Dir, Error string }
	if err := json.Unmarshal(out, &info); err != nil {
		return "", fmt.Errorf("go mod download %s: %v", mod, err)
	}
	if info.Error != "" || info.Dir == "" {
		return "", fmt.Errorf("go mod download %s: %s", mod, info.Error)
	}
	return info.Dir, nil
}

// specFile matches the OpenAPI v3 document of one group version:
// api__v1_openapi.json, apis__apps__v1_openapi.json.
var specFile = regexp.MustCompile(`^apis?__(?:(.+)__)?(v[0-9a-z]+)_openapi\.json$`)

// build makes the document: every kind of the Kubernetes group versions
// an API server serves unless told otherwise (alpha versions are off by
// default) and of Cilium's CRDs, with the definitions they reach.
func build(specDir, crdDir string) (*kubeschema.Document, error) {
	doc := &kubeschema.Document{
		Source:  fmt.Sprintf("Kubernetes %s (api/openapi-spec/v3) and Cilium %s (its CRDs)", kubeschema.KubernetesVersion, kubeschema.CiliumVersion),
		Kinds:   map[string]map[string]string{},
		Schemas: map[string]any{},
	}
	files, err := os.ReadDir(specDir)
	if err != nil {
		return nil, err
	}
	for _, f := range files {
		m := specFile.FindStringSubmatch(f.Name())
		if m == nil || strings.Contains(m[2], "alpha") {
			continue
		}
		if err := addSpec(doc, filepath.Join(specDir, f.Name())); err != nil {
			return nil, err
		}
	}
	crds, err := filepath.Glob(filepath.Join(crdDir, "*", "*.yaml"))
	if err != nil {
		return nil, err
	}
	slices.Sort(crds)
	for _, f := range crds {
		if err := addCRDFile(doc, f); err != nil {
			return nil, err
		}
	}
	doc.Schemas = reachable(doc)
	share(doc)
	return doc, nil
}

// minShared is the size (of its JSON) from which a schema written more
// than once becomes a schema of its own that the others refer to.
const minShared = 64

// share makes each schema that is written more than once (Cilium's
// policy rules repeat their selectors and ports in every direction) a
// schema of its own, named by its content, that the places it was
// written refer to: the library then loads, checks and compiles it once,
// not once per place. It changes what the schemas accept in nothing.
func share(doc *kubeschema.Document) {
	count := map[string]int{}
	var countIn func(s any, top bool)
	countIn = func(s any, top bool) {
		m, ok := s.(map[string]any)
		if !ok {
			return
		}
		if !top {
			count[canonical(m)]++
		}
		for _, sub := range subschemas(m) {
			countIn(sub, false)
		}
	}
	for _, s := range doc.Schemas {
		countIn(s, true)
	}
	var rewrite func(m map[string]any) map[string]any
	rewrite = func(m map[string]any) map[string]any {
		out := map[string]any{}
		for k, v := range m {
			out[k] = v
		}
		if props, ok := m["properties"].(map[string]any); ok {
			np := map[string]any{}
			for k, v := range props {
				np[k] = place(v, rewrite, count, doc)
			}
			out["properties"] = np
		}
		for _, k := range []string{"items", "additionalProperties"} {
			if _, ok := m[k].(map[string]any); ok {
				out[k] = place(m[k], rewrite, count, doc)
			}
		}
		return out
	}
	for name, s := range doc.Schemas {
		if m, ok := s.(map[string]any); ok {
			doc.Schemas[name] = rewrite(m)
		}
	}
}

// place is the schema written at one place: a reference to the shared
// schema when it is written more than once, else it as it is, its own
// places rewritten.
func place(v any, rewrite func(map[string]any) map[string]any, count map[string]int, doc *kubeschema.Document) any {
	m, ok := v.(map[string]any)
	if !ok {
		return v
	}
	c := canonical(m)
	if count[c] < 2 || len(c) < minShared {
		return rewrite(m)
	}
	sum := sha256.Sum256([]byte(c))
	name := "shared." + hex.EncodeToString(sum[:6])
	if _, done := doc.Schemas[name]; !done {
		doc.Schemas[name] = rewrite(m)
	}
	return map[string]any{"$ref": name}
}

// subschemas lists the schemas inside a schema.
func subschemas(m map[string]any) []any {
	var out []any
	if props, ok := m["properties"].(map[string]any); ok {
		for _, v := range props {
			out = append(out, v)
		}
	}
	for _, k := range []string{"items", "additionalProperties"} {
		if v, ok := m[k].(map[string]any); ok {
			out = append(out, v)
		}
	}
	return out
}

// canonical is a schema's JSON, keys sorted.
func canonical(m map[string]any) string {
	b, _ := json.Marshal(m)
	return string(b)
}

// addSpec adds the kinds of one group version's document and all its
// definitions (trimmed later to those the kinds reach).
func addSpec(doc *kubeschema.Document, path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var spec struct {
		Components struct {
			Schemas map[string]map[string]any `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(data, &spec); err != nil {
		return fmt.Errorf("%s: %v", path, err)
	}
	for name, s := range spec.Components.Schemas {
		doc.Schemas[name] = kubeschema.Convert(s)
		gv, kind, ok := resourceKind(s)
		if !ok {
			continue
		}
		if doc.Kinds[gv] == nil {
			doc.Kinds[gv] = map[string]string{}
		}
		doc.Kinds[gv][kind] = name
	}
	return nil
}

// resourceKind says whether a definition is an object one applies: a
// single group-version-kind and ObjectMeta for metadata (a List, an
// option or a status of every group has neither).
func resourceKind(s map[string]any) (gv, kind string, ok bool) {
	gvks, _ := s["x-kubernetes-group-version-kind"].([]any)
	if len(gvks) != 1 {
		return "", "", false
	}
	props, _ := s["properties"].(map[string]any)
	meta, _ := json.Marshal(props["metadata"])
	if !bytes.Contains(meta, []byte("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")) {
		return "", "", false
	}
	g, _ := gvks[0].(map[string]any)
	group, _ := g["group"].(string)
	version, _ := g["version"].(string)
	kind, _ = g["kind"].(string)
	return kubeschema.APIVersion(group, version), kind, kind != "" && version != ""
}

// addCRDFile adds the served versions of the CRDs in a YAML file.
func addCRDFile(doc *kubeschema.Document, path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var obj map[string]any
		if err := dec.Decode(&obj); err != nil {
			if err.Error() == "EOF" {
				return nil
			}
			return fmt.Errorf("%s: %v", path, err)
		}
		if obj == nil {
			continue
		}
		kinds, err := kubeschema.CRDKinds(obj)
		if err != nil {
			return fmt.Errorf("%s: %v", path, err)
		}
		for _, k := range kinds {
			if doc.Kinds[k.APIVersion] == nil {
				doc.Kinds[k.APIVersion] = map[string]string{}
			}
			doc.Kinds[k.APIVersion][k.Kind] = k.Name
			doc.Schemas[k.Name] = k.Schema
		}
	}
}

// reachable keeps the schemas the kinds reach through $refs.
func reachable(doc *kubeschema.Document) map[string]any {
	keep := map[string]any{}
	var visit func(name string)
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				if s, ok := x.(string); ok && k == "$ref" {
					visit(s)
					continue
				}
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	visit = func(name string) {
		if _, done := keep[name]; done {
			return
		}
		s, ok := doc.Schemas[name]
		if !ok {
			return
		}
		keep[name] = s
		walk(s)
	}
	for _, kinds := range doc.Kinds {
		for _, def := range kinds {
			visit(def)
		}
	}
	return keep
}

// compress writes the document as JSON (keys sorted, so the same sources
// give the same bytes) and gzips it without a time stamp.
func compress(doc *kubeschema.Document) ([]byte, error) {
	js, err := json.Marshal(doc)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	if _, err := zw.Write(js); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
