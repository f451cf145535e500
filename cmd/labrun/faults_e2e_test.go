//go:build e2e

package main

// The fault suite (make e2e-faults): labrun against the test cluster while
// parts of it die. Each fault is injected at a deterministic point: the
// playbook's "fault" step writes into a FIFO and blocks on a second one;
// the test, reading the first, kills the component (by the pid testbed/up
// recorded), releases the playbook, and restarts what it killed with
// testbed/up, which starts only dead components again. The steps after
// the fault therefore meet it for sure, and must ride through it. The
// tests skip unless LABRUN_FAULTS=1: they take the shared cluster's API
// server, etcd and kubelets down, which the other e2e tests, run in
// parallel packages by `go test`, must never see.
//
// The faults that need no cluster (a second Ctrl-C, SIGKILL and --from, a
// failed fresh run) are tests of this package's unit suite, which
// make e2e-faults runs by name beside these.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
	"gopkg.in/yaml.v3"

	"github.com/labrun/labrun/internal/boundary/cluster"
	"github.com/labrun/labrun/internal/heavy/kube"
	"github.com/labrun/labrun/internal/heavy/kube/kubetest"
)

// faultEnv is the test cluster a fault test works on.
type faultEnv struct {
	v  kubetest.Vars
	kc string
	c  *kube.Client
}

// faultTestbed skips the test unless the fault suite was asked for, and
// connects to the test cluster.
func faultTestbed(t *testing.T) *faultEnv {
	t.Helper()
	if os.Getenv("LABRUN_FAULTS") != "1" {
		t.Skip("kills and restarts parts of the test cluster: run by make e2e-faults (LABRUN_FAULTS=1)")
	}
	return &faultEnv{v: kubetest.ReadVars(t), kc: kubetest.Kubeconfig(t), c: kubetest.Connect(t)}
}

// web makes a namespace named after prefix with the web Deployment,
// ready, deleted when the test ends; ctx bounds the test.
func (e *faultEnv) web(t *testing.T, prefix string) (ctx context.Context, ns string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Minute)
	t.Cleanup(cancel)
	return ctx, deployWeb(ctx, t, e.c, e.v, prefix)
}

// rideThroughPlaybook is a lab's reading half: pods, a command and a log
// in the web pod, the node's Cilium agent, a rollout, then one change.
// The steps after "fault" each have time to wait for a restart.
const rideThroughPlaybook = `name: ride through
vars: {ns: x, node: x, fifo: "", release: "", report: x}
steps:
  - id: before
    get: {kind: Pod, namespace: "${{ vars.ns }}", selector: app=web}
  - id: fault
    when: vars.fifo != ""
    run: {argv: [sh, -c, 'echo ready > "$1"; read -r go < "$2"', sh, "${{ vars.fifo }}", "${{ vars.release }}"]}
  - id: pods
    get: {kind: Pod, namespace: "${{ vars.ns }}", selector: app=web}
    timeout: 4m
    assert:
      - that: result.count == 1
  - id: hostname
    exec: {pod: deploy/web, namespace: "${{ vars.ns }}", argv: [cat, /etc/hostname]}
    timeout: 4m
  - id: log
    logs: {pod: deploy/web, namespace: "${{ vars.ns }}"}
    timeout: 4m
  - id: agent
    cilium: {args: [service, list, -o, json], node: "${{ vars.node }}"}
    timeout: 4m
  - id: ready
    wait: {kind: Deployment, namespace: "${{ vars.ns }}", name: web}
    until: result.ready == 1
    timeout: 4m
  - id: note
    apply:
      namespace: "${{ vars.ns }}"
      objects:
        - {apiVersion: v1, kind: ConfigMap, metadata: {name: note}, data: {k: v}}
`

// webManifest: a namespace and one web pod on node 1 (where the killed
// kubelet and agent are).
const webManifest = `apiVersion: v1
kind: Namespace
metadata: {name: NS}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: NS}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      nodeName: NODE
      terminationGracePeriodSeconds: 1
      containers:
      - name: web
        image: IMAGE
        imagePullPolicy: Never
        command: [python3, -m, http.server, "8080"]
        readinessProbe: {tcpSocket: {port: 8080}, periodSeconds: 1}
`

// deployWeb makes a namespace with the web Deployment, ready, deleted when
// the test ends.
func deployWeb(ctx context.Context, t *testing.T, c *kube.Client, v kubetest.Vars, prefix string) string {
	t.Helper()
	ns := kubetest.NamespaceName(prefix)
	kubetest.ApplyInNamespace(ctx, t, c, ns, "web", strings.NewReplacer("NS", ns, "NODE", v.NodeName, "IMAGE", v.PythonImage).Replace(webManifest))
	if _, err := kubetest.WaitRollout(ctx, c, cluster.ObjectQuery{APIVersion: "apps/v1", Kind: "Deployment", Namespace: ns, Name: "web"}); err != nil {
		t.Fatal(err)
	}
	return ns
}

// component is what a test kills: a process testbed/up started (by its
// pidfile name) or, for the agent, node 1's cilium-agent container.
type component string

const agentContainer component = "cilium-agent container"

// kill SIGKILLs the component and returns once it is gone.
func (comp component) kill(ctx context.Context, t *testing.T, c *kube.Client, v kubetest.Vars) {
	t.Helper()
	if comp == agentContainer {
		killAgent(ctx, t, c, v)
		return
	}
	b, err := os.ReadFile(filepath.Join("/run/labrun-testbed/pids", string(comp)+".pid"))
	if err != nil {
		t.Fatal(err)
	}
	var pid int
	var start string
	if _, err := fmt.Sscan(string(b), &pid, &start); err != nil {
		t.Fatalf("pidfile of %s: %q: %v", comp, b, err)
	}
	// The same check as testbed's pid_alive: the pid is still the process
	// testbed/up started (its start time, field 22 of stat), not a reuse.
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatalf("%s (pid %d) is not running: %v", comp, pid, err)
	}
	fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
	if len(fields) < 20 || fields[19] != start {
		t.Fatalf("pid %d is no longer %s", pid, comp)
	}
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	if err := unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0); err != nil {
		t.Fatal(err)
	}
	if !exitedWithin(fd, time.Minute) {
		t.Fatalf("%s (pid %d) still alive a minute after SIGKILL", comp, pid)
	}
	t.Logf("killed %s (pid %d)", comp, pid)
}

// killAgent SIGKILLs the task of node 1's cilium-agent container through
// the node's containerd; the kubelet starts the container again.
func killAgent(ctx context.Context, t *testing.T, c *kube.Client, v kubetest.Vars) {
	t.Helper()
	pods, err := c.List(ctx, cluster.ObjectQuery{APIVersion: "v1", Kind: "Pod", Namespace: "kube-system", Selector: "k8s-app=cilium", FieldSelector: "spec.nodeName=" + v.NodeName})
	if err != nil || len(pods) != 1 {
		t.Fatalf("agent pod of %s: %v (%d pods)", v.NodeName, err, len(pods))
	}
	var id string
	statuses, _ := pods[0]["status"].(map[string]any)["containerStatuses"].([]any)
	for _, s := range statuses {
		if s := s.(map[string]any); s["name"] == "cilium-agent" {
			id, _ = s["containerID"].(string)
		}
	}
	id, ok := strings.CutPrefix(id, "containerd://")
	if !ok {
		t.Fatalf("no containerd id of cilium-agent in %v", statuses)
	}
	out, err := exec.Command("/var/lib/labrun-testbed/bin/node-exec", "ctr", "--address", "/run/containerd/containerd.sock", "-n", "k8s.io", "tasks", "kill", "-s", "SIGKILL", id).CombinedOutput()
	if err != nil {
		t.Fatalf("ctr tasks kill %s: %v\n%s", id, err, out)
	}
	t.Logf("killed the cilium-agent container %.12s", id)
}

// restorer runs testbed/up on the running profile, which starts again
// only what died; done receives its error and output. A test that ends
// early still restores the cluster before the next one.
type restorer struct {
	once sync.Once
	done chan error
	out  bytes.Buffer
}

func startRestore(t *testing.T, profile string) *restorer {
	r := &restorer{done: make(chan error, 1)}
	go func() {
		cmd := exec.Command("../../testbed/up", "--profile", profile)
		cmd.Stdout, cmd.Stderr = &r.out, &r.out
		r.done <- cmd.Run()
	}()
	t.Cleanup(func() { r.wait(t) })
	return r
}

// wait waits for testbed/up and fails the test unless it made the cluster
// healthy.
func (r *restorer) wait(t *testing.T) {
	r.once.Do(func() {
		select {
		case err := <-r.done:
			if err != nil {
				t.Errorf("testbed/up could not restore the cluster: %v\n%s", err, r.out.String())
			}
		case <-time.After(10 * time.Minute):
			t.Errorf("testbed/up still running after 10 minutes:\n%s", r.out.String())
		}
	})
}

// releaseFault blocks until the playbook's fault step has written its
// FIFO, then runs inject, then lets the playbook go on.
func releaseFault(t *testing.T, fifo, release string, exited chan error, out *lockedBuffer, inject func()) {
	t.Helper()
	ready := make(chan struct{})
	go func() {
		os.ReadFile(fifo) // blocks until the step opens it
		close(ready)
	}()
	select {
	case <-ready:
	case err := <-exited:
		t.Fatalf("labrun exited (%v) before the fault step:\n%s", err, out.String())
	}
	inject()
	f, err := os.OpenFile(release, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("go\n")
	f.Close()
}

// exitWithin waits for labrun's exit code, at most d.
func exitWithin(t *testing.T, cmd *exec.Cmd, exited chan error, out *lockedBuffer, d time.Duration) int {
	t.Helper()
	select {
	case <-exited:
		return cmd.ProcessState.ExitCode()
	case <-time.After(d):
		t.Fatalf("labrun still running after %s:\n%s", d, out.String())
	}
	return 0
}

// twoFifos makes the fault step's FIFOs.
func twoFifos(t *testing.T) (fifo, release string) {
	dir := t.TempDir()
	fifo, release = filepath.Join(dir, "ready"), filepath.Join(dir, "release")
	for _, f := range []string{fifo, release} {
		if err := syscall.Mkfifo(f, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return fifo, release
}

// stepAttempts reads the attempts of each step from a JSON report.
func stepAttempts(t *testing.T, report string) map[string]int {
	t.Helper()
	var o struct {
		Steps []struct {
			ID       string `json:"id"`
			Attempts int    `json:"attempts"`
		} `json:"steps"`
	}
	data, err := os.ReadFile(report)
	if err == nil {
		err = json.Unmarshal(data, &o)
	}
	if err != nil {
		t.Fatalf("report: %v", err)
	}
	m := map[string]int{}
	for _, s := range o.Steps {
		m[s.ID] = s.Attempts
	}
	return m
}

// The lab passes through a restart of the API server, of etcd, of node
// 1's kubelet and of its Cilium agent, each killed just before the steps
// that read the cluster. After an API server or kubelet kill, the first
// step that needs it certainly met the fault, so it took more than one
// attempt.
func TestFaultRideThrough(t *testing.T) {
	e := faultTestbed(t)
	v, kc, c := e.v, e.kc, e.c
	for _, tc := range []struct {
		comp      component
		firstStep string // the step that must have met the fault
	}{
		{"kube-apiserver", "pods"},
		{"etcd", ""},
		{"kubelet", "hostname"},
		{agentContainer, ""},
	} {
		t.Run(strings.ReplaceAll(string(tc.comp), " ", "-"), func(t *testing.T) {
			ctx, ns := e.web(t, "e2e-fault")
			fifo, release := twoFifos(t)
			pb := filepath.Join(t.TempDir(), "ride.yaml")
			report := filepath.Join(t.TempDir(), "report.json")
			os.WriteFile(pb, []byte(rideThroughPlaybook), 0o644)
			var out lockedBuffer
			start := time.Now()
			cmd, exited := startLabrun(t, &out, "run", "--no-progress", "--kubeconfig", kc, "--report", "json="+report,
				"--set", "ns="+ns, "--set", "node="+v.NodeName, "--set", "fifo="+fifo, "--set", "release="+release, pb)
			var r *restorer
			releaseFault(t, fifo, release, exited, &out, func() {
				tc.comp.kill(ctx, t, c, v)
				r = startRestore(t, v.Profile)
			})
			code := exitWithin(t, cmd, exited, &out, 8*time.Minute)
			r.wait(t)
			t.Logf("labrun took %s through the %s restart:\n%s", time.Since(start).Round(time.Millisecond), tc.comp, out.String())
			if code != 0 {
				t.Fatalf("labrun exited %d, want 0", code)
			}
			if n := stepAttempts(t, report)[tc.firstStep]; tc.firstStep != "" && n < 2 {
				t.Errorf("step %s took %d attempt(s): it did not meet the %s restart", tc.firstStep, n, tc.comp)
			}
		})
	}
}

// An exec whose stream the kubelet's death cuts, mid-command: a mutating
// one is not run again (labrun fails the step saying the outcome is
// unknown, as a transport failure, exit 3, and the command's effect, a
// line appended to a file, happened once); a read-only one is run again
// once the kubelet is back, and passes. The kubelet is killed once the command has written its line,
// which the test reads through its own exec.
func TestFaultExecStreamCut(t *testing.T) {
	e := faultTestbed(t)
	v, kc, c := e.v, e.kc, e.c
	for _, tc := range []struct {
		name    string
		mutates bool
		code    int
		output  string // in labrun's output
		counter string // the file the command appends to, at the end
	}{
		{"mutating", true, exitTransport, "outcome is unknown", "ran\n"},
		{"read-only", false, 0, "PASSED", "ran\nran\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, ns := e.web(t, "e2e-fault-cut")
			pb := filepath.Join(t.TempDir(), "cut.yaml")
			os.WriteFile(pb, []byte(`name: stream cut
vars: {ns: x, mutates: false}
steps:
  - id: count
    exec: {pod: deploy/web, namespace: "${{ vars.ns }}", argv: [sh, -c, 'echo ran >> /tmp/counter; exec sleep 15'], mutates: `+fmt.Sprint(tc.mutates)+`}
    timeout: 4m
`), 0o644)
			var out lockedBuffer
			cmd, exited := startLabrun(t, &out, "run", "--no-progress", "--kubeconfig", kc, "--set", "ns="+ns, pb)
			counter := func() string {
				res, err := c.Exec(ctx, cluster.PodTarget{Namespace: ns, Pod: "deploy/web"}, cluster.ExecRequest{Argv: []string{"sh", "-c", "cat /tmp/counter 2>/dev/null; true"}})
				if err != nil {
					return "error: " + err.Error()
				}
				return res.Stdout
			}
			// The command's line is the signal that it runs; the poll's
			// deadline only stops a hang.
			deadline := time.Now().Add(2 * time.Minute)
			for counter() != "ran\n" {
				select {
				case err := <-exited:
					t.Fatalf("labrun exited (%v) before the command ran:\n%s", err, out.String())
				case <-time.After(200 * time.Millisecond):
				}
				if time.Now().After(deadline) {
					t.Fatalf("the command did not run within 2 minutes:\n%s", out.String())
				}
			}
			component("kubelet").kill(ctx, t, c, v)
			r := startRestore(t, v.Profile)
			code := exitWithin(t, cmd, exited, &out, 5*time.Minute)
			r.wait(t)
			if code != tc.code || !strings.Contains(out.String(), tc.output) {
				t.Errorf("labrun exited %d, want %d with %q:\n%s", code, tc.code, tc.output, out.String())
			}
			if got := counter(); got != tc.counter {
				t.Errorf("the command's file holds %q, want %q", got, tc.counter)
			}
		})
	}
}

// delayProxy forwards TCP connections to target and holds every chunk
// the server sends for delay before passing it on, in order: each API
// response arrives delay late, as netem would make it (this kernel has
// none). Requests go through at once.
func delayProxy(t *testing.T, target string, delay time.Duration) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			client, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				server, err := net.Dial("tcp", target)
				if err != nil {
					client.Close()
					return
				}
				go func() { io.Copy(server, client); server.(*net.TCPConn).CloseWrite() }()
				type chunk struct {
					at   time.Time
					data []byte
				}
				chunks := make(chan chunk, 1024)
				go func() {
					defer close(chunks)
					r := bufio.NewReaderSize(server, 64<<10)
					for {
						buf := make([]byte, 64<<10)
						n, err := r.Read(buf)
						if n > 0 {
							chunks <- chunk{time.Now().Add(delay), buf[:n]}
						}
						if err != nil {
							return
						}
					}
				}()
				for ch := range chunks {
					time.Sleep(time.Until(ch.at))
					if _, err := client.Write(ch.data); err != nil {
						break
					}
				}
				client.Close()
				server.Close()
			}()
		}
	}()
	return l.Addr().String()
}

// Slow API: the lab passes when every response of the API server (and
// every exec and log stream through it) arrives 2 s late.
func TestFaultSlowAPI(t *testing.T) {
	e := faultTestbed(t)
	v, kc := e.v, e.kc
	_, ns := e.web(t, "e2e-fault-slow")

	// The same kubeconfig, its server the proxy (the API server's
	// certificate names 127.0.0.1).
	data, err := os.ReadFile(kc)
	if err != nil {
		t.Fatal(err)
	}
	var cfg map[string]any
	if err := yaml.Unmarshal(data, &cfg); err != nil {
		t.Fatal(err)
	}
	clusters := cfg["clusters"].([]any)
	cl := clusters[0].(map[string]any)["cluster"].(map[string]any)
	server := strings.TrimPrefix(cl["server"].(string), "https://")
	cl["server"] = "https://" + delayProxy(t, server, 2*time.Second)
	slow, _ := yaml.Marshal(cfg)
	slowKC := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(slowKC, slow, 0o600); err != nil {
		t.Fatal(err)
	}
	pb := filepath.Join(t.TempDir(), "ride.yaml")
	os.WriteFile(pb, []byte(rideThroughPlaybook), 0o644)
	var out lockedBuffer
	start := time.Now()
	cmd, exited := startLabrun(t, &out, "run", "--no-progress", "--kubeconfig", slowKC, "--set", "ns="+ns, "--set", "node="+v.NodeName, pb)
	code := exitWithin(t, cmd, exited, &out, 8*time.Minute)
	t.Logf("labrun took %s with every response 2 s late:\n%s", time.Since(start).Round(time.Millisecond), out.String())
	if code != 0 {
		t.Fatalf("labrun exited %d, want 0", code)
	}
}
