package main

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the expected output of script tests")

// A script test is a txtar-like file: a header of "args:" (one command
// line, split on spaces) and "exit:" lines, then "-- name --" sections.
// Sections other than stdout and stderr are written into a temporary
// directory, $WORK, before labrun runs; stdout and stderr hold the
// expected output with $WORK in place of that directory. A "files" section
// lists output files (path relative to $WORK) whose content is compared to
// the sections "want/<path>".
type script struct {
	header   []string
	sections []section
}

type section struct {
	name string
	body string
}

func parseScript(data string) script {
	var s script
	lines := strings.SplitAfter(data, "\n")
	cur := -1
	for _, l := range lines {
		trimmed := strings.TrimRight(l, "\n")
		if strings.HasPrefix(trimmed, "-- ") && strings.HasSuffix(trimmed, " --") && len(trimmed) > 6 {
			s.sections = append(s.sections, section{name: strings.TrimSpace(trimmed[3 : len(trimmed)-3])})
			cur = len(s.sections) - 1
			continue
		}
		if cur < 0 {
			s.header = append(s.header, trimmed)
			continue
		}
		s.sections[cur].body += l
	}
	return s
}

func (s script) get(name string) (string, bool) {
	for _, sec := range s.sections {
		if sec.name == name {
			return sec.body, true
		}
	}
	return "", false
}

func (s script) format() string {
	var b strings.Builder
	for _, h := range s.header {
		b.WriteString(h + "\n")
	}
	for _, sec := range s.sections {
		b.WriteString("-- " + sec.name + " --\n" + sec.body)
	}
	return strings.TrimRight(b.String(), "\n") + "\n"
}

func (s *script) set(name, body string) {
	for i := range s.sections {
		if s.sections[i].name == name {
			s.sections[i].body = body
			return
		}
	}
	s.sections = append(s.sections, section{name: name, body: body})
}

func TestScripts(t *testing.T) {
	files, err := filepath.Glob("testdata/script/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no scripts: %v", err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txt"), func(t *testing.T) {
			t.Parallel()
			runScript(t, file)
		})
	}
}

func runScript(t *testing.T, file string) {
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	s := parseScript(string(data))
	work := t.TempDir()
	var args []string
	wantExit := 0
	for _, h := range s.header {
		switch {
		case strings.HasPrefix(h, "args:"):
			for _, a := range strings.Fields(strings.TrimPrefix(h, "args:")) {
				args = append(args, strings.ReplaceAll(a, "$WORK", work))
			}
		case strings.HasPrefix(h, "exit:"):
			wantExit, err = strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(h, "exit:")))
			if err != nil {
				t.Fatalf("bad exit line %q", h)
			}
		}
	}
	if len(args) == 0 {
		t.Fatal("script has no args: line")
	}
	for _, sec := range s.sections {
		if sec.name == "stdout" || sec.name == "stderr" || strings.HasPrefix(sec.name, "want/") {
			continue
		}
		p := filepath.Join(work, sec.name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(strings.ReplaceAll(sec.body, "$WORK", work)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var stdout, stderr bytes.Buffer
	code := Main(args, &stdout, &stderr)
	clean := func(s string) string {
		s = strings.ReplaceAll(s, work, "$WORK")
		// A long step's progress line appears every two seconds, so how
		// many a run prints depends on the machine's speed: none is kept.
		s = progressLines.ReplaceAllString(s, "")
		return timings.ReplaceAllString(s, "${1}X.Xs")
	}
	got := map[string]string{"stdout": clean(stdout.String()), "stderr": clean(stderr.String())}
	for _, sec := range s.sections {
		if strings.HasPrefix(sec.name, "want/") {
			b, err := os.ReadFile(filepath.Join(work, strings.TrimPrefix(sec.name, "want/")))
			if err != nil {
				got[sec.name] = clean("(missing: " + err.Error() + ")\n")
			} else {
				got[sec.name] = clean(string(b))
			}
		}
	}
	if *update {
		for _, name := range []string{"stdout", "stderr"} {
			if got[name] != "" {
				s.set(name, got[name])
			} else {
				s.set(name, "")
			}
		}
		for name, body := range got {
			if strings.HasPrefix(name, "want/") {
				s.set(name, body)
			}
		}
		var hdr []string
		for _, h := range s.header {
			if !strings.HasPrefix(h, "exit:") {
				hdr = append(hdr, h)
			}
		}
		s.header = append(hdr, "exit: "+strconv.Itoa(code))
		if err := os.WriteFile(file, []byte(s.format()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if code != wantExit {
		t.Errorf("exit code %d, want %d\nstderr:\n%s", code, wantExit, got["stderr"])
	}
	for name, g := range got {
		want, _ := s.get(name)
		if strings.TrimRight(g, "\n") != strings.TrimRight(want, "\n") {
			t.Errorf("%s differs\n--- got ---\n%s\n--- want ---\n%s", name, g, want)
		}
	}
}

// progressLines are the console's periodic "    ... step: state (Ns)"
// lines of a step still running.
var progressLines = regexp.MustCompile(`(?m)^    \.\.\. .*\(\d+s\)\n`)

// timings hides durations such as "0.0s" and "12.3s" in progress output.
var timings = regexp.MustCompile(`(\s|in )\d+\.\ds`)
