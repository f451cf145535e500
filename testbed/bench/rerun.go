package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// benchRerun measures `labrun check --rerun-failed` against the full
// check it re-checks, on a learner's directory with one task wrong: for
// each task of cca-datapath in turn, the solve's files (in solved) with
// that task's files overwritten by a wrong value, a full check with its
// JSON report (which must fail that task only), then --rerun-failed of
// that report, n times. Both whole processes, on the same cluster state.
func benchRerun(ctx context.Context, b *bench, solved string) ([]Row, error) {
	tasks, err := reportTasks(solved + ".report.json")
	if err != nil {
		return nil, err
	}
	learner := filepath.Join(b.work, "rerun-learner")
	report := learner + ".check.json"
	var full, rerun []time.Duration
	var perTask []string
	for _, t := range tasks {
		if err := wrongTask(solved, learner, t.Files); err != nil {
			return nil, err
		}
		argv := b.checkArgv(learner, "--report", "json="+report)
		p, err := runProc(ctx, argv, procOpts{})
		if err == nil {
			return nil, fmt.Errorf("full check passed with task %d's files wrong:\n%s", t.Number, tail(p.stdout))
		}
		if failed, err := failedTaskNumbers(report); err != nil || len(failed) != 1 || failed[0] != t.Number {
			return nil, fmt.Errorf("full check with task %d's files wrong failed tasks %v (%v), want only it:\n%s", t.Number, failed, err, tail(p.stdout))
		}
		full = append(full, p.wall)
		var these []time.Duration
		for range b.n {
			q, err := runProc(ctx, b.checkArgv(learner, "--rerun-failed", report), procOpts{})
			if err == nil || !strings.Contains(string(q.stdout), fmt.Sprintf("FAIL: task %d ", t.Number)) {
				return nil, fmt.Errorf("re-check of task %d did not fail it:\n%s", t.Number, tail(q.stdout))
			}
			these = append(these, q.wall)
		}
		rerun = append(rerun, these...)
		med := durations("", "ms", these).Median
		perTask = append(perTask, fmt.Sprintf("%d %s %.0f ms", t.Number, t.ID, med))
		fmt.Fprintf(os.Stderr, "   rerun-failed, task %d (%s) wrong: full check %.0f ms, re-check %.0f ms\n", t.Number, t.ID, ms(p.wall), med)
	}
	return []Row{
		compare("`labrun check --rerun-failed` of a report with one task failed, against the full check (goal under 20% of it)",
			durations("labrun check --rerun-failed", "ms", rerun), durations("labrun check, every task", "ms", full), 5).
			withNote("For each of cca-datapath's %d tasks in turn, a learner's directory holds the solve's files with that task's files made wrong; a full check (with --report json) fails that task only, then `check --rerun-failed` of its report re-checks it, with the steps it reads; both whole processes. The ratio is the full check over the re-check: 5x is the re-check in under 20%% of the full check's time. Medians of the re-check per task: %s.",
				len(tasks), strings.Join(perTask, ", ")),
	}, nil
}

// checkArgv is labrun check of cca-datapath on the test cluster, on the
// files in out, with flags before the playbook.
func (b *bench) checkArgv(out string, flags ...string) []string {
	argv := []string{b.labrun, "check", "--kubeconfig", b.kubeconfig,
		"--vars", "playbooks/cca-datapath.testbed.yaml", "--set", "out=" + out, "--no-progress"}
	return append(append(argv, flags...), "playbooks/cca-datapath.yaml")
}

// reportTask is a task of a labrun JSON report.
type reportTask struct {
	Number int      `json:"number"`
	ID     string   `json:"id"`
	Status string   `json:"status"`
	Files  []string `json:"files"`
}

func reportTasks(report string) ([]reportTask, error) {
	data, err := os.ReadFile(report)
	if err != nil {
		return nil, err
	}
	var o struct {
		Tasks []reportTask `json:"tasks"`
	}
	if err := json.Unmarshal(data, &o); err != nil {
		return nil, fmt.Errorf("%s: %v", report, err)
	}
	if len(o.Tasks) == 0 {
		return nil, fmt.Errorf("%s lists no tasks", report)
	}
	return o.Tasks, nil
}

// failedTaskNumbers are the tasks a report has failed.
func failedTaskNumbers(report string) ([]int, error) {
	tasks, err := reportTasks(report)
	var out []int
	for _, t := range tasks {
		if t.Status == "failed" {
			out = append(out, t.Number)
		}
	}
	return out, err
}

// wrongTask makes learner a copy of the lab files in solved with files
// (a task's) replaced by a value no check accepts.
func wrongTask(solved, learner string, files []string) error {
	if err := os.RemoveAll(learner); err != nil {
		return err
	}
	if err := os.MkdirAll(learner, 0o755); err != nil {
		return err
	}
	entries, err := os.ReadDir(solved)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		data, err := os.ReadFile(filepath.Join(solved, e.Name()))
		if err != nil {
			return err
		}
		for _, f := range files {
			if f == e.Name() {
				data = []byte("wrong=by the benchmark\n")
			}
		}
		if err := os.WriteFile(filepath.Join(learner, e.Name()), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}
