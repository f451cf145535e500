package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/labrun/labrun/cmd/labrun/internal/board"
	"github.com/labrun/labrun/cmd/labrun/internal/report"
	"github.com/labrun/labrun/runner"
	"github.com/labrun/labrun/runner/fleet"
	"github.com/labrun/labrun/testbed/browser"
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

// gridRows are the grid's learners, in the order the page shows them.
func gridRows(t *testing.T, d browser.Doc) []*html.Node {
	t.Helper()
	grid := d.ByID("grid")
	if grid == nil {
		t.Fatal("no #grid in the page")
	}
	body := browser.Children(grid, "tbody")
	if len(body) != 1 {
		t.Fatal("the grid has no tbody")
	}
	return browser.Children(body[0], "tr")
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
	bin := browser.Need(t)
	dir, keep := t.TempDir(), browser.Artifacts(t)
	results := gradeBoardClass(t, dir)
	page := filepath.Join(dir, "class.html")
	info, err := os.Stat(page)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("class board of %d learners: %d bytes", len(results), info.Size())
	d := browser.DOM(t, bin, "file://"+page)

	counts := fleet.Count(results)
	for key, want := range map[string]int{"passed": counts.Passed, "wrong": counts.Wrong, "not-graded": counts.NotGraded} {
		got := d.All(func(n *html.Node) bool { return browser.Attr(n, "data-count") == key })
		if len(got) != 1 || browser.Text(got[0]) != strconv.Itoa(want) {
			t.Errorf("count %s: %v, want %d", key, got, want)
		}
	}
	// the class: 5 right, 5 wrong, 2 not graded (farid: config, hugo:
	// timeout)
	if counts.Passed != 5 || counts.Wrong != 5 || counts.NotGraded != 2 {
		t.Errorf("the class graded %+v; want 5 passed, 5 wrong, 2 not graded", counts)
	}

	var tasks []string
	for _, th := range d.All(func(n *html.Node) bool { return n.Data == "th" && browser.HasAttr(n, "data-name") }) {
		tasks = append(tasks, browser.Attr(th, "data-name"))
	}
	if len(tasks) != 4 || tasks[1] != "task 2: The web Deployment runs three replicas" {
		t.Fatalf("task columns %q", tasks)
	}
	rows := gridRows(t, d)
	if len(rows) != len(results) {
		t.Fatalf("%d rows for %d learners", len(rows), len(results))
	}
	var names []string
	for _, tr := range rows {
		i, err := strconv.Atoi(browser.Attr(tr, "data-i"))
		if err != nil || i < 0 || i >= len(results) {
			t.Fatalf("row %q: data-i %q", browser.Attr(tr, "data-n"), browser.Attr(tr, "data-i"))
		}
		r := results[i]
		names = append(names, browser.Attr(tr, "data-n"))
		if browser.Attr(tr, "data-n") != r.Target || browser.Attr(tr, "data-v") != string(r.Verdict) {
			t.Errorf("row %d: %s %s, report %s %s", i, browser.Attr(tr, "data-n"), browser.Attr(tr, "data-v"), r.Target, r.Verdict)
		}
		cells := browser.Children(tr, "td")
		first, _ := strconv.Atoi(browser.Attr(d.ByID("grid"), "data-first"))
		for k, task := range tasks {
			td := cells[first-1+k] // the row's first cell is a th
			if got, want := browser.Attr(td, "class"), "s-"+wantState(r, task); got != want {
				t.Errorf("%s, %s: cell %q, want %q", r.Target, task, got, want)
			}
		}
		if got := browser.Text(cells[len(cells)-1]); got != r.FirstFailure {
			t.Errorf("%s: first failure %q, report %q", r.Target, got, r.FirstFailure)
		}
	}
	// the default order, by learner, set by the script
	if !slices.IsSorted(names) {
		t.Errorf("rows in order %q, want by name", names)
	}
	if th := d.All(func(n *html.Node) bool { return n.Data == "th" && browser.HasAttr(n, "aria-sort") }); len(th) != 1 || browser.Text(th[0]) != "Learner" {
		t.Errorf("the script marked no sorted column")
	}

	// bruno's scale: a wrong answer, with the report's message and hint
	bruno := results[slices.IndexFunc(results, func(r fleet.Result) bool { return r.Target == "bruno" })]
	c := bruno.Cases[1]
	cell := d.All(func(n *html.Node) bool { return n.Data == "tr" && browser.Attr(n, "data-n") == "bruno" })[0]
	td := browser.Children(cell, "td")[3]
	if browser.Attr(td, "class") != "s-wrong" || c.Status != runner.Failed ||
		browser.Attr(td, "data-m") != "scale.json: replicas is 1, expected 3" ||
		browser.Attr(td, "data-h") != "kubectl scale sets spec.replicas; write the number you set" ||
		c.Message != browser.Attr(td, "data-m")+" (hint: "+browser.Attr(td, "data-h")+")" {
		t.Errorf("bruno's scale cell %v; report %+v", td.Attr, c)
	}

	// self-contained: nothing the page loads
	for _, n := range d.All(func(n *html.Node) bool {
		return browser.HasAttr(n, "src") || browser.HasAttr(n, "href") || n.Data == "link"
	}) {
		t.Errorf("the page loads something: <%s %v>", n.Data, n.Attr)
	}
	raw, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(raw, []byte("http://")) || bytes.Contains(raw, []byte("https://")) {
		t.Errorf("the page names a URL")
	}

	browser.Screenshot(t, bin, "file://"+page, filepath.Join(keep, "class-board.png"), 1400, 900)
	browser.Screenshot(t, bin, "file://"+page+"#show="+strconv.Itoa(bruno.Index)+".2", filepath.Join(keep, "class-board-cell.png"), 1400, 900)
	t.Logf("screenshots: %s", filepath.Join(keep, "class-board.png"))
}

// Sorting, filtering and a cell kept open are states of the page's
// fragment: a sort by a task puts its wrong answers first, by failure
// class the learners not graded first, the most decisive class first;
// a filter hides the others; #show opens a cell's message and hint.
func TestBoardSortsInBrowser(t *testing.T) {
	bin := browser.Need(t)
	dir := t.TempDir()
	results := gradeBoardClass(t, dir)
	page := "file://" + filepath.Join(dir, "class.html")
	rank := map[string]int{}
	for _, li := range browser.DOM(t, bin, page).All(func(n *html.Node) bool { return browser.HasAttr(n, "data-rank") }) {
		rank[browser.Attr(li, "data-state")], _ = strconv.Atoi(browser.Attr(li, "data-rank"))
	}

	d := browser.DOM(t, bin, page+"#sort=task-2")
	var states []string
	for _, tr := range gridRows(t, d) {
		states = append(states, strings.TrimPrefix(browser.Attr(browser.Children(tr, "td")[3], "class"), "s-"))
	}
	if !slices.IsSortedFunc(states, func(a, b string) int { return rank[a] - rank[b] }) || states[0] != "wrong" || states[len(states)-1] != "passed" {
		t.Errorf("sorted by task 2: %q", states)
	}

	d = browser.DOM(t, bin, page+"#sort=class")
	var order []string
	for _, tr := range gridRows(t, d) {
		order = append(order, browser.Attr(tr, "data-n")+":"+browser.Attr(tr, "data-v"))
	}
	if len(order) < 3 || order[0] != "farid:not-graded" || order[1] != "hugo:not-graded" || !strings.HasSuffix(order[len(order)-1], ":passed") {
		t.Errorf("sorted by failure class: %q", order)
	}

	d = browser.DOM(t, bin, page+"#sort=-learner&only=wrong")
	var shown []string
	for _, tr := range gridRows(t, d) {
		if !browser.HasAttr(tr, "hidden") {
			shown = append(shown, browser.Attr(tr, "data-n"))
			if browser.Attr(tr, "data-v") != "wrong" {
				t.Errorf("only=wrong shows %s (%s)", browser.Attr(tr, "data-n"), browser.Attr(tr, "data-v"))
			}
		}
	}
	var wrong []string
	for _, r := range results {
		if r.Verdict == runner.VerdictWrong {
			wrong = append(wrong, r.Target)
		}
	}
	slices.Sort(wrong)
	slices.Reverse(wrong)
	if !slices.Equal(shown, wrong) {
		t.Errorf("only=wrong, by learner descending: %q, want %q", shown, wrong)
	}
	if got := browser.Text(d.ByID("shown")); got != fmt.Sprintf("%d of %d learners shown", len(wrong), len(results)) {
		t.Errorf("shown: %q", got)
	}

	hugo := slices.IndexFunc(results, func(r fleet.Result) bool { return r.Target == "hugo" })
	d = browser.DOM(t, bin, page+"#show="+strconv.Itoa(hugo)+".4")
	detail := d.ByID("detail")
	if detail == nil || browser.HasAttr(detail, "hidden") {
		t.Fatal("#show opened no cell")
	}
	c := results[hugo].Cases[3]
	if browser.Text(d.ByID("d-who")) != "hugo" || browser.Text(d.ByID("d-task")) != c.Name || !strings.Contains(browser.Text(d.ByID("d-state")), "timeout") ||
		browser.Text(d.ByID("d-msg")) != c.Message || !strings.Contains(browser.Text(d.ByID("d-hint")), c.Hint) || c.Hint == "" {
		t.Errorf("hugo's health cell shows %q / %q / %q / %q / %q; report %+v", browser.Text(d.ByID("d-who")), browser.Text(d.ByID("d-task")),
			browser.Text(d.ByID("d-state")), browser.Text(d.ByID("d-msg")), browser.Text(d.ByID("d-hint")), c)
	}
}

// A learner's page of one check comes from the same template: their
// tasks in order, each with its status, message and hint, as the JSON
// report of the same check says.
func TestLearnerPageInBrowser(t *testing.T) {
	bin := browser.Need(t)
	dir, keep := t.TempDir(), browser.Artifacts(t)
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
	d := browser.DOM(t, bin, "file://"+filepath.Join(dir, "check.html"))
	if d.ByID("grid") != nil {
		t.Error("a learner's page has the class grid")
	}
	items := d.All(func(n *html.Node) bool {
		return n.Data == "li" && browser.HasAttr(n, "data-state") && strings.HasPrefix(browser.Attr(n, "class"), "task ")
	})
	if len(items) != len(o.Tasks) {
		t.Fatalf("%d tasks on the page, %d in the report", len(items), len(o.Tasks))
	}
	want := map[runner.Status]string{runner.Passed: "passed", runner.Failed: "wrong", runner.NotStarted: "not-started"}
	for i, li := range items {
		tr := o.Tasks[i]
		if browser.Attr(li, "data-state") != want[tr.Status] || !strings.Contains(browser.Text(li), tr.Title) {
			t.Errorf("task %d on the page: %s %q; report %s %q", tr.Number, browser.Attr(li, "data-state"), browser.Text(li), tr.Status, tr.Title)
		}
		hint := browser.Children(li, "p")
		if tr.Hint != "" && !slices.ContainsFunc(hint, func(p *html.Node) bool {
			return browser.Attr(p, "class") == "hint" && strings.Contains(browser.Text(p), tr.Hint)
		}) {
			t.Errorf("task %d: hint %q not on the page", tr.Number, tr.Hint)
		}
	}
	// a write step's hint of the key at fault, apart from its message
	var msg, hint string
	for _, p := range browser.Children(items[1], "p") {
		switch browser.Attr(p, "class") {
		case "msg":
			msg = browser.Text(p)
		case "hint":
			hint = browser.Text(p)
		}
	}
	if msg != "scale.json: replicas is 1, expected 3" || hint != "Hint kubectl scale sets spec.replicas; write the number you set" ||
		o.Tasks[1].Reason != msg+" (hint: kubectl scale sets spec.replicas; write the number you set)" {
		t.Errorf("task 2 shows %q, hint %q; report %q", msg, hint, o.Tasks[1].Reason)
	}
	if v := d.ByID("verdict"); v == nil || !strings.Contains(browser.Text(v), "1 of 4 tasks passed") {
		t.Errorf("verdict line %v", v)
	}
	browser.Screenshot(t, bin, "file://"+filepath.Join(dir, "check.html"), filepath.Join(keep, "learner.png"), 1000, 700)
}

// A board of 1,000 learners x 8 tasks stays usable: Chromium loads it,
// the script sorts its 8,000 cells by a task and filters them, and the
// page's size and the time it took are printed.
func TestLargeBoardInBrowser(t *testing.T) {
	bin := browser.Need(t)
	results := make([]fleet.Result, 1000)
	for i := range results {
		r := fleet.Result{Index: i, Target: fmt.Sprintf("learner-%04d", i), Verdict: runner.VerdictPassed, Seconds: 0.05}
		for k := 1; k <= 8; k++ {
			c := fleet.Case{Name: fmt.Sprintf("task %d: Task %d of the lab", k, k), Status: runner.Passed}
			if (i+k)%(k+2) == 0 {
				c.Status, c.Class, c.Message = runner.Failed, runner.ClassAssertion, fmt.Sprintf("answer.json: replicas is %d, expected 3 (hint: count again)", i%3)
				r.Verdict, r.Class = runner.VerdictWrong, runner.ClassAssertion
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
	d := browser.DOM(t, bin, "file://"+page+"#sort=task-3&only=wrong")
	t.Logf("board of 1,000 learners x 8 tasks: %d bytes (%.0f KiB); Chromium loaded, sorted and filtered it in %s",
		info.Size(), float64(info.Size())/1024, time.Since(start).Round(time.Millisecond))
	rows := gridRows(t, d)
	if len(rows) != 1000 {
		t.Fatalf("%d rows", len(rows))
	}
	var states []string
	shown := 0
	for _, tr := range rows {
		states = append(states, browser.Attr(browser.Children(tr, "td")[4], "class"))
		if !browser.HasAttr(tr, "hidden") {
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
