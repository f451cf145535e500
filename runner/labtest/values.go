package labtest

import (
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/labrun/labrun/actions"
	"github.com/labrun/labrun/internal/lang/eval"
	"github.com/labrun/labrun/internal/lang/syntax"
	"github.com/labrun/labrun/runner"
)

// The nondeterminism behind a task that did not pass every run of
// Repeat: what its grading read in each run, compared between runs. That
// is the values of its files, as the solve wrote them and as the check
// expected them from what it read, and the results its steps'
// expressions read (steps.ID.field, and result.field in their own
// assertions), in the solve and in the check. Only what the grading
// reads is kept: a whole object a step got holds uids and timestamps
// that differ every run and explain nothing. A value that differed is
// named with the runs each of its values was seen in; those whose values
// tell the passing runs from the failing ones come first.

// Differed is a value a task's grading read that differed between runs.
type Differed struct {
	// Key names it: "parity.json count (written)" (the file as the solve
	// wrote it), "parity.json count (expected)" (as the check expected
	// it), "steps.read.stdout (check)".
	Key string `json:"key"`
	// Values are its values (JSON, cut around where they differ when
	// long), each with the runs it was seen in, in the order first seen.
	Values []Seen `json:"values"`
	// Separates: no value was seen both in a run the task passed and in
	// one it failed, so the value tells them apart.
	Separates bool `json:"separates"`
}

// Seen is one value of a Differed and the runs it was seen in.
type Seen struct {
	Value  string `json:"value"`
	Passed []int  `json:"passed,omitempty"`
	Failed []int  `json:"failed,omitempty"`
}

// String is the line labrun test prints for it.
func (d Differed) String() string {
	var parts []string
	for _, s := range d.Values {
		parts = append(parts, s.Value+" in "+s.runs())
	}
	return d.Key + ": " + strings.Join(parts, "; ")
}

// runs lists the runs a value was seen in, the failed ones marked:
// "runs 1, 3 (failed), 4".
func (s Seen) runs() string {
	all := slices.Sorted(slices.Values(append(slices.Clone(s.Passed), s.Failed...)))
	var words []string
	for _, n := range all {
		w := strconv.Itoa(n)
		if slices.Contains(s.Failed, n) {
			w += " (failed)"
		}
		words = append(words, w)
	}
	if len(all) == 1 {
		return "run " + words[0]
	}
	return "runs " + strings.Join(words, ", ")
}

// absent is the value of a key a run did not read (its step did not run).
const absent = "(none)"

// maxLeaves bounds the values kept of one thing read (a list of pods, a
// conntrack table); maxValue the length of one value shown.
const (
	maxLeaves = 200
	maxValue  = 80
)

// valueSet is what a task's grading read in one run, by key, and the
// keys in the order read: the plan's order of steps, a file before what
// its values read, the solve before the check.
type valueSet struct {
	m     map[string]string
	order []string
}

func (vs *valueSet) set(key, value string) {
	if vs.m == nil {
		vs.m = map[string]string{}
	}
	if _, ok := vs.m[key]; !ok {
		vs.order = append(vs.order, key)
	}
	vs.m[key] = value
}

// taskValues are the values task's grading read in a run (task nil: the
// whole lab's).
func taskValues(p *runner.Plan, task *syntax.Task, solve, check *runner.Outcome) *valueSet {
	vals := &valueSet{}
	passes := []struct {
		name string
		out  *runner.Outcome
		recs map[string]*runner.StepRecord
	}{{"solve", solve, records(solve)}, {"check", check, records(check)}}
	for _, s := range p.Steps {
		if (task != nil && s.Task != task) || s.Parallel != nil {
			continue
		}
		if w := writeOf(passes[1].recs[s.ID]); w != nil {
			name := fileName(check, w.Path)
			if w.File != nil { // nil: the solve did not write it
				leaves(vals, name, "written", w.File)
			}
			leaves(vals, name, "expected", w.Data)
		} else if w := writeOf(passes[0].recs[s.ID]); w != nil {
			leaves(vals, fileName(solve, w.Path), "written", w.Data)
		}
		for _, e := range exprsOf(s) {
			for _, pass := range passes {
				for _, chain := range e.ReadsUnder(eval.RootSteps) {
					if len(chain) > 0 {
						read(vals, pass.recs[chain[0]], chain[0], chain[1:], pass.name)
					}
				}
				for _, chain := range e.ReadsUnder(eval.RootResult) {
					read(vals, pass.recs[s.ID], s.ID, chain, pass.name)
				}
			}
		}
	}
	return vals
}

// records are an outcome's step records by id.
func records(o *runner.Outcome) map[string]*runner.StepRecord {
	m := map[string]*runner.StepRecord{}
	for _, r := range o.Steps {
		m[r.ID] = r
	}
	return m
}

// writeOf is the result of a write step's record, nil for any other.
func writeOf(rec *runner.StepRecord) *actions.WriteResult {
	if rec == nil {
		return nil
	}
	switch w := rec.Result.(type) {
	case *actions.WriteResult:
		return w
	case actions.WriteResult:
		return &w
	}
	return nil
}

// fileName is a written file's path relative to the output directory.
func fileName(o *runner.Outcome, path string) string {
	if rel, err := filepath.Rel(o.OutputDir, path); err == nil && o.OutputDir != "" && !strings.HasPrefix(rel, "..") {
		return rel
	}
	return filepath.Base(path)
}

// exprsOf are every expression of a step: its spec's, when, until,
// failWhen and assertions.
func exprsOf(s *runner.StepPlan) []*eval.Expr {
	var out []*eval.Expr
	if s.Spec != nil {
		out = append(out, s.Spec.Exprs()...)
	}
	for _, e := range []*eval.Expr{s.When, s.Until} {
		if e != nil {
			out = append(out, e)
		}
	}
	if s.FailWhen != nil {
		out = append(out, s.FailWhen.That)
	}
	for _, a := range s.Asserts {
		out = append(out, a.That)
	}
	return out
}

// read keeps the value at path (field names, as expressions and the
// result's JSON both spell them) of the result of step id, as pass read
// it. A write step's result is its file, kept whole by taskValues.
func read(vals *valueSet, rec *runner.StepRecord, id string, path []string, pass string) {
	if rec == nil || writeOf(rec) != nil {
		return
	}
	data, err := rec.ResultJSON()
	if err != nil || data == nil {
		return
	}
	v, err := decode(data)
	if err != nil {
		return
	}
	for _, name := range path {
		m, ok := v.(map[string]any)
		if !ok {
			break // a method or an index: keep what holds it
		}
		next, ok := m[name]
		if !ok {
			break
		}
		v = next
	}
	key := "steps." + id
	for _, name := range path {
		key += "." + name
	}
	leaves(vals, key, pass, v)
}

// leaves keeps each scalar under v (decoded JSON or a result's Go value),
// and each empty object or list, as "BASE PATH (SUFFIX)", at most
// maxLeaves of them.
func leaves(vals *valueSet, base, suffix string, v any) {
	if b, err := json.Marshal(v); err == nil {
		if d, err := decode(b); err == nil {
			v = d
		}
	}
	n := 0
	var walk func(path string, v any)
	walk = func(path string, v any) {
		if n >= maxLeaves {
			return
		}
		switch x := v.(type) {
		case map[string]any:
			if len(x) > 0 {
				for _, k := range slices.Sorted(maps.Keys(x)) {
					walk(below(path, k), x[k])
				}
				return
			}
		case []any:
			if len(x) > 0 {
				for i, item := range x {
					walk(fmt.Sprintf("%s[%d]", path, i), item)
				}
				return
			}
		}
		b, _ := json.Marshal(v)
		name := base
		if path != "" {
			name += sep(base, path) + path
		}
		vals.set(name+" ("+suffix+")", string(b))
		n++
	}
	walk("", v)
}

// sep joins a base to a path below it: a file's name and a key by a
// space, a step's field and a key by a dot, and an index by nothing.
func sep(base, path string) string {
	switch {
	case strings.HasPrefix(path, "["):
		if !strings.HasPrefix(base, "steps.") {
			return " "
		}
		return ""
	case strings.HasPrefix(base, "steps."):
		return "."
	}
	return " "
}

// below is the path of key below path.
func below(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// differed compares the values task i's grading read in each run and
// returns those that differed: those that tell the passing runs from the
// failing ones first, each group in the order they were read.
func differed(runs []Run, i int) []Differed {
	var keys []string
	for _, r := range runs {
		if vs := r.Tasks[i].values; vs != nil {
			for _, k := range vs.order {
				if !slices.Contains(keys, k) {
					keys = append(keys, k)
				}
			}
		}
	}
	var out []Differed
	for _, k := range keys {
		var seen []Seen
		for _, r := range runs {
			var v string
			ok := false
			if vs := r.Tasks[i].values; vs != nil {
				v, ok = vs.m[k]
			}
			if !ok {
				v = absent
			}
			j := slices.IndexFunc(seen, func(s Seen) bool { return s.Value == v })
			if j < 0 {
				seen = append(seen, Seen{Value: v})
				j = len(seen) - 1
			}
			if r.Tasks[i].Passed {
				seen[j].Passed = append(seen[j].Passed, r.Number)
			} else {
				seen[j].Failed = append(seen[j].Failed, r.Number)
			}
		}
		if len(seen) < 2 {
			continue
		}
		d := Differed{Key: k, Values: seen, Separates: true}
		for _, s := range seen {
			if len(s.Passed) > 0 && len(s.Failed) > 0 {
				d.Separates = false
			}
		}
		cutAround(d.Values)
		out = append(out, d)
	}
	slices.SortStableFunc(out, func(a, b Differed) int {
		switch {
		case a.Separates == b.Separates:
			return 0
		case a.Separates:
			return -1
		}
		return 1
	})
	return out
}

// cutAround shortens long values to maxValue characters around where
// each first differs from the value most like it, marking the cuts with
// "…".
func cutAround(seen []Seen) {
	var rs [][]rune
	for _, s := range seen {
		rs = append(rs, []rune(s.Value))
	}
	for i, r := range rs {
		if len(r) <= maxValue {
			continue
		}
		at := 0
		for j, o := range rs {
			if j != i {
				at = max(at, commonPrefix(r, o))
			}
		}
		start := min(max(0, at-maxValue/4), len(r)-maxValue)
		v := string(r[start : start+maxValue])
		if start > 0 {
			v = "…" + v
		}
		if start+maxValue < len(r) {
			v += "…"
		}
		seen[i].Value = v
	}
}

// commonPrefix is how many runes a and b share from their start.
func commonPrefix(a, b []rune) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}
