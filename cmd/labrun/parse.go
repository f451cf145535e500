package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"regexp"
	"runtime/debug"
	"sort"
	"strings"

	"github.com/labrun/labrun/internal/lang/visible"

	"github.com/labrun/labrun/cmd/labrun/internal/console"
	"github.com/labrun/labrun/cmd/labrun/internal/typeref"
	"github.com/labrun/labrun/internal/lang/diag"
	"github.com/labrun/labrun/internal/parse"
	"github.com/labrun/labrun/runner"
)

const parseUsage = `Usage: labrun parse [--lines] [--indent|--compact] KIND [FILE|-]
       labrun parse --fields KIND

Prints the typed result of a parser as JSON: indented on a terminal,
compact otherwise (--indent, --compact choose). With --lines, one compact
JSON value per record (conntrack entry, service, socket, ...), or the
whole result on one line for kinds that are one record (status, config,
curl). Records are written as they are encoded, so a 200,000-line
conntrack dump is never held as one JSON text.

Each parser reads what its tool prints (Cilium 1.15 to 1.20, -o json or
text, decided by trying both when the text starts with a bracket). Rows
that describe themselves are read without their header (grep'd output:
service list, bpf lb list, bpftool net show, ss, netstat). Output cut
mid-line (no final newline), a row missing a field every version prints,
and rows of another command are refused with the line and the reason.
A file of testbed/captures is read after its "# command:" header lines
(line numbers in errors still count them).

--fields lists the fields and methods of the kind's result instead, as
expressions read them (labrun types KIND).

Kinds (expression function in parentheses):`

// parseCmd shows what a playbook gets from captured tool output: the typed
// result of a parser, as JSON.
func parseCmd(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	// What a parser read is a tool's output: JSON escapes its controls
	// but not C1 or bidi ones, which visible does, keeping it valid JSON.
	stdout = visible.Writer(stdout)
	o, code, ok := readParseArgs(args, stderr)
	if !ok {
		return code
	}
	p, ok := parse.Lookup(o.args[0])
	if !ok {
		var kinds []string
		for _, p := range parse.All {
			kinds = append(kinds, p.Kind)
		}
		fmt.Fprintf(stderr, "labrun parse: unknown kind %q%s; run 'labrun parse' for the list\n", o.args[0], diag.DidYouMean(o.args[0], kinds))
		return exitInvalid
	}
	if o.fields {
		if len(o.args) != 1 {
			fmt.Fprintln(stderr, "labrun parse: --fields takes the kind alone, no input")
			return exitInvalid
		}
		return printType(typeref.Load(runner.DefaultFunctions()), p.Kind, "labrun parse", stdout, stderr)
	}
	text, err := readParseInput(o.args[1:], stdin)
	if err != nil {
		fmt.Fprintf(stderr, "labrun parse: %v\n", err)
		return exitInvalid
	}
	body, skipped := captureBody(text)
	v, err := p.Parse(body)
	if err != nil {
		var pe *parse.Error
		if errors.As(err, &pe) && pe.Line > 0 && skipped > 0 {
			pe.Line += skipped // a line of the file, header included
		}
		fmt.Fprintf(stderr, "labrun parse: %v\n", err)
		return exitFailed
	}
	// From here on the text and the result are all that stays live and
	// encoding makes only short-lived garbage: collecting at 10% growth
	// instead of 100% keeps the peak near the live size (145 MB for
	// 200,000 conntrack lines, 48 MB of text, instead of 200 MB), for
	// little work.
	debug.SetGCPercent(10)
	if err := writeParsed(stdout, v, p.Records, o.lines, o.indent); err != nil {
		fmt.Fprintf(stderr, "labrun parse: %v\n", err)
		return exitFailed
	}
	return exitOK
}

// parseArgs is the command line of labrun parse.
type parseArgs struct {
	lines  bool // --lines: one JSON value per record
	fields bool // --fields: the kind's fields and methods, not a result
	indent int  // 1 for --indent, 0 for --compact, -1 when not chosen
	// args are the kind and the input file, if given.
	args []string
}

// readParseArgs reads the command line of labrun parse. Its flags are
// read by hand, since a lone "-" names stdin. When the command line is
// wrong or asks for help, ok is false and code is the exit code.
func readParseArgs(args []string, stderr io.Writer) (o parseArgs, code int, ok bool) {
	o.indent = -1
	for _, a := range args {
		switch a {
		case "--lines":
			o.lines = true
		case "--indent":
			o.indent = 1
		case "--compact":
			o.indent = 0
		case "--fields":
			o.fields = true
		case "-h", "--help":
			printParseUsage(stderr)
			return o, exitOK, false
		default:
			if strings.HasPrefix(a, "--") {
				fmt.Fprintf(stderr, "labrun parse: unknown flag %s\n", a)
				return o, exitInvalid, false
			}
			o.args = append(o.args, a)
		}
	}
	if len(o.args) == 0 || len(o.args) > 2 {
		printParseUsage(stderr)
		return o, exitInvalid, false
	}
	return o, 0, true
}

// readParseInput reads the text to parse: the file named by file, or
// stdin when it is "-" or not given.
func readParseInput(file []string, stdin io.Reader) (string, error) {
	in := stdin
	var size int64
	if len(file) == 1 && file[0] != "-" {
		f, err := os.Open(file[0])
		if err != nil {
			return "", err
		}
		defer f.Close()
		if st, err := f.Stat(); err == nil {
			size = st.Size()
		}
		in = f
	}
	// Read into a Builder sized from the file: its String() is the one
	// copy of the text, which the parsers' results share.
	var text strings.Builder
	text.Grow(int(size) + 1)
	if _, err := io.Copy(&text, in); err != nil {
		return "", err
	}
	return text.String(), nil
}

// writeParsed writes a parser's result v to stdout as JSON: one value per
// record with lines, else whole, indented when indent is 1, or when it is
// -1 and stdout is a terminal. records names v's field of records.
func writeParsed(stdout io.Writer, v any, records string, lines bool, indent int) error {
	if indent < 0 {
		indent = 0
		if f, ok := stdout.(*os.File); ok && console.IsTerminal(f) {
			indent = 1
		}
	}
	w := bufio.NewWriterSize(stdout, 64<<10)
	var err error
	if lines {
		err = writeJSONLines(w, v, records)
	} else {
		err = writeJSON(w, v, records, indent == 1)
	}
	if err != nil {
		return err
	}
	return w.Flush()
}

// captureLine is a line of the header testbed/captures files start with
// ("# command: ...", "# cilium: v1.20.1", "# tool: ...", "# exit: 0").
var captureLine = regexp.MustCompile(`^# [a-z][a-z0-9_-]*: `)

// captureBody returns the command's output of a file in the format of
// testbed/captures (the lines after its "# command:" header), and how many
// header lines it skipped; other text is returned whole. No tool's output
// starts with "# command: ", so the header is never part of an output.
func captureBody(text string) (string, int) {
	if !strings.HasPrefix(text, "# command: ") {
		return text, 0
	}
	n := 0
	for captureLine.MatchString(text) {
		_, rest, found := strings.Cut(text, "\n")
		n++
		if !found {
			return "", n
		}
		text = rest
	}
	return text, n
}

func printParseUsage(w io.Writer) {
	fmt.Fprintln(w, parseUsage)
	kinds := make([]string, 0, len(parse.All))
	for _, p := range parse.All {
		kinds = append(kinds, fmt.Sprintf("  %-24s %s (%s)", p.Kind, p.Doc, p.Func))
	}
	sort.Strings(kinds)
	for _, k := range kinds {
		fmt.Fprintln(w, k)
	}
}

// jsonWriter encodes one value at a time into a reused buffer, so that
// memory stays that of the largest record, not of the whole output.
type jsonWriter struct {
	w   *bufio.Writer
	buf bytes.Buffer
	enc *json.Encoder
}

func newJSONWriter(w *bufio.Writer) *jsonWriter {
	j := &jsonWriter{w: w}
	j.enc = json.NewEncoder(&j.buf)
	j.enc.SetEscapeHTML(false) // "<nil>" and "->" stay readable
	return j
}

// value writes v; with indent, its lines after the first get prefix.
func (j *jsonWriter) value(v any, indent bool, prefix string) error {
	j.buf.Reset()
	if indent {
		j.enc.SetIndent(prefix, "  ")
	} else {
		j.enc.SetIndent("", "")
	}
	if err := j.enc.Encode(v); err != nil {
		return err
	}
	_, err := j.w.Write(bytes.TrimSuffix(j.buf.Bytes(), []byte("\n")))
	return err
}

// writeJSON writes v as encoding/json would (indented or compact), but a
// list result, or the records field of a struct result, element by
// element.
func writeJSON(w *bufio.Writer, v any, records string, indent bool) error {
	j := newJSONWriter(w)
	rv := reflect.ValueOf(v)
	var err error
	switch {
	case rv.Kind() == reflect.Slice:
		err = j.list(rv, indent, "")
	case rv.Kind() == reflect.Struct && records != "":
		err = j.object(rv, records, indent)
	default:
		err = j.value(v, indent, "")
	}
	if err != nil {
		return err
	}
	return w.WriteByte('\n')
}

// list writes a JSON array of the elements of rv, one at a time.
func (j *jsonWriter) list(rv reflect.Value, indent bool, prefix string) error {
	if rv.Len() == 0 {
		_, err := j.w.WriteString("[]")
		return err
	}
	inner := prefix + "  "
	j.w.WriteByte('[')
	for i := 0; i < rv.Len(); i++ {
		if i > 0 {
			j.w.WriteByte(',')
		}
		if indent {
			j.w.WriteString("\n" + inner)
		}
		if err := j.value(rv.Index(i).Interface(), indent, inner); err != nil {
			return err
		}
	}
	if indent {
		j.w.WriteString("\n" + prefix)
	}
	return j.w.WriteByte(']')
}

// object writes the exported fields of a struct under their json names,
// the records field through list.
func (j *jsonWriter) object(rv reflect.Value, records string, indent bool) error {
	j.w.WriteByte('{')
	first := true
	for i := 0; i < rv.NumField(); i++ {
		f := rv.Type().Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !f.IsExported() || name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		if !first {
			j.w.WriteByte(',')
		}
		first = false
		key, _ := json.Marshal(name)
		if indent {
			j.w.WriteString("\n  ")
			j.w.Write(key)
			j.w.WriteString(": ")
		} else {
			j.w.Write(key)
			j.w.WriteByte(':')
		}
		var err error
		if f.Name == records {
			err = j.list(rv.Field(i), indent, "  ")
		} else {
			err = j.value(rv.Field(i).Interface(), indent, "  ")
		}
		if err != nil {
			return err
		}
	}
	if indent {
		j.w.WriteString("\n")
	}
	return j.w.WriteByte('}')
}

// writeJSONLines writes one compact JSON value per line: the elements of a
// list result or of the records field, else the whole result.
func writeJSONLines(w *bufio.Writer, v any, records string) error {
	j := newJSONWriter(w)
	rv := reflect.ValueOf(v)
	if rv.Kind() == reflect.Struct && records != "" {
		rv = rv.FieldByName(records)
	}
	if rv.Kind() != reflect.Slice {
		if err := j.value(v, false, ""); err != nil {
			return err
		}
		return w.WriteByte('\n')
	}
	for i := 0; i < rv.Len(); i++ {
		if err := j.value(rv.Index(i).Interface(), false, ""); err != nil {
			return err
		}
		if err := w.WriteByte('\n'); err != nil {
			return err
		}
	}
	return nil
}
