package main

import (
	"fmt"
	"io"

	"github.com/labrun/labrun/cmd/labrun/internal/typeref"
	"github.com/labrun/labrun/internal/lang/diag"
	"github.com/labrun/labrun/runner"
)

const typesUsage = `Usage: labrun types [NAME]

Lists every field and method an expression can read on a result: each
action's result, each parser's, and the types they hold, with their types
and what they are. NAME narrows it to one action (bpfmap), parser (kind
cilium-bpf-ct-list or function parseCiliumBPFCTList) or type (Frontend),
with the types it leads to. docs/reference.md is the same, generated.
A field typed "X or null" can be null; its description says when.
`

// typesCmd prints the result reference, all of it or for one name.
func typesCmd(args []string, stdout, stderr io.Writer) int {
	if len(args) == 1 && (args[0] == "-h" || args[0] == "--help") {
		fmt.Fprint(stdout, typesUsage)
		return exitOK
	}
	if len(args) > 1 {
		fmt.Fprint(stderr, typesUsage)
		return exitInvalid
	}
	ref := typeref.Load(runner.DefaultFunctions())
	if len(args) == 0 {
		printRoots(stdout, "actions", ref.Actions)
		printRoots(stdout, "parsers", ref.Parsers)
		printRoots(stdout, "functions", ref.Functions)
		for _, t := range ref.Types {
			fmt.Fprintf(stdout, "\n%s\n", t)
		}
		return exitOK
	}
	return printType(ref, args[0], "labrun types", stdout, stderr)
}

// printType prints what name stands for and the types it leads to.
func printType(ref *typeref.Reference, name, cmd string, stdout, stderr io.Writer) int {
	root, t, ok := ref.Lookup(name)
	if !ok {
		fmt.Fprintf(stderr, "%s: no action, parser, function or type named %q%s; run 'labrun types' for them all\n", cmd, name, diag.DidYouMean(name, ref.Names()))
		return exitInvalid
	}
	if root != nil {
		printRoots(stdout, root.Kind, []typeref.Root{*root})
	}
	if t == nil {
		return exitOK // compute: its spec names its fields
	}
	for _, u := range ref.Closure(t) {
		fmt.Fprintf(stdout, "\n%s\n", u)
	}
	return exitOK
}

func printRoots(w io.Writer, title string, roots []typeref.Root) {
	if len(roots) == 0 {
		return
	}
	fmt.Fprintf(w, "%s:\n", title)
	for _, r := range roots {
		name := r.Name
		if r.Func != "" {
			name += " (" + r.Func + ")"
		}
		t := r.Type
		if t == "" {
			t = "fields named by its spec, each typed by its value"
		}
		fmt.Fprintf(w, "  %-40s %s\n", name, t)
	}
}
