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

func TestCovers(t *testing.T) {
	pods1ip := Path{}.Key("pods").Index(1).Key("ip")
	tests := []struct {
		pattern  string
		concrete Path
		covers   bool
	}{
		{"pods[*].ip", pods1ip, true},
		{"pods", pods1ip, true},
		{"pods[*]", pods1ip, true},
		{"pods[*].name", pods1ip, false},
		{"pod", pods1ip, false},
		{"pods[*].ip.x", pods1ip, false},
		{"pods[*].ip", Path{}.Key("pods").Key("ip"), false},
	}
	for _, tt := range tests {
		p, err := Parse(tt.pattern)
		if err != nil {
			t.Fatal(err)
		}
		if got := p.Covers(tt.concrete); got != tt.covers {
			t.Errorf("%s.Covers(%s) = %v", p, tt.concrete, got)
		}
	}
	// Concrete paths (a problem's, a change's) compare items by index.
	if !(Path{}).Key("pods").Index(1).Covers(pods1ip) || (Path{}).Key("pods").Index(0).Covers(pods1ip) {
		t.Error("a concrete item covers only paths into the same item")
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
		if q.String() != p.String() || !q.Covers(p) || !p.Covers(q) {
			t.Fatalf("%q: %s parsed again as %s", s, p, q)
		}
	})
}
