// Package kubeschema checks the objects an apply step sends against the
// Kubernetes API's schema of their kinds, before any cluster sees them:
// a key the kind does not have, a value of the wrong type (an int where
// the API takes a string, which the API server refuses only as a 500
// "failed to create typed patch object"), a required key left out. Each
// problem names the value by its path in the object
// (spec.template.spec.containers[0].command[0]) and where it is written.
//
// The schemas of the built-in kinds are those of the Kubernetes version
// the test cluster runs, and of the CRDs of its Cilium, converted by
// ./gen from their sources into builtin.json.gz (embedded, so no cluster
// is asked); a playbook's own CustomResourceDefinitions are added to a
// Registry as its manifests are read. Only what decides whether the API
// server can take a field at all is kept (Convert): the server's checks
// of values (enums, patterns, bounds) stay the server's.
//
// The library santhosh-tekuri/jsonschema validates, each schema a
// resource of its own that it loads (and checks against the metaschema)
// only when a kind being checked reaches it, as draft-07, which reads the
// kept keywords as 2020-12 does and whose metaschema is the quicker to
// check against; this package builds the instance from a manifest whose
// values may be known only by their type (an expression's, at validate),
// and words and places what the library finds.
package kubeschema

import (
	"bytes"
	"compress/gzip"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// The versions whose schemas are embedded: the test cluster's
// (testbed/lib/common.sh), which a test keeps equal.
const (
	KubernetesVersion = "v1.36.3"
	CiliumVersion     = "v1.20.1"
)

//go:generate go run ./gen -o builtin.json.gz

//go:embed builtin.json.gz
var builtinGz []byte

// Document is the embedded data: the kinds, by apiVersion and kind, with
// the name of each one's schema, and the schemas by name. A schema
// refers to another by its name ({"$ref": "io.k8s.api.core.v1.PodSpec"}),
// its URL relative to any schema's.
type Document struct {
	Source  string                       `json:"source"`
	Kinds   map[string]map[string]string `json:"kinds"`
	Schemas map[string]any               `json:"schemas"`
}

// defsURL is where the library finds the schemas by name; the scheme is
// one it never fetches (Registry's loader serves them).
const defsURL = "https://kubeschema.labrun.invalid/defs/"

// embedded is the decoded embedded document; each schema stays JSON
// until a kind being checked reaches it.
type embedded struct {
	kinds   map[string]map[string]string
	schemas map[string]json.RawMessage
}

// builtin decodes the embedded document on first use: a playbook with
// no apply step does not pay for it.
var builtin = sync.OnceValues(decodeBuiltin)

func decodeBuiltin() (*embedded, error) {
	zr, err := gzip.NewReader(bytes.NewReader(builtinGz))
	if err != nil {
		return nil, err
	}
	data, err := io.ReadAll(zr)
	if err != nil {
		return nil, err
	}
	var doc struct {
		Kinds   map[string]map[string]string `json:"kinds"`
		Schemas map[string]json.RawMessage   `json:"schemas"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	return &embedded{kinds: doc.Kinds, schemas: doc.Schemas}, nil
}

// shared compiles the built-in kinds' schemas once per process, for
// every Registry.
var shared = struct {
	sync.Mutex
	c *jsonschema.Compiler
	m map[string]*jsonschema.Schema
}{m: map[string]*jsonschema.Schema{}}

// APIVersion writes a group and version as a manifest's apiVersion: "v1"
// for the core group, "apps/v1" for the others.
func APIVersion(group, version string) string {
	if group == "" {
		return version
	}
	return group + "/" + version
}

// Registry knows the schemas of the kinds a playbook's manifests may
// have: the built-in ones, and the CRDs added to it. NewRegistry makes
// one.
type Registry struct {
	mu   sync.Mutex
	crds map[string]map[string]CRDKind // apiVersion -> kind
	c    *jsonschema.Compiler          // the CRDs' (made on the first check of one)
	m    map[string]*jsonschema.Schema // the CRDs' compiled schemas
}

// NewRegistry returns a registry of the built-in kinds.
func NewRegistry() *Registry {
	return &Registry{crds: map[string]map[string]CRDKind{}, m: map[string]*jsonschema.Schema{}}
}

// CRDKind is one served version of a CustomResourceDefinition's kind,
// with its schema converted (Convert).
type CRDKind struct {
	APIVersion, Kind string
	// Name names the schema (crd.GROUP.VERSION.KIND).
	Name   string
	Schema map[string]any
}

// objectMeta is the schema of every object's metadata.
const objectMeta = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"

// CRDKinds reads the kinds a CustomResourceDefinition (apiextensions.k8s.io/v1,
// decoded from YAML or JSON) defines: one per served version with a
// schema. The API server takes a custom object's apiVersion, kind and
// metadata as it does a built-in one's, whatever the CRD's schema says of
// them.
func CRDKinds(crd map[string]any) ([]CRDKind, error) {
	spec, _ := crd["spec"].(map[string]any)
	names, _ := spec["names"].(map[string]any)
	group, _ := spec["group"].(string)
	kind, _ := names["kind"].(string)
	if group == "" || kind == "" {
		return nil, errors.New("a CustomResourceDefinition without spec.group or spec.names.kind")
	}
	versions, _ := spec["versions"].([]any)
	var out []CRDKind
	for _, v := range versions {
		vm, _ := v.(map[string]any)
		name, _ := vm["name"].(string)
		if name == "" || vm["served"] == false {
			continue
		}
		sch, _ := vm["schema"].(map[string]any)
		root, _ := sch["openAPIV3Schema"].(map[string]any)
		if root == nil {
			continue // no schema: the server takes any field
		}
		s := Convert(root)
		props, _ := s["properties"].(map[string]any)
		if props == nil {
			props = map[string]any{}
			if root["x-kubernetes-preserve-unknown-fields"] != true {
				s["additionalProperties"] = false
			}
			s["properties"] = props
		}
		props["apiVersion"] = map[string]any{"type": "string"}
		props["kind"] = map[string]any{"type": "string"}
		props["metadata"] = map[string]any{"$ref": objectMeta}
		out = append(out, CRDKind{
			APIVersion: APIVersion(group, name),
			Kind:       kind,
			Name:       "crd." + group + "." + name + "." + kind,
			Schema:     s,
		})
	}
	return out, nil
}

// AddCRD adds the kinds a CustomResourceDefinition defines, so that the
// objects of its kinds are checked too; a kind added again takes the
// later definition.
func (r *Registry) AddCRD(crd map[string]any) error {
	kinds, err := CRDKinds(crd)
	if err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, k := range kinds {
		if r.crds[k.APIVersion] == nil {
			r.crds[k.APIVersion] = map[string]CRDKind{}
		}
		r.crds[k.APIVersion][k.Kind] = k
		// a compiler keeps what it compiled: the next check of a CRD
		// kind starts a new one
		r.c, r.m = nil, map[string]*jsonschema.Schema{}
	}
	return nil
}

// errUnknownKind is a kind the registry has no schema of.
var errUnknownKind = errors.New("unknown kind")

// schema returns the compiled schema of a kind; errUnknownKind when the
// registry does not know it.
func (r *Registry) schema(apiVersion, kind string) (*jsonschema.Schema, error) {
	r.mu.Lock()
	crd, isCRD := r.crds[apiVersion][kind]
	if isCRD {
		defer r.mu.Unlock()
		if s, ok := r.m[crd.Name]; ok {
			return s, nil
		}
		if r.c == nil {
			r.c = r.compiler()
		}
		s, err := r.c.Compile(defsURL + crd.Name)
		if err != nil {
			return nil, fmt.Errorf("the schema of CRD kind %s %s: %v", apiVersion, kind, err)
		}
		r.m[crd.Name] = s
		return s, nil
	}
	r.mu.Unlock()
	e, err := builtin()
	if err != nil {
		return nil, fmt.Errorf("the embedded schemas: %v", err)
	}
	name, ok := e.kinds[apiVersion][kind]
	if !ok {
		return nil, errUnknownKind
	}
	shared.Lock()
	defer shared.Unlock()
	if s, ok := shared.m[name]; ok {
		return s, nil
	}
	if shared.c == nil {
		shared.c = (&Registry{}).compiler()
	}
	s, err := shared.c.Compile(defsURL + name)
	if err != nil {
		return nil, fmt.Errorf("the embedded schema of %s %s: %v", apiVersion, kind, err)
	}
	shared.m[name] = s
	return s, nil
}

// compiler returns a compiler whose loader serves the schemas by name:
// the registry's CRD kinds', then the embedded ones.
func (r *Registry) compiler() *jsonschema.Compiler {
	crds := map[string]map[string]any{}
	for _, kinds := range r.crds {
		for _, k := range kinds {
			crds[k.Name] = k.Schema
		}
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft7)
	c.UseLoader(loader(crds))
	return c
}

// loader serves the schemas by name from the registry's CRDs and the
// embedded document, in the library's data model (numbers as
// json.Number: a JSON round trip).
type loader map[string]map[string]any

func (l loader) Load(url string) (any, error) {
	name, ok := strings.CutPrefix(url, defsURL)
	if !ok {
		return nil, fmt.Errorf("%s: only the embedded schemas are read", url)
	}
	var data []byte
	if s, ok := l[name]; ok {
		var err error
		if data, err = json.Marshal(s); err != nil {
			return nil, err
		}
	} else {
		e, err := builtin()
		if err != nil {
			return nil, err
		}
		if data, ok = e.schemas[name]; !ok {
			return nil, fmt.Errorf("no schema %s", name)
		}
	}
	return jsonschema.UnmarshalJSON(bytes.NewReader(data))
}

// kindsOf lists the kinds the registry knows of an apiVersion, for a
// suggestion; known is false for an apiVersion it knows nothing of.
func (r *Registry) kindsOf(apiVersion string) (kinds []string, known bool) {
	r.mu.Lock()
	kinds = slices.Collect(maps.Keys(r.crds[apiVersion]))
	r.mu.Unlock()
	known = len(kinds) > 0
	if e, err := builtin(); err == nil {
		b, ok := e.kinds[apiVersion]
		kinds = append(kinds, slices.Collect(maps.Keys(b))...)
		known = known || ok
	}
	slices.Sort(kinds)
	return slices.Compact(kinds), known
}

// versionsOf lists the apiVersions whose kinds include kind, for the
// suggestion when a manifest names the wrong one.
func (r *Registry) versionsOf(kind string) []string {
	var out []string
	r.mu.Lock()
	for av, kinds := range r.crds {
		if _, ok := kinds[kind]; ok {
			out = append(out, av)
		}
	}
	r.mu.Unlock()
	if e, err := builtin(); err == nil {
		for av, kinds := range e.kinds {
			if _, ok := kinds[kind]; ok {
				out = append(out, av)
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}
