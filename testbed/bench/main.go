// Command bench measures labrun against what lab authors use today (bash
// with kubectl, jq and grep/awk, or a 1 s polling loop) on the local test
// cluster, one measurement after another in one run. It prints a Markdown
// table (median of N runs, min, max, ratio) and writes testbed/bench/results.json.
//
// Run it through testbed/bench/run, which builds labrun and this program first:
//
//	bench/run            # N=5
//	bench/run -n 1       # what CI runs, so the benchmark cannot rot
//	bench/run -only exec,wait
//
// It never fails because something is slow (goals are reported, not
// asserted), but it fails when a measured command fails or when the bash
// solution's lab files differ from labrun's. See testbed/bench/README.md.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// config is what the flags say.
type config struct {
	n          int
	labrun     string
	kubeconfig string
	kubectl    string
	nodeExec   string
	ciliumDbg  string
	bpffs      string
	pauseImage string
	work       string
	results    string
	only       string
	polls      int // the poll section's checks; 0: 600 (ten minutes) in a run of 5 or more, else 20 per run
	// classSize and image: the class section's learners, and labrun's
	// image its Job runs.
	classSize     int
	classParallel []int
	// classGrowth: the learners of the class graded again both ways at
	// the largest parallelism, for the growth from classSize (0: not).
	classGrowth int
	image       string
	// classLab is the lab the class section grades: "fleet" (one
	// ConfigMap per learner) or "classroom" (playbooks/classroom.yaml).
	classLab string
	// testbedEnv is the testbed's env file: its CG_BASE says where its
	// pods' cgroups are.
	testbedEnv string
	// repeat is the repeat section's N (0: 10 with -n 5 or more, else 2).
	repeat int
	// profiles are the test cluster profiles to run on, in order (none:
	// the running one only), and testbedUp the command that starts one.
	profiles  []string
	testbedUp string
}

// section is one group of measurements.
type section struct {
	name string
	what string
	run  func(ctx context.Context, b *bench) ([]Row, error)
	// perProfile sections measure what differs by profile (a lab that
	// needs two nodes, each lab on its own profile): they run again on
	// every profile of -profiles; the others run on the first only.
	perProfile bool
}

// sections in the order of the table. They run in another order (see
// runOrder).
var sections = []section{
	{"lab", "cca-datapath solved end to end, labrun vs bash + kubectl; peak memory", benchLab, false},
	{"check", "labrun check of cca-datapath vs a bash check", benchCheck, false},
	{"poll", "labrun check --task polled once a second, with watches that count the cluster's changes", benchPoll, false},
	{"services-lab", "cca-services solved end to end on two nodes (DSR through Helm and back), labrun vs bash + kubectl", benchServicesLab, true},
	{"identity-lab", "cca-identity solved end to end on two nodes (a rollout, visitor relabelled in place), labrun vs bash + kubectl", benchIdentityLab, true},
	{"exec", "exec round trip in the Cilium agent", benchExec, false},
	{"wait", "reaction to a condition becoming true", benchWait, false},
	{"validate", "labrun validate", benchValidate, false},
	{"parse", "conntrack text parser at 200k entries", benchParse, false},
	{"bpf", "conntrack BPF map dump", benchBPF, false},
	{"http", "HTTP requests a lab makes, and the agent's API", benchHTTP, false},
	{"capture", "a capture step's overhead against the same traffic without it", benchCapture, false},
	{"growth", "validate, conntrack parse, map read and check at x1, x10, x100", benchGrowth, false},
	{"class", "a class of learner namespaces graded as one sharded Indexed Job and with check --targets, parallelism 1, 4 and 20, vs a bash loop of kubectl; then 5 times the class both ways", benchClass, false},
	{"repeat", "every lab of the running profile solved and checked N times by labrun test --repeat: each task's flake rate, and the time per repeat", benchRepeat, true},
}

// runOrder runs the measurements that need a quiet machine first; the lab
// runs last, since its pods keep starting and stopping for a while.
var runOrder = []string{"validate", "parse", "growth", "bpf", "http", "capture", "exec", "wait", "check", "poll", "class", "lab", "services-lab", "identity-lab", "repeat"}

// bench is the state the sections share.
type bench struct {
	config
	machine Machine
}

func main() {
	var c config
	flag.IntVar(&c.n, "n", 5, "runs per measurement (the table shows their median, min and max)")
	flag.StringVar(&c.labrun, "labrun", "bin/labrun", "labrun binary to measure")
	flag.StringVar(&c.kubeconfig, "kubeconfig", "/var/lib/labrun-testbed/kubeconfig", "the test cluster's kubeconfig")
	flag.StringVar(&c.kubectl, "kubectl", "/var/cache/labrun-testbed/kubernetes-v1.36.3/kubectl", "kubectl binary (the alternative)")
	flag.StringVar(&c.nodeExec, "node-exec", "/var/lib/labrun-testbed/bin/node-exec", "the test cluster's node shell")
	flag.StringVar(&c.ciliumDbg, "cilium-dbg", "/var/cache/labrun-testbed/cilium-v1.20.1/cilium-dbg", "cilium-dbg binary for the 200k-entry map dump on this host")
	flag.StringVar(&c.bpffs, "bpffs", "/var/lib/labrun-testbed/bpffs", "the test cluster's bpffs as this host sees it (read-only)")
	flag.StringVar(&c.pauseImage, "pause-image", "labrun.local/pause:3", "image of the pods the wait measurement scales")
	flag.StringVar(&c.work, "work", filepath.Join(os.TempDir(), "labrun-bench"), "scratch directory (lab outputs of the last runs stay there)")
	flag.StringVar(&c.results, "results", "testbed/bench/results.json", "where to write the results as JSON")
	flag.IntVar(&c.polls, "polls", 0, "checks the poll section makes, one a second (default 600, ten minutes, with -n 5 or more; 20 per run otherwise)")
	flag.StringVar(&c.only, "only", "", "comma-separated sections to run (default all): "+sectionNames())
	flag.IntVar(&c.classSize, "class-size", 0, "learner namespaces of the class section (default 200 with -n 5 or more; 20 otherwise, as CI's short run)")
	flag.IntVar(&c.classGrowth, "class-growth", -1, "learner namespaces of the small lab graded again, both ways at the largest -class-parallel, to print the growth from -class-size (default 1000 with -n 5 or more or -class-size 200; 0: none)")
	flag.StringVar(&c.image, "image", "labrun.local/labrun:latest", "labrun's image the class section's Job runs (make image, testbed/lib/labrun-image.sh)")
	flag.StringVar(&c.classLab, "class-lab", "fleet", "the lab the class section grades: fleet (cmd/labrun/testdata/fleet/lab.yaml, one ConfigMap per learner) or classroom (playbooks/classroom.yaml solved in as many namespaces as the cluster holds)")
	flag.StringVar(&c.testbedEnv, "testbed-env", "/var/lib/labrun-testbed/env", "the test cluster's env file (its CG_BASE: where the class section reads its pods' peak memory)")
	flag.IntVar(&c.repeat, "repeat", 0, "runs of each lab in the repeat section (labrun test --repeat N; default 10 with -n 5 or more, 2 otherwise, as CI's short run)")
	parallel := flag.String("class-parallel", "1,4,20", "the parallelisms the class section grades with, comma-separated")
	profiles := flag.String("profiles", "", "test cluster profiles to run on, comma-separated, in order (testbed/bench/run passes single,tunnel): every section on the first, then on each other one again the sections that measure what differs by profile (the two-node labs, each lab's repeat); none: only the running profile, as it is")
	flag.StringVar(&c.testbedUp, "testbed-up", "testbed/up", "the command that starts the test cluster on a profile (testbed/up --profile P), run before each profile of -profiles")
	flag.Parse()
	for _, p := range strings.Split(*parallel, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil || v < 1 {
			fmt.Fprintf(os.Stderr, "bench: -class-parallel %q: expected whole numbers of at least 1\n", *parallel)
			os.Exit(2)
		}
		c.classParallel = append(c.classParallel, v)
	}
	for _, p := range strings.Split(*profiles, ",") {
		if p = strings.TrimSpace(p); p != "" {
			c.profiles = append(c.profiles, p)
		}
	}
	if c.n < 1 || c.repeat < 0 || flag.NArg() > 0 || c.classLab != "fleet" && c.classLab != "classroom" {
		flag.Usage()
		os.Exit(2)
	}
	want := map[string]bool{}
	for _, s := range strings.Split(c.only, ",") {
		if s = strings.TrimSpace(s); s != "" {
			if !slices.ContainsFunc(sections, func(x section) bool { return x.name == s }) {
				fmt.Fprintf(os.Stderr, "bench: unknown section %q (sections: %s)\n", s, sectionNames())
				os.Exit(2)
			}
			want[s] = true
		}
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, c, want); err != nil {
		fmt.Fprintln(os.Stderr, "bench: FAILED:", err)
		os.Exit(1)
	}
}

func sectionNames() string {
	var names []string
	for _, s := range sections {
		names = append(names, s.name)
	}
	return strings.Join(names, ",")
}

func run(ctx context.Context, c config, want map[string]bool) error {
	if err := os.MkdirAll(c.work, 0o755); err != nil {
		return err
	}
	for _, p := range []*string{&c.labrun, &c.work} {
		abs, err := filepath.Abs(*p)
		if err != nil {
			return err
		}
		*p = abs
	}
	b := &bench{config: c, machine: describeMachine()}
	res := Results{Machine: b.machine, N: c.n, Started: time.Now().UTC().Format(time.RFC3339)}
	rows := map[string][]Row{}
	profiles := c.profiles
	if len(profiles) == 0 {
		profiles = []string{""} // the running one
	}
	for i, profile := range profiles {
		if profile != "" {
			if err := b.up(ctx, profile); err != nil {
				return err
			}
		}
		for _, name := range runOrder {
			if len(want) > 0 && !want[name] {
				continue
			}
			s := sections[slices.IndexFunc(sections, func(s section) bool { return s.name == name })]
			if i > 0 && !s.perProfile {
				continue
			}
			fmt.Fprintf(os.Stderr, "== %s: %s\n", s.name, s.what)
			start := time.Now()
			// A bound for anything a section waits on without its own limit.
			sctx, cancel := context.WithTimeout(ctx, 30*time.Minute)
			r, err := s.run(sctx, b)
			cancel()
			if err != nil {
				if profile != "" {
					return fmt.Errorf("%s on profile %s: %w", s.name, profile, err)
				}
				return fmt.Errorf("%s: %w", s.name, err)
			}
			fmt.Fprintf(os.Stderr, "   %s done in %s\n", s.name, time.Since(start).Round(100*time.Millisecond))
			rows[s.name] = append(rows[s.name], r...)
		}
	}
	for _, s := range sections {
		res.Rows = append(res.Rows, rows[s.name]...)
	}
	fmt.Print(res.Markdown())
	data, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(c.results, append(data, '\n'), 0o644)
}

// up starts the test cluster on profile (testbed/up: a no-op when it
// already runs healthy on it, else it switches), its output on stderr
// with the bench's progress.
func (b *bench) up(ctx context.Context, profile string) error {
	fmt.Fprintf(os.Stderr, "== test cluster on profile %s\n", profile)
	cmd := exec.CommandContext(ctx, b.testbedUp, "--profile", profile)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s --profile %s: %w", b.testbedUp, profile, err)
	}
	return nil
}

// Machine describes where the numbers come from.
type Machine struct {
	CPUs     int    `json:"cpus"`
	CPU      string `json:"cpu"`
	MemoryGB int    `json:"memoryGB"`
	Kernel   string `json:"kernel"`
	Go       string `json:"go"`
	Commit   string `json:"commit"`
}

func describeMachine() Machine {
	m := Machine{CPUs: runtime.NumCPU(), Go: runtime.Version()}
	if data, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPU = strings.TrimSpace(v)
				break
			}
		}
	}
	if data, err := os.ReadFile("/proc/meminfo"); err == nil {
		var kb int
		if _, err := fmt.Sscanf(string(data), "MemTotal: %d kB", &kb); err == nil {
			m.MemoryGB = (kb + 1<<19) >> 20
		}
	}
	if data, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(data))
	}
	if out, err := exec.Command("git", "rev-parse", "--short", "HEAD").Output(); err == nil {
		m.Commit = strings.TrimSpace(string(out))
		// the results the last run wrote do not make the code differ
		if st, err := exec.Command("git", "status", "--porcelain", "--untracked-files=no", "--", ".", ":!bench/results.json").Output(); err == nil && len(st) > 0 {
			m.Commit += " (with uncommitted changes)"
		}
	}
	return m
}
