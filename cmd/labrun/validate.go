package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"

	"github.com/labrun/labrun/internal/lang/diag"
	"github.com/labrun/labrun/internal/lang/visible"
	"github.com/labrun/labrun/runner"
)

// validateCmd is labrun validate: every playbook is compiled with no
// cluster, and every problem of every file is printed, in the format asked
// for, before the exit code says whether any was found.
func validateCmd(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("validate", stderr, "Usage: labrun validate PLAYBOOK... [flags]\n\nChecks playbooks without a cluster: YAML, keys, types, references, expressions, and the objects apply steps send against their kinds' schemas.\n\nFlags:\n")
	var vf varFlags
	vf.register(fs)
	quiet := fs.BoolP("quiet", "q", false, "print only errors")
	format := fs.String("format", "text", "how to print errors: text (file:line:col: message, on stderr), json (one array on stdout, for tools) or github (workflow commands on stdout, which GitHub Actions shows on the lines)")
	if code, ok := parseFlags(fs, args, stderr); !ok {
		return code
	}
	if fs.NArg() == 0 {
		fmt.Fprintln(stderr, "labrun validate: expected at least one playbook")
		return exitInvalid
	}
	if *format != "text" && *format != "json" && *format != "github" {
		fmt.Fprintf(stderr, "labrun validate: --format %q: expected text, json or github\n", *format)
		return exitInvalid
	}
	switch {
	case handWritten(fs.Args()):
		// Compiling a hand-written playbook allocates a few MB, and
		// collecting it on the way costs more than the memory it frees
		// (a third of the time for cca-datapath): no collection unless
		// the heap reaches the limit.
		defer debug.SetGCPercent(debug.SetGCPercent(-1))
		defer debug.SetMemoryLimit(debug.SetMemoryLimit(128 << 20))
	case os.Getenv("GOGC") == "":
		// A generated playbook of thousands of steps keeps nearly all
		// it allocates (its node tree, then its plan) until the end, so
		// each collection rescans live memory for little: at 300% instead
		// of 100%, validate of the 10,000-step benchmark playbook
		// (runnertest.Generated) takes 0.6 s of CPU instead of 0.75 s, for
		// 165 MB instead of 145 (100,000 steps: 1.07 GB instead of 0.96).
		defer debug.SetGCPercent(debug.SetGCPercent(300))
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
		if *format == "text" {
			for _, w := range plan.Warnings.Sort() {
				fmt.Fprintf(stderr, "%s: warning: %s\n", w.Pos, w.Msg)
			}
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

// printPlan shows what a run would do, step by step. The plan is written
// in one piece at the end: a generated playbook's is thousands of lines,
// and a write of whole lines is what a redacting writer expects. The
// playbook's name and task titles, one line each, go through
// visible.Line, and the whole plan through visible.Text (expressions
// and the paths written may hold any character).
func printPlan(out io.Writer, p *runner.Plan) {
	w := &bytes.Buffer{}
	defer func() { out.Write(visible.Bytes(w.Bytes())) }()
	mut := 0
	for _, s := range p.Steps {
		if s.Mutates {
			mut++
		}
	}
	tasks := ""
	if len(p.Tasks) > 0 {
		tasks = ", " + plural(len(p.Tasks), "task")
	}
	fmt.Fprintf(w, "%s: %s: valid, %s (%d change the system)%s\n", p.Playbook.File, visible.Line(p.Playbook.Name), plural(len(p.Steps), "step"), mut, tasks)
	for _, t := range p.Tasks {
		fmt.Fprintf(w, "  task %d %s: %s\n", t.Number, t.ID, visible.Line(t.Title))
	}
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
		if s.Around != nil {
			name = "  during: " + s.ID
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
		if s.Only != "" {
			line += " only " + s.Only
		}
		fmt.Fprintln(w, strings.TrimRight(line, " "))
		if s.Task != nil && (s.Group == nil || s.Task != s.Group.Task) && (s.Around == nil || s.Task != s.Around.Task) {
			fmt.Fprintf(w, "          task   %d %s\n", s.Task.Number, s.Task.ID)
		}
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
