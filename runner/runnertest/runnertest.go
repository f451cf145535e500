// Package runnertest makes playbooks for tests and benchmarks of the
// runner, so that a test and the benchmark that reports on it measure the
// same input.
package runnertest

import (
	"fmt"
	"strings"
)

// Generated returns a playbook of n run steps in which every step reads
// the one before it and asserts on it: the shape that makes validation
// quadratic if types are rebuilt per expression.
func Generated(n int) []byte {
	var b strings.Builder
	b.WriteString("name: big\nvars: {out: /tmp/big, n: 3}\noutputDir: ${{ vars.out }}\nsteps:\n  - id: s0\n    run: {argv: [echo, '0']}\n")
	for i := 1; i < n; i++ {
		fmt.Fprintf(&b, "  - id: s%d\n    run: {argv: [echo, \"${{ trim(steps.s%d.stdout) }}\", \"${{ vars.n }}\"]}\n    assert:\n      - that: result.exitCode == 0 and len(steps.s%d.stdout) >= 0\n", i, i-1, i-1)
	}
	return []byte(b.String())
}

// ExitCodeChain returns a playbook of n run steps in which every step
// after the first echoes the exit code of the one before it and asserts
// on what it printed: the shape the validate benchmark grows from 1,000 to
// 100,000 steps.
func ExitCodeChain(n int) []byte {
	var b strings.Builder
	b.WriteString("name: chain\nsteps:\n  - id: s0\n    run: {argv: [echo, '0']}\n")
	for i := 1; i < n; i++ {
		fmt.Fprintf(&b, "  - id: s%d\n    run: {argv: [echo, \"${{ steps.s%d.exitCode }}\"]}\n    assert:\n      - that: trim(result.stdout) == \"0\"\n", i, i-1)
	}
	return []byte(b.String())
}

// Files returns a playbook that writes n JSON files into outDir, each from
// a compute step: `labrun run` makes the files, `labrun check` grades them
// (no cluster needed), so check's own cost can be measured as n grows.
func Files(n int, outDir string) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "name: files\nvars: {out: %q}\noutputDir: ${{ vars.out }}\nsteps:\n", outDir)
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "  - id: c%d\n    compute: {n: %d, name: \"f%d\"}\n  - id: w%d\n    write:\n      path: f%d.json\n      json: {n: \"${{ steps.c%d.n }}\", name: \"${{ steps.c%d.name }}\", list: [1, 2, 3]}\n", i, i, i, i, i, i, i)
	}
	return []byte(b.String())
}
