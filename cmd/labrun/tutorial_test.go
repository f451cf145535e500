package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// The tutorial docs/first-lab.md is replayed as a reader follows it: in
// one bash session, with a built labrun on PATH and HOME in a temporary
// directory, each file the page shows is saved where the reader is told
// to save it and each command block runs in turn. What a block prints
// must be the output block that follows it on the page (timings aside),
// so the page cannot drift from labrun. `go test ./cmd/labrun -run
// Tutorial -update` rewrites the output blocks where more than timings
// differ, for review.
//
// The page's conventions: a ```sh block is commands; a ```text block
// right after it, with no name, is their output (stdout and stderr as a
// terminal interleaves them, HOME shown as ~); a block whose info string
// names a file (```yaml lab.yaml) is that file's content. A command
// expected to fail says so on the page (`|| echo "exit $?"`), since the
// session stops at the first command that fails.

const tutorialPage = "../../docs/first-lab.md"

// tutorialMark ends each command block's output in the session's output.
const tutorialMark = "--- end of tutorial block ---"

// fence is one fenced block of the page: its language, the file it names
// (empty for commands and output), its body, and the lines of the page
// the body spans ([start, end), counted from 0), for -update.
type fence struct {
	lang, name, body string
	start, end       int
}

// tutorialStep is a command block and the output block the page gives
// for it (nil when the page shows none: the commands must print nothing).
type tutorialStep struct {
	commands *fence
	output   *fence
}

func TestTutorial(t *testing.T) {
	page, err := os.ReadFile(tutorialPage)
	if err != nil {
		t.Fatal(err)
	}
	blocks := fences(string(page))
	script, steps, err := tutorialScript(blocks)
	if err != nil {
		t.Fatalf("%s: %v", tutorialPage, err)
	}
	if len(steps) == 0 {
		t.Fatalf("%s: no ```sh block to run", tutorialPage)
	}
	home := t.TempDir()
	cmd := exec.Command("bash", "-c", script)
	cmd.Dir = home
	cmd.Env = append(os.Environ(), "HOME="+home, "PATH="+buildLabrun(t)+":"+os.Getenv("PATH"))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	runErr := cmd.Run()
	outputs := strings.Split(strings.ReplaceAll(out.String(), home, "~"), tutorialMark+"\n")
	if runErr != nil {
		i := len(outputs) - 1
		t.Fatalf("%s: the commands at line %d failed (%v); they printed:\n%s",
			tutorialPage, steps[i].commands.start, runErr, outputs[i])
	}
	if *update {
		updateTutorial(t, string(page), steps, outputs)
		return
	}
	for i, st := range steps {
		want := ""
		if st.output != nil {
			want = st.output.body
		}
		if got := outputs[i]; tutorialClean(got) != tutorialClean(want) {
			t.Errorf("%s: the commands at line %d printed\n%s\nthe page shows\n%s", tutorialPage, st.commands.start, got, want)
		}
	}
}

// fences returns the page's fenced blocks, in order. A fence is a line
// starting with ``` at the margin; its info string gives the language
// and, as a second word, a file name.
func fences(page string) []fence {
	lines := strings.Split(page, "\n")
	var blocks []fence
	for i := 0; i < len(lines); i++ {
		info, ok := strings.CutPrefix(lines[i], "```")
		if !ok {
			continue
		}
		f := fence{start: i + 1}
		words := strings.Fields(info)
		if len(words) > 0 {
			f.lang = words[0]
		}
		if len(words) > 1 {
			f.name = words[1]
		}
		for i++; i < len(lines) && !strings.HasPrefix(lines[i], "```"); i++ {
			f.body += lines[i] + "\n"
		}
		f.end = i
		blocks = append(blocks, f)
	}
	return blocks
}

// tutorialScript turns the page's blocks into one bash script: each file
// saved with a quoted here-document (nothing in it expanded), each
// command block followed by the mark that ends its output. It refuses an
// output block that follows no command block.
func tutorialScript(blocks []fence) (string, []tutorialStep, error) {
	const eof = "LABRUN_TUTORIAL_EOF"
	var b strings.Builder
	var steps []tutorialStep
	b.WriteString("set -e\n")
	for i := range blocks {
		f := &blocks[i]
		switch {
		case f.name != "":
			if strings.Contains(f.body, eof) {
				return "", nil, fmt.Errorf("line %d: file %s holds %s", f.start, f.name, eof)
			}
			fmt.Fprintf(&b, "cat > '%s' <<'%s'\n%s%s\n", f.name, eof, f.body, eof)
		case f.lang == "sh":
			b.WriteString(f.body)
			fmt.Fprintf(&b, "echo '%s'\n", tutorialMark)
			steps = append(steps, tutorialStep{commands: f})
		case f.lang == "text":
			if i == 0 || blocks[i-1].lang != "sh" || blocks[i-1].name != "" {
				return "", nil, fmt.Errorf("line %d: an output block that follows no ```sh block", f.start)
			}
			steps[len(steps)-1].output = f
		}
	}
	return b.String(), steps, nil
}

// tutorialClean hides what differs from run to run: durations and the
// periodic progress lines of a long step (as the script tests do).
func tutorialClean(s string) string {
	s = progressLines.ReplaceAllString(s, "")
	return strings.TrimRight(timings.ReplaceAllString(s, "${1}X.Xs"), "\n")
}

// updateTutorial writes what each command block printed into the output
// block after it. A block that printed something but has no output block
// is an error: the page must show it, so one is to be added by hand.
func updateTutorial(t *testing.T, page string, steps []tutorialStep, outputs []string) {
	lines := strings.Split(page, "\n")
	var out []string
	next := 0
	for i, st := range steps {
		if st.output == nil {
			if outputs[i] != "" {
				t.Errorf("%s: the commands at line %d print something: add a ```text block after them", tutorialPage, st.commands.start)
			}
			continue
		}
		out = append(out, lines[next:st.output.start]...)
		got := outputs[i]
		if tutorialClean(got) == tutorialClean(st.output.body) {
			got = st.output.body // only timings differ: the page keeps its own
		}
		out = append(out, strings.Split(strings.TrimRight(got, "\n"), "\n")...)
		next = st.output.end
	}
	out = append(out, lines[next:]...)
	if err := os.WriteFile(tutorialPage, []byte(strings.Join(out, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
}
