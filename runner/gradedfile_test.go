package runner

import (
	"fmt"
	"testing"
)

// A failed assertion of a graded file names the values of result.file it
// reads by name: a chain ends at an index or a computed key, the file as
// a whole is named by an empty path, and text inside a string reads
// nothing.
func TestFileReads(t *testing.T) {
	p := compile(t, `name: reads
vars: {out: /tmp/unused}
outputDir: ${{ vars.out }}
steps:
  - id: w
    write: {path: a.json, json: {after: {identity: 1}, pods: [{ip: a}]}}
    assert:
      - that: 'result.file.after.identity == 1 && len(result.file) > 0'
      - that: 'result.file.pods[0].ip != "result.file.x"'
      - that: 'result.data.after.identity == 1'
`)
	want := []string{"[after.identity (the whole file)]", "[pods]", "[]"}
	for i, a := range p.Steps[0].Asserts {
		var got []string
		for _, path := range fileReads(a.That) {
			got = append(got, path.String())
		}
		if s := fmt.Sprint(got); s != want[i] {
			t.Errorf("%s: reads %s, want %s", a.That.Src, s, want[i])
		}
	}
}
