package runner

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/labrun/labrun/actions"
	"golang.org/x/sys/unix"
)

// otherUID is a non-root user other than the one running the tests: the
// learner of a lab machine, who may plant links and directories.
const otherUID = 65534

func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root, as labrun runs on a lab machine, to act as another user")
	}
}

// victim is a root-only file outside every output directory.
func victim(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "shadow")
	if err := os.WriteFile(p, []byte("root:TOPSECRET\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func unchanged(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil || string(b) != "root:TOPSECRET\n" {
		t.Errorf("%s was changed: %q, %v", path, b, err)
	}
}

func runPlaybook(t *testing.T, src string, mode actions.Mode, keepGoing bool, set ...string) (*Outcome, error) {
	t.Helper()
	return (&Runner{Plan: compile(t, src, set...), Runtime: &actions.Runtime{Mode: mode}, KeepGoing: keepGoing}).Run(context.Background())
}

const oneStep = `
name: confine
vars: {out: x}
outputDir: ${{ vars.out }}
steps:
  - id: a
    write: {path: a.txt, text: hi}
`

// A learner who pre-creates the output directory (a fixed path under
// /tmp) with the journal as a link to a root-only file must not get that
// file overwritten when root runs the lab. The learner's part runs as a
// process of another user, in a sticky world-writable directory as /tmp.
func TestOutputDirOfAnotherUserIsRefused(t *testing.T) {
	needRoot(t)
	v := victim(t)
	tmp := filepath.Join(t.TempDir(), "tmp")
	if err := os.Mkdir(tmp, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(tmp, 0o1777); err != nil {
		t.Fatal(err)
	}
	// t.TempDir's directories are root-only: let the learner through
	for _, d := range []string{filepath.Dir(tmp), filepath.Dir(filepath.Dir(tmp))} {
		if err := os.Chmod(d, 0o711); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(tmp, "out")
	plant := exec.Command("sh", "-c", `mkdir -p "$1/.labrun" && ln -s "$2" "$1/.labrun/journal.jsonl"`, "sh", out, v)
	plant.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: otherUID, Gid: otherUID}}
	if b, err := plant.CombinedOutput(); err != nil {
		t.Fatalf("planting as user %d: %v: %s", otherUID, err, b)
	}
	_, err := runPlaybook(t, oneStep, actions.Solve, false, "out="+out)
	unchanged(t, v)
	want := fmt.Sprintf("output directory %s is owned by user %d; refusing to write into it", out, otherUID)
	if err == nil || err.Error() != want {
		t.Errorf("err = %v, want %q", err, want)
	}
}

// A world-writable output directory is refused like one another user owns:
// anyone could plant a link in it.
func TestWritableOutputDirIsRefused(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	if err := os.Mkdir(out, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(out, 0o777); err != nil {
		t.Fatal(err)
	}
	_, err := runPlaybook(t, oneStep, actions.Solve, false, "out="+out)
	want := fmt.Sprintf("output directory %s can be written by other users (mode drwxrwxrwx); refusing to write into it", out)
	if err == nil || err.Error() != want {
		t.Errorf("err = %v, want %q", err, want)
	}
}

// The journal is opened inside the output directory only: a link in its
// place that leads out is refused, and the file it names stays as it was.
func TestJournalLinkLeavingOutputDir(t *testing.T) {
	v := victim(t)
	out := t.TempDir()
	if err := os.Mkdir(filepath.Join(out, ".labrun"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(v, filepath.Join(out, ".labrun", "journal.jsonl")); err != nil {
		t.Fatal(err)
	}
	_, err := runPlaybook(t, oneStep, actions.Solve, false, "out="+out)
	unchanged(t, v)
	if err == nil || !strings.Contains(err.Error(), "journal") {
		t.Errorf("err = %v, want the journal refused", err)
	}
}

// A write refused because a link leads out of the output directory
// creates nothing outside it, not even the parent directories.
func TestRefusedWriteCreatesNothingOutside(t *testing.T) {
	out, outside := t.TempDir(), t.TempDir()
	if err := os.Symlink(outside, filepath.Join(out, "link")); err != nil {
		t.Fatal(err)
	}
	o, err := runPlaybook(t, `
name: confine
vars: {out: x}
outputDir: ${{ vars.out }}
steps:
  - id: a
    write: {path: link/new/deeper/a.txt, text: hi}
`, actions.Solve, false, "out="+out)
	if err != nil {
		t.Fatal(err)
	}
	if o.Status != Failed {
		t.Errorf("status %s, want failed", o.Status)
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Errorf("the refused write created %v outside the output directory", entries)
	}
}

// A directory swapped for a link to elsewhere while writes go into it
// never carries a file out: each write resolves its path inside the
// output directory when it opens the file, not before.
func TestSwappedDirectoryNeverLeaksAWrite(t *testing.T) {
	out, outside := t.TempDir(), t.TempDir()
	sub, link := filepath.Join(out, "sub"), filepath.Join(out, "link")
	if err := os.Mkdir(sub, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, link); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.WriteString("name: race\nvars: {out: x}\noutputDir: ${{ vars.out }}\nsteps:\n")
	for i := range 1000 {
		fmt.Fprintf(&b, "  - id: w%d\n    write: {path: sub/f%d.txt, text: hi}\n", i, i)
	}
	plan := compile(t, b.String(), "out="+out)
	stop, swapped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(swapped)
		for {
			select {
			case <-stop:
				return
			default:
			}
			// sub is a directory, then a link leading out, and back:
			// exchanged in one step, so sub always exists.
			if err := unix.Renameat2(unix.AT_FDCWD, sub, unix.AT_FDCWD, link, unix.RENAME_EXCHANGE); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	_, err := (&Runner{Plan: plan, Runtime: &actions.Runtime{}, KeepGoing: true}).Run(context.Background())
	close(stop)
	<-swapped
	if err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("%d files landed outside the output directory: %s", len(names), strings.Join(names, " "))
	}
}

// labrun check reads a learner's files through the output directory: a
// link the learner planted to a root-only file is refused, and nothing of
// that file shows in the step's messages.
func TestCheckRefusesLinkLeavingOutputDir(t *testing.T) {
	v := victim(t)
	out := t.TempDir()
	if err := os.Symlink(v, filepath.Join(out, "answer.json")); err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	o, err := (&Runner{Plan: compile(t, `
name: grade
vars: {out: x}
outputDir: ${{ vars.out }}
steps:
  - id: answer
    write: {path: answer.json, json: {a: 1}}
`, "out="+out), Runtime: &actions.Runtime{Mode: actions.Check}, Observer: rec}).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(o.Steps) != 1 || o.Steps[0].Status != Failed {
		t.Fatalf("steps %+v, want answer failed", o.Steps)
	}
	if msg := o.Steps[0].Error; strings.Contains(msg, "TOPSECRET") || !strings.Contains(msg, "leaves the output directory") {
		t.Errorf("error %q: want the link refused, without the target's content", msg)
	}
}
