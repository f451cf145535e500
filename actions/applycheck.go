package actions

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/labrun/labrun/internal/boundary/cluster"
	"github.com/labrun/labrun/internal/lang/diag"
	"github.com/labrun/labrun/internal/lang/eval"
	"github.com/labrun/labrun/internal/lang/kubeschema"
	"gopkg.in/yaml.v3"
)

// The objects an apply step sends are checked against the Kubernetes
// API's schema of their kinds (internal/lang/kubeschema): at validate,
// as far as they are known then (a value of an expression by its static
// type), each problem where the value is written, in the playbook or in
// the manifest file the step reads; when the step runs, the rendered
// objects, before anything is sent, as a broken lab (a SpecError). An
// object the API server still refuses for its shape (a kind labrun has
// no schema of) is placed the same way (placeInvalid).

// maxManifestFile bounds a manifest file read at validate, as the loader
// bounds a playbook; a larger one is checked when the step runs.
const maxManifestFile = 4 << 20

// checkManifests is apply's static check of the objects it sends.
func checkManifests(spec *eval.Value, sc *StaticContext) diag.List {
	if sc.NoManifests {
		return nil
	}
	var errs diag.List
	var docs []*kubeschema.Node
	if files := spec.Lookup("files"); files != nil {
		for _, item := range files.Items() {
			path, ok := item.Text(sc.varValue)
			if !ok {
				continue // known when the step runs, and checked then
			}
			ds, err := fileDocs(resolveIn(sc.PlaybookDir, path), true)
			errs.Append(err)
			docs = append(docs, ds...)
		}
	}
	if objs := spec.Lookup("objects"); objs != nil {
		for _, item := range objs.Items() {
			docs = append(docs, valueNode(item))
		}
	}
	if m := spec.Lookup("manifest"); m != nil {
		if lit, ok := m.Literal(); ok {
			if text, ok := lit.(string); ok {
				ds, err := kubeschema.Documents([]byte(text), textPos(text, func(off int) diag.Pos {
					if sc.ScalarPos == nil {
						return m.Pos
					}
					return sc.ScalarPos(m, off)
				}))
				errs.Append(err)
				for _, d := range ds {
					docs = append(docs, d.Node)
				}
			}
		}
	}
	kinds := sc.Kinds
	if kinds == nil {
		kinds = kubeschema.NewRegistry()
	}
	learnCRDs(kinds, docs)
	opts := kubeschema.Options{Partial: spec.Lookup("fieldManager") != nil}
	for _, d := range docs {
		problems, _ := kinds.Check(d, opts)
		for _, p := range problems {
			errs.Add(p.Pos, "%s: %s", d.Describe(), p)
		}
	}
	return errs
}

// varValue gives the text of an expression that is a variable's
// reference (vars.NAME) whose value is a string known before the run.
func (sc *StaticContext) varValue(src string) (string, bool) {
	name, ok := strings.CutPrefix(src, "vars.")
	if !ok || sc.VarText == nil || !identRe.MatchString(name) {
		return "", false
	}
	return sc.VarText(name)
}

var identRe = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// resolveIn is a path relative to dir, as Runtime.ResolveInput makes it.
func resolveIn(dir, p string) string {
	if filepath.IsAbs(p) || dir == "" {
		return p
	}
	return filepath.Join(dir, p)
}

// fileDocs reads the objects of a manifest file or directory, positioned
// in the files. One that cannot be read gives none and no error: the
// step says so when it runs (a file an earlier step writes is not there
// yet at validate). At validate (bounded), a larger file is left to the
// run.
func fileDocs(path string, bounded bool) ([]*kubeschema.Node, error) {
	files := []string{path}
	if st, err := os.Stat(path); err != nil {
		return nil, nil
	} else if st.IsDir() {
		if files, err = cluster.ManifestFiles(path); err != nil {
			return nil, nil
		}
	} else if bounded && st.Size() > maxManifestFile {
		return nil, nil
	}
	var out []*kubeschema.Node
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil || bounded && len(data) > maxManifestFile {
			continue
		}
		ds, err := kubeschema.Documents(data, func(line, col int) diag.Pos { return diag.Pos{File: f, Line: line, Col: col} })
		if err != nil {
			return out, err
		}
		for _, d := range ds {
			out = append(out, d.Node)
		}
	}
	return out, nil
}

// textPos places a line and column of text through pos, which places a
// byte offset.
func textPos(text string, pos func(off int) diag.Pos) func(line, col int) diag.Pos {
	return func(line, col int) diag.Pos {
		off := 0
		for l := 1; l < line; l++ {
			i := strings.IndexByte(text[off:], '\n')
			if i < 0 {
				break
			}
			off += i + 1
		}
		for c := 1; c < col && off < len(text) && text[off] != '\n'; c++ {
			_, size := utf8.DecodeRuneInString(text[off:])
			off += size
		}
		return pos(off)
	}
}

// valueNode is the object an inline objects item sends, as validate knows
// it: its literals as written in the playbook, an expression's value by
// the expression's static type.
func valueNode(v *eval.Value) *kubeschema.Node {
	switch {
	case v.Node != nil && v.Node.Kind == yaml.MappingNode && v.WholeExpr() == nil:
		n := &kubeschema.Node{Pos: v.Pos, Kind: kubeschema.Map}
		for _, k := range v.Keys() {
			n.Keys = append(n.Keys, k)
			n.KeyPos = append(n.KeyPos, v.KeyPos(k))
			n.Vals = append(n.Vals, valueNode(v.Lookup(k)))
		}
		return n
	case v.Items() != nil:
		n := &kubeschema.Node{Pos: v.Pos, Kind: kubeschema.List, Items: []*kubeschema.Node{}}
		for _, it := range v.Items() {
			n.Items = append(n.Items, valueNode(it))
		}
		return n
	}
	if lit, ok := v.Literal(); ok {
		n := &kubeschema.Node{Pos: v.Pos, Kind: kubeschema.Scalar, Value: lit}
		if i, isInt := lit.(int); isInt {
			n.Value = int64(i)
		}
		if v.Node != nil {
			n.Text = v.Node.Value
		}
		return n
	}
	if e := v.WholeExpr(); e != nil {
		return &kubeschema.Node{Pos: e.Pos, Kind: kubeschema.Computed, Type: kubeschema.TypeOf(e.Type), Src: strings.TrimSpace(e.Src)}
	}
	// text with ${{ }} parts: a string
	return &kubeschema.Node{Pos: v.Pos, Kind: kubeschema.Computed, Type: "string"}
}

// learnCRDs adds the CustomResourceDefinitions among docs to kinds, so
// that the objects of their kinds are checked too.
func learnCRDs(kinds *kubeschema.Registry, docs []*kubeschema.Node) {
	for _, d := range docs {
		if !d.IsCRD() {
			continue
		}
		if crd, ok := d.Plain(); ok {
			m, _ := crd.(map[string]any)
			_ = kinds.AddCRD(m) // a CRD without group or kind: the server says so
		}
	}
}

// checkRendered checks the objects of a rendered spec before any is
// sent: each problem is a SpecError where its value is written (in the
// playbook, through the rendered object's path; or in the manifest
// file).
func checkRendered(rt *Runtime, spec *ApplySpec) error {
	kinds := kubeschema.NewRegistry()
	type source struct {
		docs []*kubeschema.Node
		err  func(p kubeschema.Problem, d *kubeschema.Node) *SpecError
	}
	var sources []source
	for i, f := range spec.Files {
		docs, err := fileDocs(rt.ResolveInput(f), false)
		if err != nil {
			return &SpecError{Key: "files", Text: f, Pos: posOf(err), Err: err}
		}
		sources = append(sources, source{docs, func(p kubeschema.Problem, d *kubeschema.Node) *SpecError {
			return &SpecError{Key: "files", Text: spec.Files[i], Pos: p.Pos, Err: fmt.Errorf("%s: %s", d.Describe(), p)}
		}})
	}
	for i, o := range spec.Objects {
		sources = append(sources, source{[]*kubeschema.Node{kubeschema.FromGo(o)}, func(p kubeschema.Problem, d *kubeschema.Node) *SpecError {
			return &SpecError{Key: "objects", At: append([]any{i}, p.Path...), Err: fmt.Errorf("objects[%d]: %s: %s", i, d.Describe(), p)}
		}})
	}
	if spec.Manifest != "" {
		docs, err := kubeschema.Documents([]byte(spec.Manifest), func(line, col int) diag.Pos { return diag.Pos{File: "manifest", Line: line, Col: col} })
		if err != nil {
			return &SpecError{Key: "manifest", Err: err}
		}
		var ds []*kubeschema.Node
		for _, d := range docs {
			ds = append(ds, d.Node)
		}
		sources = append(sources, source{ds, func(p kubeschema.Problem, d *kubeschema.Node) *SpecError {
			return &SpecError{Key: "manifest", Err: fmt.Errorf("manifest line %d: %s: %s", p.Pos.Line, d.Describe(), p)}
		}})
	}
	for _, s := range sources {
		learnCRDs(kinds, s.docs)
	}
	opts := kubeschema.Options{Partial: spec.FieldManager != ""}
	var errs []error
	for _, s := range sources {
		for _, d := range s.docs {
			problems, _ := kinds.Check(d, opts)
			for _, p := range problems {
				errs = append(errs, s.err(p, d))
			}
		}
	}
	return errors.Join(errs...)
}

// posOf is where a diag.Error is, the zero Pos for any other error.
func posOf(err error) diag.Pos {
	var de *diag.Error
	if errors.As(err, &de) {
		return de.Pos
	}
	return diag.Pos{}
}

// origin is the spec key (and item) an apply's cluster.ManifestSource
// comes from.
type origin struct {
	key   string
	index int
}

// valueUnstructured is how the API server's refusal shows the value it
// refused (&value.valueUnstructured{Value:8080}); the value alone says
// it.
var valueUnstructured = regexp.MustCompile(`&value\.valueUnstructured\{Value:(.*?)\}`)

// placeInvalid turns the API server's refusal of an object's shape into
// a SpecError at the value it names: in the playbook (through the object
// as rendered) or in the manifest file; a broken lab, not the cluster.
func placeInvalid(spec *ApplySpec, origins []origin, e *cluster.InvalidObjectError) error {
	if e.Source < 0 || e.Source >= len(origins) {
		return e
	}
	o := origins[e.Source]
	reason := valueUnstructured.ReplaceAllString(e.Reason, "$1")
	msg := func(obj *kubeschema.Node, path kubeschema.Path) error {
		at := e.Field
		if len(path) > 0 {
			at = path.String()
		}
		return fmt.Errorf("the API server refused %s for its shape: %s: %s: %w", obj.Describe(), at, reason, e)
	}
	switch o.key {
	case "objects":
		obj := kubeschema.FromGo(spec.Objects[o.index])
		path, _ := obj.FieldPath(e.Field)
		return &SpecError{Key: "objects", At: append([]any{o.index}, path...), Err: msg(obj, path)}
	case "files":
		se := &SpecError{Key: "files", Text: spec.Files[o.index], Pos: diag.Pos{File: e.File, Line: e.Line}}
		data, err := os.ReadFile(e.File)
		if err == nil {
			docs, _ := kubeschema.Documents(data, func(line, col int) diag.Pos { return diag.Pos{File: e.File, Line: line, Col: col} })
			for _, d := range docs {
				if d.Line >= e.Line {
					path, n := d.Node.FieldPath(e.Field)
					se.Pos, se.Err = n.Pos, msg(d.Node, path)
					return se
				}
			}
		}
		se.Err = fmt.Errorf("the API server refused the object for its shape: %s: %s: %w", e.Field, reason, e)
		return se
	}
	return &SpecError{Key: o.key, Err: fmt.Errorf("the API server refused the object for its shape: %s: %s: %w", e.Field, reason, e)}
}
