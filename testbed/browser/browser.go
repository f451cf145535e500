// Package browser runs headless Chromium on a page for tests, and reads
// the document its scripts left: the class board's tests
// (cmd/labrun/board_test.go, and the fleet e2e test on the board a Job's
// class made) check what a browser shows, not only what labrun wrote.
// Chromium is Debian's package, which .ci/run installs: under CI=true a
// missing browser fails the test, elsewhere the test is skipped (or the
// browser's part of it), saying so.
package browser

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/net/html"
)

// Lookup finds a headless Chromium: $LABRUN_CHROMIUM, else chromium or
// chromium-browser on PATH.
func Lookup() (string, error) {
	for _, name := range []string{os.Getenv("LABRUN_CHROMIUM"), "chromium", "chromium-browser"} {
		if name == "" {
			continue
		}
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", errors.New("no chromium on PATH (Debian: apt-get install chromium; or set LABRUN_CHROMIUM)")
}

// Find is Chromium's path, and false when there is none outside CI: the
// caller then does without the browser. Under CI=true a missing Chromium
// fails the test.
func Find(t testing.TB) (string, bool) {
	t.Helper()
	bin, err := Lookup()
	if err == nil {
		return bin, true
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("%v, under CI=true: .ci/run installs Debian's chromium, which the class board's browser tests need", err)
	}
	t.Logf("%v: the browser's part of this test does not run here (it does in CI)", err)
	return "", false
}

// Need is Chromium's path; without one the test is skipped (failed
// under CI=true).
func Need(t testing.TB) string {
	t.Helper()
	bin, ok := Find(t)
	if !ok {
		t.Skip("no chromium: this browser test does not run here (it does in CI)")
	}
	return bin
}

// Run runs Chromium headless on the page at url with args (--dump-dom,
// --screenshot=FILE), with a fresh profile and none of its own network
// traffic, and returns what it printed. Its processes are one group, all
// killed when it takes more than a minute.
func Run(t testing.TB, bin, url string, args ...string) []byte {
	t.Helper()
	argv := append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir=" + t.TempDir()}, args...)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, append(argv, url)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium %s %s: %v\n%s", strings.Join(args, " "), url, err, stderr.String())
	}
	return stdout.Bytes()
}

// Screenshot keeps a picture of the page at url, width x height, in
// file.
func Screenshot(t testing.TB, bin, url, file string, width, height int) {
	t.Helper()
	Run(t, bin, url, "--screenshot="+file, "--window-size="+strconv.Itoa(width)+","+strconv.Itoa(height), "--hide-scrollbars")
}

// Doc is a document: as Chromium left it once the page's scripts ran
// (DOM), or as a file holds it (Parse).
type Doc struct{ Root *html.Node }

// DOM is the document Chromium built from the page at url.
func DOM(t testing.TB, bin, url string) Doc {
	t.Helper()
	return Parse(t, Run(t, bin, url, "--dump-dom"))
}

// Parse reads an HTML document.
func Parse(t testing.TB, data []byte) Doc {
	t.Helper()
	root, err := html.Parse(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	return Doc{root}
}

// All lists the elements for which match is true, in document order.
func (d Doc) All(match func(n *html.Node) bool) []*html.Node {
	var out []*html.Node
	for n := range d.Root.Descendants() {
		if n.Type == html.ElementNode && match(n) {
			out = append(out, n)
		}
	}
	return out
}

// ByID is the element of that id, nil when there is not exactly one.
func (d Doc) ByID(id string) *html.Node {
	found := d.All(func(n *html.Node) bool { return Attr(n, "id") == id })
	if len(found) != 1 {
		return nil
	}
	return found[0]
}

// Attr is n's attribute key, "" when it has none.
func Attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

// HasAttr reports whether n has the attribute key.
func HasAttr(n *html.Node, key string) bool {
	return slices.ContainsFunc(n.Attr, func(a html.Attribute) bool { return a.Key == key })
}

// Text is the text inside n.
func Text(n *html.Node) string {
	var b strings.Builder
	for c := range n.Descendants() {
		if c.Type == html.TextNode {
			b.WriteString(c.Data)
		}
	}
	return b.String()
}

// Children are n's element children named tag.
func Children(n *html.Node, tag string) []*html.Node {
	var out []*html.Node
	for c := range n.ChildNodes() {
		if c.Type == html.ElementNode && c.Data == tag {
			out = append(out, c)
		}
	}
	return out
}

// Artifacts is the directory a test keeps what people look at after it
// (screenshots): $LABRUN_ARTIFACTS/<test name>, else a temporary
// directory; the test's log names it.
func Artifacts(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	if root := os.Getenv("LABRUN_ARTIFACTS"); root != "" {
		dir = filepath.Join(root, strings.ReplaceAll(t.Name(), "/", "_"))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("artifacts in %s", dir)
	return dir
}
