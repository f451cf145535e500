package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"

	"github.com/labrun/labrun/diag"
	"github.com/labrun/labrun/parse"
)

// parseCmd shows what a playbook gets from captured tool output: the typed
// result of a parser, as JSON.
func parseCmd(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 || len(args) > 2 || args[0] == "-h" || args[0] == "--help" {
		fmt.Fprintln(stderr, "Usage: labrun parse KIND [FILE|-]\n\nKinds (expression function in parentheses):")
		kinds := make([]string, 0, len(parse.All))
		for _, p := range parse.All {
			kinds = append(kinds, fmt.Sprintf("  %-24s %s (%s)", p.Kind, p.Doc, p.Func))
		}
		sort.Strings(kinds)
		for _, k := range kinds {
			fmt.Fprintln(stderr, k)
		}
		if len(args) == 1 && (args[0] == "-h" || args[0] == "--help") {
			return exitOK
		}
		return exitInvalid
	}
	p, ok := parse.Lookup(args[0])
	if !ok {
		var kinds []string
		for _, p := range parse.All {
			kinds = append(kinds, p.Kind)
		}
		fmt.Fprintf(stderr, "labrun parse: unknown kind %q%s; run 'labrun parse' for the list\n", args[0], diag.DidYouMean(args[0], kinds))
		return exitInvalid
	}
	in := stdin
	if len(args) == 2 && args[1] != "-" {
		f, err := os.Open(args[1])
		if err != nil {
			fmt.Fprintf(stderr, "labrun parse: %v\n", err)
			return exitInvalid
		}
		defer f.Close()
		in = f
	}
	data, err := io.ReadAll(in)
	if err != nil {
		fmt.Fprintf(stderr, "labrun parse: %v\n", err)
		return exitInvalid
	}
	v, err := p.Parse(string(data))
	if err != nil {
		fmt.Fprintf(stderr, "labrun parse: %v\n", err)
		return exitFailed
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false) // "<nil>" and "->" stay readable
	if err := enc.Encode(v); err != nil {
		fmt.Fprintf(stderr, "labrun parse: %v\n", err)
		return exitFailed
	}
	return exitOK
}
