package syntax

import (
	"bytes"
	"errors"
	"io"
	"os"
	"reflect"
	"unicode/utf8"

	"github.com/labrun/labrun/internal/lang/diag"
	"github.com/labrun/labrun/internal/lang/yamlnode"
	"gopkg.in/yaml.v3"
)

// Reading a playbook's bytes into the one YAML mapping the decoder walks,
// refusing what is not hand-written YAML text before yaml.v3 sees it.

// MaxFileSize bounds what the loader reads: playbooks are hand-written, and
// a bound keeps a stray binary or a generated monster from eating memory.
const MaxFileSize = 16 << 20

// LoadFile reads and checks a playbook file. actions lists the action names
// that may appear as a step key. All shape errors are returned together.
func LoadFile(path string, actions []string) (*Playbook, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, diag.Errorf(diag.Pos{File: path}, "cannot read playbook: %v", unwrapPathError(err))
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, diag.Errorf(diag.Pos{File: path}, "cannot read playbook: %v", unwrapPathError(err))
	}
	return Load(path, data, actions)
}

// unwrapPathError drops the *os.PathError around err: the message names
// the file already.
func unwrapPathError(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// Load parses playbook text; file names the source in errors.
func Load(file string, data []byte, actions []string) (*Playbook, error) {
	root, err := parseDocument(file, data)
	if err != nil {
		return nil, err
	}
	d := newDecoder(file, actions)
	pb := &Playbook{File: file, Root: root, Pos: d.pos(root), Source: data}
	if d.checkNoAliases(root) {
		for _, p := range yamlnode.Tags(root) {
			d.errorf(p.Node, "%s", p.Msg)
		}
	}
	if len(d.errs) > 0 {
		return nil, d.errs.Sort()
	}
	d.decodeStruct(root, reflect.ValueOf(pb).Elem())
	d.checkPlaybook(pb)
	if len(d.errs) > 0 {
		return nil, d.errs.Sort()
	}
	return pb, nil
}

// parseDocument turns bytes into the one mapping node of a playbook,
// rejecting what is not a text YAML mapping before yaml.v3 sees it.
func parseDocument(file string, data []byte) (*yaml.Node, error) {
	at := func(line, col int, format string, args ...any) error {
		return diag.Errorf(diag.Pos{File: file, Line: line, Col: col}, format, args...)
	}
	if len(data) > MaxFileSize {
		return nil, at(1, 1, "playbook is larger than %d MiB; expected a hand-written YAML file", MaxFileSize>>20)
	}
	if i := bytes.IndexByte(data, 0); i >= 0 {
		line, col := lineCol(data, i)
		return nil, at(line, col, "not a YAML text file: NUL byte at offset %d", i)
	}
	if !utf8.Valid(data) {
		i := firstInvalidUTF8(data)
		line, col := lineCol(data, i)
		return nil, at(line, col, "not a YAML text file: invalid UTF-8 at offset %d", i)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, at(1, 1, "empty playbook: expected a mapping with name and steps")
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, at(1, 1, "empty playbook: expected a mapping with name and steps")
		}
		return nil, yamlError(file, err, data)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		return nil, at(extra.Line, extra.Column, "a playbook is one YAML document; found a second one (remove the --- separator)")
	} else if !errors.Is(err, io.EOF) {
		return nil, yamlError(file, err, data)
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		return nil, at(1, 1, "empty playbook: expected a mapping with name and steps")
	}
	root := doc.Content[0]
	if root.Kind == yaml.ScalarNode && root.Tag == "!!null" {
		return nil, at(root.Line, root.Column, "empty playbook: expected a mapping with name and steps")
	}
	if root.Kind != yaml.MappingNode {
		return nil, at(root.Line, root.Column, "a playbook must be a YAML mapping with name and steps, found %s", yamlnode.Describe(root))
	}
	return root, nil
}

// lineCol is the line and column (1-based, in bytes) of offset off.
func lineCol(data []byte, off int) (int, int) {
	line := 1 + bytes.Count(data[:off], []byte{'\n'})
	col := off - bytes.LastIndexByte(data[:off], '\n')
	return line, col
}

// firstInvalidUTF8 is the offset of the first byte that is not valid
// UTF-8, or len(data).
func firstInvalidUTF8(data []byte) int {
	for i := 0; i < len(data); {
		r, size := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && size <= 1 {
			return i
		}
		i += size
	}
	return len(data)
}
