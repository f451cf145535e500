package main

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/labrun/labrun/actions"
	"github.com/labrun/labrun/internal/lang/schemacheck"
	"github.com/labrun/labrun/runner"
	"github.com/labrun/labrun/runner/fleet"
)

var update = flag.Bool("update", false, "rewrite the expected output of script tests")

// A script test is a txtar-like file: a header of "args:" (one command
// line, split on spaces) and "exit:" lines, then "-- name --" sections.
// Sections other than stdout and stderr are written into a temporary
// directory, $WORK, before labrun runs; stdout and stderr hold the
// expected output with $WORK in place of that directory and $ACTIONS in
// place of the registry's action names as messages list them ("agent,
// apply, ..."): the registry stays the one list of actions, and a new
// action changes no golden file. A "files" section lists output files
// (path relative to $WORK) whose content is compared to the sections
// "want/<path>".
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
	args, wantExit := s.command(t, work)
	s.writeInputs(t, work)
	var stdout, stderr bytes.Buffer
	code := Main(args, &stdout, &stderr)
	clean := func(s string) string {
		s = strings.ReplaceAll(s, work, "$WORK")
		s = strings.ReplaceAll(s, actionList, "$ACTIONS")
		// A long step's progress line appears every two seconds, so how
		// many a run prints depends on the machine's speed: none is kept.
		s = progressLines.ReplaceAllString(s, "")
		s = retried.ReplaceAllString(s, "${1}N attempts in T")
		// A run's id and start, which a check's warning about an earlier
		// run that failed names (labrun test --repeat checks after one).
		s = runIDs.ReplaceAllString(s, "labrun run RUNID (started T)")
		return timings.ReplaceAllString(s, "${1}X.Xs")
	}
	got := map[string]string{"stdout": clean(stdout.String()), "stderr": clean(stderr.String())}
	reports := reportFiles(args, work)
	for _, sec := range s.sections {
		if strings.HasPrefix(sec.name, "want/") {
			name := strings.TrimPrefix(sec.name, "want/")
			b, err := os.ReadFile(filepath.Join(work, name))
			switch {
			case err != nil:
				got[sec.name] = clean("(missing: " + err.Error() + ")\n")
			case reports[name] != "":
				got[sec.name] = clean(hideReportTimes(string(b)))
			default:
				got[sec.name] = clean(string(b))
			}
		}
	}
	checkReports(t, work, reports)
	checkRunStatus(t, work)
	if *update {
		s.rewrite(t, file, got, code)
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

// actionList is every registered action's name as messages list them.
var actionList = strings.Join(actions.Names(), ", ")

// command returns the script's command line, $WORK replaced by work, and
// the exit code it expects.
func (s script) command(t *testing.T, work string) (args []string, wantExit int) {
	t.Helper()
	for _, h := range s.header {
		switch {
		case strings.HasPrefix(h, "args:"):
			for _, a := range strings.Fields(strings.TrimPrefix(h, "args:")) {
				args = append(args, strings.ReplaceAll(a, "$WORK", work))
			}
		case strings.HasPrefix(h, "exit:"):
			var err error
			wantExit, err = strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(h, "exit:")))
			if err != nil {
				t.Fatalf("bad exit line %q", h)
			}
		}
	}
	if len(args) == 0 {
		t.Fatal("script has no args: line")
	}
	return args, wantExit
}

// writeInputs writes the script's input sections into work, $WORK
// replaced by it.
func (s script) writeInputs(t *testing.T, work string) {
	t.Helper()
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
}

// rewrite writes the script back to file with the output and exit code
// the run had (-update).
func (s script) rewrite(t *testing.T, file string, got map[string]string, code int) {
	t.Helper()
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
}

// progressLines are the console's periodic "    ... step: state (Ns)"
// lines of a step still running.
var progressLines = regexp.MustCompile(`(?m)^    \.\.\. .*\(\d+s\)\n`)

// retried hides how often and how long a step was tried again against
// a cluster that does not answer, which the machine's speed decides.
var retried = regexp.MustCompile(`(still failing after )\d+ attempts? in [0-9.]+(ms|s)`)

// runIDs are a run's id (outdir.NewRunID) and start time in a check's
// warning.
var runIDs = regexp.MustCompile(`labrun run \d{8}T\d{6}Z-[0-9a-f]{8} \(started [0-9TZ:.-]+\)`)

// timings hides durations such as "0.0s" and "12.3s" in progress output.
var timings = regexp.MustCompile(`(\s|in )\d+\.\ds`)

// reportFiles maps each --report file of a script's args, relative to its
// work directory, to its format.
func reportFiles(args []string, work string) map[string]string {
	files := map[string]string{}
	for i, a := range args {
		v, ok := strings.CutPrefix(a, "--report=")
		if !ok && a == "--report" && i+1 < len(args) {
			v, ok = args[i+1], true
		}
		if format, path, found := strings.Cut(v, "="); ok && found {
			switch {
			case format == "json" && slices.Contains(args, "--targets"):
				format = "jsonl" // a line per target
			case format == "json" && slices.Contains(args, "--repeat"):
				format = "repeat" // labrun test --repeat's runs and figures
			}
			if rel, err := filepath.Rel(work, path); err == nil && !strings.HasPrefix(rel, "..") {
				files[rel] = format
			}
		}
	}
	return files
}

// hideReportTimes hides the clock in reports: start times and durations,
// of records (indented) and of results (on one line).
func hideReportTimes(s string) string {
	s = reportStarted.ReplaceAllString(s, `"started":${1}"T"`)
	s = reportSeconds.ReplaceAllString(s, `"${1}":${2}S`)
	return junitTime.ReplaceAllString(s, `time="S"`)
}

var (
	reportStarted = regexp.MustCompile(`"started":( ?)"[^"]*"`)
	reportSeconds = regexp.MustCompile(`"(seconds|resetSeconds|solveSeconds|checkSeconds)":( ?)[0-9.e+-]+`)
	junitTime     = regexp.MustCompile(`time="[0-9.]+"`)
)

// checkReports checks every report a script wrote against what readers of
// that format rely on: a JSON report against the published
// schemas/report.schema.json, a JUnit report against the structure of
// the JUnit XML schema that CI systems read (testsuites > testsuite >
// testcase, the counts agreeing with the cases).
func checkReports(t *testing.T, work string, reports map[string]string) {
	t.Helper()
	for name, format := range reports {
		data, err := os.ReadFile(filepath.Join(work, name))
		if err != nil {
			continue // a run that failed before writing it; the goldens say so
		}
		switch format {
		case "jsonl":
			for line := range strings.Lines(string(data)) {
				if _, err := fleet.ParseLine([]byte(line)); err != nil {
					t.Errorf("%s: %v: %s", name, err, line)
				}
			}
		case "json", "repeat":
			file := "../../schemas/report.schema.json"
			if format == "repeat" {
				file = "../../schemas/test-repeat.schema.json"
			}
			schema, err := schemacheck.Load(file)
			if err != nil {
				t.Fatal(err)
			}
			var doc any
			if err := json.Unmarshal(data, &doc); err != nil {
				t.Errorf("%s: not JSON: %v", name, err)
				continue
			}
			for _, p := range schema.Validate(doc) {
				t.Errorf("%s does not match %s: %s", name, file, p)
			}
		case "junit":
			if err := checkJUnit(data); err != nil {
				t.Errorf("%s: %v", name, err)
			}
		}
	}
}

// checkRunStatus checks every run manifest a script's runs left against
// the published schemas/run-status.schema.json, and that each file it
// lists is there.
func checkRunStatus(t *testing.T, work string) {
	t.Helper()
	schema, err := schemacheck.Load("../../schemas/run-status.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	filepath.WalkDir(work, func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.Name() != "status.json" || filepath.Base(filepath.Dir(p)) != ".labrun" {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			t.Error(err)
			return nil
		}
		var doc map[string]any
		if err := json.Unmarshal(data, &doc); err != nil {
			t.Errorf("%s: not JSON: %v", p, err)
			return nil
		}
		for _, pr := range schema.Validate(doc) {
			t.Errorf("%s does not match schemas/run-status.schema.json: %s", p, pr)
		}
		files, _ := doc["files"].([]any)
		for _, f := range files {
			name, _ := f.(string)
			if _, err := os.Stat(filepath.Join(filepath.Dir(filepath.Dir(p)), name)); err != nil {
				t.Errorf("%s lists %q: %v", p, name, err)
			}
		}
		return nil
	})
}

// checkJUnit checks a JUnit file against the rules of the JUnit XML schema
// CI systems read (Jenkins' and GitLab's junit.xsd): a testsuites root
// holding testsuite elements with a name and counts, each testcase with a
// name, a classname and a decimal time, and at most one of failure, error
// or skipped; the suite's counts must agree with its cases; at most one
// properties element, of property elements each with a name and a value
// (the goldens show it before the cases, where the schema wants it). Unknown elements or attributes are refused, since
// readers drop them silently.
func checkJUnit(data []byte) error {
	type message struct {
		Message *string `xml:"message,attr"`
		Type    *string `xml:"type,attr"`
		Body    string  `xml:",chardata"`
	}
	type testcase struct {
		Name      string     `xml:"name,attr"`
		Classname string     `xml:"classname,attr"`
		Time      string     `xml:"time,attr"`
		Failure   []message  `xml:"failure"`
		Error     []message  `xml:"error"`
		Skipped   []message  `xml:"skipped"`
		Other     []xml.Attr `xml:",any,attr"`
		Unknown   []struct {
			XMLName xml.Name
		} `xml:",any"`
	}
	type property struct {
		Name  *string    `xml:"name,attr"`
		Value *string    `xml:"value,attr"`
		Other []xml.Attr `xml:",any,attr"`
	}
	type properties struct {
		Property []property `xml:"property"`
		Unknown  []struct {
			XMLName xml.Name
		} `xml:",any"`
	}
	type testsuite struct {
		Name       string       `xml:"name,attr"`
		Tests      *int         `xml:"tests,attr"`
		Failures   *int         `xml:"failures,attr"`
		Errors     *int         `xml:"errors,attr"`
		Skipped    *int         `xml:"skipped,attr"`
		Time       string       `xml:"time,attr"`
		Properties []properties `xml:"properties"`
		Cases      []testcase   `xml:"testcase"`
		Other      []xml.Attr   `xml:",any,attr"`
		Unknown    []struct {
			XMLName xml.Name
		} `xml:",any"`
	}
	var root struct {
		XMLName xml.Name
		Suites  []testsuite `xml:"testsuite"`
		Unknown []struct {
			XMLName xml.Name
		} `xml:",any"`
	}
	if err := xml.Unmarshal(data, &root); err != nil {
		return fmt.Errorf("not XML: %v", err)
	}
	if root.XMLName.Local != "testsuites" || len(root.Unknown) > 0 || len(root.Suites) == 0 {
		return fmt.Errorf("want a testsuites root holding testsuite elements, got <%s> with %d suites and %d other elements", root.XMLName.Local, len(root.Suites), len(root.Unknown))
	}
	decimal := regexp.MustCompile(`^\d+(\.\d+)?$`)
	for _, su := range root.Suites {
		if su.Name == "" || su.Tests == nil || su.Failures == nil || su.Errors == nil || su.Skipped == nil || !decimal.MatchString(su.Time) {
			return fmt.Errorf("testsuite %q lacks name, tests, failures, errors, skipped or a decimal time", su.Name)
		}
		if len(su.Other) > 0 || len(su.Unknown) > 0 {
			return fmt.Errorf("testsuite %q has attributes or elements the schema does not know: %v %v", su.Name, su.Other, su.Unknown)
		}
		if len(su.Properties) > 1 {
			return fmt.Errorf("testsuite %q has %d properties elements, want at most one", su.Name, len(su.Properties))
		}
		for _, ps := range su.Properties {
			if len(ps.Unknown) > 0 {
				return fmt.Errorf("testsuite %q: properties must hold only property elements", su.Name)
			}
			for _, p := range ps.Property {
				if p.Name == nil || p.Value == nil || len(p.Other) > 0 {
					return fmt.Errorf("testsuite %q: a property wants a name and a value and nothing else", su.Name)
				}
			}
		}
		var failures, errs, skipped int
		for _, c := range su.Cases {
			if c.Name == "" || c.Classname == "" || !decimal.MatchString(c.Time) || len(c.Other) > 0 || len(c.Unknown) > 0 {
				return fmt.Errorf("testcase %q: want name, classname and a decimal time and nothing else", c.Name)
			}
			if n := len(c.Failure) + len(c.Error) + len(c.Skipped); n > 1 {
				return fmt.Errorf("testcase %q has %d outcomes, want at most one", c.Name, n)
			}
			for _, m := range append(append(c.Failure, c.Error...), c.Skipped...) {
				if m.Message == nil {
					return fmt.Errorf("testcase %q: an outcome without a message attribute", c.Name)
				}
			}
			for _, m := range append(c.Failure, c.Error...) {
				// labrun's class of failure (docs/exit-codes.md); an
				// interrupted step has none
				if m.Type != nil && !slices.Contains(runner.Classes, runner.Class(*m.Type)) {
					return fmt.Errorf("testcase %q: failure type %q is not a class of failure", c.Name, *m.Type)
				}
			}
			failures += len(c.Failure)
			errs += len(c.Error)
			skipped += len(c.Skipped)
		}
		if *su.Tests != len(su.Cases) || *su.Failures != failures || *su.Errors != errs || *su.Skipped != skipped {
			return fmt.Errorf("testsuite %q counts tests=%d failures=%d errors=%d skipped=%d, its cases %d, %d, %d, %d",
				su.Name, *su.Tests, *su.Failures, *su.Errors, *su.Skipped, len(su.Cases), failures, errs, skipped)
		}
	}
	return nil
}
