//go:build e2e

package main

import (
	"context"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/labrun/labrun/internal/heavy/kube/kubetest"
)

// The classroom lab, in a fresh namespace of its own as a learner's would
// be: labrun test --repeat 2 solves and checks it 3 times, twice after its
// cleanup playbook emptied the namespace and once on the lab as the
// second run left it, every task passing every run; then it changes every
// value of its files, each change rejected (served_by, which differs
// between requests, by its assertion); the solved files pass check again; labrun rbac
// --mode check prints one Role in the namespace and no ClusterRole; and
// the check passes as a ServiceAccount bound to that Role alone, while
// without any one of its permissions it is refused
// (kubetest.CheckUnderDerivedRoles).
func TestClassroomLab(t *testing.T) {
	kc := kubetest.Kubeconfig(t)
	ns := kubetest.NamespaceName("e2e-classroom")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	kubetest.ApplyInNamespace(ctx, t, kubetest.Connect(t), ns, "the learner's namespace",
		"apiVersion: v1\nkind: Namespace\nmetadata: {name: "+ns+"}\n")
	flags := []string{"--vars", "../../playbooks/classroom.testbed.yaml", "--set", "namespace=" + ns, "--set", "out=" + t.TempDir()}
	const playbook = "../../playbooks/classroom.yaml"
	run := mainOutput
	labrun := func(cmd string) (int, string) {
		return run(append(append([]string{cmd, "--no-progress", "--kubeconfig", kc}, flags...), playbook)...)
	}

	code, text := run(append(append([]string{"test", "--repeat", "2", "--no-progress", "--kubeconfig", kc}, flags...), playbook)...)
	if code != 0 {
		t.Fatalf("labrun test --repeat 2 exited %d:\n%s", code, text)
	}
	if !strings.Contains(text, "starts from a fresh lab: run the cleanup playbook ../../playbooks/classroom/cleanup.yaml first") ||
		!strings.Contains(text, "labrun test: no flaky task: 4 tasks passed all 3 runs") {
		t.Errorf("want 3 runs, the first 2 after the cleanup playbook, and no flaky task:\n%s", text)
	}
	summary := regexp.MustCompile(`labrun test: (\d+) changes to 4 graded files: (\d+) rejected naming the value, 0 declared loose, 0 survived, 0 rejected naming another value`).FindStringSubmatch(text)
	if summary == nil {
		t.Fatalf("no summary of 4 files with every change rejected naming its value:\n%s", text)
	}
	// The other half: each file written other ways with the same meaning
	// passes (the test's exit code says it too; this names the line).
	if !regexp.MustCompile(`graded files written other ways with the same meaning: [1-9]\d* passed, 0 refused`).MatchString(text) {
		t.Errorf("a right answer written another way was refused, or none was tried:\n%s", text)
	}
	// 25 values and 25 keys removed, and more for each list item.
	if changes, _ := strconv.Atoi(summary[1]); changes < 50 || summary[2] != summary[1] {
		t.Errorf("%s changes, %s rejected; want at least 50, all rejected", summary[1], summary[2])
	}
	if code, text := labrun("check"); code != 0 {
		t.Errorf("check of the solved files after labrun test exited %d:\n%s", code, text)
	}

	code, roles := run(append(append([]string{"rbac", "--mode", "check"}, flags...), playbook)...)
	if code != 0 || strings.Count(roles, "\nkind: Role\n") != 1 || strings.Contains(roles, "ClusterRole") ||
		!strings.Contains(roles, "  namespace: "+ns+"\n") {
		t.Fatalf("labrun rbac exited %d; want one Role, in namespace %s, and no ClusterRole:\n%s", code, ns, roles)
	}
	kubetest.CheckUnderDerivedRoles(t, run, playbook, flags...)
}
