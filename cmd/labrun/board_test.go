package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/labrun/labrun/cmd/labrun/internal/board"
	"github.com/labrun/labrun/cmd/labrun/internal/report"
	"github.com/labrun/labrun/runner"
	"github.com/labrun/labrun/runner/fleet"
	"golang.org/x/net/html"
)

// The class of the board's tests: each learner's files for the lab of
// testdata/board (app.json, scale.json, expose.json; "" leaves the file
// out) and the variables the targets file sets for them.
var boardClass = []struct {
	name               string
	app, scale, expose string
	set                []string
}{
	{name: "amira", app: "amira", scale: "3", expose: "8080"},
	{name: "bruno", app: "default", scale: "1"},
	{name: "chen", app: "chen", scale: "3", expose: "8080"},
	{name: "dana", app: "default", scale: "3", expose: `"8080"`},
	{name: "elif", app: "elif", scale: "3"},
	{name: "farid", app: "farid", scale: "3", expose: "8080", set: []string{"replicas=three"}},
	{name: "greta", app: "greta", scale: "3", expose: "8080"},
	{name: "hugo", app: "hugo", scale: "3", expose: "8080", set: []string{"latency=2"}},
	{name: "ines", app: "ines", scale: "2", expose: "80"},
	{name: "jonas", app: "jonas", scale: "3", expose: "8080"},
	{name: "kofi"},
	{name: "lena", app: "lena", scale: "3", expose: "8080"},
}

// gradeBoardClass writes the class's files into dir and grades it with
// labrun check --targets, writing the JSON report and the board; it
// returns the results the JSON report holds.
func gradeBoardClass(t *testing.T, dir string) []fleet.Result {
	t.Helper()
	var targets strings.Builder
	targets.WriteString("targets:\n")
	for _, l := range boardClass {
		fmt.Fprintf(&targets, "  - namespace: %s\n", l.name)
		if len(l.set) > 0 {
			fmt.Fprintf(&targets, "    set: [%s]\n", strings.Join(l.set, ", "))
		}
		// a file the learner has not written is left out
		if l.app != "" {
			writeTestFile(t, filepath.Join(dir, "answers", l.name, "app.json"), fmt.Sprintf(`{"namespace": %q, "debug": false}`, l.app))
		}
		if l.scale != "" {
			writeTestFile(t, filepath.Join(dir, "answers", l.name, "scale.json"), fmt.Sprintf(`{"deployment": "web", "replicas": %s}`, l.scale))
		}
		if l.expose != "" {
			writeTestFile(t, filepath.Join(dir, "answers", l.name, "expose.json"), fmt.Sprintf(`{"service": "web", "port": %s}`, l.expose))
		}
	}
	writeTestFile(t, filepath.Join(dir, "targets.yaml"), targets.String())
	lab, err := filepath.Abs("testdata/board/lab.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	code := Main([]string{"check", "--targets", filepath.Join(dir, "targets.yaml"), "--parallel", "4",
		"--outputs", "out=" + filepath.Join(dir, "answers"),
		"--report", "json=" + filepath.Join(dir, "class.jsonl"), "--report", "html=" + filepath.Join(dir, "class.html"), lab}, &stdout, &stderr)
	// farid's variable is refused (config) and decides the exit code;
	// hugo's check runs out of time; the others are graded
	if code != exitInvalid {
		t.Fatalf("check --targets exit %d, want 2:\n%s%s", code, stdout.String(), stderr.String())
	}
	data, err := os.ReadFile(filepath.Join(dir, "class.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var results []fleet.Result
	for line := range strings.Lines(string(data)) {
		r, err := fleet.ParseLine([]byte(line))
		if err != nil {
			t.Fatal(err)
		}
		results = append(results, r)
	}
	if len(results) != len(boardClass) {
		t.Fatalf("%d result lines for %d learners", len(results), len(boardClass))
	}
	return results
}

func writeTestFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// artifacts is the directory a test keeps what people look at after it
// (screenshots): $LABRUN_ARTIFACTS/<test>, else a temporary directory;
// the test's log names it.
func artifacts(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if root := os.Getenv("LABRUN_ARTIFACTS"); root != "" {
		dir = filepath.Join(root, t.Name())
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("artifacts in %s", dir)
	return dir
}

// chromiumPath finds a headless Chromium: $LABRUN_CHROMIUM, else
// chromium (Debian's package, which .ci/run installs) on PATH. Under
// CI=true a missing browser fails the test: the board's test must run in
// CI; elsewhere it is skipped, saying so.
func chromiumPath(t *testing.T) string {
	t.Helper()
	for _, name := range []string{os.Getenv("LABRUN_CHROMIUM"), "chromium", "chromium-browser"} {
		if name == "" {
			continue
		}
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("no chromium on PATH under CI=true: .ci/run installs Debian's chromium, which the class board's browser test needs")
	}
	t.Skip("no chromium on PATH (Debian: apt-get install chromium); the class board's browser test does not run here")
	return ""
}

// headless runs Chromium headless on the page at url with args
// (--dump-dom, --screenshot=FILE), with no network of its own and a
// fresh profile, and returns what it printed. Its processes are one
// group, all killed when it takes more than a minute.
func headless(t *testing.T, bin, url string, args ...string) []byte {
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

// dom is the document Chromium built from a page once its script ran.
type dom struct{ root *html.Node }

func dumpDOM(t *testing.T, bin, url string) dom {
	t.Helper()
	root, err := html.Parse(bytes.NewReader(headless(t, bin, url, "--dump-dom")))
	if err != nil {
		t.Fatal(err)
	}
	return dom{root}
}

// all lists the elements for which match is true, in document order.
func (d dom) all(match func(n *html.Node) bool) []*html.Node {
	var out []*html.Node
	for n := range d.root.Descendants() {
		if n.Type == html.ElementNode && match(n) {
			out = append(out, n)
		}
	}
	return out
}

func (d dom) byID(id string) *html.Node {
	found := d.all(func(n *html.Node) bool { return attr(n, "id") == id })
	if len(found) != 1 {
		return nil
	}
	return found[0]
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

func hasAttr(n *html.Node, key string) bool {
	return slices.ContainsFunc(n.Attr, func(a html.Attribute) bool { return a.Key == key })
}

func text(n *html.Node) string {
	var b strings.Builder
	for c := range n.Descendants() {
		if c.Type == html.TextNode {
			b.WriteString(c.Data)
		}
	}
	return b.String()
}

// children are n's element children named tag.
func children(n *html.Node, tag string) []*html.Node {
	var out []*html.Node
	for c := range n.ChildNodes() {
		if c.Type == html.ElementNode && c.Data == tag {
			out = append(out, c)
		}
	}
	return out
}

// rows are the grid's learners, in the order the page shows them.
func (d dom) rows(t *testing.T) []*html.Node {
	t.Helper()
	grid := d.byID("grid")
	if grid == nil {
		t.Fatal("no #grid in the page")
	}
	body := children(grid, "tbody")
	if len(body) != 1 {
		t.Fatal("the grid has no tbody")
	}
	return children(body[0], "tr")
}

// wantState is the grid's state of a learner's case, from the JSON
// report: its verdict, and for a task not passed its class.
func wantState(r fleet.Result, task string) string {
	for _, c := range r.Cases {
		if c.Name != task {
			continue
		}
		switch {
		case c.Status == runner.Passed:
			return "passed"
		case c.Status == runner.Failed && c.Class == runner.ClassAssertion:
			return "wrong"
		case c.Status == runner.Failed:
			return string(c.Class)
		}
		return string(c.Status)
	}
	if !r.Graded() && r.Class != "" {
		return string(r.Class)
	}
	return "none"
}

// The board of a class graded by check --targets, in a real browser:
// the DOM Chromium built once the page's script ran has the JSON report's
// counts, a row per learner and a cell per task in the state the report
// gives, a wrong answer's message and hint, no request to anywhere; its
// screenshot is kept.
func TestBoardInBrowser(t *testing.T) {
	bin := chromiumPath(t)
	dir, keep := t.TempDir(), artifacts(t)
	results := gradeBoardClass(t, dir)
	page := filepath.Join(dir, "class.html")
	info, err := os.Stat(page)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("class board of %d learners: %d bytes", len(results), info.Size())
	d := dumpDOM(t, bin, "file://"+page)

	counts := fleet.Count(results)
	for key, want := range map[string]int{"passed": counts.Passed, "wrong": counts.Wrong, "not-graded": counts.NotGraded} {
		got := d.all(func(n *html.Node) bool { return attr(n, "data-count") == key })
		if len(got) != 1 || text(got[0]) != strconv.Itoa(want) {
			t.Errorf("count %s: %v, want %d", key, got, want)
		}
	}
	// the class: 5 right, 5 wrong, 2 not graded (farid: config, hugo:
	// timeout)
	if counts.Passed != 5 || counts.Wrong != 5 || counts.NotGraded != 2 {
		t.Errorf("the class graded %+v; want 5 passed, 5 wrong, 2 not graded", counts)
	}

	var tasks []string
	for _, th := range d.all(func(n *html.Node) bool { return n.Data == "th" && hasAttr(n, "data-name") }) {
		tasks = append(tasks, attr(th, "data-name"))
	}
	if len(tasks) != 4 || tasks[1] != "task 2: The web Deployment runs three replicas" {
		t.Fatalf("task columns %q", tasks)
	}
	rows := d.rows(t)
	if len(rows) != len(results) {
		t.Fatalf("%d rows for %d learners", len(rows), len(results))
	}
	var names []string
	for _, tr := range rows {
		i, err := strconv.Atoi(attr(tr, "data-i"))
		if err != nil || i < 0 || i >= len(results) {
			t.Fatalf("row %q: data-i %q", attr(tr, "data-n"), attr(tr, "data-i"))
		}
		r := results[i]
		names = append(names, attr(tr, "data-n"))
		if attr(tr, "data-n") != r.Target || attr(tr, "data-v") != string(r.Verdict) {
			t.Errorf("row %d: %s %s, report %s %s", i, attr(tr, "data-n"), attr(tr, "data-v"), r.Target, r.Verdict)
		}
		cells := children(tr, "td")
		first, _ := strconv.Atoi(attr(d.byID("grid"), "data-first"))
		for k, task := range tasks {
			td := cells[first-1+k] // the row's first cell is a th
			if got, want := attr(td, "class"), "s-"+wantState(r, task); got != want {
				t.Errorf("%s, %s: cell %q, want %q", r.Target, task, got, want)
			}
		}
		if got := text(cells[len(cells)-1]); got != r.FirstFailure {
			t.Errorf("%s: first failure %q, report %q", r.Target, got, r.FirstFailure)
		}
	}
	// the default order, by learner, set by the script
	if !slices.IsSorted(names) {
		t.Errorf("rows in order %q, want by name", names)
	}
	if th := d.all(func(n *html.Node) bool { return n.Data == "th" && hasAttr(n, "aria-sort") }); len(th) != 1 || text(th[0]) != "Learner" {
		t.Errorf("the script marked no sorted column")
	}

	// bruno's scale: a wrong answer, with the report's message and hint
	bruno := results[slices.IndexFunc(results, func(r fleet.Result) bool { return r.Target == "bruno" })]
	c := bruno.Cases[1]
	cell := d.all(func(n *html.Node) bool { return n.Data == "tr" && attr(n, "data-n") == "bruno" })[0]
	td := children(cell, "td")[3]
	if attr(td, "class") != "s-wrong" || c.Status != runner.Failed ||
		attr(td, "data-m") != "scale.json: replicas is 1, expected 3" ||
		attr(td, "data-h") != "kubectl scale sets spec.replicas; write the number you set" ||
		c.Message != attr(td, "data-m")+" (hint: "+attr(td, "data-h")+")" {
		t.Errorf("bruno's scale cell %v; report %+v", td.Attr, c)
	}

	// self-contained: nothing the page loads
	for _, n := range d.all(func(n *html.Node) bool { return hasAttr(n, "src") || hasAttr(n, "href") || n.Data == "link" }) {
		t.Errorf("the page loads something: <%s %v>", n.Data, n.Attr)
	}
	raw, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(raw, []byte("http://")) || bytes.Contains(raw, []byte("https://")) {
		t.Errorf("the page names a URL")
	}

	headless(t, bin, "file://"+page, "--screenshot="+filepath.Join(keep, "class-board.png"), "--window-size=1400,900", "--hide-scrollbars")
	headless(t, bin, "file://"+page+"#show="+strconv.Itoa(bruno.Index)+".2", "--screenshot="+filepath.Join(keep, "class-board-cell.png"), "--window-size=1400,900", "--hide-scrollbars")
	t.Logf("screenshots: %s", filepath.Join(keep, "class-board.png"))
}

// Sorting, filtering and a cell kept open are states of the page's
// fragment: a sort by a task puts its wrong answers first, by failure
// class the learners not graded first, the most decisive class first;
// a filter hides the others; #show opens a cell's message and hint.
func TestBoardSortsInBrowser(t *testing.T) {
	bin := chromiumPath(t)
	dir := t.TempDir()
	results := gradeBoardClass(t, dir)
	page := "file://" + filepath.Join(dir, "class.html")
	rank := map[string]int{}
	for _, li := range dumpDOM(t, bin, page).all(func(n *html.Node) bool { return hasAttr(n, "data-rank") }) {
		rank[attr(li, "data-state")], _ = strconv.Atoi(attr(li, "data-rank"))
	}

	d := dumpDOM(t, bin, page+"#sort=task-2")
	var states []string
	for _, tr := range d.rows(t) {
		states = append(states, strings.TrimPrefix(attr(children(tr, "td")[3], "class"), "s-"))
	}
	if !slices.IsSortedFunc(states, func(a, b string) int { return rank[a] - rank[b] }) || states[0] != "wrong" || states[len(states)-1] != "passed" {
		t.Errorf("sorted by task 2: %q", states)
	}

	d = dumpDOM(t, bin, page+"#sort=class")
	var order []string
	for _, tr := range d.rows(t) {
		order = append(order, attr(tr, "data-n")+":"+attr(tr, "data-v"))
	}
	if len(order) < 3 || order[0] != "farid:not-graded" || order[1] != "hugo:not-graded" || !strings.HasSuffix(order[len(order)-1], ":passed") {
		t.Errorf("sorted by failure class: %q", order)
	}

	d = dumpDOM(t, bin, page+"#sort=-learner&only=wrong")
	var shown []string
	for _, tr := range d.rows(t) {
		if !hasAttr(tr, "hidden") {
			shown = append(shown, attr(tr, "data-n"))
			if attr(tr, "data-v") != "wrong" {
				t.Errorf("only=wrong shows %s (%s)", attr(tr, "data-n"), attr(tr, "data-v"))
			}
		}
	}
	var wrong []string
	for _, r := range results {
		if r.Verdict == fleet.Wrong {
			wrong = append(wrong, r.Target)
		}
	}
	slices.Sort(wrong)
	slices.Reverse(wrong)
	if !slices.Equal(shown, wrong) {
		t.Errorf("only=wrong, by learner descending: %q, want %q", shown, wrong)
	}
	if got := text(d.byID("shown")); got != fmt.Sprintf("%d of %d learners shown", len(wrong), len(results)) {
		t.Errorf("shown: %q", got)
	}

	hugo := slices.IndexFunc(results, func(r fleet.Result) bool { return r.Target == "hugo" })
	d = dumpDOM(t, bin, page+"#show="+strconv.Itoa(hugo)+".4")
	detail := d.byID("detail")
	if detail == nil || hasAttr(detail, "hidden") {
		t.Fatal("#show opened no cell")
	}
	c := results[hugo].Cases[3]
	if text(d.byID("d-who")) != "hugo" || text(d.byID("d-task")) != c.Name || !strings.Contains(text(d.byID("d-state")), "timeout") ||
		text(d.byID("d-msg")) != c.Message || !strings.Contains(text(d.byID("d-hint")), c.Hint) || c.Hint == "" {
		t.Errorf("hugo's health cell shows %q / %q / %q / %q / %q; report %+v", text(d.byID("d-who")), text(d.byID("d-task")),
			text(d.byID("d-state")), text(d.byID("d-msg")), text(d.byID("d-hint")), c)
	}
}

// A learner's page of one check comes from the same template: their
// tasks in order, each with its status, message and hint, as the JSON
// report of the same check says.
func TestLearnerPageInBrowser(t *testing.T) {
	bin := chromiumPath(t)
	dir, keep := t.TempDir(), artifacts(t)
	writeTestFile(t, filepath.Join(dir, "bruno", "app.json"), `{"namespace": "default", "debug": false}`)
	writeTestFile(t, filepath.Join(dir, "bruno", "scale.json"), `{"deployment": "web", "replicas": 1}`)
	var stdout, stderr bytes.Buffer
	code := Main([]string{"check", "--no-progress", "--set", "namespace=bruno", "--set", "out=" + filepath.Join(dir, "bruno"),
		"--report", "json=" + filepath.Join(dir, "check.json"), "--report", "html=" + filepath.Join(dir, "check.html"), "testdata/board/lab.yaml"}, &stdout, &stderr)
	if code != exitFailed {
		t.Fatalf("check exit %d, want 1:\n%s%s", code, stdout.String(), stderr.String())
	}
	var o runner.Outcome
	data, err := os.ReadFile(filepath.Join(dir, "check.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &o); err != nil {
		t.Fatal(err)
	}
	d := dumpDOM(t, bin, "file://"+filepath.Join(dir, "check.html"))
	if d.byID("grid") != nil {
		t.Error("a learner's page has the class grid")
	}
	items := d.all(func(n *html.Node) bool {
		return n.Data == "li" && hasAttr(n, "data-state") && strings.HasPrefix(attr(n, "class"), "task ")
	})
	if len(items) != len(o.Tasks) {
		t.Fatalf("%d tasks on the page, %d in the report", len(items), len(o.Tasks))
	}
	want := map[runner.Status]string{runner.Passed: "passed", runner.Failed: "wrong", runner.NotStarted: "not-started"}
	for i, li := range items {
		tr := o.Tasks[i]
		if attr(li, "data-state") != want[tr.Status] || !strings.Contains(text(li), tr.Title) {
			t.Errorf("task %d on the page: %s %q; report %s %q", tr.Number, attr(li, "data-state"), text(li), tr.Status, tr.Title)
		}
		hint := children(li, "p")
		if tr.Hint != "" && !slices.ContainsFunc(hint, func(p *html.Node) bool { return attr(p, "class") == "hint" && strings.Contains(text(p), tr.Hint) }) {
			t.Errorf("task %d: hint %q not on the page", tr.Number, tr.Hint)
		}
	}
	// a write step's hint of the key at fault, apart from its message
	var msg, hint string
	for _, p := range children(items[1], "p") {
		switch attr(p, "class") {
		case "msg":
			msg = text(p)
		case "hint":
			hint = text(p)
		}
	}
	if msg != "scale.json: replicas is 1, expected 3" || hint != "Hint kubectl scale sets spec.replicas; write the number you set" ||
		o.Tasks[1].Reason != msg+" (hint: kubectl scale sets spec.replicas; write the number you set)" {
		t.Errorf("task 2 shows %q, hint %q; report %q", msg, hint, o.Tasks[1].Reason)
	}
	if v := d.byID("verdict"); v == nil || !strings.Contains(text(v), "1 of 4 tasks passed") {
		t.Errorf("verdict line %v", v)
	}
	headless(t, bin, "file://"+filepath.Join(dir, "check.html"), "--screenshot="+filepath.Join(keep, "learner.png"), "--window-size=1000,700", "--hide-scrollbars")
}

// A board of 1,000 learners x 8 tasks stays usable: Chromium loads it,
// the script sorts its 8,000 cells by a task and filters them, and the
// page's size and the time it took are printed.
func TestLargeBoardInBrowser(t *testing.T) {
	bin := chromiumPath(t)
	results := make([]fleet.Result, 1000)
	for i := range results {
		r := fleet.Result{Index: i, Target: fmt.Sprintf("learner-%04d", i), Verdict: fleet.Passed, Seconds: 0.05}
		for k := 1; k <= 8; k++ {
			c := fleet.Case{Name: fmt.Sprintf("task %d: Task %d of the lab", k, k), Status: runner.Passed}
			if (i+k)%(k+2) == 0 {
				c.Status, c.Class, c.Message = runner.Failed, runner.ClassAssertion, fmt.Sprintf("answer.json: replicas is %d, expected 3 (hint: count again)", i%3)
				r.Verdict, r.Class = fleet.Wrong, runner.ClassAssertion
			} else {
				r.Passed++
			}
			r.Tasks++
			r.Cases = append(r.Cases, c)
		}
		results[i] = r
	}
	page := filepath.Join(t.TempDir(), "class.html")
	if err := report.WriteFleet("html", page, results, board.About{Playbook: "lab.yaml"}); err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(page)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	d := dumpDOM(t, bin, "file://"+page+"#sort=task-3&only=wrong")
	t.Logf("board of 1,000 learners x 8 tasks: %d bytes (%.0f KiB); Chromium loaded, sorted and filtered it in %s",
		info.Size(), float64(info.Size())/1024, time.Since(start).Round(time.Millisecond))
	rows := d.rows(t)
	if len(rows) != 1000 {
		t.Fatalf("%d rows", len(rows))
	}
	var states []string
	shown := 0
	for _, tr := range rows {
		states = append(states, attr(children(tr, "td")[4], "class"))
		if !hasAttr(tr, "hidden") {
			shown++
		}
	}
	want := fleet.Count(results).Wrong
	if states[0] != "s-wrong" || states[len(states)-1] != "s-passed" || !slices.IsSortedFunc(states, func(a, b string) int {
		return boolCmp(a == "s-passed", b == "s-passed")
	}) || shown != want {
		t.Errorf("sorted by task 3 and filtered to the wrong: %d shown (want %d), states from %s to %s", shown, want, states[0], states[len(states)-1])
	}
}

func boolCmp(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}
