package fleet

import (
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/labrun/labrun/internal/leaf/k8sobj"
	"github.com/labrun/labrun/runner"
)

// The labels and annotations of an Indexed Job's pods that collect reads
// (set by the Job controller).
const (
	LabelJobName     = "batch.kubernetes.io/job-name"
	annotationIndex  = "batch.kubernetes.io/job-completion-index"
	annotationFailed = "batch.kubernetes.io/job-index-failure-count"
)

// Container is the name of the container of the Job's pods.
const Container = "labrun"

// JobState is where a Job stands, from its status.
type JobState struct {
	Completions int
	// Finished is "Complete" or "Failed" once the Job ended, else "".
	Finished string
	// Succeeded and Failed count the indexes that ended each way;
	// FailedIndexes is the Job's own list of the failed, as "1,3-5".
	Succeeded, Failed int
	FailedIndexes     string
	// Playbook is the playbook the pods check, as their command line
	// names it in their mount of the Job's ConfigMap ("" for a Job that
	// fleet render did not make).
	Playbook string
	// Started is when the Job started, Ended when it finished (its
	// completionTime, or when it was marked Failed); zero when not known.
	Started, Ended time.Time
}

// State reads a Job object's progress.
func State(job map[string]any) JobState {
	s := JobState{
		Completions:   int(k8sobj.Int(job, "spec", "completions")),
		Succeeded:     int(k8sobj.Int(job, "status", "succeeded")),
		Failed:        int(k8sobj.Int(job, "status", "failed")),
		FailedIndexes: k8sobj.String(job, "status", "failedIndexes"),
	}
	for _, c := range []string{"Complete", "Failed"} {
		if k8sobj.ConditionTrue(job, c) {
			s.Finished = c
		}
	}
	s.Started = timestamp(k8sobj.String(job, "status", "startTime"))
	s.Ended = timestamp(k8sobj.String(job, "status", "completionTime"))
	status, _ := job["status"].(map[string]any)
	conditions, _ := status["conditions"].([]any)
	for _, c := range conditions {
		cm, _ := c.(map[string]any)
		if s.Ended.IsZero() && s.Finished != "" && k8sobj.String(cm, "type") == s.Finished {
			s.Ended = timestamp(k8sobj.String(cm, "lastTransitionTime"))
		}
	}
	s.Playbook = jobPlaybook(job)
	return s
}

// jobPlaybook is the argument after "check" in the command line of the
// labrun container of a Job's pods.
func jobPlaybook(job map[string]any) string {
	var list []any
	if spec, ok := job["spec"].(map[string]any); ok {
		if template, ok := spec["template"].(map[string]any); ok {
			if pod, ok := template["spec"].(map[string]any); ok {
				list, _ = pod["containers"].([]any)
			}
		}
	}
	for _, c := range list {
		cm, _ := c.(map[string]any)
		if k8sobj.String(cm, "name") != Container {
			continue
		}
		args, _ := cm["args"].([]any)
		for i := 0; i+1 < len(args); i++ {
			if args[i] == "check" {
				p, _ := args[i+1].(string)
				return p
			}
		}
	}
	return ""
}

// timestamp reads an API time ("2006-01-02T15:04:05Z"); zero when it
// is not one.
func timestamp(s string) time.Time {
	t, _ := time.Parse(time.RFC3339, s)
	return t
}

// Collect merges the results an Indexed Job's pods left as their
// termination messages into one result per index, in index order. An
// index with a pod that succeeded takes that pod's result; else the
// result of its last pod that ended with one (a pod that failed an index
// with exit 2 leaves its result, as does one interrupted); an index with
// no result is Missing, saying what its last pod showed. names are the
// targets' names by index, when known.
func Collect(completions int, pods []map[string]any, names []string) []Result {
	byIndex := map[int][]map[string]any{}
	for _, p := range pods {
		i, err := strconv.Atoi(k8sobj.StringMap(p, "metadata", "annotations")[annotationIndex])
		if err == nil {
			byIndex[i] = append(byIndex[i], p)
		}
	}
	out := make([]Result, completions)
	for i := range out {
		name := fmt.Sprintf("index %d", i)
		if i < len(names) {
			name = names[i]
		}
		out[i] = indexResult(i, name, byIndex[i])
	}
	return out
}

// indexResult is the result of index i from its pods.
func indexResult(i int, name string, pods []map[string]any) Result {
	// the last created first; a pod that succeeded before any other
	slices.SortStableFunc(pods, func(a, b map[string]any) int {
		return -compareCreated(a, b)
	})
	slices.SortStableFunc(pods, func(a, b map[string]any) int {
		return boolRank(phase(b) == "Succeeded") - boolRank(phase(a) == "Succeeded")
	})
	attempts := len(pods)
	for _, p := range pods {
		if n, err := strconv.Atoi(k8sobj.StringMap(p, "metadata", "annotations")[annotationFailed]); err == nil && n+1 > attempts {
			// pods deleted since are counted by the Job controller
			attempts = n + 1
		}
	}
	for _, p := range pods {
		msg, _, ok := terminated(p)
		if !ok || msg == "" {
			continue
		}
		r, err := ParseLine([]byte(msg))
		if err != nil {
			continue
		}
		r.Index, r.Attempts = i, attempts
		return r
	}
	r := Result{Index: i, Target: name, Verdict: Missing, Attempts: attempts}
	switch {
	case len(pods) == 0:
		r.FirstFailure = "no pod: the index has not run, or its pods were removed"
	default:
		r.FirstFailure = podState(pods[0])
	}
	return r
}

// podState says what a pod that left no result shows.
func podState(p map[string]any) string {
	name := k8sobj.String(p, "metadata", "name")
	if _, code, ok := terminated(p); ok {
		return fmt.Sprintf("pod %s: container %s exited %d and left no result", name, Container, code)
	}
	return fmt.Sprintf("pod %s: %s, no result yet", name, phase(p))
}

// terminated is the labrun container's termination message and exit
// code, when it ended.
func terminated(p map[string]any) (msg string, code int, ok bool) {
	status, _ := p["status"].(map[string]any)
	list, _ := status["containerStatuses"].([]any)
	for _, c := range list {
		cs, _ := c.(map[string]any)
		if k8sobj.String(cs, "name") != Container || !k8sobj.Has(cs, "state", "terminated") {
			continue
		}
		return k8sobj.String(cs, "state", "terminated", "message"), int(k8sobj.Int(cs, "state", "terminated", "exitCode")), true
	}
	return "", 0, false
}

func phase(p map[string]any) string { return k8sobj.String(p, "status", "phase") }

func compareCreated(a, b map[string]any) int {
	ta, tb := k8sobj.String(a, "metadata", "creationTimestamp"), k8sobj.String(b, "metadata", "creationTimestamp")
	switch {
	case ta < tb:
		return -1
	case ta > tb:
		return 1
	}
	return 0
}

func boolRank(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Counts are how many targets ended each way.
type Counts struct {
	Passed, Wrong, NotGraded, Missing int
}

// Count counts results by verdict.
func Count(results []Result) Counts {
	var c Counts
	for _, r := range results {
		switch r.Verdict {
		case Passed:
			c.Passed++
		case Wrong:
			c.Wrong++
		case NotGraded:
			c.NotGraded++
		default:
			c.Missing++
		}
	}
	return c
}

// WorstClass is the most decisive class of the targets that were not
// graded (runner.Classes' order), "" when every target was graded.
func WorstClass(results []Result) runner.Class {
	worst := -1
	for _, r := range results {
		if r.Graded() {
			continue
		}
		i := slices.Index(runner.Classes, r.Class)
		if i < 0 {
			// interrupted, or missing: counted as the cluster's fault
			i = slices.Index(runner.Classes, runner.ClassTransport)
		}
		if worst < 0 || i < worst {
			worst = i
		}
	}
	if worst < 0 {
		return ""
	}
	return runner.Classes[worst]
}
