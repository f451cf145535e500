package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/labrun/labrun/internal/boundary/cluster"
	"github.com/labrun/labrun/internal/lang/eval"
	"github.com/labrun/labrun/runner/fleet"
)

// fleetGrade is labrun fleet grade, what each pod of the Job fleet render
// prints runs: it grades the targets of its shard as check --targets
// grades them (fleet.Grader, on one connection), prints a line as each
// ends and the table (the pod's log, for people), then stores their
// results in a new ConfigMap (fleet.Store), where fleet collect reads
// them. Exit 0 once they are stored, or an earlier attempt at the shard
// stored its own, whatever the verdicts; 2 when they cannot be (a refused
// permission, a bad command line): a retry would fail the same way; 3
// when the store did not succeed otherwise (the cluster did not answer),
// and 130 when stopped first: nothing is stored, and the Job grades the
// shard again.
func fleetGrade(args []string, stdout, stderr io.Writer) int {
	a := runArgs{name: "fleet grade"}
	fs := newFlagSet("fleet grade", stderr, fleetUsage+"Flags of grade:\n")
	a.register(fs)
	a.targets.registerClass(fs)
	shardFlag := fs.String("shard", "", "grade shard `I/N` of the targets: I from 0, the Job's completion index, of N, its completions (required)")
	var st fleet.Stored
	namespace := fs.StringP("namespace", "n", "", "the namespace to store the results in (default: the connection's; in a pod, its own)")
	fs.StringVar(&st.Job, "job", "", "the Job's name, which names the ConfigMap of the results (required)")
	fs.StringVar(&st.JobUID, "job-uid", "", "the Job's UID, the pod's batch.kubernetes.io/controller-uid label (required)")
	attempt := fs.String("attempt", "", "the pod's attempt at the shard, from 0: its batch.kubernetes.io/job-index-failure-count annotation (empty: 0)")
	fs.StringVar(&st.Pod, "pod", "", "the pod's name, kept with the results")
	if code, ok := parseFlags(fs, args, stderr); !ok {
		return code
	}
	shard, err := fleet.ParseShard(*shardFlag)
	switch {
	case fs.NArg() != 1 || a.targets.file == "" || st.Job == "" || st.JobUID == "":
		err = errors.New("expected one playbook, --targets FILE, --shard I/N, --job NAME and --job-uid UID")
	case err != nil:
	case a.targets.parallel < 1:
		err = fmt.Errorf("--parallel %d: expected at least 1", a.targets.parallel)
	}
	if err == nil && *attempt != "" {
		if st.Attempt, err = strconv.Atoi(*attempt); err != nil || st.Attempt < 0 {
			err = fmt.Errorf("--attempt %q: expected a whole number from 0", *attempt)
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "labrun fleet grade: %v\n", err)
		return exitInvalid
	}
	a.playbook = fs.Arg(0)
	ts, err := a.readTargets(stderr)
	if err != nil {
		return exitInvalid
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	started := time.Now()
	g := a.grader(ts, stdout)
	st.Results = g.GradeAll(ctx, shard.Indexes(len(ts.List)))
	writeTable(stdout, st.Results, time.Since(started))
	if ctx.Err() != nil {
		fmt.Fprintf(stderr, "labrun fleet grade: shard %s stopped before its results were stored: the Job grades it again\n", shard)
		return exitInterrupted
	}
	st.Shard, st.Shards, st.Targets = shard.Index, shard.Of, len(ts.List)
	name := fleet.StoredName(st.Job, st.JobUID, st.Shard)
	c, err := g.Connection("").Cluster()
	if err != nil {
		fmt.Fprintf(stderr, "labrun fleet grade: shard %s: cannot store its results in ConfigMap %s: %s\n", shard, name, eval.FirstLine(err.Error()))
		return exitInvalid
	}
	err = fleet.Store(ctx, c, cmp.Or(*namespace, c.DefaultNamespace()), st)
	switch {
	case errors.Is(err, fleet.ErrStoredBefore):
		fmt.Fprintf(stdout, "shard %s: ConfigMap %s exists: %v\n", shard, name, err)
		return exitOK
	case err != nil:
		fmt.Fprintf(stderr, "labrun fleet grade: shard %s: cannot store its results in ConfigMap %s: %s\n", shard, name, eval.FirstLine(err.Error()))
		return storeErrorExit(err)
	}
	fmt.Fprintf(stdout, "shard %s: %d results stored in ConfigMap %s\n", shard, len(st.Results), name)
	return exitOK
}

// storeErrorExit is the exit code of results that could not be stored: 2
// when the pod may not (a refused permission), which a retry would meet
// again, else 3: the Job grades the shard again.
func storeErrorExit(err error) int {
	var forbidden *cluster.ForbiddenError
	if errors.As(err, &forbidden) {
		return exitInvalid
	}
	return exitTransport
}
