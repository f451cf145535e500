package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// buildProbe builds a tiny program, as make image builds labrun, from a
// fresh git repository whose one commit is dated 2026-12-05T10:15:00Z,
// and returns the binary's bytes. extra are go build's flags; dirty
// leaves an uncommitted change.
func buildProbe(t *testing.T, dirty bool, extra ...string) []byte {
	t.Helper()
	dir := t.TempDir()
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := func(env []string, name string, args ...string) {
		c := exec.Command(name, args...)
		c.Dir, c.Env = dir, append(os.Environ(), env...)
		if out, err := c.CombinedOutput(); err != nil {
			t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
		}
	}
	write("go.mod", "module example.com/probe\n\ngo 1.26\n")
	write("main.go", "package main\n\nfunc main() {}\n")
	date := []string{"GIT_AUTHOR_DATE=2026-12-05T10:15:00Z", "GIT_COMMITTER_DATE=2026-12-05T10:15:00Z"}
	cmd(nil, "git", "init", "-q")
	cmd(nil, "git", "add", ".")
	cmd(date, "git", "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "probe")
	if dirty {
		write("main.go", "package main\n\nfunc main() { println() }\n")
	}
	cmd([]string{"CGO_ENABLED=0", "GOFLAGS="}, "go", append([]string{"build", "-o", "probe"}, append(extra, ".")...)...)
	bin, err := os.ReadFile(filepath.Join(dir, "probe"))
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// readSource reads what the image is named and dated after from the
// binary's own build information.
func TestReadSource(t *testing.T) {
	if testing.Short() {
		t.Skip("builds three programs")
	}
	src, err := readSource(buildProbe(t, false, "-buildvcs=true"))
	if err != nil {
		t.Fatal(err)
	}
	if len(src.Revision) != 40 || src.Modified || !src.Time.Equal(time.Date(2026, 12, 5, 10, 15, 0, 0, time.UTC)) ||
		src.OS == "" || src.Arch == "" || !strings.HasSuffix(src.Version, "-"+src.Revision[:12]) {
		t.Errorf("source %+v: want the commit, its time, the platform and its pseudo-version", src)
	}
	if src.Tag() != src.Revision[:12] {
		t.Errorf("tag %q, want the revision's first 12 digits", src.Tag())
	}

	dirty, err := readSource(buildProbe(t, true, "-buildvcs=true"))
	if err != nil {
		t.Fatal(err)
	}
	if !dirty.Modified || dirty.Tag() != dirty.Revision[:12]+"-dirty" {
		t.Errorf("an uncommitted change: source %+v, tag %q", dirty, dirty.Tag())
	}

	if _, err := readSource(buildProbe(t, false, "-buildvcs=false")); err == nil || !strings.Contains(err.Error(), "-buildvcs=true") {
		t.Errorf("a binary without VCS information: error %v, want one saying how to build it", err)
	}
}

func TestSourceDate(t *testing.T) {
	src := source{Time: time.Date(2026, 12, 5, 11, 15, 0, 0, time.FixedZone("CET", 3600))}
	if got, err := sourceDate(src, ""); err != nil || !got.Equal(src.Time) || got.Location() != time.UTC {
		t.Errorf("without SOURCE_DATE_EPOCH: %s, %v; want the commit's time in UTC", got, err)
	}
	if got, err := sourceDate(src, "1700000000"); err != nil || got.Unix() != 1700000000 {
		t.Errorf("SOURCE_DATE_EPOCH=1700000000: %s, %v", got, err)
	}
	if _, err := sourceDate(src, "yesterday"); err == nil {
		t.Error("SOURCE_DATE_EPOCH=yesterday was taken")
	}
}

// labrun and labrun-helm go in one image only when built from one tree
// for one platform: labrun speaks its own commit's protocol to
// labrun-helm.
func TestSameBuild(t *testing.T) {
	labrun := testInputs().Source
	for _, tc := range []struct {
		name   string
		change func(*source)
		want   string // "" when they go together
	}{
		{"the same build", func(*source) {}, ""},
		{"another commit", func(s *source) { s.Revision = "0" + s.Revision[1:] }, "built from 8a8802dfe9c2 and 0a8802dfe9c2: build both from one tree"},
		{"uncommitted changes", func(s *source) { s.Modified = true }, "built from 8a8802dfe9c2 and 8a8802dfe9c2-dirty"},
		{"another platform", func(s *source) { s.Arch = "arm64" }, "built for linux/amd64 and linux/arm64"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			helm := labrun
			tc.change(&helm)
			err := sameBuild(labrun, helm)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("error %v, want one saying %q", err, tc.want)
			}
		})
	}
}
