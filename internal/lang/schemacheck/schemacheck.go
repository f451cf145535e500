// Package schemacheck checks JSON values against JSON Schema files with
// github.com/santhosh-tekuri/jsonschema/v6 (all of 2020-12 and draft-07,
// format assertions on) and words what it finds the way labrun words every
// error: a problem names the instance location (/backends/0) and says what
// was found and what was expected; a schema that does not compile names
// file:line:col inside the schema file. The library does the validating;
// this package only loads, locates and words.
package schemacheck

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/labrun/labrun/internal/lang/diag"
	"github.com/labrun/labrun/internal/lang/regularfile"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Schema is a compiled schema file.
type Schema struct {
	file string
	s    *jsonschema.Schema
}

// MaxFileSize bounds a schema file, as the loader bounds a playbook.
const MaxFileSize = 4 << 20

// Load reads and compiles a schema file. A missing or unreadable file gives
// the *fs.PathError; a schema that is not valid JSON or not a valid schema
// gives a *diag.Error at the offending place in the file.
func Load(path string) (*Schema, error) {
	data, err := readFile(path)
	if tl := (*regularfile.TooLargeError)(nil); errors.As(err, &tl) {
		return nil, diag.Errorf(diag.Pos{File: path, Line: 1, Col: 1}, "schema is larger than %d MiB", MaxFileSize>>20)
	}
	if err != nil {
		return nil, err
	}
	key := cacheKey{path: path, sum: sha256.Sum256(data)}
	cache.Lock()
	s, ok := cache.m[key]
	cache.Unlock()
	if ok {
		return s, nil
	}
	s, err = Parse(path, data)
	if err != nil {
		return nil, err
	}
	cache.Lock()
	cache.m[key] = s
	cache.Unlock()
	return s, nil
}

// cache keeps compiled schemas by path and content: compiling checks the
// schema against its metaschema (about 1 ms for a lab schema), and a
// schema is loaded once by validate and again by every write that uses
// it, in a loop once per item. A changed file has a new key.
var cache = struct {
	sync.Mutex
	m map[cacheKey]*Schema
}{m: map[cacheKey]*Schema{}}

type cacheKey struct {
	path string
	sum  [sha256.Size]byte
}

// Parse compiles schema text; file names it in errors and is the base of
// relative $refs to other schema files.
func Parse(file string, data []byte) (*Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return nil, jsonError(file, data, err)
	}
	if err := checkKeywords(file, data, doc); err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(file)
	if err != nil {
		return nil, err
	}
	loc := (&url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}).String()
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	c.UseLoader(jsonschema.SchemeURLLoader{"file": fileLoader{}})
	if err := c.AddResource(loc, doc); err != nil {
		return nil, diag.Errorf(diag.Pos{File: file}, "%v", err)
	}
	s, err := c.Compile(loc)
	if err != nil {
		return nil, compileError(file, data, doc, err)
	}
	return &Schema{file: file, s: s}, nil
}

// readFile reads a schema file: a regular file of at most MaxFileSize
// bytes (a FIFO is refused without waiting on it).
func readFile(path string) ([]byte, error) { return regularfile.Read(path, MaxFileSize) }

// fileLoader reads the schema files a $ref names as Load reads the
// schema itself (the library's own loader would block on a FIFO).
type fileLoader struct{}

func (fileLoader) Load(url string) (any, error) {
	path, err := jsonschema.FileLoader{}.ToFile(url)
	if err != nil {
		return nil, err
	}
	data, err := readFile(path)
	if err != nil {
		return nil, err
	}
	return jsonschema.UnmarshalJSON(bytes.NewReader(data))
}

// jsonError places a JSON syntax error on its line and column.
func jsonError(file string, data []byte, err error) error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		line, col := lineCol(data, int(se.Offset)-1) // Offset is just past the bad byte
		return diag.Errorf(diag.Pos{File: file, Line: line, Col: col}, "schema is not valid JSON: %v", se)
	}
	return diag.Errorf(diag.Pos{File: file, Line: 1, Col: 1}, "schema is not valid JSON: %v", err)
}

// compileError words what the library found wrong with a schema, at the
// place in the file it points to.
func compileError(file string, data []byte, doc any, err error) error {
	at := func(ptr string) diag.Pos { return pointerPos(file, data, ptr) }
	var sve *jsonschema.SchemaValidationError
	if errors.As(err, &sve) {
		var ve *jsonschema.ValidationError
		if errors.As(sve.Err, &ve) {
			if ps := Problems(doc, ve); len(ps) > 0 {
				p := ps[0]
				return diag.Errorf(at(p.Path), "not a valid JSON Schema: %s", p.Msg)
			}
		}
		return diag.Errorf(at(""), "not a valid JSON Schema: %v", sve.Err)
	}
	var nf *jsonschema.JSONPointerNotFoundError
	if errors.As(err, &nf) {
		return diag.Errorf(at(""), "$ref %s points to nothing in the schema", fragmentOrURL(nf.URL))
	}
	var le *jsonschema.LoadURLError
	if errors.As(err, &le) {
		var pe *fs.PathError
		if errors.As(le.Err, &pe) {
			return diag.Errorf(at(""), "$ref to %s: %v", pe.Path, pe.Err)
		}
		if !strings.HasPrefix(le.URL, "file:") {
			return diag.Errorf(at(""), "$ref to %s: only schema files on this machine are read, never the network", le.URL)
		}
		return diag.Errorf(at(""), "$ref to %s: %v", le.URL, le.Err)
	}
	return diag.Errorf(at(""), "not a valid JSON Schema: %v", err)
}

func fragment(u string) string {
	_, frag, _ := strings.Cut(u, "#")
	return frag
}

func fragmentOrURL(u string) string {
	if f := fragment(u); f != "" {
		return "#" + f
	}
	return u
}

// Validate checks a value and returns every problem, ordered by instance
// location. The value may be anything that marshals to JSON (ordered maps
// and typed results validate like the file they become).
func (s *Schema) Validate(v any) []Problem {
	doc, err := normalize(v)
	if err != nil {
		return []Problem{{Msg: fmt.Sprintf("cannot be checked: %v", err)}}
	}
	err = s.s.Validate(doc)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return []Problem{{Msg: err.Error()}}
	}
	return Problems(doc, ve)
}

// normalize turns Go values into the JSON data model the library reads,
// by a JSON round trip that keeps numbers exact.
func normalize(v any) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return jsonschema.UnmarshalJSON(bytes.NewReader(b))
}

// lineCol turns a byte offset into a 1-based line and column.
func lineCol(data []byte, off int) (int, int) {
	off = min(max(off, 0), len(data))
	line := 1 + bytes.Count(data[:off], []byte{'\n'})
	col := off - bytes.LastIndexByte(data[:off], '\n')
	return line, col
}

// sortedKeys returns a map's keys in order, for stable messages.
func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
