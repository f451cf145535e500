package main

import (
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// Heavy libraries: Kubernetes' client and API machinery, the BPF
// library and Helm's. `labrun validate` must link none of them, so that it stays
// fast and cannot reach for a cluster or the kernel by accident. They are
// reached only through interfaces (cluster.Cluster, bpfentries.Reader) whose
// implementations only the run path of the command imports.
var heavy = []string{"k8s.io/", "sigs.k8s.io/", "github.com/cilium/ebpf", "helm.sh/"}

// runPath lists the files of this command that may import the heavy
// implementations (package kube, package bpfmaps): the ones that run a
// playbook. Every other file is on validate's path.
var runPath = []string{"run.go"}

// leaves are the packages that hold the boundaries' types: they import
// the standard library only.
var leaves = []string{"github.com/labrun/labrun/internal/boundary/cluster", "github.com/labrun/labrun/internal/boundary/bpfentries"}

// TestValidateLinksNoHeavyLibrary follows every import of validate's path
// (the command's files but the run path, and the packages they import)
// and prints the chain that leads to a heavy library, as
// go-containerregistry's depcheck does.
func TestValidateLinksNoHeavyLibrary(t *testing.T) {
	roots := validateRoots(t)
	if !slices.Contains(roots, "github.com/labrun/labrun/actions/all") || !slices.Contains(roots, "github.com/labrun/labrun/runner") {
		t.Fatalf("validate's path %v misses the actions or the runner: the test would prove nothing", roots)
	}
	graph := importGraph(t, roots...)
	for _, h := range heavy {
		// One chain per library: the shortest, to the first of its
		// packages in import order.
		var found []string
		for pkg := range graph {
			if strings.HasPrefix(pkg, h) {
				found = append(found, pkg)
			}
		}
		if len(found) == 0 {
			continue
		}
		var shortest []string
		for _, pkg := range found {
			if c := chain(graph, roots, pkg); shortest == nil || len(c) < len(shortest) || (len(c) == len(shortest) && pkg < shortest[len(shortest)-1]) {
				shortest = c
			}
		}
		t.Errorf("labrun validate links %d packages of %s, e.g.\n\t%s", len(found), h, strings.Join(shortest, "\n\t-> "))
	}
}

// leafHelpers are labrun's own standard-library-only packages a boundary
// may use: the reader of the files a playbook names (cluster's
// ReadManifest). They are in the graph below, so an import of theirs
// beyond the standard library fails the test too.
var leafHelpers = []string{"github.com/labrun/labrun/internal/lang/regularfile"}

// TestBoundaryTypesAreLeaves keeps the packages of the boundaries' types
// free of everything but the standard library.
func TestBoundaryTypesAreLeaves(t *testing.T) {
	graph := importGraph(t, leaves...)
	for pkg := range graph {
		if strings.Contains(strings.Split(pkg, "/")[0], ".") && !slices.Contains(leaves, pkg) && !slices.Contains(leafHelpers, pkg) {
			t.Errorf("a boundary package links %s:\n\t%s", pkg, strings.Join(chain(graph, leaves, pkg), "\n\t-> "))
		}
	}
}

// The check must be able to fail: the run path links both heavy libraries.
func TestRunPathLinksHeavyLibraries(t *testing.T) {
	graph := importGraph(t, "github.com/labrun/labrun/internal/heavy/kube", "github.com/labrun/labrun/internal/heavy/bpfmaps")
	for _, h := range []string{"k8s.io/client-go/rest", "github.com/cilium/ebpf"} {
		if _, ok := graph[h]; !ok {
			t.Errorf("the run path does not link %s: the dependency test looks in the wrong place", h)
		}
	}
}

// validateRoots returns the imports of this command's files outside the
// run path.
func validateRoots(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var roots []string
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") || slices.Contains(runPath, f) {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		file, err := parser.ParseFile(token.NewFileSet(), f, src, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range file.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if !slices.Contains(roots, p) {
				roots = append(roots, p)
			}
		}
	}
	slices.Sort(roots)
	return roots
}

// importGraph maps every package roots depend on to its direct imports.
func importGraph(t *testing.T, roots ...string) map[string][]string {
	t.Helper()
	out, err := exec.Command("go", append([]string{"list", "-deps", "-f", `{{.ImportPath}} {{join .Imports " "}}`}, roots...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	graph := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		graph[fields[0]] = fields[1:]
	}
	return graph
}

// chain returns the shortest import chain from one of roots to target.
func chain(graph map[string][]string, roots []string, target string) []string {
	prev := map[string]string{}
	queue := []string{}
	for _, r := range roots {
		prev[r] = ""
		queue = append(queue, r)
	}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		if p == target {
			var path []string
			for ; p != ""; p = prev[p] {
				path = append([]string{p}, path...)
			}
			return path
		}
		for _, imp := range graph[p] {
			if _, seen := prev[imp]; !seen {
				prev[imp] = p
				queue = append(queue, imp)
			}
		}
	}
	return []string{target}
}

// TestLabrunLinksNoHelm keeps Helm's library out of the labrun binary:
// its 160 packages would cost every labrun process, a check's included,
// about 45 ms and 20-50 MB of memory at start (measured side by side); the helm
// action reaches it in labrun-helm (internal/heavy/helmproc).
func TestLabrunLinksNoHelm(t *testing.T) {
	root := "github.com/labrun/labrun/cmd/labrun"
	graph := importGraph(t, root)
	if _, ok := graph["github.com/labrun/labrun/internal/heavy/kube"]; !ok {
		t.Fatalf("the graph of %s misses internal/heavy/kube: the test would prove nothing", root)
	}
	for pkg := range graph {
		if strings.HasPrefix(pkg, "helm.sh/") {
			t.Fatalf("labrun links %s:\n\t%s", pkg, strings.Join(chain(graph, []string{root}, pkg), "\n\t-> "))
		}
	}
}
