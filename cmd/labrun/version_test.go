package main

import (
	"bytes"
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
	for _, tc := range []struct {
		name string
		info *debug.BuildInfo
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
	}} {
		t.Run(tc.name, func(t *testing.T) {
			if got := versionLine(tc.info, true); got != tc.want {
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
	if got := versionLine(nil, false); !strings.HasPrefix(got, "labrun dev (go") {
		t.Errorf("got %q, want labrun dev and the Go version", got)
	}
}
