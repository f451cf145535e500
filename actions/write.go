package actions

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/labrun/labrun/internal/lang/diag"
	"github.com/labrun/labrun/internal/lang/eval"
	"github.com/labrun/labrun/internal/lang/schemacheck"
	"github.com/labrun/labrun/internal/leaf/outdir"
)

// WriteSpec renders one output file of a lab. Exactly one of json, text
// and kv gives the content.
type WriteSpec struct {
	Path   string            `yaml:"path" required:"true" doc:"File to write, relative to the playbook's outputDir (or absolute inside it, when outputDir holds no expression); not inside .labrun, which keeps the journal."`
	JSON   any               `yaml:"json" doc:"Value written as JSON; mapping keys keep the order written here and numbers stay numbers."`
	Text   *string           `yaml:"text" doc:"Text written as is (a final newline is added when missing)."`
	KV     any               `yaml:"kv" doc:"Mapping written as key=value lines, in order."`
	Schema string            `yaml:"schema" doc:"JSON Schema file (relative to the playbook) the JSON content must satisfy; checked before the file is written."`
	Loose  LoosePaths        `yaml:"loose" doc:"Values whose content changes from run to run (a duration, say), which labrun check compares by type only: a list of paths (seconds, after.identity, pods[*].ip), or a mapping of path: why its value may differ (labrun test then accepts the path as loose on purpose)."`
	Hints  map[string]string `yaml:"hints" doc:"Hints shown by labrun check when a learner's value is wrong, by path (key, after.identity, pods[*].ip); the hint of the longest path that holds the value applies."`
}

// LoosePaths is the value of a write step's loose key: a list of paths,
// or a mapping of path to the reason its value may differ. A type of its
// own so that the editor schema can say so.
type LoosePaths any

// WriteResult describes the file written (or, in check mode, compared).
type WriteResult struct {
	// Path is the file's absolute path in the output directory.
	Path string `json:"path" expr:"path"`
	// Bytes is the size of Content in bytes.
	Bytes int `json:"bytes" expr:"bytes"`
	// Content is the file's text as labrun renders it (indented JSON,
	// key=value lines or the text, ending in a newline): what a run
	// writes, and in labrun check what the learner's file is compared
	// with, not the learner's file (that is File).
	Content string `json:"content" expr:"content"`
	// Data is the content as values: the json as maps and lists, the kv
	// pairs as a map, the text as a string, for assertions such as
	// result.data.kube_svc_lines == 0.
	Data any `json:"data" expr:"data"`
	// File is the file as it stands: in a run, what was written (Data);
	// in labrun check, the learner's file (its JSON, or its key=value
	// pairs), or null when it could not be read or parsed. An assertion
	// over result.file holds the same in both modes, so it can grade what
	// the comparison with labrun's values cannot, e.g. that a learner's
	// before_hash (of pods gone by the time of grading) differs from
	// result.data.after_hash.
	File any `json:"file" expr:"file" nullable:"true"`
	// Problems lists what was wrong in a learner's file (check mode),
	// or why the file does not satisfy its schema; empty otherwise.
	Problems []string `json:"problems" expr:"problems"`
	// comparison is the comparison check made (check mode), for
	// ComparisonOf.
	comparison *Comparison
}

func init() {
	Register(Def[WriteSpec, WriteResult]{
		Name:    "write",
		Cost:    InProcess,
		Doc:     "Write an output file (JSON with ordered keys, text, or key=value lines) atomically inside the output directory, optionally checked against a JSON Schema. In check mode, compare the learner's file instead.",
		Mutates: false,
		// The file a step writes: parallel branches must not share one.
		WritesKey: "path",
		Run:       writeFile,
		Check:     checkWrite,
		Host:      writeHost,
	})
}

// writeHost: a run writes the lab's files (and labrun's journal) into the
// output directory; a check reads the learner's from it.
func writeHost(_ *WriteSpec, hc *HostContext) []HostNeed {
	dir := hc.OutputDir
	if dir == "" {
		dir = "(its path known only when labrun starts)"
	}
	if hc.Mode == Check {
		return []HostNeed{{
			What:  "the learner's files in the output directory " + dir + ", readable",
			InPod: "a volume holding them mounted there (a ConfigMap, or the learner's volume), readable by the pod's user",
		}}
	}
	return []HostNeed{{
		What:  "the output directory " + dir + ", writable (the lab's files, and labrun's journal in .labrun)",
		InPod: "a writable volume mounted there that the pod's user may write (labrun's image runs as user 65532)",
	}}
}

func checkWrite(spec *eval.Value, sc *StaticContext) diag.List {
	errs := exactlyOne(spec, "json", "text", "kv")
	if !sc.HasOutputDir {
		errs.Add(spec.Pos, "write needs the playbook's outputDir: every written file must stay inside it")
	}
	if p := spec.Lookup("path"); p != nil && sc.HasOutputDir {
		if lit, ok := p.Literal(); ok {
			s := fmt.Sprint(lit)
			switch {
			case filepath.IsAbs(s) && sc.OutputDir == "":
				errs.Add(p.Pos, "output path %s is absolute, and outputDir is only known when the lab runs; write it relative to outputDir", s)
			default:
				if _, err := outdir.Resolve(sc.OutputDir, s); err != nil {
					errs.Add(p.Pos, "%v", err)
				}
			}
		}
	}
	if s := spec.Lookup("schema"); s != nil {
		if lit, ok := s.Literal(); ok {
			path := fmt.Sprint(lit)
			if !filepath.IsAbs(path) {
				path = filepath.Join(sc.PlaybookDir, path)
			}
			if _, err := schemacheck.Load(path); err != nil {
				errs.Append(schemaError(s.Pos, err))
			}
		} else {
			errs.Add(s.Pos, "schema must be a fixed path, so it can be checked before the run")
		}
		if spec.Lookup("json") == nil {
			errs.Add(s.Pos, "schema applies to json content only")
		}
	}
	if kv := spec.Lookup("kv"); kv != nil {
		if kv.Keys() == nil && kv.IsLiteral() {
			errs.Add(kv.Pos, "kv must be a mapping of key: value")
		}
		for _, k := range kv.Keys() {
			if k == "" || strings.ContainsAny(k, "=\n") {
				errs.Add(kv.KeyPos(k), "kv key %q cannot be empty or contain = or a newline", k)
			}
		}
	}
	errs = append(errs, checkKeyPaths(spec, sc)...)
	return errs
}

// schemaError places a schema that cannot be used: a schema file that is
// wrong is reported where it is wrong; one that cannot be read, at the
// step's schema key.
func schemaError(at diag.Pos, err error) error {
	var de *diag.Error
	if errors.As(err, &de) {
		return de
	}
	return diag.Errorf(at, "schema: %v", unwrapPath(err))
}

// render produces the file content and its data form.
func render(spec *WriteSpec) ([]byte, any, error) {
	switch {
	case spec.JSON != nil:
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		if err := enc.Encode(spec.JSON); err != nil {
			return nil, nil, fmt.Errorf("cannot render JSON: %w", err)
		}
		return b.Bytes(), eval.Plain(spec.JSON), nil
	case spec.KV != nil:
		m, ok := spec.KV.(*eval.Map)
		if !ok {
			return nil, nil, fmt.Errorf("kv must be a mapping, got %s", eval.Format(spec.KV))
		}
		var b strings.Builder
		for _, k := range m.Keys {
			v := eval.Format(m.Values[k])
			if strings.ContainsAny(v, "\n\r") {
				return nil, nil, fmt.Errorf("kv value of %s contains a newline", k)
			}
			fmt.Fprintf(&b, "%s=%s\n", k, v)
		}
		return []byte(b.String()), eval.Plain(m), nil
	case spec.Text != nil:
		t := *spec.Text
		if t != "" && !strings.HasSuffix(t, "\n") {
			t += "\n"
		}
		return []byte(t), *spec.Text, nil
	}
	return nil, nil, errors.New("nothing to write: give json, text or kv")
}

func writeFile(ctx context.Context, rt *Runtime, spec *WriteSpec) (*WriteResult, error) {
	path, err := rt.ResolveOutput(spec.Path)
	if err != nil {
		// a path the playbook renders that names no file of the lab is
		// the lab's fault, not the learner's: placed at the step's path
		return nil, &SpecError{Key: "path", Text: spec.Path, Err: err}
	}
	abs := rt.Out.Abs(path)
	content, data, err := render(spec)
	if err != nil {
		return nil, err
	}
	res := &WriteResult{Path: abs, Bytes: len(content), Content: string(content), Data: data, File: data, Problems: []string{}}
	if spec.Schema != "" {
		schema, err := schemacheck.Load(rt.ResolveInput(spec.Schema))
		if err != nil {
			return res, err
		}
		if problems := schema.Validate(spec.JSON); len(problems) > 0 {
			for _, p := range problems {
				res.Problems = append(res.Problems, p.String())
			}
			return res, fmt.Errorf("%s does not satisfy %s: %s", filepath.Base(abs), spec.Schema, strings.Join(res.Problems, "; "))
		}
	}
	if rt.Mode == Check && rt.Support {
		return res, nil
	}
	g, err := newComparison(rt, spec, path)
	if err != nil {
		return res, err
	}
	if rt.Mode == Check {
		g.base = *res
		res, problems := g.Result(rt.Out)
		if len(problems) > 0 {
			return res, errors.New(strings.Join(res.Problems, "\n"))
		}
		return res, nil
	}
	if err := rt.Out.WriteFile(path, content); err != nil {
		return res, err
	}
	return res, nil
}

// maxLearnerFile bounds what check reads of a learner's file: an output
// of a lab is small, and a huge file must not fill labrun's memory.
const maxLearnerFile = 4 << 20

// maxQuote bounds what a message quotes of a learner's value, so that a
// file cannot fill a report (or carry much of anything into it).
const maxQuote = 80
