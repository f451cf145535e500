package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/labrun/labrun/internal/lang/diag"
	"github.com/labrun/labrun/internal/lang/schemacheck"
	"github.com/labrun/labrun/runner"
	"github.com/labrun/labrun/schemas"
)

// Previous is what check --rerun-failed takes from an earlier JSON
// report: which playbook it is of and what became of each task, each with
// its place in the file for messages.
type Previous struct {
	File           string
	Name           string
	Mode           string
	PlaybookDigest string
	Tasks          []PreviousTask
	data           []byte
}

// PreviousTask is one task of an earlier report.
type PreviousTask struct {
	Number int
	ID     string
	Status runner.Status
	index  int // in the report's tasks
}

// DigestPos is where the report gives its playbookDigest.
func (p *Previous) DigestPos() diag.Pos { return pointerPos(p.File, p.data, "/playbookDigest") }

// TaskPos is where the report gives task t.
func (p *Previous) TaskPos(t PreviousTask) diag.Pos {
	return pointerPos(p.File, p.data, "/tasks/"+strconv.Itoa(t.index))
}

// MaxReadSize bounds a report read back: it holds every step's result
// (the agent's conntrack table among them), and it is a file anyone may
// hand labrun.
const MaxReadSize = 64 << 20

// Read reads a JSON report written by labrun check or run, which is
// untrusted input: it must be JSON and match schemas/report.schema.json
// (labrun's own copy of it; the steps' results, which the schema takes
// as any object or array, are skimmed over: skim.go). Every problem is a *diag.Error at its place
// in the file (a diag.List when there are several); a file that cannot be
// read gives its error.
func Read(path string) (*Previous, error) {
	data, err := readBounded(path)
	if err != nil {
		return nil, err
	}
	if !json.Valid(data) {
		var v any
		return nil, syntaxError(path, data, json.Unmarshal(data, &v))
	}
	head := skim(data)
	dec := json.NewDecoder(bytes.NewReader(head))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return nil, syntaxError(path, data, err)
	}
	schema, err := schemacheck.Parse(schemas.ReportFile, schemas.Report)
	if err != nil {
		return nil, fmt.Errorf("labrun's own report schema: %w", err)
	}
	var errs diag.List
	for _, p := range schema.Validate(doc) {
		line, col := schemacheck.Locate(data, p.Path)
		errs.Add(diag.Pos{File: path, Line: line, Col: col}, "not a labrun JSON report (%s): %s", schemas.ReportFile, p)
	}
	if len(errs) > 0 {
		return nil, errs
	}
	var r struct {
		Name, Mode, PlaybookDigest string
		Tasks                      []struct {
			Number int
			ID     string
			Status runner.Status
		}
	}
	if err := json.Unmarshal(head, &r); err != nil {
		return nil, diag.Errorf(diag.Pos{File: path, Line: 1, Col: 1}, "%v", err)
	}
	prev := &Previous{File: path, Name: r.Name, Mode: r.Mode, PlaybookDigest: r.PlaybookDigest, data: data}
	for i, t := range r.Tasks {
		prev.Tasks = append(prev.Tasks, PreviousTask{Number: t.Number, ID: t.ID, Status: t.Status, index: i})
	}
	return prev, nil
}

// readBounded reads a file of at most MaxReadSize bytes.
func readBounded(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxReadSize+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxReadSize {
		return nil, diag.Errorf(diag.Pos{File: path, Line: 1, Col: 1}, "a report is at most %d MiB; this file is larger", MaxReadSize>>20)
	}
	return data, nil
}

// syntaxError places a JSON decoding error on its line and column.
func syntaxError(path string, data []byte, err error) error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return diag.Errorf(at(path, data, int(se.Offset)-1), "not JSON: %v", se) // Offset is just past the bad byte
	}
	return diag.Errorf(diag.Pos{File: path, Line: 1, Col: 1}, "not JSON: %v", err)
}

// at is the position of byte offset off in data.
func at(path string, data []byte, off int) diag.Pos {
	off = min(max(off, 0), len(data))
	line := 1 + bytes.Count(data[:off], []byte{'\n'})
	return diag.Pos{File: path, Line: line, Col: off - bytes.LastIndexByte(data[:off], '\n')}
}

// pointerPos is where the value at a JSON pointer is written in data; it
// walks the whole document, so it is asked only for a message.
func pointerPos(path string, data []byte, ptr string) diag.Pos {
	line, col := schemacheck.Locate(data, ptr)
	return diag.Pos{File: path, Line: line, Col: col}
}
