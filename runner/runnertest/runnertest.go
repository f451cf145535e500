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
