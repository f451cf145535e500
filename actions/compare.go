package actions

// Grading a written file. The write action (write.go) makes a Comparison
// in check mode (newComparison) and grades the learner's file through it;
// the comparison reads the file's values (filevalues.go) and, for loose and
// hints paths, what the rendered file holds (writepaths.go), and never the
// action: data flows one way, from the action to its grading.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/labrun/labrun/internal/lang/eval"
	"github.com/labrun/labrun/internal/lang/keypath"
	"github.com/labrun/labrun/internal/lang/schemacheck"
	"github.com/labrun/labrun/internal/leaf/outdir"
)

// Comparison is what labrun check compares one learner's file with: the
// file its write step would have written, rendered from what the check
// read, with the step's loose keys and hints. Comparing is the first half
// of grading a file; the step's assertions on result.file are the second
// (runner.GradedFile). A Comparison holds no cluster state of its own, so
// it can be made again on another copy of the file (labrun test grades
// many changed copies of a solved file against one read of the cluster).
type Comparison struct {
	// Path is the file, relative to the output directory.
	Path string
	// Kind is json, kv or text.
	Kind   string
	spec   *WriteSpec
	schema string // resolved path of spec.Schema, or ""
	loose  []LooseKey
	// base is the step's result but for what the learner's file gives
	// (File, Problems).
	base WriteResult
}

// ComparisonOf returns the comparison a write step's result came from in
// check mode, or nil for any other result.
func ComparisonOf(result any) *Comparison {
	if r, ok := result.(*WriteResult); ok {
		return r.comparison
	}
	return nil
}

// Result grades the learner's file in dir and returns the step's result as
// check makes it (the learner's file in File, the problems found in
// Problems), with the problems and the paths they name.
func (g *Comparison) Result(dir *outdir.Dir) (*WriteResult, []Problem) {
	res := g.base
	res.comparison = g
	file, problems := g.Compare(dir)
	res.File = file
	res.Problems = []string{}
	for _, p := range problems {
		res.Problems = append(res.Problems, p.Text)
	}
	return &res, problems
}

// LooseKey is a value a write step's check compares by type only: a path
// of the `loose` key, with the author's reason when the mapping form
// gives one.
type LooseKey struct {
	Path   keypath.Path
	Reason string
}

// Problem is one thing wrong in a learner's file: the concrete path of the
// value at fault (empty for the whole file) and the line that says it.
type Problem struct {
	Path keypath.Path
	Text string
}

// Loose returns the loose key that covers concrete path p, if any.
func (g *Comparison) Loose(p keypath.Path) (LooseKey, bool) {
	for _, l := range g.loose {
		if l.Path.Covers(p) {
			return l, true
		}
	}
	return LooseKey{}, false
}

// Compare compares the learner's file in dir with the expected one. file is
// the learner's file as assertions read it (result.file): its JSON with
// plain numbers, its key=value pairs or its text; nil when it could not be
// read or parsed.
func (g *Comparison) Compare(dir *outdir.Dir) (file any, problems []Problem) {
	name := filepath.Base(g.Path)
	got, err := dir.ReadFile(g.Path, maxLearnerFile)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, []Problem{{Text: fmt.Sprintf("%s: missing (%v)", name, unwrapPath(err))}}
		}
		return nil, []Problem{{Text: fmt.Sprintf("%s: %v", name, err)}}
	}
	d := &differ{g: g}
	switch g.Kind {
	case "json":
		var learner any
		dec := json.NewDecoder(bytes.NewReader(got))
		dec.UseNumber()
		if err := dec.Decode(&learner); err != nil {
			return nil, []Problem{{Text: fmt.Sprintf("%s: not valid JSON: %v", name, err)}}
		}
		file = plainNumbers(learner)
		d.value(nil, jsonRoundTrip(g.spec.JSON), learner, orderOf(g.spec.JSON))
		d.schema(name, got, learner)
	case "kv":
		learner := parseKV(string(got))
		file = learner
		m := g.spec.KV.(*eval.Map)
		for _, k := range m.Keys {
			p := keypath.Path{}.Key(k)
			lv, ok := learner[k]
			want := eval.Format(m.Values[k])
			switch {
			case !ok:
				d.add(p, "key %q is missing", k)
			case d.isLoose(p):
			case lv != want:
				d.add(p, "%s=%s, expected %s", k, clip(lv), want)
			}
		}
	case "text":
		file = string(got)
		if strings.TrimSpace(string(got)) != strings.TrimSpace(*g.spec.Text) {
			d.add(nil, "content differs from the expected text")
		}
	}
	for i := range d.out {
		if !strings.HasPrefix(d.out[i].Text, name+":") {
			d.out[i].Text = name + ": " + d.out[i].Text
		}
		d.out[i].Text += d.hint(d.out[i].Path)
	}
	return file, d.out
}

// differ collects the differences of one file.
type differ struct {
	g   *Comparison
	out []Problem
}

func (d *differ) add(p keypath.Path, format string, args ...any) {
	d.out = append(d.out, Problem{Path: p, Text: fmt.Sprintf(format, args...)})
}

func (d *differ) isLoose(p keypath.Path) bool {
	_, ok := d.g.Loose(p)
	return ok
}

// hint is the author's hint for the value at p: the one of the longest
// hints path that covers it.
func (d *differ) hint(p keypath.Path) string {
	best, text := -1, ""
	for k, h := range d.g.spec.Hints {
		hp, err := keypath.Parse(k)
		if err != nil || h == "" || !hp.Covers(p) || len(hp) <= best {
			continue
		}
		best, text = len(hp), h
	}
	if text == "" {
		return ""
	}
	return " (hint: " + text + ")"
}

// value compares the learner's value got with want at path p, adding the
// first difference under each key. order gives the keys of an object in
// the order the playbook writes them (messages follow it).
func (d *differ) value(p keypath.Path, want, got any, order func(keypath.Path) []string) {
	if jsonKind(got) != jsonKind(want) {
		d.add(p, "%s is %s %s, expected %s", show(p), jsonKind(got), short(got), jsonKind(want))
		return
	}
	if d.isLoose(p) {
		return
	}
	switch w := want.(type) {
	case map[string]any:
		g := got.(map[string]any)
		keys := order(p)
		if keys == nil {
			keys = slices.Sorted(maps.Keys(w))
		}
		for _, k := range keys {
			gv, ok := g[k]
			if !ok {
				d.add(p.Key(k), "key %q is missing", p.Key(k).String())
				continue
			}
			d.value(p.Key(k), w[k], gv, order)
		}
		// Keys the file should not have: at the top level they are the
		// schema's to judge (a lab may allow more keys than it writes).
		if len(p) > 0 {
			for _, k := range slices.Sorted(maps.Keys(g)) {
				if _, ok := w[k]; !ok {
					d.add(p.Key(k), "%s is not expected (it is %s)", p.Key(k), short(g[k]))
				}
			}
		}
	case []any:
		d.list(p, w, got.([]any), order)
	default:
		if !d.same(p, want, got) {
			d.add(p, "%s is %s, expected %s", show(p), short(got), short(want))
		}
	}
}

// list compares lists as multisets, since the order in which a learner
// lists backends carries no meaning. It names the first learner's item
// no expected item matches, compared with the first unmatched expected
// one.
func (d *differ) list(p keypath.Path, want, got []any, order func(keypath.Path) []string) {
	if len(want) != len(got) {
		d.add(p, "%s has %s %s, expected %d %s", show(p), plural(len(got), "item"), short(got), len(want), short(want))
		return
	}
	wi, gi := d.unmatched(p, want, got)
	if gi < 0 {
		return
	}
	d.value(p.Index(gi), want[wi], got[gi], order)
}

// unmatched pairs equal items of want and got and returns the first of
// each that has no partner (-1, -1 when all pair up). Items equal at the
// same index pair first, so that in a list written in the expected order
// with one wrong item, that item is the one named, not a later duplicate
// of it.
func (d *differ) unmatched(p keypath.Path, want, got []any) (int, int) {
	used := make([]bool, len(got))
	paired := make([]bool, len(want))
	for i := range min(len(want), len(got)) {
		if d.same(p.Index(i), want[i], got[i]) {
			used[i], paired[i] = true, true
		}
	}
	firstWant := -1
outer:
	for i, w := range want {
		if paired[i] {
			continue
		}
		for j, g := range got {
			if !used[j] && d.same(p.Index(j), w, g) {
				used[j] = true
				continue outer
			}
		}
		if firstWant < 0 {
			firstWant = i
		}
	}
	for j := range got {
		if !used[j] {
			return firstWant, j
		}
	}
	return -1, -1
}

// same compares JSON values at p, loose paths by type only and lists as
// multisets.
func (d *differ) same(p keypath.Path, a, b any) bool {
	if jsonKind(a) != jsonKind(b) {
		return false
	}
	if d.isLoose(p) {
		return true
	}
	switch x := a.(type) {
	case []any:
		y := b.([]any)
		if len(x) != len(y) {
			return false
		}
		_, j := d.unmatched(p, x, y)
		return j < 0
	case map[string]any:
		y := b.(map[string]any)
		if len(x) != len(y) {
			return false
		}
		for k, xv := range x {
			if yv, ok := y[k]; !ok || !d.same(p.Key(k), xv, yv) {
				return false
			}
		}
		return true
	}
	return sameJSON(a, b)
}

// schema adds the JSON Schema's findings on keys the comparison did not
// already report (extra keys, a wrong type inside a list), with the line
// and column in the learner's file where each is.
func (d *differ) schema(name string, text []byte, learner any) {
	if d.g.schema == "" {
		return
	}
	schema, err := schemacheck.Load(d.g.schema)
	if err != nil {
		d.add(nil, "%s: %v", name, err)
		return
	}
	reported := map[string]bool{}
	for _, p := range d.out {
		reported[p.Path.Top()] = true
	}
	for _, pr := range schema.Validate(learner) {
		key := strings.SplitN(strings.TrimPrefix(pr.Path, "/"), "/", 2)[0]
		if key == "" || !reported[key] {
			line, col := schemacheck.Locate(text, pr.Path)
			var p keypath.Path
			if key != "" {
				p = keypath.Path{}.Key(key)
			}
			d.add(p, "%s:%d:%d: %s", name, line, col, pr)
		}
	}
}

// orderOf gives, for an object of the rendered value x, its keys in the
// order the playbook wrote them (nil when x has no such object there).
func orderOf(x any) func(keypath.Path) []string {
	return func(p keypath.Path) []string {
		v := x
		for _, s := range p {
			switch {
			case s.Item:
				l, ok := v.([]any)
				if !ok || len(l) == 0 {
					return nil
				}
				// items of a list share one layout; the first gives it
				v = l[0]
			default:
				m, ok := v.(*eval.Map)
				if !ok {
					return nil
				}
				v = m.Values[s.Key]
			}
		}
		if m, ok := v.(*eval.Map); ok {
			return m.Keys
		}
		return nil
	}
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// newComparison gathers what check compares for one rendered write spec,
// refusing a loose or hints path the rendered file does not have (when no
// schema says which values the file may hold).
func newComparison(rt *Runtime, spec *WriteSpec, path string) (*Comparison, error) {
	g := &Comparison{Path: path, spec: spec}
	switch {
	case spec.JSON != nil:
		g.Kind = "json"
	case spec.KV != nil:
		g.Kind = "kv"
	default:
		g.Kind = "text"
	}
	if spec.Schema != "" {
		g.schema = rt.ResolveInput(spec.Schema)
	}
	var err error
	if g.loose, err = looseKeys(spec.Loose); err != nil {
		return nil, err
	}
	if g.Kind != "json" || g.schema != "" {
		return g, nil
	}
	data := jsonRoundTrip(spec.JSON)
	var errs []error
	check := func(key, text string) {
		p, err := keypath.Parse(text)
		if err != nil {
			errs = append(errs, &SpecError{Key: key, Text: text, Err: fmt.Errorf("%s: %w", key, err)})
			return
		}
		if why := renderedLacks(data, p, nil); why != "" {
			errs = append(errs, &SpecError{Key: key, Text: text, Err: fmt.Errorf("%s %s: the file as rendered has no such value: %s", key, p, why)})
		}
	}
	for _, l := range g.loose {
		check("loose", l.Path.String())
	}
	for _, k := range slices.Sorted(maps.Keys(spec.Hints)) {
		check("hints", k)
	}
	return g, errors.Join(errs...)
}

// looseKeys reads the decoded loose value: a list of paths, or a mapping
// of path: reason.
func looseKeys(x any) ([]LooseKey, error) {
	var out []LooseKey
	add := func(path, reason string) error {
		p, err := keypath.Parse(path)
		if err != nil {
			return fmt.Errorf("loose: %w", err)
		}
		out = append(out, LooseKey{Path: p, Reason: reason})
		return nil
	}
	switch v := x.(type) {
	case nil:
	case []any:
		for _, item := range v {
			s, ok := item.(string)
			if !ok {
				return nil, fmt.Errorf("loose: %s is not a path", eval.Show(item))
			}
			if err := add(s, ""); err != nil {
				return nil, err
			}
		}
	case *eval.Map:
		for _, k := range v.Keys {
			if err := add(k, eval.Format(v.Values[k])); err != nil {
				return nil, err
			}
		}
	default:
		return nil, fmt.Errorf("loose must be a list of paths or a mapping of path: reason, got %s", eval.Show(x))
	}
	return out, nil
}
