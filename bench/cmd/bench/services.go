package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// servicesFiles are the files the cca-services lab asks for.
var servicesFiles = []string{"kpr.json", "lbmap.json", "events.json", "socketlb.json", "affinity.json", "nodeport.json", "local.json", "dsr.json", "report.txt"}

// servicesPerRun are the cca-services keys that differ between runs by
// design, compared by type: the backend a connection picks at random, and
// how many pods answer 10 requests without affinity.
var servicesPerRun = map[string]bool{
	"socketlb.json tcp_kernel_peer":         true,
	"affinity.json plain_distinct_backends": true,
}

// benchServicesLab solves cca-services with labrun and with the bash
// reference solution (bench/cca-services.sh) in turn on the two-node
// cluster, and compares their files. Each solve switches the agents to DSR
// and back through Helm, so most of its time is the agents'. A first
// labrun run, not measured, brings the cluster to the state every measured
// run starts from (nginx at 4 replicas, the other pods present).
func benchServicesLab(ctx context.Context, b *bench) ([]Row, error) {
	if p, err := testbedProfile(); err != nil {
		return nil, err
	} else if p != "tunnel" && p != "native" {
		fmt.Fprintf(os.Stderr, "   skipped: the test cluster runs profile %q; the lab needs two nodes (testbed/up --profile tunnel)\n", p)
		return nil, nil
	}
	dir := func(name string) string { return filepath.Join(b.work, "services", name) }
	if _, err := b.solvePlaybook(ctx, "cca-services", dir("warm-up")); err != nil {
		return nil, err
	}
	var lr, br []labRun
	for i := 1; i <= b.n; i++ {
		l, err := b.solvePlaybook(ctx, "cca-services", dir(fmt.Sprintf("labrun-%d", i)))
		if err != nil {
			return nil, err
		}
		s, err := b.solveScript(ctx, "bench/cca-services.sh", dir(fmt.Sprintf("bash-%d", i)))
		if err != nil {
			return nil, err
		}
		diffs, err := compareFiles(servicesFiles, servicesPerRun, l.dir, s.dir)
		if err != nil {
			return nil, err
		}
		if len(diffs) > 0 {
			return nil, fmt.Errorf("the bash solution's cca-services files differ from labrun's (%s vs %s):\n  %s", s.dir, l.dir, strings.Join(diffs, "\n  "))
		}
		fmt.Fprintf(os.Stderr, "   run %d: labrun %.2f s, bash %.2f s, same 9 files\n", i, l.wall.Seconds(), s.wall.Seconds())
		lr, br = append(lr, l), append(br, s)
	}
	wall := func(r labRun) time.Duration { return r.wall }
	outside := func(r labRun) time.Duration { return r.wall - r.waited }
	return []Row{
		compare("cca-services lab, end to end",
			durations("labrun", "s", each(lr, wall)), durations("bash + kubectl", "s", each(br, wall)), 2).
			withNote("Both solve the whole lab on the two-node cluster from the same state, DSR switched on and back through Helm included (bench/cca-services.sh: kubectl, jq, awk, cilium-dbg, helm and curl, polling without sleeps). " +
				"Each run's 9 files are compared key by key; socketlb.json's tcp_kernel_peer and affinity.json's plain_distinct_backends, random by design, by type."),
		compare("cca-services lab, outside the waits for pods and agents",
			durations("labrun", "s", each(lr, outside)), durations("bash + kubectl", "s", each(br, outside)), 0).
			withNote("The runs minus the time spent waiting for Kubernetes objects (labrun's wait steps, the bash solution's wait_for loops: pods and the DaemonSet rollouts). " +
				"What remains is mostly the agents' restarts and the wait for the datapath to follow them after each Helm change, which both poll with requests."),
	}, nil
}

// testbedProfile is the profile the test cluster runs (its vars file).
func testbedProfile() (string, error) {
	data, err := os.ReadFile("/var/lib/labrun-testbed/vars.yaml")
	if err != nil {
		return "", err
	}
	var v struct {
		Profile string `yaml:"profile"`
	}
	if err := yaml.Unmarshal(data, &v); err != nil {
		return "", fmt.Errorf("/var/lib/labrun-testbed/vars.yaml: %v", err)
	}
	return v.Profile, nil
}
