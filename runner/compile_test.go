package runner

import (
	"runtime"
	"strings"
	"testing"

	"github.com/labrun/labrun/actions"
	"github.com/labrun/labrun/internal/lang/syntax"
	"github.com/labrun/labrun/runner/runnertest"
)

func TestValidateLargePlaybook(t *testing.T) {
	pb, err := syntax.Load("big.yaml", runnertest.Generated(2000), actions.Names())
	if err != nil {
		t.Fatal(err)
	}
	plan, err := Compile(pb, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Steps) != 2000 {
		t.Fatalf("%d steps", len(plan.Steps))
	}
}

// The bench's generated playbooks compile: the exit-code chain the
// validate rows grow, and the files playbook check's rows grade.
func TestBenchPlaybooksCompile(t *testing.T) {
	for name, src := range map[string][]byte{
		"chain.yaml": runnertest.ExitCodeChain(500),
		"files.yaml": runnertest.Files(50, "/tmp/files"),
	} {
		pb, err := syntax.Load(name, src, actions.Names())
		if err != nil {
			t.Fatal(err)
		}
		plan, err := Compile(pb, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if want := map[string]int{"chain.yaml": 500, "files.yaml": 100}[name]; len(plan.Steps) != want {
			t.Errorf("%s: %d steps, want %d", name, len(plan.Steps), want)
		}
	}
}

// BenchmarkValidate10k measures `labrun validate` on a generated
// 10,000-step playbook (goal: under 0.5 s and 200 MB, as a whole process).
func BenchmarkValidate10k(b *testing.B) {
	src := runnertest.Generated(10000)
	b.ReportAllocs()
	var peak uint64
	for i := 0; i < b.N; i++ {
		pb, err := syntax.Load("big.yaml", src, actions.Names())
		if err != nil {
			b.Fatal(err)
		}
		if _, err := Compile(pb, Options{}); err != nil {
			b.Fatal(err)
		}
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		peak = max(peak, m.HeapInuse)
	}
	b.ReportMetric(float64(peak)/(1<<20), "heapMB")
}

func FuzzCompile(f *testing.F) {
	f.Add("name: a\nvars: {x: 1}\nsteps:\n  - id: a\n    run: {argv: [echo, '${{ vars.x + 1 }}']}\n    assert: [result.exitCode == 0]\n")
	f.Add("name: a\noutputDir: /tmp/x\nsteps:\n  - id: a\n    write: {path: a.json, json: {k: '${{ [1,2] }}'}}\n")
	f.Add("name: a\nsteps:\n  - id: a\n    run: {argv: ['${{ steps.a.stdout }}']}\n")
	f.Add("name: a\nsteps:\n  - id: a\n    loop: ${{ 1..3 }}\n    run: {argv: [echo, '${{ item + index }}']}\n  - id: b\n    loop: ${{ steps.a }}\n    run: {argv: ['${{ item.stdout }}']}\n    assert: [result.exitCode == index]\n")
	f.Fuzz(func(t *testing.T, src string) {
		pb, err := syntax.Load("f.yaml", []byte(src), actions.Names())
		if err != nil {
			return
		}
		_, err = Compile(pb, Options{})
		if err != nil {
			for _, line := range strings.Split(err.Error(), "\n") {
				if !strings.HasPrefix(line, "f.yaml") {
					t.Fatalf("error without a position: %q", line)
				}
			}
		}
	})
}

// With IgnoreUndeclared, the overrides of variables the playbook does not
// declare are dropped (the lab's --set handed to its cleanup playbook)
// and those it declares still apply; without it they are refused.
func TestIgnoreUndeclared(t *testing.T) {
	pb, err := syntax.Load("c.yaml", []byte("name: c\nvars: {ns: shop}\nsteps:\n  - id: a\n    run: {argv: [echo, '${{ vars.ns }}']}\n"), actions.Names())
	if err != nil {
		t.Fatal(err)
	}
	set := []string{"ns=lab", "out=/tmp/lab"}
	if _, err := Compile(pb, Options{Set: set}); err == nil || !strings.Contains(err.Error(), `the playbook has no variable "out"`) {
		t.Fatalf("without IgnoreUndeclared: %v; want out refused", err)
	}
	plan, err := Compile(pb, Options{Set: set, IgnoreUndeclared: true})
	if err != nil {
		t.Fatal(err)
	}
	if lit, _ := plan.Vars[0].Value.Literal(); len(plan.Vars) != 1 || lit != "lab" {
		t.Errorf("vars %+v; want ns=lab", plan.Vars)
	}
}
