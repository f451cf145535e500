package report

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/labrun/labrun/cmd/labrun/internal/board"
	"github.com/labrun/labrun/internal/leaf/outdir"
	"github.com/labrun/labrun/runner"
	"github.com/labrun/labrun/runner/fleet"
)

// WriteFleet writes the results of a class's targets (labrun check
// --targets, labrun fleet collect) in format at path: json is a line per
// target, the very line a Job's pod leaves; junit a suite per target;
// html the class board, which says about of the grading besides.
func WriteFleet(format, path string, results []fleet.Result, about board.About) error {
	var data []byte
	var err error
	switch format {
	case "json":
		data, err = FleetJSON(results)
	case "junit":
		data, err = FleetJUnit(results)
	case "html":
		data, err = board.Class(results, about).HTML()
	default:
		return fmt.Errorf("unknown report format %q; expected one of %s", format, strings.Join(Formats, ", "))
	}
	if err != nil {
		return err
	}
	return outdir.WriteFile(path, data)
}

// FleetJSON is a JSON line per target, in index order.
func FleetJSON(results []fleet.Result) ([]byte, error) {
	var b bytes.Buffer
	for _, r := range results {
		line, err := r.Line()
		if err != nil {
			return nil, err
		}
		b.Write(line)
	}
	return b.Bytes(), nil
}

// FleetJUnit is one test suite per target, named by it, with a test case
// per graded task (per step, for a lab without tasks). A target that was
// not graded is one case with an error of its class: CI views then tell
// a wrong answer (a failure) from a lab that could not be graded.
func FleetJUnit(results []fleet.Result) ([]byte, error) {
	var suites []junitSuite
	for _, r := range results {
		s := junitSuite{Name: r.Target, Time: fmt.Sprintf("%.3f", r.Seconds)}
		for _, c := range r.Cases {
			jc := junitCase{Name: c.Name, Classname: r.Target, Time: fmt.Sprintf("%.3f", c.Seconds)}
			switch {
			case c.Status == runner.Passed:
			case c.Status == runner.Failed && c.Class == runner.ClassAssertion:
				jc.Failure = &junitMessage{Message: c.Message, Type: string(c.Class)}
				s.Failures++
			case c.Status == runner.Failed:
				jc.Error = &junitMessage{Message: c.Message, Type: string(c.Class)}
				s.Errors++
			default:
				jc.Skipped = &junitMessage{Message: string(c.Status) + ": " + c.Message}
				s.Skipped++
			}
			s.Cases = append(s.Cases, jc)
		}
		if !r.Graded() && s.Errors == 0 {
			s.Cases = append(s.Cases, junitCase{Name: "grading", Classname: r.Target,
				Time: "0.000", Error: &junitMessage{Message: string(r.Verdict) + ": " + r.FirstFailure, Type: string(r.Class)}})
			s.Errors++
		}
		s.Tests = len(s.Cases)
		suites = append(suites, s)
	}
	return marshalJUnit(suites)
}
