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

// The hubble argv asks for the flows as they come, as JSON, with each
// filter value an argument of its own; a verdict or type the CLI does not
// take is refused with its key.
func TestHubbleArgv(t *testing.T) {
	argv, err := hubbleArgv(&HubbleSource{Filter: HubbleFilter{Verdict: []string{"DROPPED"}, Type: []string{"trace:to-endpoint"},
		Namespace: []string{"lab"}, Pod: []string{"lab/api"}, IP: []string{"10.42.0.0/16"}, Protocol: []string{"tcp"}, Port: []int{8080}}})
	if err != nil {
		t.Fatal(err)
	}
	if argv[0] != "bash" || argv[2] != hubbleScript {
		t.Errorf("argv does not run the script: %q", argv[:3])
	}
	if got := strings.Join(argv[3:], " "); got != "hubble hubble observe --follow -o jsonpb --verdict=DROPPED --type=trace:to-endpoint --namespace=lab --pod=lab/api --ip=10.42.0.0/16 --protocol=tcp --port=8080" {
		t.Errorf("argv after the script: %s", got)
	}
	var se *SpecError
	for key, h := range map[string]*HubbleSource{
		"verdict":  {Filter: HubbleFilter{Verdict: []string{"dropped"}}},
		"type":     {Filter: HubbleFilter{Type: []string{"drops"}}},
		"port":     {Filter: HubbleFilter{Port: []int{70000}}},
		"protocol": {Filter: HubbleFilter{Protocol: []string{""}}},
	} {
		if _, err := hubbleArgv(h); !errors.As(err, &se) || se.Key != key {
			t.Errorf("%s: %v", key, err)
		}
	}
}

// hubbleScript has the CLI check the filters and asks Hubble's status
// first (filters it refuses, or a server that does not answer, fail the
// capture before any during step runs), then says it is ready
// with the time it asks flows from, and runs observe with that --since,
// in RFC 3339 UTC to the microsecond, taken before it said so; it ends
// when its input does. A fake hubble on PATH stands for the CLI.
func TestHubbleScript(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	dir := t.TempDir()
	fake := `#!/bin/sh
case $1 in
status) [ -n "$FAIL" ] && { echo "failed to connect to 'unix:///var/run/cilium/hubble.sock'" >&2; exit 1; }; echo "Healthcheck (via unix:///var/run/cilium/hubble.sock): Ok"; exit 0 ;;
observe) case "$*" in *--print-raw-filters*) [ -n "$BADFILTER" ] && { echo "filters --ip and --namespace cannot be combined" >&2; exit 1; }; exit 0 ;; esac
  echo "$*" > "$ARGS"; exec sleep 30 ;;
esac
exit 2
`
	if err := os.WriteFile(dir+"/hubble", []byte(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	run := func(fail, badFilter string) (int, string, string, time.Time) {
		t.Helper()
		args := dir + "/args"
		os.Remove(args)
		cmd := exec.Command("bash", "-c", hubbleScript, "hubble", "hubble", "observe", "--follow", "-o", "jsonpb")
		cmd.Env = append(os.Environ(), "PATH="+dir+":"+os.Getenv("PATH"), "ARGS="+args, "FAIL="+fail, "BADFILTER="+badFilter)
		in, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		var stderr strings.Builder
		cmd.Stderr = &stderr
		before := time.Now().UTC()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		timer := time.AfterFunc(time.Second, func() { in.Close() })
		defer timer.Stop()
		err = cmd.Wait()
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		b, _ := os.ReadFile(args)
		return code, stderr.String(), strings.TrimSpace(string(b)), before
	}
	code, stderr, args, before := run("", "")
	if code != 143 || !strings.Contains(stderr, "Healthcheck") || !strings.Contains(stderr, hubbleReady+" ") {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	_, since, _ := strings.Cut(strings.TrimSpace(stderr[strings.Index(stderr, hubbleReady):]), hubbleReady+" ")
	at, err := time.Parse("2006-01-02T15:04:05.999999Z07:00", since)
	if err != nil || !strings.HasSuffix(since, "Z") || len(since) != len("2006-01-02T15:04:05.000000Z") {
		t.Fatalf("since %q: %v", since, err)
	}
	if at.Before(before.Truncate(time.Second)) || at.After(time.Now()) {
		t.Errorf("since %s, the script started at %s", at, before)
	}
	if args != "observe --follow -o jsonpb --since "+since {
		t.Errorf("observe ran with %q", args)
	}
	code, stderr, args, _ = run("1", "")
	if code != 1 || !strings.Contains(stderr, "failed to connect") || strings.Contains(stderr, hubbleReady) || args != "" {
		t.Errorf("Hubble down: exit %d, stderr %q, observe ran with %q", code, stderr, args)
	}
	code, stderr, args, _ = run("", "1")
	if code != 1 || !strings.Contains(stderr, "cannot be combined") || strings.Contains(stderr, "Healthcheck") || strings.Contains(stderr, hubbleReady) || args != "" {
		t.Errorf("filters the CLI refuses: exit %d, stderr %q, observe ran with %q", code, stderr, args)
	}
}

// The tcpdump argv is the via prefix, then tcpdump reading as the parser
// does, on every interface unless told, with the filter after --.
func TestTcpdumpArgv(t *testing.T) {
	argv, err := tcpdumpArgv(&TcpdumpSource{Via: []string{"node-exec", "--node", "2"}, Interface: "cilium_vxlan", Filter: "tcp port 8080"})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(argv, "|"); got != "node-exec|--node|2|tcpdump|-l|-n|--immediate-mode|-i|cilium_vxlan|--|tcp port 8080" {
		t.Errorf("argv %s", got)
	}
	argv, _ = tcpdumpArgv(&TcpdumpSource{})
	if got := strings.Join(argv, "|"); got != "tcpdump|-l|-n|--immediate-mode|-i|any" {
		t.Errorf("argv without via, interface and filter: %s", got)
	}
	if _, err := tcpdumpArgv(&TcpdumpSource{Filter: "port 1\x00"}); err == nil {
		t.Error("a NUL byte in the filter was taken")
	}
}
