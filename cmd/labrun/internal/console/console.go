// Package console shows a run's progress to a person: a live status line on
// a terminal (step, elapsed time, what a wait last saw), plain lines
// otherwise (CI logs), and on failure the expression, its operand values
// and the hint.
//
// Everything it prints but its own redraw of the status line goes through
// visible.Text, and the names and titles inside a line through
// visible.Line: a playbook, a cluster or a learner's file can put any
// character in a name, a message or a value, and none may reach the
// terminal as a control.
package console

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/labrun/labrun/internal/lang/visible"
	"github.com/labrun/labrun/runner"
	"golang.org/x/sys/unix"
)

// IsTerminal reports whether f is a terminal.
func IsTerminal(f *os.File) bool {
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}

// Printer implements runner.Observer.
type Printer struct {
	w       io.Writer
	live    bool // redraw a status line in place
	verbose bool
	quiet   bool // only the result: a line per task graded

	mu     sync.Mutex
	total  int
	active []*activeStep // running steps, oldest first (several in parallel branches)
	stop   chan struct{}
	done   chan struct{}
}

// activeStep is a running step and what it last reported.
type activeStep struct {
	step     *runner.StepPlan
	started  time.Time
	lastMsg  string
	lastShow time.Time
}

func (p *Printer) find(s *runner.StepPlan) *activeStep {
	for _, a := range p.active {
		if a.step == s {
			return a
		}
	}
	return nil
}

// New returns a printer to w; live enables the redrawn status line;
// quiet prints only the result, a line per task graded (for lab
// platforms' check scripts, which show the FAIL: line to the learner).
func New(w io.Writer, live, verbose, quiet bool) *Printer {
	return &Printer{w: w, live: live && !quiet, verbose: verbose, quiet: quiet}
}

// RunStart prints the header.
func (p *Printer) RunStart(plan *runner.Plan) {
	p.total = 0
	for _, s := range plan.Steps {
		if !s.Cleanup {
			p.total++
		}
	}
	if p.quiet {
		return
	}
	steps := "steps"
	if p.total == 1 {
		steps = "step"
	}
	p.printf("labrun: %s (%d %s)\n", visible.Line(plan.Playbook.Name), p.total, steps)
	if p.live {
		p.stop, p.done = make(chan struct{}), make(chan struct{})
		go p.ticker()
	}
}

func (p *Printer) ticker() {
	defer close(p.done)
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	frames := []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}
	i := 0
	for {
		select {
		case <-p.stop:
			return
		case <-t.C:
			p.mu.Lock()
			if len(p.active) > 0 {
				i++
				fmt.Fprintf(p.w, "\r\x1b[2K%s", visible.Line(clip(frames[i%len(frames)]+" "+p.statusLine(), 160)))
			}
			p.mu.Unlock()
		}
	}
}

// statusLine describes the running steps: the one step with what it last
// saw, or, while branches of a parallel step run, each of them briefly.
func (p *Printer) statusLine() string {
	var shown []*activeStep
	for _, a := range p.active {
		if a.step.Parallel != nil && len(p.active) > 1 {
			continue // its branches' steps say more
		}
		shown = append(shown, a)
	}
	parts := make([]string, len(shown))
	for i, a := range shown {
		parts[i] = fmt.Sprintf("%s %s%s %.1fs", p.counter(a.step), branchPrefix(a.step), visible.Line(a.step.Label()), time.Since(a.started).Seconds())
		if a.lastMsg != "" && len(shown) <= 2 {
			parts[i] += "  " + visible.Line(a.lastMsg)
		}
	}
	return strings.Join(parts, " | ")
}

// branchPrefix names the branch of a step in a parallel step.
func branchPrefix(s *runner.StepPlan) string {
	if s.Group == nil {
		return ""
	}
	return s.Branch + ": "
}

func clip(s string, n int) string {
	r := []rune(s)
	if len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

func (p *Printer) counter(s *runner.StepPlan) string {
	if s.Cleanup {
		return "[cleanup]"
	}
	w := len(fmt.Sprint(p.total))
	return fmt.Sprintf("[%*d/%d]", w, s.Index+1, p.total)
}

// StepStart marks the current step.
func (p *Printer) StepStart(s *runner.StepPlan) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	p.active = append(p.active, &activeStep{step: s, started: now, lastShow: now})
	if p.verbose && !p.live && !p.quiet {
		p.printf("%s %s%s (%s) ...\n", p.counter(s), branchPrefix(s), visible.Line(s.Label()), s.ActionName())
	}
}

// StepProgress records what a long step last saw. Without a live line it
// prints at most every two seconds, so CI logs show a wait's progress
// without flooding.
func (p *Printer) StepProgress(s *runner.StepPlan, msg string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	a := p.find(s)
	if a == nil {
		return
	}
	a.lastMsg = msg
	if !p.live && !p.quiet && time.Since(a.lastShow) >= 2*time.Second {
		a.lastShow = time.Now()
		p.printf("    ... %s: %s (%.0fs)\n", s.ID, visible.Line(msg), time.Since(a.started).Seconds())
	}
}

// StepEnd prints the step's line and, on failure, why.
func (p *Printer) StepEnd(r *runner.StepRecord) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.live {
		fmt.Fprint(p.w, "\r\x1b[2K")
	}
	if r.Step != nil {
		p.active = slices.DeleteFunc(p.active, func(a *activeStep) bool { return a.step == r.Step })
	}
	if p.quiet || r.Ungraded() {
		// a step no graded task needs is said once, on its task's line
		return
	}
	mark := map[runner.Status]string{
		runner.Passed: "ok  ", runner.Failed: "FAIL", runner.Skipped: "skip",
		runner.Restored: "kept", runner.Interrupted: "INT ",
	}[r.Status]
	label := r.ID
	if r.Name != "" {
		label = r.ID + ": " + visible.Line(r.Name)
	}
	if r.Step != nil {
		label = branchPrefix(r.Step) + label
	}
	counter := "[cleanup]"
	if r.Step != nil {
		counter = p.counter(r.Step)
	}
	action := r.Action
	if r.Step != nil && r.Step.Task != nil {
		action += fmt.Sprintf(", task %d", r.Step.Task.Number)
		if r.Support() {
			action += ": only read"
		}
	}
	line := fmt.Sprintf("%s %s %s (%s)", mark, counter, label, action)
	if r.Status == runner.Passed || r.Status == runner.Failed {
		line += fmt.Sprintf(" %.1fs", r.Seconds)
	}
	line += classWord(r.Class)
	if r.Reason != "" {
		line += " - " + r.Reason
	}
	p.printf("%s\n", line)
	if r.Status != runner.Failed {
		return
	}
	if r.Error != "" {
		for _, l := range strings.Split(r.Error, "\n") {
			p.printf("       %s\n", l)
		}
	}
	for _, a := range r.Assertions {
		if a.Passed {
			continue
		}
		p.printf("       %s\n", a.Failure())
		if a.Message != "" {
			p.printf("         %s\n", a.Message)
		}
		for _, o := range a.Operands {
			p.printf("         %s = %s\n", o.Expr, o.Value)
		}
		if a.Error != "" {
			p.printf("         error: %s\n", a.Error)
		}
		if a.Hint != "" {
			p.printf("         hint: %s\n", a.Hint)
		}
	}
	if r.Hint != "" {
		p.printf("       hint: %s\n", r.Hint)
	}
}

// RunEnd prints the summary.
func (p *Printer) RunEnd(o *runner.Outcome) {
	if p.live && p.stop != nil {
		close(p.stop)
		<-p.done
	}
	if p.quiet {
		p.results(o)
		return
	}
	for _, t := range o.Tasks {
		p.printf("%s\n", TaskLine(t))
	}
	counts := map[runner.Status]int{}
	for _, s := range o.Steps {
		counts[s.Status]++
	}
	p.printf("%s: %s%s in %.1fs (%d passed, %d failed, %d skipped", visible.Line(o.Name), strings.ToUpper(string(o.Status)), classWord(o.Class), o.Seconds, counts[runner.Passed], counts[runner.Failed], counts[runner.Skipped])
	if n := counts[runner.Restored]; n > 0 {
		p.printf(", %d restored", n)
	}
	p.printf(")\n")
	for _, w := range o.Warnings {
		p.printf("warning: %s\n", w)
	}
	switch {
	case o.OutputDir == "" || o.Mode != "solve":
	case o.Status == runner.Passed:
		p.printf("outputs: %s\n", o.OutputDir)
	default:
		// A run that did not pass wrote only some of its files; the
		// manifest (.labrun/status.json) says which.
		how := "the run " + string(o.Status)
		if o.Status == runner.Interrupted {
			how = "the run was interrupted"
		}
		p.printf("outputs (incomplete, %s): %s\n", how, o.OutputDir)
	}
}

// TaskLine is one line for a task: PASS:, FAIL: with its class and first
// reason, TODO: not started, SKIP: not graded or not run, INT:
// interrupted. Lab platforms show the FAIL: line to the learner. The
// title is escaped by visible.Line; the line is for a printer that
// escapes it (by visible.Text) as a whole.
func TaskLine(t *runner.TaskRecord) string {
	mark := map[runner.Status]string{
		runner.Passed: "PASS", runner.Failed: "FAIL", runner.NotStarted: "TODO",
		runner.Skipped: "SKIP", runner.Interrupted: "INT",
	}[t.Status]
	line := fmt.Sprintf("%s: task %d (%s)%s", mark, t.Number, visible.Line(t.Title), classWord(t.Class))
	if t.Reason != "" {
		line += ": " + t.Reason
	}
	return line
}

// results prints a quiet run's result: a line per task asked for (every
// task when --task and --upto were not given), or for a playbook without
// tasks one line for the whole lab with the first problem of the first
// failed step.
func (p *Printer) results(o *runner.Outcome) {
	if len(o.Tasks) > 0 {
		for _, t := range o.Tasks {
			if len(o.Only) == 0 || slices.Contains(o.Only, t.Number) {
				p.printf("%s\n", TaskLine(t))
			}
		}
		return
	}
	name := visible.Line(o.Name)
	line := "PASS: " + name
	switch o.Status {
	case runner.Failed:
		line = "FAIL: " + name + classWord(o.Class) + ": failed"
		for _, s := range o.Steps {
			if s.Status == runner.Failed {
				line = "FAIL: " + name + classWord(s.Class) + ": " + s.FirstReason()
				break
			}
		}
	case runner.Interrupted:
		line = "INT: " + name + ": interrupted"
	}
	p.printf("%s\n", line)
}

// printf writes a line, or a part of one, with visible.Text: newlines and
// tabs stay, every other control character and every bidi control is
// escaped.
func (p *Printer) printf(format string, args ...any) {
	io.WriteString(p.w, visible.Text(fmt.Sprintf(format, args...)))
}

// classWord is a failure's class as failure lines show it, after what
// failed: " [transport]"; "" for no class (nothing failed).
func classWord(c runner.Class) string {
	if c == "" {
		return ""
	}
	return " [" + string(c) + "]"
}
