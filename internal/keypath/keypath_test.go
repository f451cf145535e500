package keypath

import (
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	tests := []struct{ in, out, err string }{
		{"seconds", "seconds", ""},
		{"after.identity", "after.identity", ""},
		{"pods[*].ip", "pods[*].ip", ""},
		{"m[*][*].x", "m[*][*].x", ""},
		{"", "", "empty path"},
		{"a..b", "", `path "a..b" has an empty key`},
		{"[*].a", "", `path "[*].a" has an empty key`},
		{"pods[0].ip", "", "lists are compared as multisets"},
		{"pods[x]", "", `path "pods[x]": expected [*] after "pods"`},
		{"pods[", "", `expected [*] after "pods"`},
		{"a]", "", `unexpected ] after "a]"`},
	}
	for _, tt := range tests {
		p, err := Parse(tt.in)
		switch {
		case tt.err == "" && err != nil:
			t.Errorf("%q: %v", tt.in, err)
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("%q: err %v, want %q", tt.in, err, tt.err)
		case tt.err == "" && p.String() != tt.out:
			t.Errorf("%q: %s", tt.in, p)
		}
	}
}

func TestMatchAndCovers(t *testing.T) {
	pods1ip := Path{}.Key("pods").Index(1).Key("ip")
	tests := []struct {
		pattern       string
		concrete      Path
		match, covers bool
	}{
		{"pods[*].ip", pods1ip, true, true},
		{"pods", pods1ip, false, true},
		{"pods[*]", pods1ip, false, true},
		{"pods[*].name", pods1ip, false, false},
		{"pod", pods1ip, false, false},
		{"pods[*].ip.x", pods1ip, false, false},
		{"pods[*].ip", Path{}.Key("pods").Key("ip"), false, false},
	}
	for _, tt := range tests {
		p, err := Parse(tt.pattern)
		if err != nil {
			t.Fatal(err)
		}
		if got := p.Match(tt.concrete); got != tt.match {
			t.Errorf("%s.Match(%s) = %v", p, tt.concrete, got)
		}
		if got := p.Covers(tt.concrete); got != tt.covers {
			t.Errorf("%s.Covers(%s) = %v", p, tt.concrete, got)
		}
	}
	if s := (Path{}).String(); s != "(the whole file)" {
		t.Errorf("empty path: %s", s)
	}
	if top := pods1ip.Top(); top != "pods" {
		t.Errorf("Top: %s", top)
	}
}

// A path that parses is written back as it parses: the text check's
// messages print is one an author can paste into loose or hints.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"seconds", "after.identity", "pods[*].ip", "m[*][*]", "a..b", "[*]", "p[0]", "a]"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := Parse(s)
		if err != nil {
			return
		}
		q, err := Parse(p.String())
		if err != nil {
			t.Fatalf("%q parsed as %s, which does not parse: %v", s, p, err)
		}
		if q.String() != p.String() || !q.Match(p) {
			t.Fatalf("%q: %s parsed again as %s", s, p, q)
		}
	})
}
