package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/labrun/labrun/cmd/labrun/internal/platform"
	"gopkg.in/yaml.v3"
)

// The lab platforms' setups of examples/platforms, for examples/tasks.yaml,
// run as each platform runs them: the checks are found in the files the
// platform reads (Instruqt's challenge directories, Killercoda's
// index.json, iximiuz Labs' tasks, Educates' examiner actions), and run
// with the platform's arguments, working directory and stdin against a
// built labrun on PATH and a learner's directory as the learner fills it.
// Each platform's transcript (exit codes, stdout, stderr) is pinned in
// testdata/platforms/NAME.txt; -update rewrites it.

// buildLabrun builds the labrun binary into a temporary directory and
// returns that directory, for PATH.
func buildLabrun(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	// go test puts the go command of its toolchain first on PATH
	cmd := exec.Command("go", "build", "-o", filepath.Join(dir, "labrun"), ".")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return dir
}

// platformCheck is one check a platform runs: its name in the
// transcript and the command, in a home directory.
type platformCheck struct {
	name string
	cmd  func(home string) *exec.Cmd
}

const platformsDir = "../../examples/platforms"

// platformChecks lists each platform's checks in the order its learner
// meets them, read from the platform's own files.
var platformChecks = map[string]func(t *testing.T) []platformCheck{
	// Instruqt runs a challenge's check-HOST script, an executable file.
	"instruqt": func(t *testing.T) []platformCheck {
		files, err := filepath.Glob(filepath.Join(platformsDir, "instruqt/*/check-workstation"))
		if err != nil || len(files) == 0 {
			t.Fatalf("no Instruqt check scripts: %v", err)
		}
		sort.Strings(files)
		return executables(t, "instruqt", files, nil)
	},
	// Killercoda runs the verify script of each step of index.json.
	"killercoda": func(t *testing.T) []platformCheck {
		var index struct {
			Details struct {
				Steps []struct{ Verify string }
			}
		}
		readIndexJSON(t, filepath.Join(platformsDir, "killercoda/index.json"), &index)
		var files []string
		for _, s := range index.Details.Steps {
			files = append(files, filepath.Join(platformsDir, "killercoda", s.Verify))
		}
		return executables(t, "killercoda", files, nil)
	},
	// iximiuz Labs runs a task's run script, then its hintcheck script.
	"iximiuz": iximiuzChecks,
	// Educates runs workshop/examiner/tests/NAME with the action's args,
	// in the home directory, the action's form as JSON on stdin.
	"educates": educatesChecks,
}

// executables are checks that run each file with args, as programs.
func executables(t *testing.T, platform string, files []string, args [][]string) []platformCheck {
	t.Helper()
	var checks []platformCheck
	for i, f := range files {
		abs, err := filepath.Abs(f)
		if err != nil {
			t.Fatal(err)
		}
		if fi, err := os.Stat(abs); err != nil || fi.Mode()&0o111 == 0 {
			t.Fatalf("%s: want an executable script: %v", f, err)
		}
		var a []string
		if args != nil {
			a = args[i]
		}
		name, _ := filepath.Rel(filepath.Join(platformsDir, platform), f)
		if len(a) > 0 {
			name += " " + strings.Join(a, " ")
		}
		checks = append(checks, platformCheck{name: name, cmd: func(string) *exec.Cmd { return exec.Command(abs, a...) }})
	}
	return checks
}

func readIndexJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err == nil {
		err = json.Unmarshal(b, v)
	}
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// iximiuzChecks are the run and hintcheck scripts of the tasks in the
// front matter of the challenge's index.md, in the order written; init
// tasks, which provision the playground, are left out.
func iximiuzChecks(t *testing.T) []platformCheck {
	b, err := os.ReadFile(filepath.Join(platformsDir, "iximiuz/index.md"))
	if err != nil {
		t.Fatal(err)
	}
	parts := strings.SplitN(string(b), "---\n", 3)
	if len(parts) != 3 {
		t.Fatal("iximiuz/index.md: no front matter")
	}
	var front struct{ Tasks yaml.Node }
	if err := yaml.Unmarshal([]byte(parts[1]), &front); err != nil {
		t.Fatal(err)
	}
	var checks []platformCheck
	for i := 0; i+1 < len(front.Tasks.Content); i += 2 {
		name := front.Tasks.Content[i].Value
		var task struct {
			Init           bool
			Run, Hintcheck string
		}
		if err := front.Tasks.Content[i+1].Decode(&task); err != nil {
			t.Fatal(err)
		}
		if task.Init {
			continue
		}
		if task.Run == "" || task.Hintcheck == "" {
			t.Fatalf("iximiuz task %s: want run and hintcheck scripts", name)
		}
		for _, s := range []struct{ what, script string }{{"run", task.Run}, {"hintcheck", task.Hintcheck}} {
			checks = append(checks, platformCheck{name: name + "." + s.what, cmd: func(string) *exec.Cmd { return exec.Command("bash", "-c", s.script) }})
		}
	}
	return checks
}

// examinerAction is an examiner:execute-test block of Educates' content.
var examinerAction = regexp.MustCompile("(?s)```examiner:execute-test\n(.*?)```")

// educatesChecks are the examiner actions of the workshop's pages, in
// page order.
func educatesChecks(t *testing.T) []platformCheck {
	pages, err := filepath.Glob(filepath.Join(platformsDir, "educates/workshop/content/*.md"))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(pages)
	var files []string
	var args [][]string
	for _, p := range pages {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range examinerAction.FindAllStringSubmatch(string(b), -1) {
			var action struct {
				Name string
				Args []string
			}
			if err := yaml.Unmarshal([]byte(m[1]), &action); err != nil {
				t.Fatalf("%s: %v", p, err)
			}
			files = append(files, filepath.Join(platformsDir, "educates/workshop/examiner/tests", action.Name))
			args = append(args, action.Args)
		}
	}
	return executables(t, "educates", files, args)
}

// learnerSteps are what a learner does, in order, before the checks run
// again: each writes a file into the learner's directory.
var learnerSteps = []struct{ what, file, body string }{
	{what: "nothing done yet"},
	{what: "count.json right, address.json wrong", file: "count.json", body: `{"hosts": 3}`},
	{what: "count.json right, address.json wrong", file: "address.json", body: `{"host": "web", "address": "10.0.0.12"}`},
	{what: "address.json fixed", file: "address.json", body: `{"host": "web", "address": "10.0.0.11"}`},
	{what: "summary.txt written: every task done", file: "summary.txt", body: "hosts=3\naddress=10.0.0.11\n"},
}

func TestPlatformSetups(t *testing.T) {
	bin := buildLabrun(t)
	playbook, err := filepath.Abs("../../examples/tasks.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range platform.Names() {
		t.Run(name, func(t *testing.T) {
			checks := platformChecks[name](t)
			home := t.TempDir()
			learner := filepath.Join(home, "tasks")
			if err := os.Mkdir(learner, 0o755); err != nil {
				t.Fatal(err)
			}
			env := []string{"PATH=" + bin + ":/usr/bin:/bin", "HOME=" + home, "LAB_OUT=" + learner, "LAB_PLAYBOOK=" + playbook}
			var transcript strings.Builder
			for i, st := range learnerSteps {
				if st.file != "" {
					if err := os.WriteFile(filepath.Join(learner, st.file), []byte(st.body), 0o644); err != nil {
						t.Fatal(err)
					}
				}
				if i+1 < len(learnerSteps) && learnerSteps[i+1].what == st.what {
					continue // one state, written in more than one file
				}
				fmt.Fprintf(&transcript, "# %s\n", st.what)
				for _, c := range checks {
					code, stdout, stderr := runPlatformCheck(t, c, home, env)
					checkPlatformState(t, name, c.name, st.what, code)
					fmt.Fprintf(&transcript, "$ %s\nexit %d\n%s%s", c.name, code, quoted("stdout", stdout), quoted("stderr", stderr))
				}
			}
			got := strings.ReplaceAll(transcript.String(), home, "$HOME")
			comparePlatformGolden(t, filepath.Join("testdata/platforms", name+".txt"), got)
		})
	}
}

// runPlatformCheck runs c in home with env, stdin "{}" (what Educates
// writes: the action's form, empty), and returns its exit code and output.
func runPlatformCheck(t *testing.T, c platformCheck, home string, env []string) (int, string, string) {
	t.Helper()
	cmd := c.cmd(home)
	cmd.Dir, cmd.Env, cmd.Stdin = home, env, strings.NewReader("{}")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0, stdout.String(), stderr.String()
	case errors.As(err, &exit):
		return exit.ExitCode(), stdout.String(), stderr.String()
	}
	t.Fatalf("%s: %v", c.name, err)
	return 0, "", ""
}

// checkPlatformState holds what the transcript must show whatever its
// golden file says: no check passes before the learner did anything, and
// every check passes once every task is done.
func checkPlatformState(t *testing.T, platform, check, state string, code int) {
	t.Helper()
	switch {
	case state == learnerSteps[0].what && code == 0:
		t.Errorf("%s %s passes with nothing done", platform, check)
	case state == learnerSteps[len(learnerSteps)-1].what && code != 0:
		t.Errorf("%s %s exits %d with every task done", platform, check, code)
	}
}

// quoted prints output line by line under its stream's name, saying when
// its last line has no newline: the transcript keeps every byte.
func quoted(stream, out string) string {
	if out == "" {
		return ""
	}
	var b strings.Builder
	lines := strings.SplitAfter(out, "\n")
	for _, l := range lines {
		if l == "" {
			continue
		}
		if !strings.HasSuffix(l, "\n") {
			l += " (no newline at end)\n"
		}
		b.WriteString(stream + "| " + l)
	}
	return b.String()
}

func comparePlatformGolden(t *testing.T, golden, got string) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (go test -run TestPlatformSetups -update writes it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs\n--- got ---\n%s\n--- want ---\n%s", golden, got, want)
	}
}

// docs/platforms.md has a row of its table and a section for every
// format, so a new one is documented.
func TestPlatformsDocumented(t *testing.T) {
	b, err := os.ReadFile("../../docs/platforms.md")
	if err != nil {
		t.Fatal(err)
	}
	sections := map[string]string{"instruqt": "## Instruqt\n", "killercoda": "## Killercoda\n", "iximiuz": "## iximiuz Labs\n", "educates": "## Educates\n"}
	for _, name := range platform.Names() {
		if !strings.Contains(string(b), "\n| `"+name+"` |") {
			t.Errorf("docs/platforms.md: no row for format %s", name)
		}
		if s, ok := sections[name]; !ok || !strings.Contains(string(b), s) {
			t.Errorf("docs/platforms.md: no section for format %s", name)
		}
		if _, ok := platformChecks[name]; !ok {
			t.Errorf("format %s has no setup in examples/platforms run by TestPlatformSetups", name)
		}
	}
}
