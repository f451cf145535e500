package main

import "context"

// servicesLab is the cca-services lab and its bash solution.
var servicesLab = twoNodeLab{
	name:   "cca-services",
	script: "testbed/bench/cca-services.sh",
	files:  []string{"kpr.json", "lbmap.json", "events.json", "socketlb.json", "affinity.json", "nodeport.json", "local.json", "dsr.json", "report.txt"},
	// keys that differ between runs by design, compared by type: the
	// backend a connection picks at random, and how many pods answer 10
	// requests without affinity
	perRun: map[string]bool{
		"socketlb.json tcp_kernel_peer":         true,
		"affinity.json plain_distinct_backends": true,
	},
	dir: "services",
}

// benchServicesLab solves cca-services with labrun and with the bash
// reference solution (testbed/bench/cca-services.sh) in turn on the two-node
// cluster, and compares their files. Each solve switches the agents to DSR
// and back through Helm, so most of its time is the agents'. A first
// labrun run, not measured, brings the cluster to the state every measured
// run starts from (nginx at 4 replicas, the other pods present).
func benchServicesLab(ctx context.Context, b *bench) ([]Row, error) {
	lr, br, err := b.solveTwoNode(ctx, servicesLab)
	if err != nil || lr == nil {
		return nil, err
	}
	return servicesLab.rows(lr, br, "pods and agents",
		"Both solve the whole lab on the two-node cluster from the same state, DSR switched on and back through Helm included (testbed/bench/cca-services.sh: kubectl, jq, awk, cilium-dbg, helm and curl, polling without sleeps). "+
			"Each run's 9 files are compared key by key; socketlb.json's tcp_kernel_peer and affinity.json's plain_distinct_backends, random by design, by type.",
		"The runs minus the time spent waiting for Kubernetes objects (labrun's wait steps, the bash solution's wait_for loops: pods and the DaemonSet rollouts). "+
			"What remains is mostly the agents' restarts and the wait for the datapath to follow them after each Helm change, which both poll with requests."), nil
}
