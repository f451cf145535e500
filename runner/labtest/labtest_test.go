package labtest

import (
	"encoding/json"
	"maps"
	"slices"
	"strconv"
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
		want     Finding
	}{
		{"named", []actions.Problem{{Path: ip, Text: "x"}}, Rejected},
		{"a list holding it", []actions.Problem{{Path: keypath.Path{}.Key("pods"), Text: "x"}}, Rejected},
		{"another value", []actions.Problem{{Path: keypath.Path{}.Key("count"), Text: "x.json: count is 3, expected 2"}}, Unnamed},
		{"accepted", nil, Survived},
	}
	for _, tt := range tests {
		c := judge(g, mutation{path: ip, now: `"y"`}, tt.problems)
		if c.Finding != tt.want {
			t.Errorf("%s: finding %d, want %d (%s)", tt.name, c.Finding, tt.want, c)
		}
	}
	c := judge(g, mutation{path: ip, now: `"y"`}, []actions.Problem{{Path: keypath.Path{}.Key("count"), Text: "x.json: count is 3, expected 2"}})
	if want := `x.json: pods[1].ip "y" rejected without naming it: x.json: count is 3, expected 2`; c.String() != want {
		t.Errorf("%s\nwant\n%s", c, want)
	}
}

// Every rendering of a file means what the file means: the same JSON
// document (numbers by value, lists as multisets), the same key=value
// pairs, the same text but for its final newline; and each differs from
// the file byte for byte.
func TestRenderingsMeanTheSame(t *testing.T) {
	tests := []struct {
		kind, file string
		names      []string
	}{
		{"json", "{\n  \"port\": 8080,\n  \"backends\": [\"10.42.0.7\", \"10.42.0.9\"],\n  \"path\": \"/healthz\",\n  \"ratio\": 0.5\n}\n",
			[]string{"keys in alphabetical order", "keys in reverse alphabetical order", "no whitespace and no final newline", "tab indentation and CRLF line ends", "every list reversed", "whole numbers as 80.0", `"/" escaped as "\/"`}},
		{"json", "{}\n", []string{"no whitespace and no final newline", "tab indentation and CRLF line ends"}},
		{"kv", "a=1\nb = two\n", []string{"lines in reverse order", "no final newline", `spaces around "="`}},
		{"text", "hello\nworld\n", []string{"no final newline", "a blank line at the end"}},
	}
	for _, tt := range tests {
		rs, err := renderings(tt.kind, []byte(tt.file))
		if err != nil {
			t.Fatalf("%s %q: %v", tt.kind, tt.file, err)
		}
		var names []string
		for _, r := range rs {
			names = append(names, r.name)
			if string(r.content) == tt.file {
				t.Errorf("%s %q: rendering %q is the file itself", tt.kind, tt.file, r.name)
			}
			if !sameMeaning(t, tt.kind, []byte(tt.file), r.content) {
				t.Errorf("%s %q: rendering %q means something else:\n%s", tt.kind, tt.file, r.name, r.content)
			}
		}
		if !slices.Equal(names, tt.names) {
			t.Errorf("%s %q: renderings %q, want %q", tt.kind, tt.file, names, tt.names)
		}
	}
}

func sameMeaning(t *testing.T, kind string, a, b []byte) bool {
	t.Helper()
	switch kind {
	case "json":
		x, err1 := decode(a)
		y, err2 := decode(b)
		if err1 != nil || err2 != nil {
			t.Fatalf("decode: %v, %v", err1, err2)
		}
		return canonical(x) == canonical(y)
	case "kv":
		kv := func(s []byte) []string {
			var out []string
			for _, l := range nonEmptyLines(s) {
				k, v, _ := strings.Cut(l, "=")
				out = append(out, strings.TrimSpace(k)+"="+strings.TrimSpace(v))
			}
			slices.Sort(out)
			return out
		}
		return slices.Equal(kv(a), kv(b))
	}
	return strings.TrimRight(string(a), "\n") == strings.TrimRight(string(b), "\n")
}

// canonical renders a decoded document with numbers by value and the
// items of each list sorted, keys sorted (encoding/json sorts them).
func canonical(v any) string {
	switch x := v.(type) {
	case json.Number:
		f, _ := x.Float64()
		return strconv.FormatFloat(f, 'g', -1, 64)
	case []any:
		var items []string
		for _, e := range x {
			items = append(items, canonical(e))
		}
		slices.Sort(items)
		return "[" + strings.Join(items, ",") + "]"
	case map[string]any:
		var items []string
		for _, k := range slices.Sorted(maps.Keys(x)) {
			items = append(items, strconv.Quote(k)+":"+canonical(x[k]))
		}
		return "{" + strings.Join(items, ",") + "}"
	}
	b, _ := json.Marshal(v)
	return string(b)
}
