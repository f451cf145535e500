package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// proc is one finished process.
type proc struct {
	wall time.Duration
	// maxRSS (with procOpts.rss) is the largest resident set, in bytes, of
	// the process and of the descendants it waited for (ru_maxrss).
	maxRSS int64
	stdout []byte
	stderr []byte
}

// procOpts say where a process's output goes.
type procOpts struct {
	env     []string  // added to the environment
	stdout  io.Writer // nil: kept in proc.stdout
	timeout time.Duration
	// rss measures the peak memory through GNU time, which forks the
	// command from its own small address space. A child started straight
	// from this (big) process would not do: Go starts children with
	// vfork, and Linux counts the parent's peak RSS in the child's
	// ru_maxrss when the child calls exec.
	rss bool
}

// runProc runs argv (no shell) and measures its wall time and peak memory.
// A non-zero exit is an error that quotes the end of stderr.
func runProc(ctx context.Context, argv []string, o procOpts) (proc, error) {
	if o.timeout == 0 {
		o.timeout = 5 * time.Minute
	}
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	var rssFile string
	if o.rss {
		f, err := os.CreateTemp("", "bench-rss-")
		if err != nil {
			return proc{}, err
		}
		f.Close()
		rssFile = f.Name()
		defer os.Remove(rssFile)
		argv = append([]string{"/usr/bin/time", "-f", "%M", "-o", rssFile}, argv...)
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), o.env...)
	// On timeout or interrupt, stop the command's whole process group (the
	// bash solution's kubectl children too), not just the command.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 10 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if o.stdout != nil {
		cmd.Stdout = o.stdout
	}
	start := time.Now()
	err := cmd.Run()
	p := proc{wall: time.Since(start), stdout: stdout.Bytes(), stderr: stderr.Bytes()}
	if err != nil {
		return p, fmt.Errorf("%s: %v%s", strings.Join(argv, " "), err, tail(p.stderr))
	}
	if o.rss {
		// The last line is %M, in KiB (a failed command's status line
		// would come before it).
		data, err := os.ReadFile(rssFile)
		if err != nil {
			return p, err
		}
		lines := strings.Fields(string(data))
		if len(lines) == 0 {
			return p, fmt.Errorf("%s: GNU time wrote no memory figure", strings.Join(argv, " "))
		}
		kb, err := strconv.ParseInt(lines[len(lines)-1], 10, 64)
		if err != nil {
			return p, fmt.Errorf("%s: GNU time wrote %q", strings.Join(argv, " "), data)
		}
		p.maxRSS = kb << 10
	}
	return p, nil
}

// tail returns the last lines of a command's stderr, for error messages.
func tail(b []byte) string {
	s := strings.TrimSpace(string(b))
	if s == "" {
		return ""
	}
	lines := strings.Split(s, "\n")
	if len(lines) > 15 {
		lines = lines[len(lines)-15:]
	}
	return "\n    " + strings.Join(lines, "\n    ")
}

// timeN calls f n times and returns the durations it reports.
func timeN(n int, f func() (time.Duration, error)) ([]time.Duration, error) {
	out := make([]time.Duration, 0, n)
	for range n {
		d, err := f()
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, nil
}

// timeProc returns a sampler for timeN that runs argv and reports its
// wall time.
func timeProc(ctx context.Context, argv []string) func() (time.Duration, error) {
	return func() (time.Duration, error) {
		p, err := runProc(ctx, argv, procOpts{})
		return p.wall, err
	}
}

func mb(bytes int64) float64 { return float64(bytes) / (1 << 20) }
