package console

import (
	"bytes"
	"strings"
	"testing"

	"github.com/labrun/labrun/runner"
)

// While branches of a parallel step run, the status line names each
// running step with its branch, and each end line says its branch.
func TestParallelSteps(t *testing.T) {
	var buf bytes.Buffer
	p := New(&buf, false, false, false)
	g := &runner.StepPlan{ID: "g", Index: 0, Parallel: []*runner.BranchPlan{{Name: "web"}, {Name: "holder"}}}
	a := &runner.StepPlan{ID: "scaled_ready", Name: "Wait until 4 web pods are Ready", Index: 1, Group: g, Branch: "web"}
	b := &runner.StepPlan{ID: "ct", Index: 2, Group: g, Branch: "holder"}
	p.total = 3
	p.StepStart(g)
	p.StepStart(a)
	p.StepStart(b)
	p.StepProgress(a, "result.ready = 3")
	line := p.statusLine()
	for _, want := range []string{"[2/3] web: Wait until 4 web pods are Ready", "result.ready = 3", " | [3/3] holder: ct"} {
		if !strings.Contains(line, want) {
			t.Errorf("status line %q lacks %q", line, want)
		}
	}
	if strings.Contains(line, "[1/3]") {
		t.Errorf("status line %q shows the parallel step itself while its branches run", line)
	}
	p.StepEnd(&runner.StepRecord{ID: "ct", Action: "cilium", Status: runner.Passed, Seconds: 0.25, Step: b})
	if got := buf.String(); got != "ok   [3/3] holder: ct (cilium) 0.2s\n" && got != "ok   [3/3] holder: ct (cilium) 0.3s\n" {
		t.Errorf("end line %q", got)
	}
	if line := p.statusLine(); strings.Contains(line, "holder") || !strings.Contains(line, "web:") {
		t.Errorf("after ct ended, status line %q", line)
	}
}
