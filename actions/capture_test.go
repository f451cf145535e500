package actions

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// The script the capture runs in the agent ends when its input ends
// (the capture stopping it, or the connection cut) and when the monitor
// ends by itself, with the monitor's exit code; the monitor's stderr
// comes through. Run here with the machine's sh and timeout, as the
// agent's image has them.
func TestMonitorScript(t *testing.T) {
	run := func(inputFor time.Duration, monitor ...string) (int, string, time.Duration) {
		t.Helper()
		cmd := exec.Command("sh", append([]string{"-c", monitorScript, "monitor"}, monitor...)...)
		in, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		var stderr strings.Builder
		cmd.Stderr = &stderr
		start := time.Now()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		timer := time.AfterFunc(inputFor, func() { in.Close() })
		defer timer.Stop()
		err = cmd.Wait()
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return code, stderr.String(), time.Since(start)
	}
	code, stderr, took := run(300*time.Millisecond, "sh", "-c", "echo Press Ctrl-C to quit >&2; exec sleep 30")
	if code != 143 || took > 5*time.Second || !strings.Contains(stderr, "Press Ctrl-C to quit") {
		t.Errorf("input ended: exit %d after %s, stderr %q; want 143 (killed) at once", code, took, stderr)
	}
	code, _, took = run(30*time.Second, "sh", "-c", "exit 3")
	if code != 3 || took > 5*time.Second {
		t.Errorf("monitor ended: exit %d after %s; want 3 at once, the input still open", code, took)
	}
	// nothing is left behind: the reader of the input is ended and
	// reaped with the script (in the agent, a leftover would be the
	// agent's to reap, and it reaps none)
	in, stillOpen, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stillOpen.Close()
	cmd := exec.Command("sh", "-c", monitorScript+`; echo never`, "monitor", "sh", "-c", "exit 0")
	cmd.Stdin = in
	out, err := cmd.Output()
	in.Close()
	if err != nil || len(out) != 0 {
		t.Errorf("the script: %q %v", out, err)
	}
	if out, _ := exec.Command("sh", "-c", "ps -eo pid,ppid,args | grep -c '[r]ead -r _ <&3'").Output(); strings.TrimSpace(string(out)) != "0" {
		t.Errorf("readers left running: %s", out)
	}
}

// The argv names the types and endpoints asked for, bounded by the
// step's time; a type labrun does not read is refused with the key.
func TestMonitorArgv(t *testing.T) {
	argv, err := monitorArgv(&MonitorSource{Types: []string{"drop", "policy-verdict"}, RelatedTo: []int{12, 7}})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(argv[3:], " "); got != "cilium-dbg cilium-dbg monitor -j -n --type drop --type policy-verdict --related-to 12 --related-to 7" {
		t.Errorf("argv after the script: %s", got)
	}
	var se *SpecError
	if _, err := monitorArgv(&MonitorSource{Types: []string{"l7"}}); !errors.As(err, &se) || se.Key != "types" {
		t.Errorf("type l7: %v", err)
	}
	b, err := (&CaptureSpec{}).bounds()
	if err != nil || b.events != 1000 || b.bytes != 4<<20 || b.settle != time.Second {
		t.Errorf("default bounds %+v %v", b, err)
	}
	if _, err := (&CaptureSpec{MaxEvents: 200000}).bounds(); !errors.As(err, &se) || se.Key != "maxEvents" {
		t.Errorf("maxEvents 200000: %v", err)
	}
}

// A line is handed over once it is complete, however the stream cuts it.
func TestLineWriter(t *testing.T) {
	lines := make(chan string, 8)
	w := &lineWriter{ctx: context.Background(), lines: lines}
	for _, p := range []string{"a", "b\nc", "\n", "\nd"} {
		if _, err := io.WriteString(w, p); err != nil {
			t.Fatal(err)
		}
	}
	close(lines)
	var got []string
	for l := range lines {
		got = append(got, l)
	}
	if strings.Join(got, "|") != "ab|c|" {
		t.Errorf("lines %q", got)
	}
}
