package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// podMemory reads, from the kernel, the peak memory of the pods a Job
// runs on the test cluster. The testbed's nodes are cgroup subtrees of
// this machine (testbed/README.md, "cgroups"): a pod's memory cgroup is
// <memory hierarchy>/<CG_BASE>/<node>/kubepods/[<qos>/]pod<UID>, with a
// child per container (the pause sandbox's and labrun's, named by their
// container ID). The kernel keeps each cgroup's high-water mark of the
// memory charged to it: memory.max_usage_in_bytes under cgroup v1 (this
// machine), memory.peak under v2. A container's cgroup is removed as soon
// as it exits, its pod's about a second after the sandbox stops, so they
// are read every pollEvery while they exist: the last read of a pod's
// cgroup taken after a container of it had gone is its exact peak; a
// container's, the last read before it went (a lower bound, at most
// pollEvery old).
type podMemory struct {
	roots []string // each node's kubepods directories
	file  string   // the high-water mark's file
	skip  map[string]bool
	stop  chan struct{}
	done  chan struct{}
	mu    sync.Mutex
	pods  map[string]*podPeak // by pod UID
}

// podPeak is what was read of one pod's cgroups.
type podPeak struct {
	pod        int64            // the pod cgroup's high-water mark, last read
	containers map[string]int64 // each container cgroup's, last read
	maxKids    int              // the most container cgroups seen at once
	final      bool             // pod read after a container of it had gone
}

const pollEvery = 20 * time.Millisecond

// newPodMemory finds the nodes' kubepods cgroups from the testbed's env
// file (its CG_BASE) and notes the pods already there, which are not
// the Job's.
func newPodMemory(envFile string) (*podMemory, error) {
	base, err := testbedCgroupBase(envFile)
	if err != nil {
		return nil, err
	}
	m := &podMemory{skip: map[string]bool{}, pods: map[string]*podPeak{}}
	for _, h := range []struct{ root, file string }{{"/sys/fs/cgroup/memory", "memory.max_usage_in_bytes"}, {"/sys/fs/cgroup", "memory.peak"}} {
		nodes, _ := filepath.Glob(filepath.Join(h.root, base, "*", "kubepods"))
		if len(nodes) == 0 {
			continue
		}
		if _, err := os.Stat(filepath.Join(nodes[0], h.file)); err != nil {
			continue
		}
		m.file = h.file
		for _, n := range nodes {
			m.roots = append(m.roots, n, filepath.Join(n, "burstable"), filepath.Join(n, "besteffort"))
		}
		break
	}
	if m.file == "" {
		return nil, fmt.Errorf("no memory cgroup of the testbed's nodes under %s (from %s)", base, envFile)
	}
	for dir := range m.podDirs() {
		m.skip[dir] = true
	}
	return m, nil
}

// testbedCgroupBase is CG_BASE of the testbed's env file.
func testbedCgroupBase(envFile string) (string, error) {
	f, err := os.Open(envFile)
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "CG_BASE="); ok && strings.HasPrefix(v, "/") {
			return filepath.Clean(v), nil
		}
	}
	if err := sc.Err(); err != nil {
		return "", err
	}
	return "", fmt.Errorf("%s names no CG_BASE", envFile)
}

// podDirs are the pod cgroups now, by directory, each with its UID.
func (m *podMemory) podDirs() map[string]string {
	out := map[string]string{}
	for _, r := range m.roots {
		entries, _ := os.ReadDir(r)
		for _, e := range entries {
			if uid, ok := strings.CutPrefix(e.Name(), "pod"); ok && e.IsDir() {
				out[filepath.Join(r, e.Name())] = strings.ReplaceAll(uid, "_", "-")
			}
		}
	}
	return out
}

// start polls until the returned function is called.
func (m *podMemory) start() (stop func()) {
	m.stop, m.done = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(m.done)
		tick := time.NewTicker(pollEvery)
		defer tick.Stop()
		for {
			m.poll()
			select {
			case <-m.stop:
				return
			case <-tick.C:
			}
		}
	}()
	return func() { close(m.stop); <-m.done }
}

// poll reads every new pod's cgroup and its containers'.
func (m *podMemory) poll() {
	for dir, uid := range m.podDirs() {
		if m.skip[dir] {
			continue
		}
		kids := map[string]int64{}
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if e.IsDir() {
				if v, err := readBytes(filepath.Join(dir, e.Name(), m.file)); err == nil {
					kids[e.Name()] = v
				}
			}
		}
		v, err := readBytes(filepath.Join(dir, m.file))
		if err != nil {
			continue // gone between the listing and the read
		}
		m.mu.Lock()
		p := m.pods[uid]
		if p == nil {
			p = &podPeak{containers: map[string]int64{}}
			m.pods[uid] = p
		}
		p.pod = v
		for id, kv := range kids {
			p.containers[id] = kv
		}
		p.maxKids = max(p.maxKids, len(kids))
		if len(kids) < p.maxKids {
			p.final = true
		}
		m.mu.Unlock()
	}
}

// waitGone waits, up to limit, until the cgroups of the pods that came
// after newPodMemory are gone (the kubelet removes a pod's about a second
// after its sandbox stops), so the last reads are taken.
func (m *podMemory) waitGone(limit time.Duration) {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		left := 0
		for dir := range m.podDirs() {
			if !m.skip[dir] {
				left++
			}
		}
		if left == 0 {
			return
		}
		time.Sleep(pollEvery)
	}
}

func readBytes(path string) (int64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
}

// podMem is the peak memory of a Job's pods, in MB: of each pod's labrun
// container and of each pod (labrun and the pause sandbox).
type podMem struct {
	container, pod []float64
	final          int // pods whose peak was read after a container ended
}

// forJob keeps the peaks of the Job's pods (listed by the API after the
// Job ended: each one's UID and its labrun container's ID). A pod of the
// Job that was never read is an error: the figure would leave it out.
func (m *podMemory) forJob(ctx context.Context, b *bench, namespace, job string) (podMem, error) {
	out, err := b.kubectlRun(ctx, nil, "get", "pods", "-n", namespace, "-l", "batch.kubernetes.io/job-name="+job, "-o", "json")
	if err != nil {
		return podMem{}, err
	}
	var list struct {
		Items []struct {
			Metadata struct{ UID, Name string }
			Status   struct {
				ContainerStatuses []struct{ Name, ContainerID string }
			}
		}
	}
	if err := json.Unmarshal(out, &list); err != nil {
		return podMem{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	var pm podMem
	var missing []string
	for _, it := range list.Items {
		p := m.pods[it.Metadata.UID]
		if p == nil {
			missing = append(missing, it.Metadata.Name)
			continue
		}
		pm.pod = append(pm.pod, mb(p.pod))
		if p.final {
			pm.final++
		}
		for _, cs := range it.Status.ContainerStatuses {
			_, id, _ := strings.Cut(cs.ContainerID, "://")
			if v, ok := p.containers[id]; ok && cs.Name == "labrun" {
				pm.container = append(pm.container, mb(v))
			}
		}
	}
	if len(missing) > 0 || len(list.Items) == 0 {
		return pm, errors.New("no memory cgroup was read of the Job's pods " + strings.Join(missing, ", "))
	}
	return pm, nil
}
