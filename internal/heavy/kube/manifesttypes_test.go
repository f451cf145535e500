package kube

import (
	"reflect"
	"testing"

	"github.com/labrun/labrun/internal/lang/diag"
	"github.com/labrun/labrun/internal/lang/kubeschema"
)

// validate types the scalars of a manifest as apply sends them: for each
// spelling, the value kubeschema reads (and checks against the kind's
// schema) is the one DecodeText hands the API server, to the type.
func TestManifestTypesAsSent(t *testing.T) {
	src := []byte(`apiVersion: v1
kind: ConfigMap
metadata: {name: types}
data:
  yesWord: yes
  quoted: "yes"
  yLetter: y
  offWord: off
  octal: 0644
  hex: 0x1F
  underscores: 1_000
  exponent: 1e3
  float: 1.5
  tilde: ~
  date: 2001-12-14
  plain: text
  block: |
    text
  number: "3"
  negative: -7
`)
	sent, err := DecodeText("m", src)
	if err != nil {
		t.Fatal(err)
	}
	docs, err := kubeschema.Documents(src, func(int, int) diag.Pos { return diag.Pos{} })
	if err != nil {
		t.Fatal(err)
	}
	checked, _ := docs[0].Node.Lookup("data").Plain()
	want := sent[0].Object.Object["data"].(map[string]any)
	got := checked.(map[string]any)
	n := 0
	for k, w := range want {
		n++
		g := got[k]
		if reflect.TypeOf(g) != reflect.TypeOf(w) && !(isWhole(g) && isWhole(w)) {
			t.Errorf("%s: validate reads %#v (%T), apply sends %#v (%T)", k, g, g, w, w)
		}
	}
	if n < 15 {
		t.Errorf("only %d values compared", n)
	}
}

// isWhole reports whether v is a number the JSON apply sends writes
// without a fraction (1e3 is sent as 1000), which both sides check as
// an integer.
func isWhole(v any) bool {
	switch v := v.(type) {
	case int64:
		return true
	case float64:
		return v == float64(int64(v))
	}
	return false
}
