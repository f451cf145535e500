package access

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/labrun/labrun/actions"
	"github.com/labrun/labrun/runner"
)

// loadPlaybook compiles the playbook src.
func loadPlaybook(t *testing.T, src string) *runner.Plan {
	t.Helper()
	path := filepath.Join(t.TempDir(), "p.yaml")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	plan, err := runner.Load(path, runner.Options{})
	if err != nil {
		t.Fatalf("%v\n%s", err, src)
	}
	return plan
}

// hostString is each need a line: what, of what, the steps; then what a
// pod needs for it.
func hostString(needs []HostNeed) string {
	var b strings.Builder
	for _, n := range needs {
		b.WriteString(n.What)
		if len(n.Of) > 0 {
			b.WriteString(": " + strings.Join(n.Of, ", "))
		}
		b.WriteString(" [" + strings.Join(n.Steps, ", ") + "]\n  " + n.InPod + "\n")
	}
	return b.String()
}

// What the steps need of the machine labrun runs on comes from each
// step's action and spec, in the mode's steps only: the agent's socket
// and the bpffs where the spec puts them (a variable's value), programs
// grouped by where they run, a URL's host, the output directory. Values
// known only at the run are said to be.
func TestHostNeeds(t *testing.T) {
	steps := `
  - id: health
    agent: {path: /v1/healthz, socket: "${{ vars.sock }}"}
  - id: again
    agent: {path: /v1/healthz, socket: "${{ vars.sock }}"}
  - id: defaults
    agent: {path: /v1/config}
  - id: svc
    bpfmap: {map: services, root: "${{ vars.bpffs }}"}
  - id: ipt
    run: {argv: [iptables-save], via: "${{ vars.node_exec }}"}
  - id: ports
    run: {argv: [ss, -Htln], via: "${{ vars.node_exec }}"}
  - id: dev
    compute: {name: "${{ 'lxc' + vars.ns }}"}
  - id: tc
    run: {argv: [tc, filter, show, dev, "${{ steps.dev.name }}"], via: "${{ vars.node_exec }}"}
  - id: local
    run: {argv: [ip, route]}
    only: solve
  - id: fix
    run: {argv: [sh, -c, "echo fixed"], mutates: true}
  - id: remote
    run: {argv: [curl, -s, node2], via: [ssh, node2]}
  - id: np
    http: {url: "http://localhost:30080/"}
  - id: there
    http: {url: "http://${{ steps.dev.name }}/"}
  - id: sock
    http: {url: "http://localhost/v1/healthz", unixSocket: /run/x/api.sock}
  - id: out
    write: {path: a.json, json: {a: 1}}
  - id: sniff
    capture: {tcpdump: {via: "${{ vars.node_exec }}", interface: eth0, filter: tcp port 8080}}
    during:
      - id: poke
        http: {url: "http://localhost:30080/"}
  - id: flows
    capture: {hubble: {}}
    during:
      - id: quiet
        compute: {x: 1}
`
	plan := loadPlaybook(t, "name: t\nvars: {ns: lab, sock: /run/cilium/cilium.sock, bpffs: /sys/fs/bpf, node_exec: [nsenter, -t, '1', -m, -n, -p, --]}\noutputDir: /srv/answers\nsteps:\n"+steps)

	check, err := HostNeeds(plan, Options{Mode: actions.Check})
	if err != nil {
		t.Fatal(err)
	}
	want := `the Cilium agent's API socket /run/cilium/cilium.sock, the node's [health, again]
  a hostPath volume of the node's /run/cilium mounted at /run/cilium, and runAsUser: 0 (the socket is root's) or the socket's group
the Cilium agent's API socket /var/run/cilium/cilium.sock, the node's [defaults]
  a hostPath volume of the node's /var/run/cilium mounted at /var/run/cilium, and runAsUser: 0 (the socket is root's) or the socket's group
Cilium's pinned BPF maps under /sys/fs/bpf (the node's bpffs), opened read-only [svc]
  the pod on the node, a hostPath volume of the node's /sys/fs/bpf mounted at /sys/fs/bpf (readOnly is enough), and CAP_BPF and CAP_SYS_ADMIN, or root
programs run through nsenter -t 1 -m -n -p --: iptables-save, ss, tc, tcpdump [ipt, ports, tc, sniff]
  nsenter in the pod's image, hostPID: true and CAP_SYS_ADMIN and CAP_SYS_PTRACE (privileged: true), so that it enters the node's namespaces and runs the node's own programs
programs run through ssh node2: curl [remote]
  ssh in the pod's image, the key mounted from a Secret, and a network path to the machine
a network path from the machine labrun runs on to http://localhost:30080 [np, poke]
  the pod's network must reach it; localhost is the pod's own, not the node's, unless the pod has hostNetwork: true
a network path from the machine labrun runs on to a URL known only when the step runs [there]
  the pod's network must reach it; localhost is the pod's own, not the node's, unless the pod has hostNetwork: true
the Unix socket /run/x/api.sock [sock]
  a hostPath volume of the node's /run/x mounted at /run/x, and a user the socket admits
the learner's files in the output directory /srv/answers, readable [out]
  a volume holding them mounted there (a ConfigMap, or the learner's volume), readable by the pod's user
capturing packets (tcpdump): root, or CAP_NET_RAW and CAP_NET_ADMIN [sniff]
  securityContext.capabilities.add [NET_RAW, NET_ADMIN] (or runAsUser: 0), and the node's interfaces: hostNetwork: true, unless via enters the node's network namespace
`
	if got := hostString(check); got != want {
		t.Errorf("check: got\n%s\nwant\n%s", got, want)
	}

	// labrun run runs the solve-only and the mutating steps too, and
	// writes the output directory.
	run, err := HostNeeds(plan, Options{Mode: actions.Solve})
	if err != nil {
		t.Fatal(err)
	}
	got := hostString(run)
	for _, line := range []string{
		"programs run on the machine labrun runs on: ip, sh [local, fix]\n  each in the pod's image (labrun's own image holds none); they see the pod's network, processes and files, not the node's, unless the pod has hostNetwork: true and hostPID: true\n",
		"the output directory /srv/answers, writable (the lab's files, and labrun's journal in .labrun) [out]\n",
	} {
		if !strings.Contains(got, line) {
			t.Errorf("run: no\n%s\nin\n%s", line, got)
		}
	}
	if strings.Contains(got, "readable") {
		t.Errorf("run reads no learner's files:\n%s", got)
	}
}

// A playbook of steps that need nothing of the machine prints nothing
// beside its Roles; FormatHostNeeds wraps the needs it has.
func TestFormatHostNeeds(t *testing.T) {
	if lines := FormatHostNeeds(nil, "check", 72); lines != nil {
		t.Errorf("no needs: %q", lines)
	}
	got := strings.Join(FormatHostNeeds([]HostNeed{{
		What: "programs run through nsenter -t 1 -m -n -p --", Of: []string{"iptables-save", "ss"},
		InPod: "nsenter in the pod's image, hostPID: true and CAP_SYS_ADMIN and CAP_SYS_PTRACE (privileged: true)",
		Steps: []string{"ipt", "ports"},
	}}, "check", 60), "\n")
	want := `
Beside these permissions, labrun check of this playbook needs of the
machine it runs on what no Role grants. On the lab's node it is there;
a pod has it only when its spec provides it:

- programs run through nsenter -t 1 -m -n -p --:
  iptables-save, ss (steps: ipt, ports)
  in a pod: nsenter in the pod's image, hostPID: true and
    CAP_SYS_ADMIN and CAP_SYS_PTRACE (privileged: true)`
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}
