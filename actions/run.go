package actions

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/labrun/labrun/internal/lang/diag"
	"github.com/labrun/labrun/internal/lang/eval"
)

// RunSpec runs a local program. The command is an argv list and is never
// passed through a shell; a step that needs one says so with
// argv: [sh, -c, ...].
type RunSpec struct {
	Argv         []string          `yaml:"argv" required:"true" doc:"Program and arguments. No shell is involved: use [sh, -c, script] to ask for one."`
	Via          []string          `yaml:"via" doc:"Argv prefix that runs the command elsewhere, e.g. a test cluster's node shell ([/var/lib/labrun-testbed/bin/node-exec]). Empty runs it here."`
	Stdin        string            `yaml:"stdin" doc:"Text written to the program's standard input."`
	Env          map[string]string `yaml:"env" doc:"Environment variables added to labrun's own."`
	Dir          string            `yaml:"dir" doc:"Working directory (default: the playbook's directory)."`
	AllowFailure bool              `yaml:"allowFailure" doc:"Treat a non-zero exit code as a result instead of a step failure (assert on result.exitCode)."`
	Timeout      time.Duration     `yaml:"timeout" doc:"Kill the program (and its process group) after this long."`
	Mutates      bool              `yaml:"mutates" doc:"The command changes the system: labrun check skips the step and until may not repeat it."`
}

// RunResult is what a finished program left.
type RunResult struct {
	// Argv is the command as run: the spec's via prefix, then its argv.
	Argv []string `json:"argv" expr:"argv"`
	// Stdout and Stderr are everything the program wrote to each, as
	// text (at most 256 MiB each).
	Stdout string `json:"stdout" expr:"stdout"`
	Stderr string `json:"stderr" expr:"stderr"`
	// ExitCode is the program's exit status: 0 on success, what it
	// exited with otherwise (a step fails on non-zero unless it has
	// allowFailure); -1 when a signal killed it.
	ExitCode int `json:"exitCode" expr:"exitCode"`
	// Seconds is the program's wall time, from start to exit.
	Seconds float64 `json:"seconds" expr:"seconds"`
}

// maxOutput bounds captured output; a conntrack dump of 200k entries is
// about 50 MB.
const maxOutput = 256 << 20

func init() {
	Register(Def[RunSpec, RunResult]{
		Name:  "run",
		Cost:  NewProcess,
		Doc:   "Run a local program from an argv list (no shell) and capture stdout, stderr, exit code and duration.",
		Run:   runProgram,
		Check: checkRun,
		Host:  runHost,

		MutatesKey: "mutates",
	})
}

// checkRun refuses at validate time what exec would refuse at run time:
// a NUL byte in an argument, an environment name that cannot be set; and
// an argument YAML reads as no value (nullArgs).
func checkRun(spec *eval.Value, sc *StaticContext) diag.List {
	errs := nullArgs(spec, "via", "argv")
	for _, key := range []string{"via", "argv"} {
		for i, item := range spec.Lookup(key).Items() {
			if lit, ok := item.Literal(); ok {
				if s, ok := lit.(string); ok && strings.IndexByte(s, 0) >= 0 {
					errs.Add(item.Pos, "%s item %d holds a NUL byte, which no program can receive", key, i+1)
				}
			}
		}
	}
	if env := spec.Lookup("env"); env != nil {
		for _, k := range env.Keys() {
			if err := checkEnvName(k); err != nil {
				errs.Add(env.KeyPos(k), "%v", err)
			}
		}
	}
	return errs
}

// checkEnvName refuses a name the environment cannot carry: NAME=value
// has no room for an = or a NUL byte in NAME.
func checkEnvName(k string) error {
	if k == "" || strings.ContainsAny(k, "=\x00") {
		return fmt.Errorf("env name %q cannot be set: it must be non-empty, without = or a NUL byte", k)
	}
	return nil
}

func runProgram(ctx context.Context, rt *Runtime, spec *RunSpec) (*RunResult, error) {
	argv := append(append([]string{}, spec.Via...), spec.Argv...)
	if len(spec.Argv) == 0 || spec.Argv[0] == "" {
		return nil, errors.New("argv is empty")
	}
	for i, a := range argv {
		if strings.IndexByte(a, 0) >= 0 {
			return nil, fmt.Errorf("argument %d of %s holds a NUL byte, which no program can receive", i+1, ShellQuote(argv[:1]))
		}
	}
	for k := range spec.Env {
		if err := checkEnvName(k); err != nil {
			return nil, err
		}
	}
	if spec.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, spec.Timeout)
		defer cancel()
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = spec.Dir
	if cmd.Dir == "" {
		cmd.Dir = rt.PlaybookDir
	}
	cmd.Env = os.Environ()
	for k, v := range spec.Env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	if spec.Stdin != "" {
		cmd.Stdin = strings.NewReader(spec.Stdin)
	}
	var stdout, stderr limitedBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	// Its own process group, so a timeout or Ctrl-C kills what the program
	// started too, not only the program. Pdeathsig: the kernel kills the
	// program when labrun dies without a chance to (SIGKILL); what the
	// program started itself is not reached that way.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
	start := time.Now()
	err := cmd.Start()
	if err == nil {
		done := running.add(cmd.Process.Pid)
		err = cmd.Wait()
		done()
	}
	res := &RunResult{
		Argv:    argv,
		Stdout:  stdout.String(),
		Stderr:  stderr.String(),
		Seconds: time.Since(start).Seconds(),
	}
	if stdout.over || stderr.over {
		return res, fmt.Errorf("%s printed more than %d MiB", argv[0], maxOutput>>20)
	}
	var exitErr *exec.ExitError
	switch {
	case err == nil:
	case ctx.Err() != nil:
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return res, fmt.Errorf("%s did not finish within the time limit; killed (stderr: %s)", argv[0], tail(res.Stderr))
		}
		return res, ctx.Err()
	case errors.As(err, &exitErr):
		res.ExitCode = exitErr.ExitCode()
		if res.ExitCode < 0 { // killed by a signal
			return res, fmt.Errorf("%s was killed: %w", argv[0], err)
		}
		if !spec.AllowFailure {
			return res, fmt.Errorf("%s exited with code %d: %s", ShellQuote(argv), res.ExitCode, tail(res.Stderr))
		}
	default:
		return res, fmt.Errorf("cannot run %s: %w", argv[0], err)
	}
	return res, nil
}

// runHost: the program runs on the machine labrun runs on, or through a
// via prefix somewhere else: in a pod, its image must hold the program,
// and what it reads (network, processes, files) is the pod's unless the
// pod shares the node's or via enters them.
func runHost(spec *RunSpec, hc *HostContext) []HostNeed {
	prog, ok := firstArg(hc, "argv")
	if !ok {
		prog = "(one known only when the step runs)"
	}
	return []HostNeed{programNeed(spec.Via, hc.Unknown("via"), prog)}
}

// programNeed is what running prog through the via prefix needs (a
// prefix known only at the run when viaUnknown): the run action's
// programs and a capture's tcpdump alike.
func programNeed(via []string, viaUnknown bool, prog string) HostNeed {
	if viaUnknown {
		return HostNeed{
			What:  "programs run through a via prefix known only when the step runs",
			Of:    prog,
			InPod: "what that prefix needs: its program in the pod's image and a way to where it runs the command",
		}
	}
	if len(via) == 0 {
		return HostNeed{
			What:  "programs run on the machine labrun runs on",
			Of:    prog,
			InPod: "each in the pod's image (labrun's own image holds none); they see the pod's network, processes and files, not the node's, unless the pod has hostNetwork: true and hostPID: true",
		}
	}
	need := HostNeed{What: "programs run through " + ShellQuote(via), Of: prog}
	switch filepath.Base(via[0]) {
	case "nsenter":
		need.InPod = "nsenter in the pod's image, hostPID: true and CAP_SYS_ADMIN and CAP_SYS_PTRACE (privileged: true), so that it enters the node's namespaces and runs the node's own programs"
	case "ssh":
		need.InPod = "ssh in the pod's image, the key mounted from a Secret, and a network path to the machine"
	default:
		need.InPod = via[0] + " in the pod's image (or mounted from the node), and what it needs to reach where it runs the command"
	}
	return need
}

// firstArg is the first item of the list under key, when it is known
// before the run (the rest of the list may not be).
func firstArg(hc *HostContext, key string) (string, bool) {
	v := hc.Spec.Lookup(key)
	if v == nil || len(v.Items()) == 0 {
		return "", false
	}
	x, known, err := hc.Eval(v.Items()[0])
	s, ok := x.(string)
	if !known || err != nil || !ok || s == "" {
		return "", false
	}
	return s, true
}

// running holds the process groups of the programs running now.
var running = &groups{pgids: map[int]bool{}}

// groups is a set of process groups that can be killed all at once.
type groups struct {
	mu     sync.Mutex
	pgids  map[int]bool
	killed bool // after KillRunning, a program that starts is killed at once
}

// add records the group pgid while its program runs; done forgets it.
func (g *groups) add(pgid int) (done func()) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.killed {
		syscall.Kill(-pgid, syscall.SIGKILL)
	}
	g.pgids[pgid] = true
	return func() {
		g.mu.Lock()
		defer g.mu.Unlock()
		delete(g.pgids, pgid)
	}
}

// KillRunning kills the whole process group of every program running
// now, and of any that starts after: for labrun exiting at once (a second
// Ctrl-C) without waiting for its steps, so that no program it started
// outlives it.
func KillRunning() {
	running.mu.Lock()
	defer running.mu.Unlock()
	running.killed = true
	for pgid := range running.pgids {
		syscall.Kill(-pgid, syscall.SIGKILL)
	}
}

// ShellQuote renders argv the way a person would type it, for messages
// only: labrun itself never hands a command line to a shell.
func ShellQuote(argv []string) string {
	out := make([]string, len(argv))
	for i, a := range argv {
		if a != "" && strings.Trim(a, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=,@%+") == "" {
			out[i] = a
			continue
		}
		out[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(out, " ")
}

// tail keeps the end of a program's error output for a message.
func tail(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return "no error output"
	}
	if len(s) > 500 {
		s = "..." + s[len(s)-497:]
	}
	return s
}

// limitedBuffer stops growing at maxOutput and remembers it overflowed.
type limitedBuffer struct {
	bytes.Buffer
	over bool
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if b.Len()+len(p) > maxOutput {
		b.over = true
		return len(p), nil
	}
	return b.Buffer.Write(p)
}
