// Command labrun runs hands-on Kubernetes and Cilium labs from declarative
// YAML playbooks: it solves a lab (run), grades a learner's work (check),
// and checks a playbook without any cluster (validate).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"

	"github.com/labrun/labrun/actions"
	_ "github.com/labrun/labrun/actions/all" // registers every action
	"github.com/labrun/labrun/console"
	"github.com/labrun/labrun/diag"
	"github.com/labrun/labrun/internal/kubecluster"
	"github.com/labrun/labrun/kube"
	"github.com/labrun/labrun/playbookschema"
	"github.com/labrun/labrun/report"
	"github.com/labrun/labrun/runner"
	"github.com/spf13/pflag"
)

// Exit codes, documented in the README.
const (
	exitOK          = 0
	exitFailed      = 1
	exitInvalid     = 2
	exitInterrupted = 130
)

var version = "dev"

const usage = `labrun runs hands-on Kubernetes and Cilium labs from YAML playbooks.

Usage:
  labrun [run] PLAYBOOK [flags]     solve the lab: run every step
  labrun check PLAYBOOK [flags]     grade a learner's files: read-only steps and assertions only
  labrun validate PLAYBOOK...       check playbooks without a cluster and print their plans
  labrun eval PLAYBOOK EXPR...      evaluate expressions on the results a run left in the journal
  labrun schema                     print the playbook JSON Schema
  labrun actions                    list actions, their spec fields and result types, and functions
  labrun parse KIND [FILE|-]        print the typed result of a tool-output parser as JSON
  labrun version                    print the version

Exit codes: 0 passed, 1 a step or assertion failed, 2 invalid input, 130 interrupted.
Run 'labrun COMMAND --help' for a command's flags.
`

func main() {
	os.Exit(Main(os.Args[1:], os.Stdout, os.Stderr))
}

// Main runs the command line and returns the exit code; tests call it.
func Main(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return exitInvalid
	}
	cmd, rest := args[0], args[1:]
	switch cmd {
	case "run":
		return runCmd(rest, actions.Solve, stdout, stderr)
	case "check":
		return runCmd(rest, actions.Check, stdout, stderr)
	case "validate":
		return validateCmd(rest, stdout, stderr)
	case "eval":
		return evalCmd(rest, stdout, stderr)
	case "schema":
		return schemaCmd(rest, stdout, stderr)
	case "actions":
		return actionsCmd(rest, stdout, stderr)
	case "parse":
		return parseCmd(rest, os.Stdin, stdout, stderr)
	case "version":
		fmt.Fprintln(stdout, "labrun", version)
		return exitOK
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return exitOK
	}
	if strings.HasPrefix(cmd, "-") || strings.HasSuffix(cmd, ".yaml") || strings.HasSuffix(cmd, ".yml") || fileExists(cmd) {
		return runCmd(args, actions.Solve, stdout, stderr)
	}
	fmt.Fprintf(stderr, "labrun: unknown command %q%s\n\n%s", cmd, diag.DidYouMean(cmd, []string{"run", "check", "validate", "eval", "schema", "actions", "parse", "version"}), usage)
	return exitInvalid
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// varFlags are the flags every command that loads a playbook shares.
type varFlags struct {
	set  []string
	vars []string
}

func (v *varFlags) register(fs *pflag.FlagSet) {
	fs.StringArrayVar(&v.set, "set", nil, "override a variable: name=value (YAML-typed: numbers stay numbers); repeatable")
	fs.StringArrayVar(&v.vars, "vars", nil, "YAML file of variable overrides (name: value); repeatable, later wins; --set wins over files")
}

func (v *varFlags) options() runner.Options {
	return runner.Options{Set: v.set, VarsFiles: v.vars}
}

func newFlagSet(name string, stderr io.Writer, help string) *pflag.FlagSet {
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, help)
		fs.PrintDefaults()
	}
	return fs
}

// printLoadError prints diagnostics one per line and returns exit 2.
func printLoadError(stderr io.Writer, err error) int {
	for _, e := range diagnostics("", err) {
		fmt.Fprintln(stderr, e.Error())
	}
	return exitInvalid
}

func runCmd(args []string, mode actions.Mode, stdout, stderr io.Writer) int {
	name := "run"
	if mode == actions.Check {
		name = "check"
	}
	fs := newFlagSet(name, stderr, fmt.Sprintf("Usage: labrun %s PLAYBOOK [flags]\n\nFlags:\n", name))
	var vf varFlags
	vf.register(fs)
	reports := fs.StringArray("report", nil, "write a report: FORMAT=FILE with FORMAT json or junit; repeatable")
	from := fs.String("from", "", "resume at this step, restoring earlier results from the journal in the output directory")
	dryRun := fs.Bool("dry-run", false, "validate and print the plan; run nothing")
	verbose := fs.BoolP("verbose", "v", false, "print each step as it starts")
	noProgress := fs.Bool("no-progress", false, "plain lines even on a terminal")
	sequential := fs.Bool("sequential", false, "run the branches of parallel steps one after another, in the order written")
	timeout := fs.Duration("timeout", 0, "time limit for the steps of the whole run (e.g. 10m); finally steps still run after it")
	kubeconfig := fs.String("kubeconfig", "", "kubeconfig file (default: $KUBECONFIG, ~/.kube/config, then /etc/rancher/k3s/k3s.yaml)")
	kubeContext := fs.String("context", "", "kubeconfig context to use (default: its current context)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return exitOK
		}
		return exitInvalid
	}
	if fs.NArg() != 1 {
		fmt.Fprintf(stderr, "labrun %s: expected exactly one playbook, got %d\n", name, fs.NArg())
		return exitInvalid
	}
	type reportReq struct{ format, path string }
	var reqs []reportReq
	for _, r := range *reports {
		format, path, ok := strings.Cut(r, "=")
		if !ok || path == "" || (format != "json" && format != "junit") {
			fmt.Fprintf(stderr, "labrun %s: --report %q: expected json=FILE or junit=FILE\n", name, r)
			return exitInvalid
		}
		reqs = append(reqs, reportReq{format, path})
	}
	plan, err := runner.Load(fs.Arg(0), vf.options())
	if err != nil {
		return printLoadError(stderr, err)
	}
	if *dryRun {
		printPlan(stdout, plan)
		return exitOK
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		// A second Ctrl-C while cleanup runs ends labrun at once.
		<-ctx.Done()
		stop()
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
		<-sig
		fmt.Fprintln(stderr, "labrun: interrupted again; stopping without finishing cleanup")
		os.Exit(exitInterrupted)
	}()

	live := false
	if f, ok := stdout.(*os.File); ok && !*noProgress {
		live = console.IsTerminal(f)
	}
	r := &runner.Runner{
		Plan: plan,
		Runtime: &actions.Runtime{
			Mode:    mode,
			Cluster: kubecluster.Lazy(kube.ConnectOptions{Kubeconfig: *kubeconfig, Context: *kubeContext}),
		},
		Observer: console.New(stdout, live, *verbose),
		From:     *from,
		// Grading goes on after a wrong file, so the learner sees every
		// problem at once.
		KeepGoing:  mode == actions.Check,
		Sequential: *sequential,
		Timeout:    *timeout,
	}
	out, err := r.Run(ctx)
	defer r.Runtime.Out.Close()
	if err != nil {
		fmt.Fprintf(stderr, "labrun %s: %v\n", name, err)
		return exitInvalid
	}
	for _, rq := range reqs {
		if err := report.Write(rq.format, rq.path, out, r.Runtime.Out); err != nil {
			fmt.Fprintf(stderr, "labrun %s: cannot write %s report: %v\n", name, rq.format, err)
			return exitFailed
		}
	}
	switch out.Status {
	case runner.Interrupted:
		return exitInterrupted
	case runner.Failed:
		return exitFailed
	}
	return exitOK
}

func validateCmd(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("validate", stderr, "Usage: labrun validate PLAYBOOK... [flags]\n\nChecks playbooks without a cluster: YAML, keys, types, references and expressions.\n\nFlags:\n")
	var vf varFlags
	vf.register(fs)
	quiet := fs.BoolP("quiet", "q", false, "print only errors")
	format := fs.String("format", "text", "how to print errors: text (file:line:col: message, on stderr), json (one array on stdout, for tools) or github (workflow commands on stdout, which GitHub Actions shows on the lines)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return exitOK
		}
		return exitInvalid
	}
	if fs.NArg() == 0 {
		fmt.Fprintln(stderr, "labrun validate: expected at least one playbook")
		return exitInvalid
	}
	if *format != "text" && *format != "json" && *format != "github" {
		fmt.Fprintf(stderr, "labrun validate: --format %q: expected text, json or github\n", *format)
		return exitInvalid
	}
	if handWritten(fs.Args()) {
		// Compiling a hand-written playbook allocates a few MB, and
		// collecting it on the way costs more than the memory it frees
		// (a third of the time for cca-datapath): no collection unless
		// the heap reaches the limit. Generated playbooks of thousands
		// of steps keep the usual collector.
		defer debug.SetGCPercent(debug.SetGCPercent(-1))
		defer debug.SetMemoryLimit(debug.SetMemoryLimit(128 << 20))
	}
	code := exitOK
	var problems []*diag.Error
	for _, path := range fs.Args() {
		plan, err := runner.Load(path, vf.options())
		if err != nil {
			code = exitInvalid
			if *format == "text" {
				printLoadError(stderr, err)
			} else {
				problems = append(problems, diagnostics(path, err)...)
			}
			continue
		}
		if !*quiet && *format == "text" {
			printPlan(stdout, plan)
		}
	}
	switch *format {
	case "json":
		printJSONProblems(stdout, problems)
	case "github":
		for _, p := range problems {
			fmt.Fprintln(stdout, githubCommand(p))
		}
	}
	return code
}

// diagnostics are the positioned errors of a failed load; an error
// without a position is placed on path, the playbook file.
func diagnostics(path string, err error) []*diag.Error {
	var list diag.List
	if errors.As(err, &list) {
		return list
	}
	if one, ok := err.(*diag.Error); ok {
		return []*diag.Error{one}
	}
	return []*diag.Error{{Pos: diag.Pos{File: path}, Msg: err.Error()}}
}

// printJSONProblems writes the errors as one JSON array: file, line and
// column (0 when unknown) and the message.
func printJSONProblems(w io.Writer, problems []*diag.Error) {
	type problem struct {
		File    string `json:"file"`
		Line    int    `json:"line"`
		Column  int    `json:"column"`
		Message string `json:"message"`
	}
	out := make([]problem, 0, len(problems))
	for _, p := range problems {
		out = append(out, problem{File: p.Pos.File, Line: p.Pos.Line, Column: p.Pos.Col, Message: p.Msg})
	}
	b, _ := json.MarshalIndent(out, "", "  ")
	fmt.Fprintln(w, string(b))
}

// githubCommand renders an error as a GitHub Actions workflow command, so
// a lab repository's CI shows it on the playbook's line. Property values
// and the message are escaped as the runner expects.
func githubCommand(p *diag.Error) string {
	prop := strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C")
	msg := strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A")
	cmd := "::error file=" + prop.Replace(p.Pos.File)
	if p.Pos.Line > 0 {
		cmd += fmt.Sprintf(",line=%d", p.Pos.Line)
		if p.Pos.Col > 0 {
			cmd += fmt.Sprintf(",col=%d", p.Pos.Col)
		}
	}
	return cmd + ",title=labrun validate::" + msg.Replace(p.Msg)
}

// printPlan shows what a run would do, step by step.
func printPlan(w io.Writer, p *runner.Plan) {
	mut := 0
	for _, s := range p.Steps {
		if s.Mutates {
			mut++
		}
	}
	fmt.Fprintf(w, "%s: %s: valid, %s (%d change the system)\n", p.Playbook.File, p.Playbook.Name, plural(len(p.Steps), "step"), mut)
	for _, s := range p.Steps {
		flag := "  "
		if s.Mutates {
			flag = "M "
		}
		prefix := fmt.Sprintf("%3d", s.Index+1)
		if s.Cleanup {
			prefix = "fin"
		}
		name := s.ID
		if s.Group != nil {
			name = "  " + s.Branch + ": " + s.ID
		}
		line := fmt.Sprintf("  %s %s%-22s %-8s", prefix, flag, name, s.ActionName())
		if s.Loop != nil {
			if e := s.Loop.WholeExpr(); e != nil {
				line += " loop " + e.Src
			} else {
				line += " loop " + plural(len(s.Loop.Items()), "item")
			}
		}
		if s.Until != nil {
			line += " until " + s.Until.Src
		}
		fmt.Fprintln(w, strings.TrimRight(line, " "))
		if reads := s.Reads(); len(reads) > 0 {
			fmt.Fprintf(w, "          reads  %s\n", strings.Join(reads, ", "))
		}
		if wr := s.Writes(); wr != "" {
			fmt.Fprintf(w, "          writes %s\n", wr)
		}
	}
}

// handWritten reports whether the playbooks are of a size people write
// (under 256 KB together; cca-datapath is 25 KB).
func handWritten(paths []string) bool {
	var total int64
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			return false
		}
		total += fi.Size()
	}
	return total < 256<<10
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

func schemaCmd(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		fmt.Fprintln(stderr, "labrun schema: takes no arguments")
		return exitInvalid
	}
	b, err := playbookschema.Generate()
	if err != nil {
		fmt.Fprintln(stderr, "labrun schema:", err)
		return exitFailed
	}
	stdout.Write(b)
	return exitOK
}
