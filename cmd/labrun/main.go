// Command labrun runs hands-on Kubernetes and Cilium labs from declarative
// YAML playbooks: it solves a lab (run), grades a learner's work (check),
// and checks a playbook without any cluster (validate).
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/labrun/labrun/actions"
	_ "github.com/labrun/labrun/actions/all" // registers every action
	"github.com/labrun/labrun/cmd/labrun/internal/playbookschema"
	"github.com/labrun/labrun/internal/lang/diag"
	"github.com/labrun/labrun/internal/lang/visible"
	"github.com/labrun/labrun/runner"
	"github.com/spf13/pflag"
)

// Exit codes, documented in docs/exit-codes.md; exitcodes.go maps a
// run's class of failure to one.
const (
	exitOK        = 0
	exitFailed    = 1 // a wrong answer: a step or an assertion failed
	exitInvalid   = 2 // invalid input, a broken lab, a missing permission
	exitTransport = 3 // the cluster did not answer
	exitTimeout   = 4 // the run's or a step's time ran out
	// labrun test --repeat: a task passed some runs and failed others
	exitFlaky       = 5
	exitInterrupted = 130
)

const usage = `labrun runs hands-on Kubernetes and Cilium labs from YAML playbooks.

Usage:
  labrun [run] PLAYBOOK [flags]     solve the lab: run every step
  labrun check PLAYBOOK [flags]     grade a learner's files: read-only steps and assertions only
  labrun test PLAYBOOK [flags]      prove the grader: solve, check, change each value of each file (each change must fail), write each file other ways (each must pass); --repeat N: every task must pass every run
  labrun validate PLAYBOOK...       check playbooks without a cluster and print their plans
  labrun rbac PLAYBOOK [flags]      print the Roles granting the Kubernetes permissions the playbook needs, and what else it needs
  labrun fleet render|collect ...   grade a class as one Indexed Job of shards: print the Job, merge the results they stored
  labrun eval PLAYBOOK EXPR...      evaluate expressions on the results a run left in the journal
  labrun schema [--install DIR]     print the playbook JSON Schema, or install it for editors
  labrun actions [NAME]             list actions (what a step changes, spec fields, result) and functions
  labrun types [NAME]               list every field and method of the results expressions read
  labrun parse KIND [FILE|-]        print the typed result of a tool-output parser as JSON
  labrun version                    print the version

Exit codes: 0 passed, 1 a step or assertion failed (a wrong answer), 2 invalid input,
a broken lab or a missing permission, 3 the cluster did not answer, 4 timed out,
130 interrupted (docs/exit-codes.md).
Run 'labrun COMMAND --help' for a command's flags.
`

func main() {
	os.Exit(Main(os.Args[1:], os.Stdout, os.Stderr))
}

// Main runs the command line and returns the exit code; tests call it.
// stderr carries only messages, which may quote a playbook, a vars file,
// a cluster's answer or a learner's file: whatever a command writes
// there goes through visible.Text, so none can move the cursor, retitle
// the window or turn the text around. stdout holds progress and data
// (JSON, YAML): each of its printers escapes what it prints.
func Main(args []string, stdout, stderr io.Writer) int {
	stderr = visible.Writer(stderr)
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
	case "test":
		return testCmd(rest, stdout, stderr)
	case "validate":
		return validateCmd(rest, stdout, stderr)
	case "rbac":
		return rbacCmd(rest, stdout, stderr)
	case "fleet":
		return fleetCmd(rest, stdout, stderr)
	case "eval":
		return evalCmd(rest, stdout, stderr)
	case "schema":
		return schemaCmd(rest, stdout, stderr)
	case "actions":
		return actionsCmd(rest, stdout, stderr)
	case "parse":
		return parseCmd(rest, os.Stdin, stdout, stderr)
	case "types":
		return typesCmd(rest, stdout, stderr)
	case "version":
		return versionCmd(stdout)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return exitOK
	}
	if strings.HasPrefix(cmd, "-") || strings.HasSuffix(cmd, ".yaml") || strings.HasSuffix(cmd, ".yml") || fileExists(cmd) {
		return runCmd(args, actions.Solve, stdout, stderr)
	}
	fmt.Fprintf(stderr, "labrun: unknown command %q%s\n\n%s", cmd, diag.DidYouMean(cmd, []string{"run", "check", "test", "validate", "rbac", "fleet", "eval", "schema", "actions", "types", "parse", "version"}), usage)
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

// parseFlags parses a command's flags. Under ContinueOnError pflag prints
// none of its own errors, so a mistyped flag would exit 2 in silence; the
// error is printed here as one line naming the command.
func parseFlags(fs *pflag.FlagSet, args []string, stderr io.Writer) (code int, ok bool) {
	err := fs.Parse(args)
	switch {
	case err == nil:
		return 0, true
	case errors.Is(err, pflag.ErrHelp):
		return exitOK, false
	}
	fmt.Fprintf(stderr, "labrun %s: %v (labrun %s --help lists its flags)\n", fs.Name(), err, fs.Name())
	return exitInvalid, false
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

const schemaUsage = `Usage: labrun schema [--install DIR [--playbooks DIR]]

Prints the playbook JSON Schema, for editors. With --install DIR, writes it
to DIR/playbook.schema.json instead (DIR is made if missing) and prints the
modeline each playbook in the --playbooks directory (default: the current
one) puts on its first line: the schema's path relative to that
directory, as the editor's language server reads it. The "Editor schema"
section of labrun's docs/commands.md says how a lab repository wires it
up.

`

func schemaCmd(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("schema", stderr, schemaUsage)
	install := fs.String("install", "", "write the schema into this directory instead of printing it")
	playbooks := fs.String("playbooks", "", "with --install: the directory of the playbooks the printed modeline is for (default: the current directory)")
	if code, ok := parseFlags(fs, args, stderr); !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintln(stderr, "labrun schema: takes no arguments besides --install DIR and --playbooks DIR")
		return exitInvalid
	}
	if *playbooks != "" && *install == "" {
		fmt.Fprintln(stderr, "labrun schema: --playbooks says where the playbooks of --install DIR are; give --install DIR too")
		return exitInvalid
	}
	if *install != "" {
		where := *playbooks
		if where == "" {
			where = "."
		}
		abs, err := filepath.Abs(where)
		if err != nil {
			fmt.Fprintln(stderr, "labrun schema:", err)
			return exitInvalid
		}
		path, err := playbookschema.Install(*install)
		if err != nil {
			fmt.Fprintln(stderr, "labrun schema:", err)
			return exitInvalid
		}
		modeline, err := playbookschema.Modeline(abs, path)
		if err != nil {
			fmt.Fprintln(stderr, "labrun schema:", err)
			return exitInvalid
		}
		which := abs + " (--playbooks)"
		if *playbooks == "" {
			which = "the current directory, " + abs + " (--playbooks DIR for another)"
		}
		fmt.Fprintf(stdout, "wrote %s\nfirst line of each playbook in %s:\n%s\n", path, which, modeline)
		return exitOK
	}
	b, err := playbookschema.Generate()
	if err != nil {
		fmt.Fprintln(stderr, "labrun schema:", err)
		return exitFailed
	}
	stdout.Write(b)
	return exitOK
}
