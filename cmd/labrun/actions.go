package main

import (
	"fmt"
	"io"
	"reflect"
	"sort"
	"strings"

	"github.com/labrun/labrun/actions"
	"github.com/labrun/labrun/internal/lang/diag"
	"github.com/labrun/labrun/internal/lang/eval"
	"github.com/labrun/labrun/internal/lang/fields"
	"github.com/labrun/labrun/runner"
)

// actionsCmd documents every action (spec keys, result fields) and every
// function expressions can call, from the registry itself.
func actionsCmd(args []string, stdout, stderr io.Writer) int {
	all := actions.All()
	switch {
	case len(args) > 1:
		fmt.Fprintln(stderr, "labrun actions: takes at most one action name")
		return exitInvalid
	case len(args) == 1:
		a, ok := actions.Lookup(args[0])
		if !ok {
			fmt.Fprintf(stderr, "labrun actions: no action %q%s; expected one of %s\n", args[0], diag.DidYouMean(args[0], actions.Names()), strings.Join(actions.Names(), ", "))
			return exitInvalid
		}
		all = []*actions.Info{a}
	}
	for _, a := range all {
		fmt.Fprintf(stdout, "%s (%s)\n  %s\n  spec:\n", a.Name, a.Effect(), a.Doc)
		if a.Spec.Kind() != reflect.Struct || a.Result.Kind() != reflect.Struct {
			fmt.Fprintf(stdout, "    NAME: VALUE      names of your choosing\n  result:\n    NAME           the value's type\n\n")
			continue
		}
		for _, f := range fields.Of(a.Spec) {
			req := ""
			if f.Required {
				req = " (required)"
			}
			fmt.Fprintf(stdout, "    %-14s %-20s%s %s\n", f.Key, typeName(f.Type), req, f.Doc)
		}
		fmt.Fprintf(stdout, "  result:\n")
		fields := eval.ExprFields(a.Result)
		names := make([]string, 0, len(fields))
		for n := range fields {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			fmt.Fprintf(stdout, "    %-14s %s\n", n, typeName(fields[n]))
		}
		fmt.Fprintln(stdout)
	}
	if len(args) == 1 {
		return exitOK
	}
	fmt.Fprintln(stdout, "functions (besides expr-lang's builtins):")
	for _, f := range runner.DefaultFunctions() {
		fmt.Fprintf(stdout, "  %s\n      %s\n", f.Signature(), f.Doc)
	}
	return exitOK
}

// typeName renders Go types the way playbook authors think of them.
func typeName(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Pointer:
		return typeName(t.Elem())
	case reflect.Slice:
		return "list of " + typeName(t.Elem())
	case reflect.Map:
		return "map of " + typeName(t.Elem())
	case reflect.Interface:
		return "any"
	case reflect.Struct:
		if t.String() == "time.Time" {
			return "time"
		}
		return "object"
	}
	if t.String() == "time.Duration" {
		return "duration"
	}
	return strings.TrimPrefix(t.String(), "main.")
}
