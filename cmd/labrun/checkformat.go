package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/labrun/labrun/cmd/labrun/internal/platform"
	"github.com/labrun/labrun/runner"
)

// check --format FORMAT: the verdict as a lab platform's check script
// prints it (cmd/labrun/internal/platform), in place of progress. The exit
// code is labrun's own.

// setFormat reads --format name (none when empty). A format prints the
// verdict alone, so the console prints nothing, as with --quiet.
func (a *runArgs) setFormat(name string, stderr io.Writer) (code int, ok bool) {
	if name == "" {
		return 0, true
	}
	f, err := platform.Lookup(name)
	if err != nil {
		fmt.Fprintf(stderr, "labrun %s: --format: %v\n", a.name, err)
		return exitInvalid, false
	}
	a.platform, a.quiet = &f, true
	return 0, true
}

// progressTo is where the console writes: nowhere with a format, whose
// verdict is the only output.
func (a *runArgs) progressTo(stdout io.Writer) io.Writer {
	if a.platform != nil {
		return io.Discard
	}
	return stdout
}

// printVerdict prints the check's verdict in the format asked for, if
// any. A check that could not judge the answer also names why on stderr,
// for the platform's logs: the learner's line only says it was not judged.
func (a *runArgs) printVerdict(o *runner.Outcome, stdout, stderr io.Writer) {
	if a.platform == nil {
		return
	}
	m := platform.MessageOf(o)
	a.platform.Write(stdout, m)
	if m.Verdict == runner.VerdictNotGraded && m.Class != "" {
		fmt.Fprintf(stderr, "labrun %s: %s [%s]: %s\n", a.name, m.Subject, m.Class, m.Reason)
	}
}

// notChecked prints, in the format asked for, that the check could not
// run at all (a bad command line, a playbook that does not load, a
// missing permission): a failure of class c, said on stderr as usual.
func (a *runArgs) notChecked(stdout io.Writer, c runner.Class) {
	if a.platform == nil {
		return
	}
	subject := "the lab"
	if len(a.tasks) > 0 {
		subject = "task " + strings.Join(a.tasks, ", ")
	}
	a.platform.Write(stdout, platform.Message{Verdict: runner.VerdictNotGraded, Subject: subject, Class: c})
}
