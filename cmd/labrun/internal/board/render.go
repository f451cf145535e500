package board

import (
	"bytes"
	"embed"
	"html/template"
	"strconv"
	"sync"
	"time"
)

// The page's template, its style sheet and its script, embedded in labrun
// and inlined into every page: a board is one file that needs nothing
// else, opened from a disk, a CI artifact or a mail.
//
//go:embed page.html page.css page.js
var files embed.FS

// parsed is the page's template, parsed once.
var parsed = sync.OnceValues(func() (*template.Template, error) {
	css, err := files.ReadFile("page.css")
	if err != nil {
		return nil, err
	}
	js, err := files.ReadFile("page.js")
	if err != nil {
		return nil, err
	}
	funcs := template.FuncMap{
		// labrun's own files, not text of a playbook or a learner: the
		// only content inlined unescaped.
		"style":    func() template.CSS { return template.CSS(css) },
		"script":   func() template.JS { return template.JS(js) },
		"duration": duration,
		"when": func(t time.Time) string {
			if t.IsZero() {
				return ""
			}
			return t.Local().Format("2006-01-02 15:04:05 MST")
		},
		"pct":   percent,
		"add":   func(a, b int) int { return a + b },
		"state": stateOf,
	}
	return template.New("page.html").Funcs(funcs).ParseFS(files, "page.html")
})

// HTML renders the page.
func (p *Page) HTML() ([]byte, error) {
	t, err := parsed()
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if err := t.Execute(&b, p); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// percent is a share as the page prints it: one decimal at most, "62.5%",
// "100%".
func percent(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) + "%" }
