package labtest

import (
	"strings"
	"testing"

	"github.com/labrun/labrun/actions"
	"github.com/labrun/labrun/internal/lang/keypath"
)

// Every value of a file is changed once, to another value of its type, and
// every key is removed once; the changes are whole files of their kind.
func TestMutations(t *testing.T) {
	tests := []struct {
		kind, file string
		want       []string // path and new value of each change, in order
	}{
		{"json", `{"n": 2, "f": 1.5, "s": "web", "b": true, "z": null, "l": ["a"], "e": [], "o": {"k": 0}}`, []string{
			"b removed", "b false", "e removed", `e ["changed"]`, "f removed", "f 2.5", "l removed", `l[0] "ax"`,
			"n removed", "n 3", "o removed", "o.k removed", "o.k 1", "s removed", `s "webx"`, "z removed", `z "changed"`}},
		{"json", `[{"ip": "a"}]`, []string{"[0].ip removed", `[0].ip "ax"`}},
		{"kv", "a=1\nb=x\n", []string{"a removed", "a 2", "b removed", "b xx"}},
		{"text", "hello\n", []string{"(the whole file) with a line added"}},
	}
	for _, tt := range tests {
		muts, err := mutations(tt.kind, []byte(tt.file))
		if err != nil {
			t.Fatalf("%s: %v", tt.file, err)
		}
		var got []string
		for _, m := range muts {
			got = append(got, m.path.String()+" "+m.now)
			if string(m.content) == tt.file {
				t.Errorf("%s: change %s %s left the file as it was", tt.file, m.path, m.now)
			}
		}
		if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
			t.Errorf("%s:\n%s\nwant\n%s", tt.file, strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
		}
	}
	if _, err := mutations("json", []byte(`{"a":`)); err == nil {
		t.Error("a file that is not JSON gave changes")
	}
}

// One change's content, checked on its own: the key removed and the
// others kept.
func TestMutationContent(t *testing.T) {
	muts, err := mutations("kv", []byte("a=1\nb=x\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := string(muts[0].content); got != "b=x\n" {
		t.Errorf("a removed: %q", got)
	}
	if got := string(muts[3].content); got != "a=1\nb=xx\n" {
		t.Errorf("b changed: %q", got)
	}
}

// A change is rejected only when a problem names it (or a value holding
// it); a change that passes survives unless loose with a reason.
func TestJudge(t *testing.T) {
	ip := keypath.Path{}.Key("pods").Index(1).Key("ip")
	g := &actions.Comparison{Path: "x.json", Kind: "json"}
	tests := []struct {
		name     string
		problems []actions.Problem
		want     Verdict
	}{
		{"named", []actions.Problem{{Path: ip, Text: "x"}}, Rejected},
		{"a list holding it", []actions.Problem{{Path: keypath.Path{}.Key("pods"), Text: "x"}}, Rejected},
		{"another value", []actions.Problem{{Path: keypath.Path{}.Key("count"), Text: "x.json: count is 3, expected 2"}}, Unnamed},
		{"accepted", nil, Survived},
	}
	for _, tt := range tests {
		c := judge(g, mutation{path: ip, now: `"y"`}, tt.problems)
		if c.Verdict != tt.want {
			t.Errorf("%s: verdict %d, want %d (%s)", tt.name, c.Verdict, tt.want, c)
		}
	}
	c := judge(g, mutation{path: ip, now: `"y"`}, []actions.Problem{{Path: keypath.Path{}.Key("count"), Text: "x.json: count is 3, expected 2"}})
	if want := `x.json: pods[1].ip "y" rejected without naming it: x.json: count is 3, expected 2`; c.String() != want {
		t.Errorf("%s\nwant\n%s", c, want)
	}
}
