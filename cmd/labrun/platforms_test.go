package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The check scripts of examples/platforms, run as each platform runs
// them: bash runs the script with a real labrun binary on PATH, against a
// learner's real directory of the example lab with tasks; the platform
// reads the exit code and, for Instruqt, the message of the stdout line
// starting with "FAIL: ".

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

// platformCheck runs script with bash as a platform does, for task of
// the example lab graded in learner, and returns its exit code and
// stdout.
func platformCheck(t *testing.T, bin, script, task, learner string) (int, string) {
	t.Helper()
	playbook, err := filepath.Abs("../../examples/tasks.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if script, err = filepath.Abs(script); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("bash", script)
	cmd.Dir = t.TempDir() // platforms run it from a directory of their own
	cmd.Env = append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"), "LAB_TASK="+task, "LAB_OUT="+learner, "LAB_PLAYBOOK="+playbook)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	if stderr.Len() > 0 {
		t.Errorf("%s wrote to stderr: %s", script, stderr.String())
	}
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0, stdout.String()
	case errors.As(err, &exit):
		return exit.ExitCode(), stdout.String()
	}
	t.Fatalf("bash %s: %v", script, err)
	return 0, ""
}

// failMessage is what Instruqt shows the learner: the text after "FAIL: "
// of the line that starts with it.
func failMessage(stdout string) string {
	for _, l := range strings.Split(stdout, "\n") {
		if m, ok := strings.CutPrefix(l, "FAIL: "); ok {
			return m
		}
	}
	return ""
}

func TestPlatformCheckScripts(t *testing.T) {
	bin := buildLabrun(t)
	instruqt := "../../examples/platforms/instruqt/check-workstation"
	killercoda := "../../examples/platforms/killercoda/verify.sh"
	for _, script := range []string{instruqt, killercoda} {
		if fi, err := os.Stat(script); err != nil || fi.Mode()&0o111 == 0 {
			t.Fatalf("%s: want an executable script: %v", script, err)
		}
	}
	learner := t.TempDir()
	write := func(name, content string) {
		if err := os.WriteFile(filepath.Join(learner, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	steps := []struct {
		what         string
		file, body   string // the learner's file written before the check
		task         string
		wantCode     int
		wantFail     string // Instruqt's message, "" when it passes
		wantStdoutOK string // a line of a passing Instruqt check
	}{
		{what: "nothing done yet", task: "1", wantCode: 1,
			wantFail: "task 1 (count.json: how many hosts the inventory lists) [assertion]: count.json: missing"},
		{what: "task 1 done", file: "count.json", body: `{"hosts": 3}`, task: "1", wantCode: 0,
			wantStdoutOK: "PASS: task 1 (count.json: how many hosts the inventory lists)"},
		{what: "task 2 wrong", file: "address.json", body: `{"host": "web", "address": "10.0.0.12"}`, task: "2", wantCode: 1,
			wantFail: `task 2 (address.json: the address of host web) [assertion]: address.json: address is "10.0.0.12", expected "10.0.0.11" (hint: the second word of the line of host web)`},
		{what: "task 2 fixed", file: "address.json", body: `{"host": "web", "address": "10.0.0.11"}`, task: "2", wantCode: 0,
			wantStdoutOK: "PASS: task 2 (address.json: the address of host web)"},
		{what: "task 3 ahead of the learner", task: "3", wantCode: 1,
			wantFail: "task 3 (summary.txt: both again, one key=value a line) [assertion]: summary.txt: missing"},
	}
	for _, st := range steps {
		if st.file != "" {
			write(st.file, st.body)
		}
		code, stdout := platformCheck(t, bin, instruqt, st.task, learner)
		if code != st.wantCode {
			t.Errorf("%s: Instruqt check exit %d, want %d\n%s", st.what, code, st.wantCode, stdout)
		}
		if msg := failMessage(stdout); !strings.HasPrefix(msg, st.wantFail) || (st.wantFail == "") != (msg == "") {
			t.Errorf("%s: Instruqt shows %q, want %q", st.what, msg, st.wantFail)
		}
		if st.wantStdoutOK != "" && strings.TrimSpace(stdout) != st.wantStdoutOK {
			t.Errorf("%s: Instruqt check printed %q, want %q", st.what, stdout, st.wantStdoutOK)
		}
		code, stdout = platformCheck(t, bin, killercoda, st.task, learner)
		if code != st.wantCode || stdout != "" {
			t.Errorf("%s: Killercoda verify.sh exit %d with output %q, want %d and none", st.what, code, stdout, st.wantCode)
		}
	}
}
