package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"
)

// versionLine is what `labrun version` prints: one line naming the module
// version and the commit the binary was built from, so a report, a bug or
// a pod's log says which labrun produced it. Both come from the build
// information the Go toolchain embeds: `go build` in a git checkout
// (with -buildvcs, as `make image` builds) stamps vcs.revision, vcs.time
// and vcs.modified, and a pseudo-version of the commit as the module's
// version; a build without them (go run, go test, -buildvcs=false) says
// "dev". A binary built from a tree with uncommitted changes names its
// revision with "-dirty": it is not that commit.
func versionLine(info *debug.BuildInfo, ok bool) string {
	if !ok || info == nil {
		return "labrun dev (" + runtime.Version() + ")"
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
	return versionLine(info, ok)
}
