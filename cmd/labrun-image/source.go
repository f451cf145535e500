package main

import (
	"bytes"
	"debug/buildinfo"
	"fmt"
	"time"
)

// source is what the labrun binary says of its own build: the image is
// named, labelled and dated after it, so the image and the `labrun
// version` it prints cannot disagree. `go build -buildvcs=true` in a git
// clone stamps these into the binary (a git worktree's .git is a file,
// which go build does not recognise: go.dev/issue/58218).
type source struct {
	// Version is the main module's version, a pseudo-version of the
	// commit (v0.0.0-20261205101500-8a8802dfe9c2) or a release tag.
	Version string
	// Revision is the full commit hash; Modified, whether the tree had
	// uncommitted changes.
	Revision string
	Modified bool
	// Time is the commit's time, vcs.time.
	Time time.Time
	// OS and Arch are the binary's GOOS and GOARCH: the image's platform.
	OS, Arch string
}

// readSource reads the build information of the binary's bytes. A binary
// without a VCS revision is refused: its image could name no commit.
func readSource(binary []byte) (source, error) {
	info, err := buildinfo.Read(bytes.NewReader(binary))
	if err != nil {
		return source{}, fmt.Errorf("reading the binary's build information: %w", err)
	}
	s := source{Version: info.Main.Version}
	for _, kv := range info.Settings {
		switch kv.Key {
		case "vcs.revision":
			s.Revision = kv.Value
		case "vcs.modified":
			s.Modified = kv.Value == "true"
		case "vcs.time":
			if s.Time, err = time.Parse(time.RFC3339, kv.Value); err != nil {
				return source{}, fmt.Errorf("the binary's vcs.time %q: %w", kv.Value, err)
			}
		case "GOOS":
			s.OS = kv.Value
		case "GOARCH":
			s.Arch = kv.Value
		case "CGO_ENABLED":
			if kv.Value != "0" {
				return source{}, fmt.Errorf("the binary was built with CGO_ENABLED=%s: the image has no C library, build it with CGO_ENABLED=0", kv.Value)
			}
		}
	}
	if s.Revision == "" {
		return source{}, fmt.Errorf("the binary names no VCS revision: build it with go build -buildvcs=true in a git clone (make image does; in a git worktree go build stamps none, go.dev/issue/58218)")
	}
	if s.OS == "" || s.Arch == "" {
		return source{}, fmt.Errorf("the binary's build information names no GOOS or GOARCH")
	}
	return s, nil
}

// Tag is the image's tag for this build: the commit's first 12 hex
// digits, as Go's pseudo-versions and `labrun version` give it, and
// "-dirty" for a tree with uncommitted changes.
func (s source) Tag() string {
	tag := s.Revision
	if len(tag) > 12 {
		tag = tag[:12]
	}
	if s.Modified {
		tag += "-dirty"
	}
	return tag
}

// sameBuild says why labrun and labrun-helm built as a and b cannot go
// in one image: another commit, platform or tree state. labrun starts
// labrun-helm and speaks its commit's protocol to it.
func sameBuild(a, b source) error {
	if a.Revision != b.Revision || a.Modified != b.Modified {
		return fmt.Errorf("built from %s and %s: build both from one tree", a.Tag(), b.Tag())
	}
	if a.OS != b.OS || a.Arch != b.Arch {
		return fmt.Errorf("built for %s/%s and %s/%s: build both for one platform", a.OS, a.Arch, b.OS, b.Arch)
	}
	return nil
}
