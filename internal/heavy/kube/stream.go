package kube

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"k8s.io/client-go/tools/remotecommand"
	"k8s.io/client-go/util/exec"

	"github.com/labrun/labrun/internal/boundary/cluster"
)

// Stream runs a command in a container of the pod t picks and copies its
// output to req's writers as it comes, until the command ends or ctx ends.
// When ctx ends first the connection is closed (the exec stream's own
// close on cancel) and the result says Stopped; a command that does not
// die with its stream (one that writes nothing, so never meets the closed
// pipe) is the caller's to end, as capture does by ending its stdin, with
// timeout(1) behind it.
//
// A connection that fails before the command can have started, with
// nothing written yet, is retried as Exec retries it; once output has
// reached the writers a failure is returned, since starting the command
// again would repeat what they saw.
func (c *Client) Stream(ctx context.Context, t cluster.PodTarget, req cluster.StreamRequest) (_ *cluster.StreamResult, err error) {
	defer transient(&err)
	if err := checkCommand(req.Argv); err != nil {
		return nil, err
	}
	pod, err := c.ResolvePod(ctx, t)
	if err != nil {
		return nil, err
	}
	res := &cluster.StreamResult{Namespace: pod.Namespace, Pod: pod.Name, Container: t.Container}
	if res.Container == "" {
		if res.Container, err = c.defaultContainer(ctx, pod.Namespace, pod.Name); err != nil {
			return res, err
		}
	}
	opts := execOptions{Namespace: pod.Namespace, Pod: pod.Name, Container: res.Container, Command: req.Argv}
	what := fmt.Sprintf("%q in container %q of pod %q in namespace %q", strings.Join(req.Argv, " "), opts.Container, opts.Pod, opts.Namespace)
	stdout, stderr := &countingWriter{w: req.Stdout}, &countingWriter{w: req.Stderr}
	delay := execRetryMin
	for attempt := 1; ; attempt++ {
		_, started, err := c.stream(ctx, opts, remotecommand.StreamOptions{Stdin: req.Stdin, Stdout: stdout, Stderr: stderr})
		var exitErr exec.ExitError
		switch {
		case err == nil:
			return res, nil
		case errors.As(err, &exitErr):
			res.ExitCode = exitErr.ExitStatus()
			return res, nil
		case ctx.Err() != nil:
			res.Stopped = true
			return res, nil
		}
		if attempt >= DefaultExecAttempts || stdout.n+stderr.n > 0 || !retriableExecError(err, started) {
			return res, c.wrap(err, "exec", what)
		}
		timer := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			timer.Stop()
			res.Stopped = true
			return res, nil
		case <-timer.C:
		}
		delay = min(delay*2, execRetryMax)
	}
}

// countingWriter counts what reaches w, which may be nil (the output is
// then dropped).
type countingWriter struct {
	w io.Writer
	n int64
}

func (cw *countingWriter) Write(p []byte) (int, error) {
	cw.n += int64(len(p))
	if cw.w == nil {
		return len(p), nil
	}
	return cw.w.Write(p)
}
