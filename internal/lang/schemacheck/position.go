package schemacheck

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/labrun/labrun/internal/lang/diag"
)

// pointerPos finds where a JSON pointer into the schema text is written:
// the key of an object member, the start of an array item. It falls back
// to the nearest enclosing place it finds, and to 1:1.
func pointerPos(file string, data []byte, ptr string) diag.Pos {
	at := offsets(data)
	for {
		if off, ok := at[ptr]; ok {
			line, col := lineCol(data, off)
			return diag.Pos{File: file, Line: line, Col: col}
		}
		i := bytes.LastIndexByte([]byte(ptr), '/')
		if i < 0 {
			return diag.Pos{File: file, Line: 1, Col: 1}
		}
		ptr = ptr[:i]
	}
}

// Locate returns the line and column in JSON text data where the value at
// a JSON pointer (a Problem's Path) is written, or its nearest enclosing
// value: a learner's file is graded with the place of each problem.
func Locate(data []byte, ptr string) (line, col int) {
	p := pointerPos("", data, ptr)
	return p.Line, p.Col
}

// offsets maps every JSON pointer of a document to the byte offset of its
// key (object members) or value (array items, the root). The text was
// already decoded once, so a syntax error here only ends the walk early.
func offsets(data []byte) map[string]int {
	w := &walker{dec: json.NewDecoder(bytes.NewReader(data)), data: data, at: map[string]int{}}
	w.value("")
	return w.at
}

type walker struct {
	dec  *json.Decoder
	data []byte
	at   map[string]int
}

// next is the offset where the next token starts, past the separators the
// decoder consumes without returning them.
func (w *walker) next() int {
	off := int(w.dec.InputOffset())
	for off < len(w.data) && bytes.IndexByte([]byte(" \t\r\n,:"), w.data[off]) >= 0 {
		off++
	}
	return off
}

func (w *walker) value(path string) bool {
	if _, ok := w.at[path]; !ok {
		w.at[path] = w.next()
	}
	tok, err := w.dec.Token()
	if err != nil {
		return false
	}
	switch tok {
	case json.Delim('{'):
		for w.dec.More() {
			start := w.next()
			k, err := w.dec.Token()
			if err != nil {
				return false
			}
			key, _ := k.(string)
			p := path + "/" + escape(key)
			w.at[p] = start
			if !w.value(p) {
				return false
			}
		}
		_, err = w.dec.Token()
	case json.Delim('['):
		for i := 0; w.dec.More(); i++ {
			if !w.value(path + "/" + strconv.Itoa(i)) {
				return false
			}
		}
		_, err = w.dec.Token()
	}
	return err == nil
}
