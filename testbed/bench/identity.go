package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/labrun/labrun/internal/boundary/cluster"
	"github.com/labrun/labrun/internal/heavy/kube"
)

// identityLab is the cca-identity lab and its bash solution.
var identityLab = twoNodeLab{
	name:   "cca-identity",
	script: "testbed/bench/cca-identity.sh",
	files:  []string{"nodes.json", "identity.json", "rollout.json", "ipcache.json", "policy.json", "relabel.json", "datapath.json", "report.txt"},
	// keys that differ between runs by design, compared by type (lists by
	// length and element types) and checked against the cluster after each
	// run (checkRollout)
	perRun: map[string]bool{
		// each run restarts frontend: its old pods' IPs are the previous
		// run's new ones, and the new pods get addresses of their own
		"rollout.json before_ips": true,
		"rollout.json after_ips":  true,
		// the restart's time is in the pod template (the restartedAt
		// annotation), so each run's pods get a new pod-template-hash
		"rollout.json before_hash": true,
		"rollout.json after_hash":  true,
	},
	dir:   "identity",
	check: checkRollout,
}

// benchIdentityLab solves cca-identity with labrun and with the bash
// reference solution (testbed/bench/cca-identity.sh) in turn on the two-node
// cluster, and compares their files. A first labrun run, not measured,
// brings the cluster to the state every measured run starts from (the pods
// present, visitor relabelled to frontend), so each measured run gives
// visitor its own labels back and relabels it again: both wait for node
// 1's agent twice, each time up to its identity jitter.
func benchIdentityLab(ctx context.Context, b *bench) ([]Row, error) {
	lr, br, err := b.solveTwoNode(ctx, identityLab)
	if err != nil || lr == nil {
		return nil, err
	}
	return identityLab.rows(lr, br, "pods and CiliumEndpoints",
		"Both solve the whole lab on the two-node cluster from the same state (testbed/bench/cca-identity.sh: kubectl, jq, awk, cilium-dbg in each node's agent through kubectl exec, curl in the lab's pods, polling without sleeps; it leaves out the playbook's read of the agent's identity list, which only its assertions use). "+
			"Each run's 8 files are compared key by key; rollout.json's before_ips, after_ips, before_hash and after_hash, new with each run's restart of frontend, by type, and checked against the frontend pods in the cluster after each run. "+
			"Most of either run is node 1's agent giving visitor a new identity twice (its own labels back, then frontend's), each after a random jitter of up to 30 s (identity-max-jitter), which both poll the agent for.",
		"The runs minus the time spent waiting for Kubernetes objects (labrun's wait steps, the bash solution's wait_for loops: pods, the rollout, CiliumEndpoints). "+
			"What remains is mostly the agent's two identity changes of visitor after their jitter, which both poll cilium-dbg endpoint list for, and the intruder's request that must time out (3 s)."), nil
}

// checkRollout checks a run's rollout.json against the cluster right after
// the run that wrote it: after_ips are the frontend pods' IPs now and
// after_hash their pod-template-hash; before_ips are as many other
// addresses, before_hash another hash.
func checkRollout(ctx context.Context, b *bench, dir string) error {
	var r struct {
		BeforeIPs  []string `json:"before_ips"`
		AfterIPs   []string `json:"after_ips"`
		BeforeHash string   `json:"before_hash"`
		AfterHash  string   `json:"after_hash"`
	}
	data, err := os.ReadFile(filepath.Join(dir, "rollout.json"))
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, &r); err != nil {
		return fmt.Errorf("rollout.json: %v", err)
	}
	c, err := kube.Connect(kube.ConnectOptions{Kubeconfig: b.kubeconfig})
	if err != nil {
		return err
	}
	defer c.Close()
	pods, err := c.List(ctx, cluster.ObjectQuery{Kind: "Pod", Namespace: "shop", Selector: "app=frontend,pod-template-hash"})
	if err != nil {
		return err
	}
	var ips, hashes []string
	for _, p := range pods {
		st, _ := p["status"].(map[string]any)
		ip, _ := st["podIP"].(string)
		md, _ := p["metadata"].(map[string]any)
		labels, _ := md["labels"].(map[string]any)
		hash, _ := labels["pod-template-hash"].(string)
		ips, hashes = append(ips, ip), append(hashes, hash)
	}
	slices.Sort(ips)
	switch {
	case !slices.Equal(r.AfterIPs, ips):
		return fmt.Errorf("rollout.json after_ips %v are not the frontend pods' addresses %v", r.AfterIPs, ips)
	case len(slices.Compact(hashes)) != 1 || r.AfterHash != hashes[0]:
		return fmt.Errorf("rollout.json after_hash %q is not the frontend pods' pod-template-hash %v", r.AfterHash, hashes)
	case r.BeforeHash == r.AfterHash:
		return fmt.Errorf("rollout.json before_hash is after_hash %q", r.AfterHash)
	case len(r.BeforeIPs) != len(r.AfterIPs) || slices.ContainsFunc(r.BeforeIPs, func(ip string) bool { return slices.Contains(ips, ip) }):
		return fmt.Errorf("rollout.json before_ips %v should be %d addresses, none of them a frontend pod's now (%v)", r.BeforeIPs, len(ips), ips)
	}
	return nil
}
