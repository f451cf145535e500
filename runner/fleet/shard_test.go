package fleet

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/labrun/labrun/internal/boundary/cluster"
	"github.com/labrun/labrun/runner"
	"github.com/labrun/labrun/runner/access"
)

// Every target is in exactly one shard, the one ShardOf names; shards are
// runs of consecutive indexes whose sizes differ by at most one.
func TestShards(t *testing.T) {
	for n := 1; n <= 60; n++ {
		for shards := 1; shards <= 12; shards++ {
			var all []int
			least, most := n, 0
			for k := range shards {
				idx := Shard{Index: k, Of: shards}.Indexes(n)
				for _, i := range idx {
					if got := ShardOf(i, n, shards); got != k {
						t.Fatalf("n %d, %d shards: target %d is in shard %d, ShardOf says %d", n, shards, i, k, got)
					}
				}
				all = append(all, idx...)
				least, most = min(least, len(idx)), max(most, len(idx))
			}
			want := make([]int, n)
			for i := range want {
				want[i] = i
			}
			if !slices.Equal(all, want) {
				t.Fatalf("n %d, %d shards: the shards hold %v", n, shards, all)
			}
			if most-least > 1 {
				t.Fatalf("n %d, %d shards: sizes from %d to %d", n, shards, least, most)
			}
		}
	}
}

func TestParseShard(t *testing.T) {
	if s, err := ParseShard("2/4"); err != nil || s != (Shard{Index: 2, Of: 4}) || s.String() != "2/4" {
		t.Errorf("2/4: %v, %v", s, err)
	}
	for _, bad := range []string{"", "4/4", "-1/4", "1/0", "a/b", "1", "1/2/3"} {
		if _, err := ParseShard(bad); err == nil || !strings.Contains(err.Error(), "expected I/N") {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

// The pods a class is cut into, by default and when asked.
func TestSize(t *testing.T) {
	small := CheckTime{Typical: 20 * time.Millisecond} // two reads of the API server
	long := CheckTime{Typical: 1500 * time.Millisecond}
	// the classroom lab's: its steps' kinds add up to 380 ms, and it runs
	// curl in pods, which takes as long as curl does (3.3 s here)
	programs := CheckTime{Typical: 380 * time.Millisecond, Open: true}
	for _, tc := range []struct {
		name              string
		n, parallel, pods int
		perTarget         CheckTime
		want              Sizing
		err               string
	}{
		// 2 s of start-up grades 400 targets of 20 ms, 4 at a time: one
		// pod is worth it for 200
		{name: "a small lab, 200 learners", n: 200, parallel: 20, perTarget: small, want: Sizing{Pods: 1, AtOnce: 1, PerPod: 4}},
		// more than a pod holds: the fewest pods that hold them
		{name: "a small lab, 1000 learners", n: 1000, parallel: 20, perTarget: small, want: Sizing{Pods: 4, AtOnce: 4, PerPod: 4}},
		// a check of 1.5 s: 5 targets keep a pod busy, and 20 at once
		// allow 5 pods
		{name: "a long lab, 39 learners", n: 39, parallel: 20, perTarget: long, want: Sizing{Pods: 5, AtOnce: 5, PerPod: 4}},
		{name: "a long lab, a few learners", n: 6, parallel: 20, perTarget: long, want: Sizing{Pods: 2, AtOnce: 2, PerPod: 4}},
		{name: "one at a time", n: 39, parallel: 1, perTarget: long, want: Sizing{Pods: 1, AtOnce: 1, PerPod: 1}},
		{name: "a check of no cost", n: 10, parallel: 8, want: Sizing{Pods: 1, AtOnce: 1, PerPod: 4}},
		// a check that runs programs: as many pods as run at once
		{name: "programs, 35 learners", n: 35, parallel: 20, perTarget: programs, want: Sizing{Pods: 5, AtOnce: 5, PerPod: 4}},
		{name: "programs, fewer learners than pods run at once", n: 3, parallel: 20, perTarget: programs, want: Sizing{Pods: 3, AtOnce: 3, PerPod: 4}},
		{name: "programs, one at a time", n: 35, parallel: 1, perTarget: programs, want: Sizing{Pods: 1, AtOnce: 1, PerPod: 1}},
		{name: "programs, more than pods hold", n: 1000, parallel: 8, perTarget: programs, want: Sizing{Pods: 4, AtOnce: 2, PerPod: 4}},
		{name: "programs, pods asked for", n: 35, parallel: 20, pods: 2, perTarget: programs, want: Sizing{Pods: 2, AtOnce: 2, PerPod: 4}},
		{name: "pods asked for, more than run at once", n: 20, parallel: 4, pods: 4, perTarget: small, want: Sizing{Pods: 4, AtOnce: 1, PerPod: 4}},
		{name: "too few pods for their results", n: 600, parallel: 20, pods: 2, err: "--pods 2: a pod grades at most 250 targets (their results fill one ConfigMap), so 600 targets need at least 3 pods"},
		{name: "more pods than targets", n: 3, parallel: 20, pods: 4, err: "--pods 4: more pods than the 3 targets"},
	} {
		got, err := Size(tc.n, tc.parallel, tc.pods, tc.perTarget)
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("%s: %v, want %s", tc.name, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%s: %+v, %v; want %+v", tc.name, got, err, tc.want)
		}
	}
}

// A check is sized by its steps' kinds, and open when one of them runs a
// program: the classroom lab's runs curl in pods (exec), the fleet tests'
// small lab only reads the API server.
func TestCheckCost(t *testing.T) {
	for _, tc := range []struct {
		playbook string
		want     CheckTime
	}{
		{"../../playbooks/classroom.yaml", CheckTime{Typical: 380 * time.Millisecond, Open: true}},
		{"../../cmd/labrun/testdata/fleet/lab.yaml", CheckTime{Typical: 20 * time.Millisecond}},
	} {
		p, err := runner.Load(tc.playbook, runner.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if got := CheckCost(p); got != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.playbook, got, tc.want)
		}
	}
}

// A class's namespaces that need the same rules share one ClusterRole
// (bound in each by a RoleBinding); any difference, or a single
// namespace, keeps a Role each. Cluster-wide needs are apart.
func TestSameInEach(t *testing.T) {
	need := func(ns, verb, res string, steps ...string) access.Need {
		return access.Need{Access: cluster.Access{Verb: verb, Resource: res, Namespace: ns}, Steps: steps}
	}
	class := []access.Need{need("", "get", "nodes", "n"), need("a", "list", "configmaps", "answer"), need("a", "get", "pods", "p"),
		need("b", "list", "configmaps", "answer"), need("b", "get", "pods", "p")}
	shared, ok := sameInEach(class)
	if !ok || len(shared) != 2 || shared[0].Namespace != "" || shared[0].Resource != "configmaps" || shared[1].Resource != "pods" {
		t.Errorf("the same rules in a and b: %+v, %v", shared, ok)
	}
	for name, needs := range map[string][]access.Need{
		"another verb":  {need("a", "list", "configmaps", "answer"), need("b", "get", "configmaps", "answer")},
		"another step":  {need("a", "list", "configmaps", "answer"), need("b", "list", "configmaps", "other")},
		"one more rule": {need("a", "list", "configmaps", "answer"), need("b", "list", "configmaps", "answer"), need("b", "get", "pods", "p")},
		"one namespace": {need("a", "list", "configmaps", "answer")},
		"cluster only":  {need("", "get", "nodes", "n")},
	} {
		if _, ok := sameInEach(needs); ok {
			t.Errorf("%s: shared", name)
		}
	}
}
