package main

import (
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// The layers of docs/architecture.md, from the bottom. A package may
// import labrun packages of its own layer or of a layer below it, never
// one above: there is no cycle and no import upwards. The heavy
// implementations are the exception that keeps validate light: they sit
// below the command only, and import nothing of labrun but the
// boundaries, so a spec or result type cannot reach client-go or
// cilium/ebpf through them. A pattern ending in "/..." names a directory
// and everything below it; the longest pattern that matches a package
// decides its layer.
var layers = []layer{
	{name: "the language", pkgs: []string{"internal/lang/..."}},
	// internal/'s folders are the layers: boundary/ (the contracts the
	// heavy implementations fulfil) and leaf/ (small leaves), parse,
	// heavy/ (the implementations); a package put in one is in its layer.
	{name: "the boundaries and small leaves", pkgs: []string{"internal/boundary/...", "internal/leaf/...", "schemas"}},
	{name: "the parsers", pkgs: []string{"internal/parse"}},
	{name: "actions", pkgs: []string{"actions/..."}},
	{name: "compiling and running", pkgs: []string{"runner/..."}},
	{name: "heavy implementations", pkgs: []string{"internal/heavy/..."}, only: "the boundaries and small leaves"},
	// labrun-image builds the command's container image; it imports no
	// labrun package.
	{name: "the command", pkgs: []string{"cmd/labrun/...", "cmd/labrun-image", "cmd/labrun-helm"}},
	// Test helpers beside the package they serve, and the test cluster's
	// tests and benchmark, may use anything but the command; no product
	// package imports them.
	{name: "test support", pkgs: []string{
		"internal/boundary/cluster/clustertest", "internal/heavy/kube/kubetest", "internal/parse/parsetest",
		"runner/runnertest", "testbed/...",
	}, support: true},
}

type layer struct {
	name string
	pkgs []string
	// only, when set, is the one layer this layer may import.
	only string
	// support: test helpers, which no product package may import.
	support bool
}

const modulePath = "github.com/labrun/labrun"

// layerOf returns the index of the layer of pkg (a path inside the
// module, without the module's), or -1 when no layer names it.
func layerOf(pkg string) int {
	best, bestLen := -1, -1
	for i, l := range layers {
		for _, p := range l.pkgs {
			dir, tree := strings.CutSuffix(p, "/...")
			if pkg == dir || (tree && strings.HasPrefix(pkg, dir+"/")) {
				if len(p) > bestLen {
					best, bestLen = i, len(p)
				}
			}
		}
	}
	return best
}

// layerViolations lists each import of graph (package -> its imports,
// module-relative, labrun's own only) that breaks the layers' rules.
func layerViolations(graph map[string][]string) []string {
	var bad []string
	for pkg, imports := range graph {
		from := layerOf(pkg)
		if from < 0 {
			bad = append(bad, fmt.Sprintf("%s is in no layer: add it to the layers of cmd/labrun/layers_test.go and docs/architecture.md", pkg))
			continue
		}
		for _, imp := range imports {
			to := layerOf(imp)
			switch {
			case to < 0:
				// reported as a package of its own
			case layers[to].support && !layers[from].support:
				bad = append(bad, fmt.Sprintf("%s (%s) imports the test helper %s", pkg, layers[from].name, imp))
			case layers[from].only != "" && layers[to].name != layers[from].only:
				bad = append(bad, fmt.Sprintf("%s (%s) imports %s (%s): it may import %s only", pkg, layers[from].name, imp, layers[to].name, layers[from].only))
			case to > from && !layers[from].support:
				bad = append(bad, fmt.Sprintf("%s (%s) imports %s, a layer above it (%s)", pkg, layers[from].name, imp, layers[to].name))
			case layers[from].support && layers[to].name == "the command":
				bad = append(bad, fmt.Sprintf("%s (%s) imports the command %s", pkg, layers[from].name, imp))
			}
		}
	}
	slices.Sort(bad)
	return bad
}

// TestLayers keeps the import rules of docs/architecture.md: every
// package of the module is in a layer and imports none above it.
func TestLayers(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, modulePath+"/...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	graph := map[string][]string{}
	for line := range strings.Lines(strings.TrimSpace(string(out))) {
		fields := strings.Fields(line)
		pkg, ok := strings.CutPrefix(fields[0], modulePath+"/")
		if !ok {
			continue
		}
		graph[pkg] = nil
		for _, imp := range fields[1:] {
			if rel, ok := strings.CutPrefix(imp, modulePath+"/"); ok {
				graph[pkg] = append(graph[pkg], rel)
			}
		}
	}
	if len(graph) < 20 {
		t.Fatalf("go list found %d packages of the module: the test would prove nothing", len(graph))
	}
	for _, v := range layerViolations(graph) {
		t.Error(v)
	}
}

// The rules must be able to fail: each kind of break is reported.
func TestLayerViolationsAreFound(t *testing.T) {
	graph := map[string][]string{
		"internal/lang/diag":           {"runner"},              // a leaf importing upwards
		"internal/heavy/kube":          {"internal/lang/eval"},  // heavy importing beyond the leaves
		"actions":                      {"internal/heavy/kube"}, // below the heavy layer importing it
		"runner":                       {"runner/runnertest"},   // product importing a test helper
		"testbed/e2e":                  {"cmd/labrun"},          // support importing the command
		"somewhere/new":                nil,                     // in no layer
		"internal/lang/eval":           {"internal/lang/diag"},  // fine
		"cmd/labrun":                   {"internal/heavy/kube", "runner", "actions/all"},
		"internal/heavy/kube/kubetest": {"internal/heavy/kube", "internal/boundary/cluster"},
	}
	got := layerViolations(graph)
	want := []string{
		"actions (actions) imports internal/heavy/kube, a layer above it (heavy implementations)",
		"internal/heavy/kube (heavy implementations) imports internal/lang/eval (the language): it may import the boundaries and small leaves only",
		"internal/lang/diag (the language) imports runner, a layer above it (compiling and running)",
		"runner (compiling and running) imports the test helper runner/runnertest",
		"somewhere/new is in no layer: add it to the layers of cmd/labrun/layers_test.go and docs/architecture.md",
		"testbed/e2e (test support) imports the command cmd/labrun",
	}
	if !slices.Equal(got, want) {
		t.Errorf("violations:\n\t%s\nwant:\n\t%s", strings.Join(got, "\n\t"), strings.Join(want, "\n\t"))
	}
}
