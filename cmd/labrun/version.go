package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"
)

// The commit make build gives with -ldflags -X (Makefile's VCS_LDFLAGS),
// for a build whose information names none: go build stamps nothing in a
// git worktree (go.dev/issue/58218), whatever -buildvcs says.
var vcsRevision, vcsTime, vcsModified string

// vcsStamp is a commit as the build names it: its hash, its time
// (RFC 3339) and whether the tree had uncommitted changes.
type vcsStamp struct {
	revision, time string
	modified       bool
}

// linkerStamp is the commit make build gave with -X, if any.
func linkerStamp() vcsStamp {
	return vcsStamp{revision: vcsRevision, time: vcsTime, modified: vcsModified == "true"}
}

// versionLine is what `labrun version` prints: one line naming the module
// version and the commit the binary was built from, so a report, a bug or
// a pod's log says which labrun produced it. Both come from the build
// information the Go toolchain embeds: `go build` in a git checkout
// (with -buildvcs=true, as `make build` and `make image` build whatever
// GOFLAGS says) stamps vcs.revision, vcs.time and vcs.modified, and a
// pseudo-version of the commit as the module's version. Where it stamps
// none (a git worktree), the commit make build gave with -X (ld) is
// named; a build with neither (go run, go test, -buildvcs=false) says
// "dev". A binary built from a tree with uncommitted changes names its
// revision with "-dirty": it is not that commit.
func versionLine(info *debug.BuildInfo, ok bool, ld vcsStamp) string {
	if !ok || info == nil {
		info = &debug.BuildInfo{GoVersion: runtime.Version()}
	}
	version := info.Main.Version
	if version == "" || version == "(devel)" {
		version = "dev"
	}
	var rev, when string
	dirty := false
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			when = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		rev, when, dirty = ld.revision, ld.time, ld.modified
	}
	var parts []string
	if rev != "" {
		rev = "rev " + shortRevision(rev)
		if dirty {
			rev += "-dirty"
		}
		parts = append(parts, rev)
	}
	if when != "" {
		parts = append(parts, when)
	}
	parts = append(parts, info.GoVersion)
	return fmt.Sprintf("labrun %s (%s)", version, strings.Join(parts, ", "))
}

// shortRevision is the first 12 hex digits of a commit, as Go's
// pseudo-versions and the image's tag name it.
func shortRevision(rev string) string {
	if len(rev) > 12 {
		return rev[:12]
	}
	return rev
}

// versionCmd prints versionLine of this binary. Like before it named the
// commit, it takes no flags and ignores any argument.
func versionCmd(stdout io.Writer) int {
	fmt.Fprintln(stdout, thisVersion())
	return exitOK
}

// thisVersion is versionLine of this binary, which an HTML report names.
func thisVersion() string {
	info, ok := debug.ReadBuildInfo()
	return versionLine(info, ok, linkerStamp())
}
