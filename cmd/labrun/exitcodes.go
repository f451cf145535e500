package main

import "github.com/labrun/labrun/runner"

// classExit is the exit code of a failed run by its class
// (runner.Outcome.Class): a platform or a Job tells a wrong answer (1)
// from a broken lab or a missing permission (2, as for invalid input:
// someone must change the lab or its setup) from a cluster that did not
// answer (3) from time running out (4). docs/exit-codes.md is this table
// in words; exitcodes_test.go keeps the two together.
var classExit = map[runner.Class]int{
	runner.ClassAssertion: exitFailed,
	runner.ClassConfig:    exitInvalid,
	runner.ClassForbidden: exitInvalid,
	runner.ClassTransport: exitTransport,
	runner.ClassTimeout:   exitTimeout,
}

// exitCode is the exit code of a run's outcome.
func exitCode(o *runner.Outcome) int {
	switch o.Status {
	case runner.Interrupted:
		return exitInterrupted
	case runner.Failed:
		if code, ok := classExit[o.Class]; ok {
			return code
		}
		return exitFailed
	}
	return exitOK
}
