package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

// The repeat section: every lab solved and checked -repeat times by
// labrun test --repeat (docs/check.md, "Every run, not once"), each on a
// fresh lab (its cleanup playbook beside it, else its namespaces deleted),
// then once on the lab as the last run left it, on the profile its
// testbed vars file names. It prints each task's flake rate and the time
// of a repeat. A flaky task is a missed goal, not a failed bench: it is
// what the section measures. A run that cannot be graded (the cluster did
// not answer), or a lab that fails every run, fails it.

// repeatLab is one lab the section repeats.
type repeatLab struct {
	name string
	// namespace, when set, is the learner's namespace the lab works in
	// (classroom): the section makes it, and the lab's cleanup playbook
	// empties it before each run.
	namespace string
}

var repeatLabs = []repeatLab{
	{name: "cca-datapath"},
	{name: "classroom", namespace: "bench-repeat-classroom"},
	{name: "cca-identity"},
	{name: "cca-services"},
}

// repeatReport is what the section reads of labrun test's JSON report
// (schemas/test-repeat.schema.json).
type repeatReport struct {
	Repeat int    `json:"repeat"`
	Fresh  string `json:"fresh"`
	Status string `json:"status"`
	Runs   []struct {
		Run          int     `json:"run"`
		Fresh        bool    `json:"fresh"`
		ResetSeconds float64 `json:"resetSeconds"`
		SolveSeconds float64 `json:"solveSeconds"`
		CheckSeconds float64 `json:"checkSeconds"`
		Seconds      float64 `json:"seconds"`
	} `json:"runs"`
	Tasks []struct {
		Number    int     `json:"number"`
		ID        string  `json:"id"`
		Runs      int     `json:"runs"`
		Failed    int     `json:"failed"`
		FlakeRate float64 `json:"flakeRate"`
		Flaky     bool    `json:"flaky"`
		Differed  []struct {
			Key string `json:"key"`
		} `json:"differed"`
	} `json:"tasks"`
}

// labProfile is the test cluster profile a lab needs: its testbed vars
// file's "# testbed-profile: NAME" line, else single (as make lab reads
// it).
func labProfile(lab string) (string, error) {
	data, err := os.ReadFile(filepath.Join("playbooks", lab+".testbed.yaml"))
	if err != nil {
		return "", err
	}
	if m := regexp.MustCompile(`(?m)^# testbed-profile: *([a-z]+)`).FindSubmatch(data); m != nil {
		return string(m[1]), nil
	}
	return "single", nil
}

// benchRepeat runs labrun test --repeat on each lab of the running
// profile, and says which labs it skipped.
func benchRepeat(ctx context.Context, b *bench) ([]Row, error) {
	profile, err := testbedProfile()
	if err != nil {
		return nil, err
	}
	var rows []Row
	for _, lab := range repeatLabs {
		want, err := labProfile(lab.name)
		if err != nil {
			return nil, err
		}
		if want != profile {
			fmt.Fprintf(os.Stderr, "   %s skipped: it runs on profile %s, the test cluster runs %s\n", lab.name, want, profile)
			continue
		}
		r, err := b.repeatLab(ctx, lab)
		if err != nil {
			return nil, err
		}
		rows = append(rows, r...)
	}
	return rows, nil
}

// repeats is the section's N: -repeat, else 10 in a run of 5 or more and
// 2 in a shorter one (CI's).
func (b *bench) repeats() int {
	switch {
	case b.repeat > 0:
		return b.repeat
	case b.n >= 5:
		return 10
	}
	return 2
}

// repeatLab runs labrun test --repeat on lab and makes its rows.
func (b *bench) repeatLab(ctx context.Context, lab repeatLab) ([]Row, error) {
	n := b.repeats()
	out := filepath.Join(b.work, "repeat", lab.name)
	report := out + ".repeat.json"
	for _, p := range []string{out, report} {
		if err := os.RemoveAll(p); err != nil {
			return nil, err
		}
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return nil, err
	}
	argv := []string{b.labrun, "test", "--repeat", fmt.Sprint(n), "--no-progress", "--kubeconfig", b.kubeconfig,
		"--vars", "playbooks/" + lab.name + ".testbed.yaml", "--set", "out=" + out, "--report", "json=" + report}
	if lab.namespace != "" {
		if err := b.makeNamespaces(ctx, lab.namespace, []string{lab.namespace}); err != nil {
			return nil, err
		}
		defer b.kubectlRun(context.Background(), nil, "delete", "namespace", lab.namespace, "--wait=false")
		argv = append(argv, "--set", "namespace="+lab.namespace)
	}
	argv = append(argv, "playbooks/"+lab.name+".yaml")
	fmt.Fprintf(os.Stderr, "   %s: labrun test --repeat %d\n", lab.name, n)
	log, err := os.Create(out + ".repeat.log")
	if err != nil {
		return nil, err
	}
	defer log.Close()
	// Each run of a lab takes under a minute here (cca-services about
	// two, with its Helm changes): a generous bound.
	p, err := runProc(ctx, argv, procOpts{stdout: log, timeout: time.Duration(n+1)*5*time.Minute + 5*time.Minute})
	var exit *exec.ExitError
	// exit 5: a task is flaky, which this section reports; anything
	// else that is not 0 is a failed measurement
	if err != nil && !(errors.As(err, &exit) && exit.ExitCode() == 5) {
		return nil, fmt.Errorf("labrun test --repeat %d of %s failed (its output: %s): %v", n, lab.name, log.Name(), err)
	}
	data, err := os.ReadFile(report)
	if err != nil {
		return nil, err
	}
	var rep repeatReport
	if err := json.Unmarshal(data, &rep); err != nil {
		return nil, fmt.Errorf("%s: %v", report, err)
	}
	return repeatRows(lab.name, rep, p.wall), nil
}

// repeatRows are a lab's rows: how many tasks were flaky (goal 0), each
// task's flake rate in the note, and the time of a run.
func repeatRows(lab string, rep repeatReport, wall time.Duration) []Row {
	flaky := 0
	var rates []string
	for _, t := range rep.Tasks {
		s := fmt.Sprintf("task %d (%s) %d of %d failed", t.Number, t.ID, t.Failed, t.Runs)
		if t.Flaky {
			flaky++
			var keys []string
			for _, d := range t.Differed {
				keys = append(keys, d.Key)
			}
			s += fmt.Sprintf(" (flake rate %.0f%%; differed: %s)", t.FlakeRate*100, strings.Join(keys, ", "))
		}
		rates = append(rates, s)
		fmt.Fprintf(os.Stderr, "   %s: %s\n", lab, s)
	}
	fresh := "each on the lab as the run before it left it"
	if rep.Fresh != "" {
		fresh = fmt.Sprintf("the first %d each after: %s; the last on the lab as the run before it left it", rep.Repeat, rep.Fresh)
	}
	var all, fresher, solve, check, reset []float64
	for _, r := range rep.Runs {
		all, solve, check = append(all, r.Seconds), append(solve, r.SolveSeconds), append(check, r.CheckSeconds)
		if r.Fresh {
			fresher, reset = append(fresher, r.Seconds), append(reset, r.ResetSeconds)
		}
	}
	met := flaky == 0
	rows := []Row{{
		Name:   fmt.Sprintf("%s: tasks flaky in %d runs of labrun test --repeat %d", lab, len(rep.Runs), rep.Repeat),
		Labrun: newSeries("labrun test --repeat", "tasks", []float64{float64(flaky)}),
		Goal:   "= 0", Met: &met,
		Note: fmt.Sprintf("%d runs of a solve and a check of every task, %s (%s in all). Per task: %s.",
			len(rep.Runs), fresh, wall.Round(time.Second), strings.Join(rates, "; ")),
	}}
	times := newSeries("labrun test --repeat", "s", all)
	note := fmt.Sprintf("Each run: the solve (%s s median) and the check of every task (%s s median)", fmtNum(newSeries("", "s", solve).Median), fmtNum(newSeries("", "s", check).Median))
	if len(reset) > 0 {
		times = newSeries("labrun test --repeat", "s", fresher)
		note += fmt.Sprintf(", after making the lab fresh (%s s median); the fresh runs only", fmtNum(newSeries("", "s", reset).Median))
	}
	return append(rows, Row{Name: fmt.Sprintf("%s: time per repeat", lab), Labrun: times, Note: note + "."})
}
