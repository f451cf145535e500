package kube

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// startLocalSession runs the session protocol against a local sh, the same
// shell code that runs in containers, so quoting and output framing are
// tested without a cluster.
func startLocalSession(t *testing.T, shell ...string) *shellSession {
	t.Helper()
	return startLocalSessionEnv(t, nil, shell...)
}

// startLocalSessionEnv is startLocalSession with the shell's environment
// (nil: this process's).
func startLocalSessionEnv(t *testing.T, env []string, shell ...string) *shellSession {
	t.Helper()
	if len(shell) == 0 {
		shell = []string{"sh"}
	}
	if _, err := exec.LookPath(shell[0]); err != nil {
		t.Skipf("no %s on this machine", shell[0])
	}
	cmd := exec.Command(shell[0], shell[1:]...)
	cmd.Env = env
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	s := newSession(sessionKey{}, stdin, func() { _ = cmd.Process.Kill() })
	cmd.Stdout, cmd.Stderr = s.out, s.errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { s.end(cmd.Wait()) }()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.init(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// direct runs argv as a separate process, the reference a session must
// match.
func direct(t *testing.T, argv []string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("direct %q: %v", argv, err)
	}
	return out.String(), errOut.String(), code
}

// localShells are the shells the session code must work with: dash
// (Debian's sh), bash, and busybox's sh (the testbed's and Cilium's images),
// whichever this machine has.
var localShells = [][]string{{"dash"}, {"bash"}, {"busybox", "sh"}}

func TestSessionMatchesSeparateProcess(t *testing.T) {
	for _, sh := range localShells {
		t.Run(strings.Join(sh, " "), func(t *testing.T) { testSessionMatches(t, sh) })
	}
}

func testSessionMatches(t *testing.T, shell []string) {
	s := startLocalSession(t, shell...)
	marker := filepath.Join(t.TempDir(), "pwned")
	tests := [][]string{
		{"echo", "hello world"},
		{"printf", "%s", "no trailing newline"},
		{"printf", "a\n\n\n"},
		{"true"},
		{"false"},
		{"sh", "-c", "echo out; echo err >&2; printf partial; printf e >&2; exit 3"},
		{"sh", "-c", "exit 255"},
		// Every argument must arrive as is: nothing is expanded, split,
		// globbed or executed by the session shell.
		{"printf", "[%s]\n", "it's", "$(touch " + marker + ")", "`touch " + marker + "`", "a  b", "*", "new\nline",
			"", `\`, `"q"`, "$HOME", "; touch " + marker, "--", "-n", "tab\there", "ünïcödé", "'", "''"},
		// A builtin of the same name must not be used: /bin/echo and the
		// shell's echo differ on -e and -n.
		{"echo", "-e", `a\tb`},
		{"echo", "-n", "x"},
		// stdin is empty, as in an exec without stdin.
		{"cat"},
		{"head", "-c", "300000", "/dev/zero"},
		// The program found in PATH, never a shell applet of the same name
		// (busybox's sh would run its own ls and cat).
		{"ls", "--version"},
		{"cat", "--version"},
		{"sh", "-c", `printf '%s\n' "$0"`},
	}
	for _, argv := range tests {
		wantOut, wantErr, wantCode := direct(t, argv)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		out, errOut, code, err := s.run(ctx, argv)
		cancel()
		if err != nil {
			t.Fatalf("%q: %v", argv, err)
		}
		if string(out) != wantOut || string(errOut) != wantErr || code != wantCode {
			t.Errorf("%q:\n session stdout %q stderr %q exit %d\n direct  stdout %q stderr %q exit %d",
				argv, trunc(out), trunc(errOut), code, trunc([]byte(wantOut)), trunc([]byte(wantErr)), wantCode)
		}
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("an argument was executed by the session shell")
	}
}

func trunc(b []byte) string {
	if len(b) > 80 {
		return string(b[:80]) + "..."
	}
	return string(b)
}

func TestSessionNotFoundFallsBack(t *testing.T) {
	for _, sh := range localShells {
		t.Run(strings.Join(sh, " "), func(t *testing.T) {
			s := startLocalSession(t, sh...)
			testSessionNotFoundFallsBack(t, s)
		})
	}
}

func testSessionNotFoundFallsBack(t *testing.T, s *shellSession) {
	dir := t.TempDir()
	notExec := filepath.Join(dir, "script")
	if err := os.WriteFile(notExec, []byte("#!/bin/sh\necho hi\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, argv := range [][]string{{"no-such-command-labrun"}, {"/no/such/path"}, {notExec}, {dir}} {
		_, _, _, err := s.run(context.Background(), argv)
		if !errors.Is(err, errUseSeparateExec) {
			t.Errorf("%q: got %v, want errUseSeparateExec (the runtime must report it)", argv, err)
		}
	}
	// The session is still usable afterwards.
	out, _, code, err := s.run(context.Background(), []string{"echo", "still here"})
	if err != nil || string(out) != "still here\n" || code != 0 {
		t.Errorf("after fallbacks: %q %d %v", out, code, err)
	}
}

func TestSessionSignalExitCode(t *testing.T) {
	for _, sh := range localShells {
		t.Run(strings.Join(sh, " "), func(t *testing.T) {
			s := startLocalSession(t, sh...)
			testSessionSignalExitCode(t, s)
		})
	}
}

func testSessionSignalExitCode(t *testing.T, s *shellSession) {
	out, errOut, code, err := s.run(context.Background(), []string{"sh", "-c", "echo before; kill -TERM $$"})
	if err != nil || code != 128+15 {
		t.Errorf("got exit %d err %v, want 143 (128+SIGTERM, as the runtime reports it)", code, err)
	}
	// Some shells announce a child killed by a signal ("Terminated"); that
	// is the session shell talking, not the command, and must not show.
	if string(out) != "before\n" || len(errOut) != 0 {
		t.Errorf("stdout %q stderr %q, want %q and nothing", out, errOut, "before\n")
	}
}

// A container's environment usually has neither PWD nor SHLVL: the
// session must not add them.
func TestSessionMinimalEnvironment(t *testing.T) {
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=/root", "LABRUN_X=a b"}
	for _, sh := range localShells {
		t.Run(strings.Join(sh, " "), func(t *testing.T) {
			s := startLocalSessionEnv(t, env, sh...)
			out, _, _, err := s.run(context.Background(), []string{"env"})
			if err != nil {
				t.Fatal(err)
			}
			lines := slices.DeleteFunc(strings.Split(strings.TrimSpace(string(out)), "\n"), func(l string) bool { return strings.HasPrefix(l, "_=") })
			slices.Sort(lines)
			want := slices.Clone(env)
			slices.Sort(want)
			if !slices.Equal(lines, want) {
				t.Errorf("env in the session: %q, want %q", lines, want)
			}
		})
	}
}

func TestSessionEnvironment(t *testing.T) {
	for _, sh := range localShells {
		t.Run(strings.Join(sh, " "), func(t *testing.T) {
			s := startLocalSession(t, sh...)
			testSessionEnvironment(t, s)
		})
	}
}

func testSessionEnvironment(t *testing.T, s *shellSession) {
	want, _, _ := direct(t, []string{"env"})
	out, _, _, err := s.run(context.Background(), []string{"env"})
	if err != nil {
		t.Fatal(err)
	}
	// Same variables and values; the order is the shell's, and bash
	// exports "_" itself (both documented).
	sorted := func(s string) string {
		lines := slices.DeleteFunc(strings.Split(strings.TrimSpace(s), "\n"), func(l string) bool { return strings.HasPrefix(l, "_=") })
		slices.Sort(lines)
		return strings.Join(lines, "\n")
	}
	if sorted(string(out)) != sorted(want) {
		t.Errorf("environment differs:\n%s", lineDiffLocal(sorted(want), sorted(string(out))))
	}
}

func lineDiffLocal(a, b string) string {
	as, bs := strings.Split(a, "\n"), strings.Split(b, "\n")
	var d []string
	for _, l := range as {
		if !slices.Contains(bs, l) {
			d = append(d, "-"+l)
		}
	}
	for _, l := range bs {
		if !slices.Contains(as, l) {
			d = append(d, "+"+l)
		}
	}
	return strings.Join(d, "\n")
}

func TestSessionEndsDuringCommand(t *testing.T) {
	s := startLocalSession(t)
	// Kill the shell itself from inside the command: the outcome is
	// unknown, which must be an error, never an exit code.
	_, _, _, err := s.run(context.Background(), []string{"sh", "-c", "kill -KILL $PPID; sleep 0.3"})
	if err == nil || !strings.Contains(err.Error(), "outcome unknown") {
		t.Errorf("got %v, want an 'outcome unknown' error", err)
	}
}

func TestSessionContextCancel(t *testing.T) {
	s := startLocalSession(t)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, _, _, err := s.run(ctx, []string{"sleep", "5"})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("got %v, want deadline exceeded", err)
	}
}

func TestShellQuote(t *testing.T) {
	for in, want := range map[string]string{
		"":      `''`,
		"a b":   `'a b'`,
		"it's":  `'it'\''s'`,
		"$(x)":  `'$(x)'`,
		"a\nb":  "'a\nb'",
		`\`:     `'\'`,
		"'":     `''\'''`,
		"plain": `'plain'`,
	} {
		if got := shellQuote(in); got != want {
			t.Errorf("shellQuote(%q) = %s, want %s", in, got, want)
		}
	}
}
