package actions

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/labrun/labrun/internal/lang/eval"
)

// literalSpec builds a spec from YAML without templates, as validation
// sees a step.
func literalSpec(t *testing.T, src string) *eval.Value {
	t.Helper()
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(src), &doc); err != nil {
		t.Fatal(err)
	}
	v, errs := eval.Build(eval.NewCompiler(nil), "p.yaml", doc.Content[0], eval.Context{Step: -1})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	return v
}

// The static checks of the other actions: each problem is reported with
// the position of the key at fault, and a good spec gets none.
func TestStaticChecks(t *testing.T) {
	out := &StaticContext{HasOutputDir: true, PlaybookDir: "testdata"}
	tests := []struct {
		action, spec string
		sc           *StaticContext
		want         []string // substrings, one per problem, in order
	}{
		{"run", "{argv: [ls, -l], env: {A: b}}", out, nil},
		{"run", "{argv: [\"a\\0b\"]}", out, []string{"p.yaml:1:9: argv item 1 holds a NUL byte"}},
		{"run", "{argv: [ls], env: {\"A=B\": x}}", out, []string{"p.yaml:1:20: env name \"A=B\" cannot be set"}},
		{"run", "{argv: [echo, ~, \"~\", null]}", out, []string{"p.yaml:1:15: argv item 2 is ~, which YAML reads as no value", "p.yaml:1:23: argv item 4 is null"}},
		{"run", "{argv: [ls], via: [~]}", out, []string{"p.yaml:1:20: via item 1 is ~"}},
		{"exec", "{pod: web, argv: [cat, ~]}", out, []string{"p.yaml:1:24: argv item 2 is ~"}},
		{"cilium", "{args: [status, NULL]}", out, []string{"p.yaml:1:17: args item 2 is NULL"}},
		{"cilium", "{args: [status, \"null\"]}", out, nil},
		{"write", "{path: f.json, json: {a: 1}}", out, nil},
		{"write", "{path: f.txt, text: x}", &StaticContext{}, []string{"write needs the playbook's outputDir"}},
		{"write", "{path: f.txt}", out, []string{"p.yaml:1:1: expected one of the keys [json text kv]"}},
		{"write", "{path: f.txt, text: x, kv: {a: 1}}", out, []string{"cannot be used together"}},
		{"write", "{path: ../f.txt, text: x}", out, []string{"p.yaml:1:8: "}},
		{"write", "{path: f.txt, text: x, schema: missing.json}", out, []string{"missing.json", "schema applies to json content only"}},
		{"write", "{path: f.txt, kv: {\"a=b\": 1}}", out, []string{"kv key \"a=b\" cannot be empty or contain = or a newline"}},
		{"write", "{path: f.json, json: {a: {b: 1}, l: [{ip: x}]}, loose: [a.b, \"l[*].ip\"], hints: {a: x}}", out, nil},
		{"write", "{path: f.json, json: {a: {b: 1}}, loose: {a.b: changes every run}}", out, nil},
		{"write", "{path: f.json, json: {a: {b: 1}}, loose: [a.c]}", out, []string{`p.yaml:1:43: loose a.c: the json written has no such value: a has no key "c"; its keys: b`}},
		{"write", "{path: f.json, json: {a: [1]}, hints: {a.b: x}}", out, []string{"p.yaml:1:40: hints a.b: the json written has no such value: a is a list; write a[*] for its items"}},
		{"write", "{path: f.json, json: {a: \"${{ 1 }}\"}, loose: [a.b]}", out, nil},
		{"write", "{path: f.json, json: {a: 1}, loose: [\"a[0]\"]}", out, []string{"lists are compared as multisets"}},
		{"write", "{path: f.json, json: {a: 1}, loose: {a: \"\"}}", out, []string{"loose a: the reason must be written out"}},
		{"write", "{path: f.json, json: {a: 1}, loose: a}", out, []string{"loose must be a list of paths, or a mapping of path: why"}},
		{"write", "{path: f.json, json: {}, schema: pods.schema.json, loose: [after.identity, \"pods[*].ip\"]}", out, nil},
		{"write", "{path: f.json, json: {}, schema: pods.schema.json, loose: [after.ip, pods.ip]}", out, []string{"loose after.ip: the file's schema pods.schema.json declares no such value", "loose pods.ip: the file's schema"}},
		{"write", "{path: f.txt, kv: {a: 1}, loose: [b], hints: {a: x}}", out, []string{"loose b: kv content has no such key; its keys: a"}},
		{"write", "{path: f.txt, text: x, loose: [a]}", out, []string{"a text file is compared as a whole"}},
		{"http", "{url: http://example.test/}", out, nil},
		{"http", "{url: ftp://example.test/}", out, []string{"expected an http:// or https:// URL"}},
		{"http", "{url: http:///path}", out, []string{"has no host"}},
		{"http", "{url: http://h/, method: \"GE T\"}", out, []string{"is not an HTTP method token"}},
		{"http", "{url: http://h/, body: x, json: {a: 1}}", out, []string{"body and json cannot be used together"}},
		{"compute", "{a: 1, b: x}", out, nil},
		{"compute", "{\"not ok\": 1}", out, []string{"compute name \"not ok\" must be an identifier"}},
		{"compute", "[1]", out, []string{"compute needs a mapping of name: value"}},
		{"sleep", "{duration: 2s}", out, nil},
		{"helm", "{release: cilium}", out, nil},
		{"helm", "{release: cilium, upgrade: {chart: cilium/cilium, reuseValues: true, set: [a.b=1, \"c={x,y}\"]}}", out, nil},
		{"helm", "{release: r, upgrade: {chart: c}, rollback: {revision: 1}}", out, []string{"cannot be used together"}},
		{"helm", "{release: r, upgrade: {chart: c, reuseValues: true, resetValues: true}}", out, []string{"cannot be used together"}},
		{"helm", "{release: r, upgrade: {chart: c, set: [a.b=1, loadBalancer.mode]}}", out, []string{"p.yaml:1:47: set item \"loadBalancer.mode\" has no =; expected path=value"}},
	}
	for _, tt := range tests {
		t.Run(tt.action+" "+tt.spec, func(t *testing.T) {
			info, ok := Lookup(tt.action)
			if !ok {
				t.Fatalf("no action %s", tt.action)
			}
			got := info.Check(literalSpec(t, tt.spec), tt.sc)
			if len(got) != len(tt.want) {
				t.Fatalf("got %d problems %v, want %d %q", len(got), got, len(tt.want), tt.want)
			}
			for i, w := range tt.want {
				if !strings.Contains(got[i].Error(), w) {
					t.Errorf("problem %d: %q does not contain %q", i, got[i].Error(), w)
				}
			}
		})
	}
}

// In check mode write compares the learner's file with what it would
// have written, and names every wrong value with its hint.
func TestWriteCheckMode(t *testing.T) {
	root := t.TempDir()
	learner := map[string]string{
		"good.json":  `{"count": 2, "took": 9.5, "name": "web"}`,
		"wrong.json": `{"count": "2", "name": "db", "extra": 1}`,
		"list.json":  `[1, 2]`,
		"bad.json":   `{"count":`,
		"good.kv":    "a=1\nb=x\n",
		"wrong.kv":   "a=2\n",
		"text.txt":   "hello\n",
	}
	for name, content := range learner {
		if err := os.WriteFile(filepath.Join(root, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	rt := &Runtime{Mode: Check, Out: createOut(t, root)}
	obj := func(kv ...any) *eval.Map {
		m := eval.NewMap()
		for i := 0; i < len(kv); i += 2 {
			m.Set(kv[i].(string), kv[i+1])
		}
		return m
	}
	hello, bye := "hello", "bye"
	tests := []struct {
		name string
		spec WriteSpec
		want []string
	}{
		{"matching JSON, a loose value", WriteSpec{Path: "good.json", JSON: obj("count", 2, "took", 1.25, "name", "web"), Loose: []any{"took"}}, nil},
		{"wrong JSON values", WriteSpec{Path: "wrong.json", JSON: obj("count", 2, "name", "web", "took", 1.0), Hints: map[string]string{"name": "the Service's name"}},
			[]string{`wrong.json: count is a string "2", expected a number`, `wrong.json: name is "db", expected "web" (hint: the Service's name)`, `wrong.json: key "took" is missing`}},
		{"a list instead of an object", WriteSpec{Path: "list.json", JSON: obj("count", 2)}, []string{"list.json: the file is a list [1,2], expected an object"}},
		{"not JSON", WriteSpec{Path: "bad.json", JSON: obj("count", 2)}, []string{"bad.json: not valid JSON"}},
		{"missing file", WriteSpec{Path: "none.json", JSON: obj("count", 2)}, []string{"none.json: missing"}},
		{"matching kv", WriteSpec{Path: "good.kv", KV: obj("a", 1, "b", "x")}, nil},
		{"wrong kv", WriteSpec{Path: "wrong.kv", KV: obj("a", 1, "b", "x")}, []string{"wrong.kv: a=2, expected 1", `wrong.kv: key "b" is missing`}},
		{"same text", WriteSpec{Path: "text.txt", Text: &hello}, nil},
		{"other text", WriteSpec{Path: "text.txt", Text: &bye}, []string{"text.txt: content differs from the expected text"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := tt.spec
			res, err := writeFile(context.Background(), rt, &spec)
			if (err != nil) != (len(tt.want) > 0) {
				t.Fatalf("err %v, want problems %q", err, tt.want)
			}
			var problems []string
			if res != nil {
				problems = res.Problems
			}
			if len(problems) != len(tt.want) {
				t.Fatalf("problems %q, want %q", problems, tt.want)
			}
			for i, w := range tt.want {
				if !strings.HasPrefix(problems[i], w) {
					t.Errorf("problem %d: %q, want it to start with %q", i, problems[i], w)
				}
			}
		})
	}
	// Check mode never writes.
	entries, _ := os.ReadDir(root)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if len(names) != len(learner) {
		t.Errorf("check mode changed the output directory: %v", names)
	}
}
