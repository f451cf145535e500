package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/labrun/labrun/internal/lang/diag"
	"github.com/labrun/labrun/internal/lang/eval"
	"github.com/labrun/labrun/internal/lang/visible"
	"github.com/labrun/labrun/runner"
)

const evalHelp = `Usage: labrun eval PLAYBOOK EXPR... [flags]

Evaluates expressions on the results the last run of PLAYBOOK left in the
journal of its output directory, as if they stood after the last step:
checked against the steps' types, evaluated without a cluster and without
running anything. Each value is printed as JSON. Control characters and
bidi controls in a value are printed as escapes (\u001b), also with --raw.

  labrun eval --set out=/tmp/lab lab.yaml 'map(steps.pods.items, .metadata.name)'

Flags:
`

// evalCmd lets an author try expressions on what a run saw.
func evalCmd(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("eval", stderr, evalHelp)
	var vf varFlags
	vf.register(fs)
	raw := fs.BoolP("raw", "r", false, "print a string value as it is (control characters escaped), not as a JSON string")
	if code, ok := parseFlags(fs, args, stderr); !ok {
		return code
	}
	if fs.NArg() < 2 {
		fmt.Fprintln(stderr, "labrun eval: expected a playbook and at least one expression")
		return exitInvalid
	}
	plan, err := runner.Load(fs.Arg(0), vf.options())
	if err != nil {
		return printLoadError(stderr, err)
	}
	rec, err := runner.OpenRecorded(plan, nil)
	if err == nil {
		// an expression may read a secret variable: print it redacted
		stdout, stderr = rec.Secrets().Writer(stdout), rec.Secrets().Writer(stderr)
	}
	if err != nil {
		fmt.Fprintf(stderr, "labrun eval: %v\n", err)
		return exitInvalid
	}
	if len(rec.Missing) > 0 {
		fmt.Fprintf(stderr, "labrun eval: %s has no result of %s; they read as zero values\n", rec.Journal, strings.Join(rec.Missing, ", "))
	}
	code := exitOK
	for _, src := range fs.Args()[1:] {
		v, err := rec.Eval(src)
		if err != nil {
			fmt.Fprintln(stderr, err)
			// an expression that does not compile is bad input; one
			// that fails on the recorded values is a failure
			var bad *diag.Error
			if errors.As(err, &bad) {
				code = exitInvalid
			} else if code == exitOK {
				code = exitFailed
			}
			continue
		}
		if s, ok := v.(string); ok && *raw {
			fmt.Fprintln(stdout, visible.Text(s))
			continue
		}
		b, err := json.MarshalIndent(eval.Plain(v), "", "  ")
		if err != nil {
			fmt.Fprintf(stderr, "labrun eval: %s: %v\n", src, err)
			code = exitFailed
			continue
		}
		// JSON's own escapes for what encoding/json leaves as it is
		// (DEL, C1, bidi controls): the same value, shown
		fmt.Fprintln(stdout, visible.Text(string(b)))
	}
	return code
}
