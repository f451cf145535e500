package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// hostileYAML is, in a YAML double-goQuoted scalar, text that acts on a
// terminal instead of showing: ESC[2J clears the screen, an OSC sequence
// ended by BEL retitles the window, U+202E and U+2066 reverse and isolate
// the text after them, U+200F is a right-to-left mark, U+009B is the C1
// CSI, DEL and a carriage return (which would let a line overwrite what
// was printed before it on the same line).
const hostileYAML = `\e[2J\e]0;pwned\a\u202e\u2066\u200f\x9b\x7f\r`

// hostile is the same text as Go holds it, for the learner's files and the
// targets file.
const hostile = "\x1b[2J\x1b]0;pwned\a\u202e\u2066\u200f\u009b\x7f\r"

// shown is how the text prints once escaped, after its label; goQuoted is
// how a message that quotes it as a Go string (%q) shows it, and
// jsonGoQuoted how such a message reads in JSON.
const (
	shown        = `\u001b[2J`
	goQuoted     = `\x1b[2J`
	jsonGoQuoted = `\\x1b[2J`
)

// The playbook holds the hostile text in every place labrun prints text
// from: its name, description, task titles, step names, hints and
// assertion messages, a variable's default, a vars file's value, and the
// output of a local command. Each label (a capital letter) says which.
const hostilePlaybook = `name: "N` + hostileYAML + `"
description: "D` + hostileYAML + `"
vars:
  out: /tmp/unused
  namespace: default
  fail: false
  v: "V` + hostileYAML + `"
  w: "from the playbook"
  k: "from the playbook"
outputDir: ${{ vars.out }}
tasks:
  one: "T` + hostileYAML + `"
  two: "U` + hostileYAML + `"
steps:
  - id: say
    task: one
    name: "S` + hostileYAML + `"
    run: {argv: [printf, "%s", "R` + hostileYAML + `"]}
    assert:
      - that: result.stdout != ""
  - id: facts
    task: one
    name: "F` + hostileYAML + `"
    write:
      path: facts.json
      json: {word: "${{ vars.v }}", said: "${{ steps.say.stdout }}", given: "${{ vars.w }}"}
      hints: {word: "H` + hostileYAML + `"}
  - id: kv
    task: two
    write:
      path: kv.txt
      kv: {word: "${{ vars.k }}"}
  - id: gate
    task: two
    name: "G` + hostileYAML + `"
    hint: "J` + hostileYAML + `"
    assert:
      - that: "!vars.fail && vars.w != vars.v"
        message: "M` + hostileYAML + `"
        hint: "I` + hostileYAML + `"
`

// brokenPlaybook puts the hostile text where validate refuses it, so that
// its diagnostics quote it: a task id, a step id, an expression, a key.
const brokenPlaybook = `name: "B` + hostileYAML + `"
tasks:
  "K` + hostileYAML + `": a title
steps:
  - id: "X` + hostileYAML + `"
    "Q` + hostileYAML + `": 1
    run: {argv: [echo]}
`

// badExpressions is a playbook whose expressions validate refuses, each
// message quoting one that holds the hostile text.
const badExpressions = `name: "C` + hostileYAML + `"
steps:
  - id: x
    run: {argv: [echo, "${{ vars.nothing + \"E` + hostileYAML + `\" }}"]}
  - id: y
    compute: {a: "${{ \"P` + hostileYAML + `\" + 1 }}"}
`

// No output of labrun carries a control character or a bidi control
// from a playbook, a vars file, a local command's output, a learner's
// files or a targets file: every command, every format, stdout, stderr
// and each report; and each shows the text escaped.
func TestNoTerminalControl(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) string {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	pb := write("p.yaml", hostilePlaybook)
	broken := write("broken.yaml", brokenPlaybook)
	exprs := write("exprs.yaml", badExpressions)
	// a kv file's value is one line: no carriage return in A and O
	oneLine := strings.TrimSuffix(hostileYAML, `\r`)
	vars := write("vars.yaml", `w: "W`+hostileYAML+`"`+"\n"+`k: "A`+oneLine+`"`+"\n")
	learner := filepath.Join(dir, "learner")
	word, _ := json.Marshal("L" + hostile)
	write("learner/facts.json", `{"word": `+string(word)+`, "said": "x", "given": "y"}`)
	write("learner/kv.txt", "word=O"+strings.TrimSuffix(hostile, "\r")+"\n")
	targets := write("targets.yaml", "targets:\n  - namespace: learner-01\n    set: [\"w=Y"+hostileYAML+"\"]\n")
	solved := filepath.Join(dir, "solved")
	if err := os.Mkdir(filepath.Join(dir, "reports"), 0o755); err != nil {
		t.Fatal(err)
	}
	report := func(name string) string { return filepath.Join(dir, "reports", name) }

	type command struct {
		args []string
		code int
		// shows lists the labels whose text the output must show
		// escaped (stdout, stderr and reports together).
		shows   string
		reports []string
	}
	learnerFlags := []string{"--vars", vars, "--set", "out=" + learner, pb}
	commands := []command{
		{args: []string{"validate", pb}, shows: "NTU"},
		{args: []string{"validate", "--format", "json", broken, exprs}, code: 2, shows: "KXQEP"},
		{args: []string{"validate", "--format", "github", broken, exprs}, code: 2, shows: "KXQEP"},
		{args: []string{"validate", broken, exprs}, code: 2, shows: "KXQEP"},
		{args: []string{"run", "--no-progress", "--set", "out=" + solved, "--vars", vars, pb}, shows: "NTUSFG"},
		{args: []string{"run", "--dry-run", pb}, shows: "NTU"},
		{args: []string{"run", "--no-progress", "--verbose", "--set", "fail=true", "--set", "out=" + filepath.Join(dir, "failed"),
			"--report", "json=" + report("run.json"), "--report", "junit=" + report("run.xml"), pb},
			code: 1, shows: "NTUSFGMIJ", reports: []string{"run.json", "run.xml"}},
		{args: append([]string{"check", "--no-progress", "--report", "json=" + report("check.json"), "--report", "junit=" + report("check.xml")}, learnerFlags...),
			code: 1, shows: "NTUSFHLOW", reports: []string{"check.json", "check.xml"}},
		{args: append([]string{"check", "--quiet"}, learnerFlags...), code: 1, shows: "TUHLO"},
		{args: append([]string{"check", "--targets", targets, "--report", "json=" + report("class.jsonl"), "--report", "junit=" + report("class.xml")}, learnerFlags...),
			code: 0, shows: "TLY", reports: []string{"class.jsonl", "class.xml"}},
		{args: []string{"eval", "--vars", vars, "--set", "out=" + solved, pb, "vars.v", "steps.say.stdout", "vars.w"}, shows: "VRW"},
		{args: []string{"eval", "--raw", "--vars", vars, "--set", "out=" + solved, pb, "vars.v", "steps.say.stdout", "vars.w"}, shows: "VRW"},
		{args: []string{"eval", "--set", "out=" + solved, pb, `vars.v + "Z` + hostile + `" + 1`}, code: 2, shows: "Z"},
		{args: []string{"rbac", pb}, shows: "N"},
		{args: []string{"rbac", "--mode", "check", broken}, code: 2, shows: "KXQ"},
		{args: []string{"test", "--no-progress", "--verbose", "--vars", vars, "--set", "out=" + filepath.Join(dir, "tested"), pb}, shows: "NTUSFW"},
	}
	for _, format := range []string{"instruqt", "killercoda", "iximiuz", "educates"} {
		commands = append(commands, command{args: append([]string{"check", "--format", format, "--task", "1"}, learnerFlags...), code: 1, shows: "THL"},
			command{args: append([]string{"check", "--format", format, "--task", "2"}, learnerFlags...), code: 1, shows: "UOA"})
	}
	for _, c := range commands {
		name := strings.Join(c.args, " ")
		name = strings.ReplaceAll(name, dir, "$WORK")
		var stdout, stderr bytes.Buffer
		code := Main(c.args, &stdout, &stderr)
		if code != c.code {
			t.Errorf("%s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", name, code, c.code, stdout.String(), stderr.String())
		}
		outputs := map[string]string{"stdout": stdout.String(), "stderr": stderr.String()}
		for _, r := range c.reports {
			data, err := os.ReadFile(report(r))
			if err != nil {
				t.Errorf("%s: %v", name, err)
				continue
			}
			outputs[r] = string(data)
			if strings.HasSuffix(r, ".xml") {
				// encoding/xml refuses a character XML 1.0 forbids,
				// written or as a reference
				if err := checkJUnit(data); err != nil {
					t.Errorf("%s: %s: %v", name, r, err)
				}
			}
		}
		all := ""
		for where, out := range outputs {
			if bad := rawControl(out); bad != "" {
				t.Errorf("%s: %s holds %s", name, where, bad)
			}
			all += out
		}
		var missing []string
		for _, label := range c.shows {
			if !strings.Contains(all, string(label)+shown) && !strings.Contains(all, string(label)+goQuoted) && !strings.Contains(all, string(label)+jsonGoQuoted) {
				missing = append(missing, string(label))
			}
		}
		if len(missing) > 0 {
			t.Errorf("%s: no output shows the text labelled %s escaped (%s)\nstdout:\n%s\nstderr:\n%s", name, strings.Join(missing, ", "), shown, stdout.String(), stderr.String())
		}
	}
}

// rawControl describes the first character of s that a terminal acts on:
// a C0 control but newline and tab, DEL, a C1 control, a bidi embedding,
// override, isolate or mark; "" when there is none. It is written apart
// from the escaping it checks.
func rawControl(s string) string {
	for i, r := range s {
		switch {
		case r == utf8.RuneError:
			if _, size := utf8.DecodeRuneInString(s[i:]); size == 1 {
				return fmt.Sprintf("a byte 0x%02x that is not UTF-8 at %d", s[i], i)
			}
		case r < 0x20 && r != '\n' && r != '\t', r == 0x7f, r >= 0x80 && r < 0xa0,
			strings.ContainsRune("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c", r):
			return fmt.Sprintf("%U at %d", r, i)
		}
	}
	return ""
}

// labrun parse prints what a tool printed, as JSON: encoding/json escapes
// C0 controls but not C1 or bidi ones, so they are escaped on the way out,
// and the JSON still reads back to the text the tool printed.
func TestParseOutputHasNoTerminalControl(t *testing.T) {
	label, _ := json.Marshal("k8s:app=" + strings.TrimSuffix(hostile, "\r"))
	doc := `[{"id": 7, "status": {"state": "ready", "labels": {"security-relevant": [` + string(label) + `]}, "networking": {"interface-name": "lxc1"}}}]` + "\n"
	path := filepath.Join(t.TempDir(), "ep.json")
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if code := Main([]string{"parse", "cilium-endpoint-get", path}, &stdout, &stderr); code != 0 {
		t.Fatalf("parse exited %d: %s", code, stderr.String())
	}
	if bad := rawControl(stdout.String()); bad != "" {
		t.Errorf("parse's output holds %s:\n%s", bad, stdout.String())
	}
	var got []struct {
		Labels []string `json:"labels"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &got); err != nil {
		t.Fatalf("parse's output is not JSON: %v\n%s", err, stdout.String())
	}
	if len(got) != 1 || len(got[0].Labels) != 1 || got[0].Labels[0] != "k8s:app="+strings.TrimSuffix(hostile, "\r") {
		t.Errorf("parse's JSON reads back as %q, want the label as printed", got)
	}
}

// fleet render prints the playbook inside its ConfigMap: a playbook that
// holds terminal controls goes base64 under binaryData, so the YAML shown
// on a terminal holds none, and the pods get it back byte for byte.
func TestFleetRenderHasNoTerminalControl(t *testing.T) {
	dir := t.TempDir()
	pb := filepath.Join(dir, "p.yaml")
	// YAML takes bidi controls as they are (C0 and C1 it refuses raw)
	playbook := "# \u202eevil\u2066 comment\nname: \"N\u202e\"\nvars: {namespace: default}\nsteps:\n  - id: say\n    run: {argv: [\"true\"]}\n"
	if err := os.WriteFile(pb, []byte(playbook), 0o644); err != nil {
		t.Fatal(err)
	}
	targets := filepath.Join(dir, "targets.yaml")
	if err := os.WriteFile(targets, []byte("targets:\n  - namespace: learner-01\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if code := Main([]string{"fleet", "render", pb, "--targets", targets, "-n", "grading", "--image", "labrun.local/labrun:v1"}, &stdout, &stderr); code != 0 {
		t.Fatalf("fleet render exited %d: %s", code, stderr.String())
	}
	if bad := rawControl(stdout.String()); bad != "" {
		t.Fatalf("fleet render's YAML holds %s", bad)
	}
	found := false
	for _, doc := range strings.Split(stdout.String(), "\n---\n") {
		var cm struct {
			Kind       string            `yaml:"kind"`
			BinaryData map[string]string `yaml:"binaryData"`
		}
		if yaml.Unmarshal([]byte(doc), &cm) != nil || cm.Kind != "ConfigMap" {
			continue
		}
		if b64, ok := cm.BinaryData["p.yaml"]; ok {
			data, err := base64.StdEncoding.DecodeString(b64)
			if err != nil || string(data) != playbook {
				t.Errorf("binaryData p.yaml decodes to %q (%v), want the playbook as written", data, err)
			}
			found = true
		}
	}
	if !found {
		t.Errorf("no ConfigMap carries the playbook under binaryData:\n%s", stdout.String())
	}
}
