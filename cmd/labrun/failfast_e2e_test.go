//go:build e2e

package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/labrun/labrun/internal/boundary/cluster"
	"github.com/labrun/labrun/internal/heavy/kube/kubetest"
	"github.com/labrun/labrun/internal/leaf/k8sobj"
)

// failFastManifest: a pod whose image is not on the node (pull policy
// Never: the test cluster has no registry), one that crash-loops with its
// last words as termination message (its readiness probe keeps it from
// being Ready in the moment it runs, as a server's would), one that
// crash-loops on its read-only root with the default termination message
// policy (nothing but its log says why), and a Deployment, a StatefulSet
// and a DaemonSet of missing images.
const failFastManifest = `apiVersion: v1
kind: Namespace
metadata: {name: NS}
---
apiVersion: v1
kind: Pod
metadata: {name: nopull, namespace: NS, labels: {app: nopull}}
spec:
  containers:
  - {name: main, image: labrun.local/does-not-exist:1, imagePullPolicy: Never}
---
apiVersion: v1
kind: Pod
metadata: {name: crash, namespace: NS, labels: {app: crash}}
spec:
  containers:
  - name: main
    image: IMAGE
    imagePullPolicy: Never
    command: [sh, -c, 'echo boom >&2; mkdir /proc/x; exit 3']
    terminationMessagePolicy: FallbackToLogsOnError
    readinessProbe: {exec: {command: ["true"]}, initialDelaySeconds: 5}
---
apiVersion: v1
kind: Pod
metadata: {name: rofs, namespace: NS, labels: {app: rofs}}
spec:
  containers:
  - name: main
    image: IMAGE
    imagePullPolicy: Never
    command: [mkdir, /srv/www/cache]
    securityContext: {readOnlyRootFilesystem: true}
    readinessProbe: {exec: {command: ["true"]}, initialDelaySeconds: 5}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: nopull, namespace: NS}
spec:
  replicas: 1
  selector: {matchLabels: {app: nopull-deploy}}
  template:
    metadata: {labels: {app: nopull-deploy}}
    spec:
      containers:
      - {name: main, image: labrun.local/does-not-exist:2, imagePullPolicy: Never}
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db, namespace: NS}
spec:
  replicas: 1
  serviceName: db
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec:
      containers:
      - {name: main, image: labrun.local/does-not-exist:3, imagePullPolicy: Never}
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent, namespace: NS}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec:
      containers:
      - {name: main, image: labrun.local/does-not-exist:4, imagePullPolicy: Never}
`

// failFastPlaybook waits for one kind of object to be ready, far longer
// than a failure takes to show.
const failFastPlaybook = `name: fail fast
vars:
  namespace: default
  kind: Pod
  name: web
steps:
  - id: ready
    wait: {kind: '${{ vars.kind }}', namespace: '${{ vars.namespace }}', name: '${{ vars.name }}'}
    until: result.ready == 1
    timeout: 10m
`

// A wait on a pod whose image cannot be had, on crash-looping pods, and on
// the rollouts of workloads whose pods cannot start each stops as soon as
// the kubelet says so, naming the reason and quoting the cause, instead of
// timing out.
func TestWaitFailsFastOnTestbed(t *testing.T) {
	kc := kubetest.Kubeconfig(t)
	vars := kubetest.ReadVars(t)
	c := kubetest.Connect(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	ns := kubetest.NamespaceName("e2e-failfast")
	kubetest.ApplyInNamespace(ctx, t, c, ns, "fail fast", strings.NewReplacer("NS", ns, "IMAGE", vars.PythonImage).Replace(failFastManifest))

	wait := waitWith(t, kc, ns)
	for _, tc := range []struct {
		kind, name string
		want       []string
	}{
		{"Pod", "nopull", []string{
			`stopped waiting for Pod named "nopull" in namespace "` + ns + `": pod ` + ns + `/nopull container main is in ErrImageNeverPull: Container image "labrun.local/does-not-exist:1" is not present with pull policy of Never`}},
		{"Pod", "crash", []string{
			`stopped waiting for Pod named "crash" in namespace "` + ns + `": pod ` + ns + `/crash container main is in CrashLoopBackOff: exit code 3: boom; mkdir: can't create directory '/proc/x': No such file or directory`}},
		{"Pod", "rofs", []string{
			`stopped waiting for Pod named "rofs" in namespace "` + ns + `": pod ` + ns + `/rofs container main is in CrashLoopBackOff: exit code 1 (Error); its log ends: mkdir: can't create directory '/srv/www/cache': Read-only file system`}},
		{"Deployment", "nopull", []string{
			`stopped waiting for Deployment named "nopull" in namespace "` + ns + `": pod ` + ns + `/nopull-`,
			`container main is in ErrImageNeverPull: Container image "labrun.local/does-not-exist:2" is not present with pull policy of Never`}},
		{"StatefulSet", "db", []string{
			`stopped waiting for StatefulSet named "db" in namespace "` + ns + `": pod ` + ns + `/db-0 container main is in ErrImageNeverPull: Container image "labrun.local/does-not-exist:3" is not present with pull policy of Never`}},
		{"DaemonSet", "agent", []string{
			`stopped waiting for DaemonSet named "agent" in namespace "` + ns + `": pod ` + ns + `/agent-`,
			`container main is in ErrImageNeverPull: Container image "labrun.local/does-not-exist:4" is not present with pull policy of Never`}},
	} {
		t.Run(tc.kind+"/"+tc.name, func(t *testing.T) {
			code, out := wait(tc.kind, tc.name)
			if code != 1 {
				t.Fatalf("labrun exited %d, want 1\n%s", code, out)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("output does not contain %q:\n%s", w, out)
				}
			}
			if strings.Contains(out, "timed out") {
				t.Errorf("the wait timed out instead of failing fast:\n%s", out)
			}
		})
	}
}

// fixManifest is a Deployment whose pod runs COMMAND: one that exits (a
// crash loop), then one that keeps running, a rollout that replaces
// crashing pods.
const fixManifest = `apiVersion: apps/v1
kind: Deployment
metadata: {name: fixme, namespace: NS}
spec:
  replicas: 1
  selector: {matchLabels: {app: fixme}}
  template:
    metadata: {labels: {app: fixme}}
    spec:
      containers:
      - name: main
        image: IMAGE
        imagePullPolicy: Never
        command: [sh, -c, 'COMMAND']
        readinessProbe: {exec: {command: ["true"]}, periodSeconds: 1}
`

// A rollout that replaces a crash-looping pod waits for the new one: the
// old revision's pod, crashing until it is removed, does not stop the
// wait.
func TestWaitOnRolloutPassesOverOldCrashingPods(t *testing.T) {
	kc := kubetest.Kubeconfig(t)
	vars := kubetest.ReadVars(t)
	c := kubetest.Connect(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	ns := kubetest.NamespaceName("e2e-failfast-fix")
	deploy := strings.NewReplacer("NS", ns, "IMAGE", vars.PythonImage)
	kubetest.ApplyInNamespace(ctx, t, c, ns, "broken", "apiVersion: v1\nkind: Namespace\nmetadata: {name: "+ns+"}\n---\n"+
		strings.ReplaceAll(deploy.Replace(fixManifest), "COMMAND", "exit 1"))
	if _, err := c.Wait(ctx, cluster.ObjectQuery{APIVersion: "v1", Kind: "Pod", Namespace: ns, Selector: "app=fixme"}, func(pods []map[string]any) (bool, error) {
		f, ok := k8sobj.FirstPodFailure(pods)
		return ok && f.Reason == "CrashLoopBackOff", nil
	}, nil); err != nil {
		t.Fatalf("waiting for the broken pod to crash-loop: %v", err)
	}
	if _, err := c.Apply(ctx, []cluster.ManifestSource{{Text: strings.ReplaceAll(deploy.Replace(fixManifest), "COMMAND", "exec sleep 3600"), Label: "fixed"}}, cluster.ApplyRequest{}); err != nil {
		t.Fatal(err)
	}

	if code, out := waitWith(t, kc, ns)("Deployment", "fixme"); code != 0 {
		t.Fatalf("labrun exited %d, want 0\n%s", code, out)
	}
}

// waitWith returns a function that runs failFastPlaybook on the object
// kind/name in ns with labrun run, giving its exit code and output.
func waitWith(t *testing.T, kc, ns string) func(kind, name string) (int, string) {
	pb := filepath.Join(t.TempDir(), "failfast.yaml")
	if err := os.WriteFile(pb, []byte(failFastPlaybook), 0o644); err != nil {
		t.Fatal(err)
	}
	return func(kind, name string) (int, string) {
		var stdout, stderr bytes.Buffer
		code := Main([]string{"run", "--no-progress", "--kubeconfig", kc, "--set", "namespace=" + ns,
			"--set", "kind=" + kind, "--set", "name=" + name, pb}, &stdout, &stderr)
		return code, stdout.String() + stderr.String()
	}
}
