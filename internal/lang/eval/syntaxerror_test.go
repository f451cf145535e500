package eval

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/labrun/labrun/internal/lang/diag"
)

var update = flag.Bool("update", false, "rewrite the golden files of testdata")

// exprLangWords are the forms of expr-lang's syntax errors (its parser's
// and lexer's messages, parser/parser.go and parser/lexer) that a
// reworded message must no longer hold.
var exprLangWords = regexp.MustCompile(`unexpected token|Bracket\(|Operator\(|Identifier\(|Number\(|String\(|EOF|literal not terminated|invalid char escape|unrecognized character|strconv\.|bad number syntax|unexpected end of expression|expected name|unclosed comment`)

// Each syntax error an author makes in a condition is worded by what is
// written, and placed at the text it is about: rendered as labrun
// validate prints it into testdata/expr-syntax-errors.golden.
func TestSyntaxErrorsInPlainWords(t *testing.T) {
	for _, src := range []string{
		"1 +",
		"steps.first.exitCode = 0",
		"steps.first.exitCode === 0",
		"steps.first.exitCode !== 0",
		"steps.first.exitCode => 0",
		"steps.first.exitCode == ${{ vars.n }}",
		"steps.first.stdout contains 'a' & vars.n > 1",
		"len(steps.first.items",
		"[1, 2",
		"steps.first.exitCode == 0)",
		"vars.ns vars.n",
		"'a' 'b'",
		"[1,,2]",
		"vars.n, 1",
		"vars.ns == \"abc",
		"vars.ns matches \"\\d+\"",
		"vars.ns matches '\\d+'",
		"vars.ns @ 1",
		"vars.ns.",
		"vars.(ns)",
		"9999999999999999999999 > 1",
		"0x > 1",
		"1.2.3 > 1",
		"vars.n /* note",
		"map([1, 2], {\"n\": #})",
		"vars.n > 1 &&",
		"not",
		"}",
	} {
		t.Run(src, func(t *testing.T) {
			_, err := testCompiler().Compile(src, diag.Pos{File: "p.yaml", Line: 1, Col: 11}, Context{Step: 1})
			if err == nil {
				t.Fatalf("%s compiles", src)
			}
			if m := exprLangWords.FindString(err.Error()); m != "" {
				t.Errorf("the message keeps expr-lang's %q: %v", m, err)
			}
		})
	}
	var out bytes.Buffer
	for _, src := range []string{
		"1 +", "steps.first.exitCode = 0", "steps.first.exitCode === 0", "steps.first.exitCode => 0",
		"steps.first.exitCode == ${{ vars.n }}", "steps.first.stdout contains 'a' & vars.n > 1",
		"len(steps.first.items", "steps.first.exitCode == 0)", "vars.ns vars.n", "[1,,2]", "vars.n, 1",
		"vars.ns == \"abc", "vars.ns matches \"\\d+\"", "vars.ns @ 1", "vars.ns.", "vars.(ns)",
		"9999999999999999999999 > 1", "1.2.3 > 1", "vars.n /* note", "map([1, 2], {\"n\": #})", "vars.n > 1 &&",
	} {
		line := "    when: " + src
		_, err := testCompiler().Compile(src, diag.Pos{File: "p.yaml", Line: 1, Col: 11}, Context{Step: 1})
		de, ok := err.(*diag.Error)
		if !ok {
			t.Fatalf("%s: %v", src, err)
		}
		fmt.Fprintf(&out, "%s\n", line)
		diag.Render(&out, []*diag.Error{de}, func(string) ([]byte, error) { return []byte(line), nil })
		out.WriteString("\n")
	}
	golden(t, "expr-syntax-errors.golden", out.Bytes())
}

// golden compares got with the file testdata/name, which -update
// rewrites.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("output differs from %s (go test -update rewrites it); got:\n%s", path, got)
	}
}
