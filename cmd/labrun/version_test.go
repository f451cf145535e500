package main

import (
	"bytes"
	"os"
	"os/exec"
	"runtime/debug"
	"strings"
	"testing"
)

func TestVersionLine(t *testing.T) {
	setting := func(kv ...string) []debug.BuildSetting {
		var s []debug.BuildSetting
		for i := 0; i < len(kv); i += 2 {
			s = append(s, debug.BuildSetting{Key: kv[i], Value: kv[i+1]})
		}
		return s
	}
	ld := vcsStamp{revision: "5d41402abc4b2a76b9719d911017c592ae9f1b2c", time: "2026-12-06T08:00:00Z"}
	for _, tc := range []struct {
		name string
		info *debug.BuildInfo
		ld   vcsStamp // what make build gave with -X
		want string
	}{{
		name: "a clean build of a commit",
		info: &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v0.0.0-20261205101500-8a8802dfe9c2"},
			Settings: setting("vcs", "git", "vcs.revision", "8a8802dfe9c268f8b28000a6e702fcdc79d3f33f", "vcs.time", "2026-12-05T10:15:00Z", "vcs.modified", "false")},
		want: "labrun v0.0.0-20261205101500-8a8802dfe9c2 (rev 8a8802dfe9c2, 2026-12-05T10:15:00Z, go1.26.8)",
	}, {
		name: "uncommitted changes",
		info: &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v0.0.0-20261205101500-8a8802dfe9c2+dirty"},
			Settings: setting("vcs.revision", "8a8802dfe9c268f8b28000a6e702fcdc79d3f33f", "vcs.time", "2026-12-05T10:15:00Z", "vcs.modified", "true")},
		want: "labrun v0.0.0-20261205101500-8a8802dfe9c2+dirty (rev 8a8802dfe9c2-dirty, 2026-12-05T10:15:00Z, go1.26.8)",
	}, {
		name: "a tagged release",
		info: &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v1.2.0"},
			Settings: setting("vcs.revision", "abc1234", "vcs.modified", "false")},
		want: "labrun v1.2.0 (rev abc1234, go1.26.8)",
	}, {
		name: "built without VCS information",
		info: &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}},
		want: "labrun dev (go1.26.8)",
	}, {
		name: "make build in a git worktree: go stamps nothing, -X names the commit",
		info: &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}},
		ld:   ld,
		want: "labrun dev (rev 5d41402abc4b, 2026-12-06T08:00:00Z, go1.26.8)",
	}, {
		name: "make build in a worktree with uncommitted changes",
		info: &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}},
		ld:   vcsStamp{revision: ld.revision, time: ld.time, modified: true},
		want: "labrun dev (rev 5d41402abc4b-dirty, 2026-12-06T08:00:00Z, go1.26.8)",
	}, {
		name: "the build information wins over -X",
		info: &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v1.2.0"},
			Settings: setting("vcs.revision", "abc1234", "vcs.modified", "false")},
		ld:   ld,
		want: "labrun v1.2.0 (rev abc1234, go1.26.8)",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			if got := versionLine(tc.info, true, tc.ld); got != tc.want {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}

// The command prints one line naming labrun and the Go that built it,
// whatever build information the test binary carries.
func TestVersionCommand(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := Main([]string{"version"}, &stdout, &stderr); code != exitOK {
		t.Fatalf("exit %d, stderr %q", code, stderr.String())
	}
	out := stdout.String()
	if !strings.HasPrefix(out, "labrun ") || strings.Count(out, "\n") != 1 || !strings.Contains(out, "go1.") {
		t.Errorf("labrun version printed %q: want one line, labrun, its version and Go's", out)
	}
}

func TestVersionLineWithoutBuildInfo(t *testing.T) {
	if got := versionLine(nil, false, vcsStamp{}); !strings.HasPrefix(got, "labrun dev (go") {
		t.Errorf("got %q, want labrun dev and the Go version", got)
	}
}

// make build stamps the commit whatever GOFLAGS says (this machine's hold
// -buildvcs=false, and `labrun version` of a make build said dev): each
// go build of the target turns -buildvcs on, and labrun's gives the
// commit with -X for a git worktree, where go stamps nothing.
func TestMakeBuildStampsTheCommit(t *testing.T) {
	for _, tool := range []string{"make", "git"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("no %s: %v", tool, err)
		}
	}
	head, err := exec.Command("git", "-C", "../..", "rev-parse", "HEAD").Output()
	if err != nil {
		t.Skipf("not in a git checkout: %v", err)
	}
	cmd := exec.Command("make", "-s", "-n", "-C", "../..", "build", "BIN=bin/labrun")
	cmd.Env = append(os.Environ(), "GOFLAGS=-buildvcs=false")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("make -n build: %v\n%s", err, out)
	}
	builds := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if !strings.Contains(line, " build ") {
			continue
		}
		builds++
		if !strings.Contains(line, " -buildvcs=true ") {
			t.Errorf("make build runs %q: without -buildvcs=true, GOFLAGS=-buildvcs=false leaves the binary unstamped", line)
		}
		if strings.HasSuffix(line, " ./cmd/labrun") && !strings.Contains(line, "-X main.vcsRevision="+strings.TrimSpace(string(head))+" ") {
			t.Errorf("make build runs %q: labrun's build does not give the commit %s with -X", line, strings.TrimSpace(string(head)))
		}
	}
	if builds != 2 {
		t.Errorf("make build ran %d go builds, want 2 (labrun, labrun-helm):\n%s", builds, out)
	}
}
