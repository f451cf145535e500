package eval

import (
	"reflect"
	"strings"
	"testing"
)

func TestSplitTemplate(t *testing.T) {
	tests := []struct {
		in   string
		want []segment
		err  string
	}{
		{in: "plain", want: []segment{{lit: "plain"}}},
		{in: "${{ a }}", want: []segment{{expr: "a", offset: 4, isExpr: true}}},
		{in: "x ${{a}} y", want: []segment{{lit: "x "}, {expr: "a", offset: 5, isExpr: true}, {lit: " y"}}},
		{in: `${{ "}}" }}`, want: []segment{{expr: `"}}"`, offset: 4, isExpr: true}}},
		{in: `${{ {"a": {"b": 1}} }}`, want: []segment{{expr: `{"a": {"b": 1}}`, offset: 4, isExpr: true}}},
		{in: "$${{ not }}", want: []segment{{lit: "${{ not }}"}}},
		{in: "${{ a }}${{ b }}", want: []segment{{expr: "a", offset: 4, isExpr: true}, {expr: "b", offset: 12, isExpr: true}}},
		{in: "${{ a ", err: "${{ has no closing }}"},
		{in: "${{ }}", err: "empty expression ${{ }}"},
		{in: "${{ 'x }}", err: "unterminated ' string in ${{ }} expression"},
		{in: "${{ a } }}", err: "unexpected } in ${{ }} expression"},
	}
	for _, tt := range tests {
		got, err := splitTemplate(tt.in)
		if tt.err != "" {
			if err == nil || err.Error() != tt.err {
				t.Errorf("splitTemplate(%q) error = %v, want %q", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("splitTemplate(%q) = %+v, %v; want %+v", tt.in, got, err, tt.want)
		}
	}
}

func FuzzSplitTemplate(f *testing.F) {
	for _, s := range []string{"", "x", "${{ a }}", "a ${{ b }} c", "$${{", `${{ "}}" }}`, "${{ {{}} }}", "${{ 'a\\'b' }}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		segs, err := splitTemplate(s)
		if err != nil {
			return
		}
		for _, seg := range segs {
			if seg.isExpr {
				if seg.offset < 0 || seg.offset+len(seg.expr) > len(s) || s[seg.offset:seg.offset+len(seg.expr)] != seg.expr {
					t.Fatalf("segment %+v does not point into %q", seg, s)
				}
			} else if strings.Contains(seg.lit, "${{") && !strings.Contains(s, "$${{") {
				t.Fatalf("literal %q keeps an unescaped template in %q", seg.lit, s)
			}
		}
	})
}
