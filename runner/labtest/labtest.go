// Package labtest is labrun test: it proves a lab's grader, not only its
// solution. It solves the lab and checks the files the solve wrote (Test),
// then changes each value of each file check graded, one at a time
// (another number, string or boolean, another list item, a key removed),
// and grades the changed file again as check did: its comparison and its
// write step's assertions. A change check accepts is a survivor: a
// learner could write that wrong value and pass. Each comparison holds
// the expected file check rendered from the cluster, so the many changes
// are graded against one read of it.
//
// The changed files are written to a scratch directory of their own; the
// directory graded (a learner's, or a solve's) is only read.
package labtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/labrun/labrun/actions"
	"github.com/labrun/labrun/internal/lang/keypath"
	"github.com/labrun/labrun/internal/leaf/outdir"
	"github.com/labrun/labrun/runner"
)

// Finding is what grading one changed file found of the grader: a
// change check rejects naming the value is as it should be; any other
// is a defect of the lab (runner/grading.go's glossary: a finding is of
// the grader, a verdict of a learner's work).
type Finding int

const (
	// Rejected: the check failed, naming the changed value.
	Rejected Finding = iota
	// Survived: the check passed the wrong value.
	Survived
	// Declared: the check passed it because the author declared the
	// value loose, saying why.
	Declared
	// Unnamed: the check failed, but named another value, so a learner
	// would be sent to the wrong place.
	Unnamed
)

// Change is a mutant of a graded file, one value changed or one key
// removed, and what grading it found.
type Change struct {
	// File is the file's path relative to the output directory.
	File string
	// Path is the changed value; Now says what it became ("removed" for
	// a key taken out).
	Path keypath.Path
	Now  string
	Finding
	// Why: for Rejected, the problem that names the value; for Survived,
	// why the check accepted it; for Declared, the author's reason; for
	// Unnamed, the problem the check reported instead.
	Why string
}

// String is the line labrun test prints for the change.
func (c Change) String() string {
	what := fmt.Sprintf("%s: %s %s", c.File, c.Path, c.Now)
	switch c.Finding {
	case Survived:
		return what + " accepted: " + c.Why
	case Declared:
		return what + " accepted, declared loose: " + c.Why
	case Unnamed:
		return what + " rejected without naming it: " + c.Why
	}
	return what + " rejected: " + c.Why
}

// maxFile bounds what is read of a graded file, as check bounds it.
const maxFile = 4 << 20

// changeAll changes every value of each graded file of dir in turn,
// writes the changed file into scratch and grades it there. It returns
// every change with its finding, in file order.
func changeAll(files []*runner.GradedFile, dir, scratch *outdir.Dir) ([]Change, error) {
	var out []Change
	for _, f := range files {
		c := f.Comparison
		orig, err := dir.ReadFile(c.Path, maxFile)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c.Path, err)
		}
		muts, err := mutations(c.Kind, orig)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c.Path, err)
		}
		for _, m := range muts {
			if err := scratch.WriteFile(c.Path, m.content); err != nil {
				return nil, err
			}
			out = append(out, judge(c, m, f.Grade(scratch)))
		}
	}
	return out, nil
}

// judge turns what grading a changed file reported into a finding.
func judge(g *actions.Comparison, m mutation, problems []actions.Problem) Change {
	c := Change{File: g.Path, Path: m.path, Now: m.now}
	if len(problems) == 0 {
		l, loose := g.Loose(m.path)
		switch {
		case loose && l.Reason != "":
			c.Finding, c.Why = Declared, l.Reason
		case loose && g.Kind == "kv":
			c.Finding, c.Why = Survived, fmt.Sprintf("the check does not compare it (loose: [%s])", l.Path)
		case loose && len(l.Path) == len(m.path):
			c.Finding, c.Why = Survived, fmt.Sprintf("the check compares only its type (loose: [%s]; give the reason as loose: {%s: WHY} if on purpose)", l.Path, l.Path)
		case loose:
			c.Finding, c.Why = Survived, fmt.Sprintf("the check compares only the type of %s (loose: [%s])", l.Path, l.Path)
		default:
			c.Finding, c.Why = Survived, "the check passed the file"
		}
		return c
	}
	for _, p := range problems {
		if p.Path.Covers(m.path) {
			c.Finding, c.Why = Rejected, p.Text
			return c
		}
	}
	c.Finding, c.Why = Unnamed, problems[0].Text
	return c
}

// mutation is one changed copy of a file.
type mutation struct {
	path    keypath.Path
	now     string
	content []byte
}

func mutations(kind string, orig []byte) ([]mutation, error) {
	switch kind {
	case "json":
		return jsonMutations(orig)
	case "kv":
		return kvMutations(orig), nil
	}
	changed := append(bytes.TrimRight(append([]byte{}, orig...), "\n"), "\nchanged by labrun test\n"...)
	return []mutation{{now: "with a line added", content: changed}}, nil
}

// jsonMutations changes each value of a JSON file in turn: every scalar
// to another of its type, every key removed, an item added to an empty
// list.
func jsonMutations(orig []byte) ([]mutation, error) {
	if _, err := decode(orig); err != nil {
		return nil, fmt.Errorf("not valid JSON: %w", err)
	}
	var out []mutation
	var walk func(p keypath.Path, v any) error
	emit := func(p keypath.Path, now string, change func(parent any, last keypath.Seg) any) error {
		doc, _ := decode(orig)
		doc = apply(doc, p, change)
		b, err := json.MarshalIndent(doc, "", "  ")
		if err != nil {
			return err
		}
		out = append(out, mutation{path: p, now: now, content: append(b, '\n')})
		return nil
	}
	walk = func(p keypath.Path, v any) error {
		switch x := v.(type) {
		case map[string]any:
			for _, k := range slices.Sorted(maps.Keys(x)) {
				if err := emit(p.Key(k), "removed", nil); err != nil {
					return err
				}
				if err := walk(p.Key(k), x[k]); err != nil {
					return err
				}
			}
		case []any:
			if len(x) == 0 {
				return emit(p, `["changed"]`, func(any, keypath.Seg) any { return []any{"changed"} })
			}
			for i, item := range x {
				if err := walk(p.Index(i), item); err != nil {
					return err
				}
			}
		default:
			nv := other(x)
			b, _ := json.Marshal(nv)
			return emit(p, string(b), func(any, keypath.Seg) any { return nv })
		}
		return nil
	}
	doc, _ := decode(orig)
	return out, walk(nil, doc)
}

// apply returns doc with the value at p replaced by change's result, or
// removed when change is nil.
func apply(doc any, p keypath.Path, change func(any, keypath.Seg) any) any {
	if len(p) == 0 {
		return change(nil, keypath.Seg{})
	}
	seg := p[0]
	switch x := doc.(type) {
	case map[string]any:
		if len(p) == 1 && change == nil {
			delete(x, seg.Key)
			return x
		}
		x[seg.Key] = apply(x[seg.Key], p[1:], change)
	case []any:
		x[seg.Index] = apply(x[seg.Index], p[1:], change)
	}
	return doc
}

// other is a value of the same JSON type as x that differs from it.
func other(x any) any {
	switch v := x.(type) {
	case bool:
		return !v
	case json.Number:
		if i, err := strconv.ParseInt(v.String(), 10, 64); err == nil {
			return json.Number(strconv.FormatInt(i+1, 10))
		}
		f, _ := strconv.ParseFloat(v.String(), 64)
		return json.Number(strconv.FormatFloat(f+1, 'f', -1, 64))
	case string:
		return v + "x"
	}
	return "changed" // null
}

func decode(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	return v, dec.Decode(&v)
}

// kvMutations removes each key=value line, then changes its value.
func kvMutations(orig []byte) []mutation {
	lines := strings.SplitAfter(string(orig), "\n")
	var out []mutation
	for i, line := range lines {
		k, v, ok := strings.Cut(strings.TrimRight(line, "\n"), "=")
		if !ok {
			continue
		}
		p := keypath.Path{}.Key(strings.TrimSpace(k))
		nv := strings.TrimSpace(v) + "x"
		if n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil {
			nv = strconv.FormatInt(n+1, 10)
		}
		out = append(out,
			mutation{path: p, now: "removed", content: []byte(join(lines[:i], "", lines[i+1:]))},
			mutation{path: p, now: nv, content: []byte(join(lines[:i], k+"="+nv+"\n", lines[i+1:]))})
	}
	return out
}

func join(before []string, mid string, after []string) string {
	return strings.Join(before, "") + mid + strings.Join(after, "")
}
