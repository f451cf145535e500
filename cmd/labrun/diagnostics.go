package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/labrun/labrun/internal/lang/diag"
	"github.com/labrun/labrun/internal/lang/visible"
)

// printLoadError prints diagnostics for a person, each its one
// file:line:col line followed by the source line it is about, and returns
// exit 2.
func printLoadError(stderr io.Writer, err error) int {
	diag.Render(stderr, diagnostics("", err), nil)
	return exitInvalid
}

// diagnostics are the positioned errors of a failed load; an error
// without a position is placed on path, the playbook file.
func diagnostics(path string, err error) []*diag.Error {
	var list diag.List
	if errors.As(err, &list) {
		return list
	}
	if one, ok := err.(*diag.Error); ok {
		return []*diag.Error{one}
	}
	return []*diag.Error{{Pos: diag.Pos{File: path}, Msg: err.Error()}}
}

// printJSONProblems writes the errors as one JSON array: file, line and
// column (0 when unknown) and the message. encoding/json escapes control
// characters but DEL, C1 and bidi controls; visible.Text escapes those
// too, as JSON escapes, so the array reads back the same.
func printJSONProblems(w io.Writer, problems []*diag.Error) {
	type problem struct {
		File    string `json:"file"`
		Line    int    `json:"line"`
		Column  int    `json:"column"`
		Message string `json:"message"`
	}
	out := make([]problem, 0, len(problems))
	for _, p := range problems {
		out = append(out, problem{File: p.Pos.File, Line: p.Pos.Line, Column: p.Pos.Col, Message: p.Msg})
	}
	b, _ := json.MarshalIndent(out, "", "  ")
	fmt.Fprintln(w, visible.Text(string(b)))
}

// githubCommand renders an error as a GitHub Actions workflow command, so
// a lab repository's CI shows it on the playbook's line. Property values
// and the message are escaped as the runner expects, after visible.Text
// (the log shows the command's message as it is).
func githubCommand(p *diag.Error) string {
	prop := strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C")
	msg := strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A")
	cmd := "::error file=" + prop.Replace(visible.Text(p.Pos.File))
	if p.Pos.Line > 0 {
		cmd += fmt.Sprintf(",line=%d", p.Pos.Line)
		if p.Pos.Col > 0 {
			cmd += fmt.Sprintf(",col=%d", p.Pos.Col)
		}
	}
	return cmd + ",title=labrun validate::" + msg.Replace(visible.Text(p.Msg))
}
