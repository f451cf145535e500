package report

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/labrun/labrun/internal/lang/visible"
	"github.com/labrun/labrun/internal/leaf/outdir"
	"github.com/labrun/labrun/internal/leaf/secret"
	"github.com/labrun/labrun/runner/labtest"
)

// Repeat is what labrun test --repeat found, for its reports
// (schemas/test-repeat.schema.json): each run, and each task's figures
// over them.
type Repeat struct {
	Playbook       string `json:"playbook"`
	PlaybookDigest string `json:"playbookDigest"`
	Name           string `json:"name"`
	// Repeat is --repeat's N; Fresh says how each of those runs was made
	// fresh ("" when none was: every run is on the lab as the run before
	// it left it).
	Repeat int    `json:"repeat"`
	Fresh  string `json:"fresh,omitempty"`
	// Status is failed when a task failed every run, flaky when one
	// passed some runs and failed others, passed otherwise.
	Status string            `json:"status"`
	Runs   []labtest.Run     `json:"runs"`
	Tasks  []labtest.Figures `json:"tasks"`
}

// NewRepeat is the report of res, a result of Repeat.
func NewRepeat(playbook, digest, name string, n int, reset *labtest.Reset, res *labtest.Result) *Repeat {
	r := &Repeat{Playbook: playbook, PlaybookDigest: digest, Name: name, Repeat: n, Status: "passed", Runs: res.Runs, Tasks: res.Tasks}
	if reset != nil {
		r.Fresh = reset.What
	}
	switch {
	case len(res.FailedEveryRun()) > 0:
		r.Status = "failed"
	case len(res.Flaky()) > 0:
		r.Status = "flaky"
	}
	return r
}

// WriteRepeat renders r in format, with the run's secrets redacted and
// control characters escaped as Write does, and stores it atomically at
// path.
func WriteRepeat(format, path string, r *Repeat, secrets *secret.Redactor) error {
	var data []byte
	var err error
	switch format {
	case "json":
		data, err = json.MarshalIndent(r, "", "  ")
		data = append(data, '\n')
	case "junit":
		data, err = RepeatJUnit(r)
	default:
		return fmt.Errorf("unknown report format %q; expected one of %s", format, strings.Join(Formats, ", "))
	}
	if err != nil {
		return err
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	return outdir.WriteFile(abs, visible.Bytes(secrets.Bytes(data)))
}

// RepeatJUnit is a test suite per task, with its figures as properties
// and a test case per run: passed, or failed with the run's class and
// reason and the values that differed between runs.
func RepeatJUnit(r *Repeat) ([]byte, error) {
	var suites []junitSuite
	for _, f := range r.Tasks {
		name := r.Name + ": " + f.What()
		if f.Title != "" {
			name += ": " + f.Title
		}
		s := junitSuite{Name: name, Properties: &junitProperties{Property: []junitProperty{
			{"runs", strconv.Itoa(f.Runs)}, {"passed", strconv.Itoa(f.Passed)}, {"failed", strconv.Itoa(f.Failed)},
			{"flakeRate", strconv.FormatFloat(f.FlakeRate, 'g', 4, 64)}, {"flaky", strconv.FormatBool(f.Flaky)},
		}}}
		var secs float64
		var differed []string
		for _, d := range f.Differed {
			differed = append(differed, d.String())
		}
		for _, run := range r.Runs {
			secs += run.Seconds
			c := junitCase{Name: fmt.Sprintf("run %d", run.Number), Classname: classname(r.Name, f), Time: fmt.Sprintf("%.3f", run.Seconds)}
			for _, x := range f.Failures {
				if x.Run != run.Number {
					continue
				}
				body := x.Reason
				if len(differed) > 0 {
					body += "\nvalues its grading read that differed between runs:\n" + strings.Join(differed, "\n")
				}
				c.Failure = &junitMessage{Message: x.Reason, Type: string(x.Class), Body: body}
				s.Failures++
			}
			s.Cases = append(s.Cases, c)
		}
		s.Tests, s.Time = len(s.Cases), fmt.Sprintf("%.3f", secs)
		suites = append(suites, s)
	}
	return marshalJUnit(suites)
}

// classname groups a task's runs in CI views: the lab's name and the
// task's id.
func classname(lab string, f labtest.Figures) string {
	if f.ID == "" {
		return lab
	}
	return lab + "." + f.ID
}
