package main

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/labrun/labrun/runner"
	"github.com/labrun/labrun/runner/labtest"
)

// The table of docs/exit-codes.md is classExit in words: each class on
// its row with its exit code, and the order in which classes decide a run
// as runner.Classes has it.
func TestExitCodesDocumented(t *testing.T) {
	b, err := os.ReadFile("../../docs/exit-codes.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	if len(classExit) != len(runner.Classes) {
		t.Errorf("classExit has %d classes, runner.Classes %d", len(classExit), len(runner.Classes))
	}
	for _, c := range runner.Classes {
		m := regexp.MustCompile("(?m)^\\| (\\d+) \\| `" + string(c) + "` \\|").FindStringSubmatch(doc)
		if m == nil {
			t.Errorf("docs/exit-codes.md has no row for class %s", c)
			continue
		}
		if code, _ := strconv.Atoi(m[1]); code != classExit[c] {
			t.Errorf("docs/exit-codes.md gives %s exit %d, labrun exits %d", c, code, classExit[c])
		}
	}
	order := make([]string, len(runner.Classes))
	for i, c := range runner.Classes {
		order[i] = string(c)
	}
	if want := strings.Join(order, " > "); !strings.Contains(doc, "\n"+want+"\n") {
		t.Errorf("docs/exit-codes.md does not give the order %q", want)
	}
}

func TestExitCode(t *testing.T) {
	for _, tc := range []struct {
		status runner.Status
		class  runner.Class
		want   int
	}{
		{runner.Passed, "", exitOK},
		{runner.Interrupted, "", exitInterrupted},
		{runner.Failed, runner.ClassAssertion, exitFailed},
		{runner.Failed, runner.ClassConfig, exitInvalid},
		{runner.Failed, runner.ClassForbidden, exitInvalid},
		{runner.Failed, runner.ClassTransport, exitTransport},
		{runner.Failed, runner.ClassTimeout, exitTimeout},
	} {
		if got := exitCode(&runner.Outcome{Status: tc.status, Class: tc.class}); got != tc.want {
			t.Errorf("%s %s: exit %d, want %d", tc.status, tc.class, got, tc.want)
		}
	}
}

// An API server that refuses labrun's permission (403, here a local
// server that serves discovery and refuses everything else, as one does
// for a service account without RBAC) fails the step as forbidden and the
// run with exit 2, read-only steps at once; docs/exit-codes.md. The
// same against a real cluster is TestForbiddenOnTestbed (e2e).
func TestForbiddenExit(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/api":
			fmt.Fprint(w, `{"kind":"APIVersions","versions":["v1"]}`)
		case "/apis":
			fmt.Fprint(w, `{"kind":"APIGroupList","apiVersion":"v1","groups":[]}`)
		case "/api/v1":
			fmt.Fprint(w, `{"kind":"APIResourceList","groupVersion":"v1","resources":[{"name":"pods","singularName":"pod","namespaced":true,"kind":"Pod","verbs":["list","delete"]}]}`)
		default:
			w.WriteHeader(http.StatusForbidden)
			fmt.Fprint(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","code":403,"reason":"Forbidden","message":"pods is forbidden: User \"system:serviceaccount:lab:learner\" cannot list resource \"pods\" in API group \"\" in the namespace \"lab\""}`)
		}
	}))
	defer srv.Close()
	dir := t.TempDir()
	kc := filepath.Join(dir, "kubeconfig.yaml")
	pb := filepath.Join(dir, "p.yaml")
	os.WriteFile(kc, []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "`+srv.URL+`"}}]
contexts: [{name: c, context: {cluster: c, user: u, namespace: lab}}]
users: [{name: u, user: {token: t0ken}}]
current-context: c
`), 0o600)
	os.WriteFile(pb, []byte(`name: denied
steps:
  - id: pods
    get: {kind: Pod, namespace: lab}
    timeout: 1m
`), 0o644)
	for _, mode := range []string{"run", "check"} {
		var stdout, stderr bytes.Buffer
		args := []string{mode, "--no-progress", "--kubeconfig", kc, pb}
		if mode == "run" {
			// the server refuses every request, the Lease's too, and
			// this is about a step's refusal (a check takes no Lease)
			args = slices.Insert(args, 1, "--no-lock")
		}
		code := Main(args, &stdout, &stderr)
		out := stdout.String()
		if code != exitInvalid || !strings.Contains(out, "FAIL [1/1] pods (get)") || !strings.Contains(out, "[forbidden]") ||
			!strings.Contains(out, "Forbidden (403)") || !strings.Contains(out, "denied: FAILED [forbidden]") {
			t.Errorf("%s: exit %d, want %d with the step and the run forbidden:\n%s%s", mode, code, exitInvalid, out, stderr.String())
		}
	}
}

// labrun test exits by the class of the pass that failed, as run and
// check do, and docs/exit-codes.md's table for labrun test names each
// class on the row of its exit code.
func TestTestExit(t *testing.T) {
	b, err := os.ReadFile("../../docs/exit-codes.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	for _, c := range runner.Classes {
		if got := testExit(fmt.Errorf("pass: %w", &labtest.FailedError{Msg: "failed", Class: c})); got != classExit[c] {
			t.Errorf("a pass failed as %s: exit %d, want %d", c, got, classExit[c])
		}
		row := regexp.MustCompile(fmt.Sprintf("(?m)^\\| %d \\| .*`%s`", classExit[c], c))
		if !row.MatchString(doc[strings.Index(doc, "## labrun test"):]) {
			t.Errorf("docs/exit-codes.md's table for labrun test names no class %s on its row for exit %d", c, classExit[c])
		}
	}
	for _, tc := range []struct {
		err  error
		want int
	}{
		{labtest.ErrInterrupted, exitInterrupted},
		{&labtest.RunError{Err: errors.New("outputDir refused")}, exitInvalid},
		{errors.New("cannot read a graded file"), exitFailed},
	} {
		if got := testExit(tc.err); got != tc.want {
			t.Errorf("%v: exit %d, want %d", tc.err, got, tc.want)
		}
	}
}

// labrun test --repeat ranks what it found: a task that failed every run
// exits by its class (the most decisive of them), then a flaky task 5,
// then what one run shows (a change that survived) 1; and
// docs/exit-codes.md gives exit 5 to flaky.
func TestRepeatExit(t *testing.T) {
	flaky := labtest.Figures{Runs: 3, Passed: 2, Failed: 1, Flaky: true, Failures: []labtest.Failure{{Run: 2, Class: runner.ClassTimeout}}}
	broken := func(c runner.Class) labtest.Figures {
		return labtest.Figures{Runs: 2, Failed: 2, Failures: []labtest.Failure{{Run: 1, Class: c}, {Run: 2, Class: runner.ClassAssertion}}}
	}
	survivor := []labtest.Change{{Finding: labtest.Survived}}
	for _, tc := range []struct {
		name    string
		tasks   []labtest.Figures
		changes []labtest.Change
		want    int
	}{
		{"every task passed every run", []labtest.Figures{{Runs: 3, Passed: 3}}, nil, exitOK},
		{"a change survived", []labtest.Figures{{Runs: 3, Passed: 3}}, survivor, exitFailed},
		{"flaky, and a change survived", []labtest.Figures{flaky}, survivor, exitFlaky},
		{"flaky, and a task failed every run on an assertion", []labtest.Figures{flaky, broken(runner.ClassAssertion)}, nil, exitFailed},
		{"failed every run, assertion and config", []labtest.Figures{broken(runner.ClassAssertion), broken(runner.ClassConfig)}, nil, exitInvalid},
		{"failed every run, timing out once", []labtest.Figures{broken(runner.ClassTimeout)}, nil, exitTimeout},
	} {
		res := &labtest.Result{Runs: []labtest.Run{{Number: 1}}, Tasks: tc.tasks, Changes: tc.changes}
		if got := repeatExit(res); got != tc.want {
			t.Errorf("%s: exit %d, want %d", tc.name, got, tc.want)
		}
	}
	b, err := os.ReadFile("../../docs/exit-codes.md")
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(fmt.Sprintf("(?m)^\\| %d \\| .*flaky", exitFlaky)).Match(b) {
		t.Errorf("docs/exit-codes.md has no row giving exit %d to a flaky task", exitFlaky)
	}
}
