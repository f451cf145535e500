package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/labrun/labrun/internal/parse"
	"github.com/labrun/labrun/internal/parse/parsetest"
)

// The query both sides answer over 200k conntrack lines: how many SVC
// entries involve port 40404 (the lab's svc_entries, on a big table).
const (
	ctQueryDir  = "SVC"
	ctQueryPort = ":40404"
	awkQuery    = `$2 == "SVC" && ($3 ~ /:40404$/ || $5 ~ /:40404$/) { n++ } END { print n + 0 }`
	grepQuery   = `^[^ ]+ SVC ([^ ]+:40404 |[^ ]+ -> [^ ]+:40404 )`
)

// benchParse compares labrun's typed conntrack parser with awk and grep
// over the same 200k-line `cilium-dbg bpf ct list global` text (the text
// of parse/ct_bench_test.go). labrun parses every field of every entry,
// in process, from the text it already holds; awk and grep answer the one
// question as processes reading the file (from the page cache).
func benchParse(ctx context.Context, b *bench) ([]Row, error) {
	text := ctLines200k()
	path := filepath.Join(b.work, "ct-200k.txt")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		return nil, err
	}
	labrun, want, err := timeCTParse(b, text)
	if err != nil {
		return nil, err
	}
	awk, err := timeCTQuery(ctx, b, path, want, "awk", awkQuery)
	if err != nil {
		return nil, err
	}
	grep, err := timeCTQuery(ctx, b, path, want, "grep", "-c", "-E", grepQuery)
	if err != nil {
		return nil, err
	}
	cliWall, cliRSS, err := timeParseCommand(ctx, b, path)
	if err != nil {
		return nil, err
	}
	svc, err := timeServiceParse(b)
	if err != nil {
		return nil, err
	}
	l := durations("parse.ParseCTList + Count", "ms", labrun)
	note := fmt.Sprintf("200k lines, %d MB, the query answered by all three is the lab's svc_entries (SVC entries with port 40404: %d). "+
		"labrun gets every field of every entry as typed data; awk and grep count lines.", len(text)>>20, want)
	return []Row{
		compare("conntrack text, 200k entries: parse and query", l, durations("awk", "ms", awk), 1).withNote("%s", note),
		Row{Name: "conntrack text, 200k entries: parse and query (goal 100 ms)", Labrun: l}.withLimit(100),
		compare("conntrack text, 200k entries: parse and query", l, durations("grep -c -E", "ms", grep), 0),
		Row{Name: "`labrun parse cilium-bpf-ct-list` of the 200k entries to JSON, whole process", Labrun: durations("labrun", "s", cliWall)}.withLimit(1).
			withNote("the JSON is streamed entry by entry (103 MB of it); before, the indented JSON of the whole result was built in memory: 4-6 s and up to 1.1 GB"),
		Row{Name: "`labrun parse cilium-bpf-ct-list` of the 200k entries to JSON, max RSS", Labrun: newSeries("labrun", "MB", cliRSS)}.withLimit(150),
		Row{Name: "service list text, 200k lines (100k services, 2 backends each): parse", Labrun: durations("parse.ParseServiceList", "ms", svc)},
	}, nil
}

// timeCTParse times parse.ParseCTList and the query over text, b.n times,
// and returns the query's answer, which awk and grep must give too.
func timeCTParse(b *bench, text string) (samples []time.Duration, want int, err error) {
	samples, err = timeN(b.n, func() (time.Duration, error) {
		runtime.GC()
		start := time.Now()
		l, err := parse.ParseCTList(text)
		if err != nil {
			return 0, err
		}
		want = l.Count(ctQueryDir, ctQueryPort)
		d := time.Since(start)
		if len(l.Entries) != 200_000 {
			return 0, fmt.Errorf("ParseCTList: %d entries, want 200000", len(l.Entries))
		}
		return d, nil
	})
	return samples, want, err
}

// timeCTQuery times the tool argv answering the query over the file at
// path, b.n times; its answer must be want.
func timeCTQuery(ctx context.Context, b *bench, path string, want int, argv ...string) ([]time.Duration, error) {
	return timeN(b.n, func() (time.Duration, error) {
		p, err := runProc(ctx, append(argv, path), procOpts{})
		if err != nil {
			return 0, err
		}
		if got, err := strconv.Atoi(strings.TrimSpace(string(p.stdout))); err != nil || got != want {
			return 0, fmt.Errorf("%s counted %q, labrun %d", argv[0], p.stdout, want)
		}
		return p.wall, nil
	})
}

// timeParseCommand times `labrun parse` as a whole process on the file
// at path, b.n times: read, parse, and the JSON of every entry streamed to
// /dev/null. It returns the wall times and the peak RSS in MB.
func timeParseCommand(ctx context.Context, b *bench, path string) (wall []time.Duration, rss []float64, err error) {
	devnull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		return nil, nil, err
	}
	defer devnull.Close()
	for range b.n {
		p, err := runProc(ctx, []string{b.labrun, "parse", "cilium-bpf-ct-list", path}, procOpts{stdout: devnull, rss: true})
		if err != nil {
			return nil, nil, err
		}
		wall, rss = append(wall, p.wall), append(rss, mb(p.maxRSS))
	}
	return wall, rss, nil
}

// timeServiceParse times parse.ParseServiceList, the other parser a lab
// reads tables of, at 200k lines (100k services with two backends each).
func timeServiceParse(b *bench) ([]time.Duration, error) {
	svcText := parsetest.ServiceLines(200_000)
	return timeN(b.n, func() (time.Duration, error) {
		runtime.GC()
		start := time.Now()
		l, err := parse.ParseServiceList(svcText)
		d := time.Since(start)
		if err == nil && len(l) != 100_000 {
			err = fmt.Errorf("ParseServiceList: %d services, want 100000", len(l))
		}
		return d, err
	})
}

// ctLines200k is the same input as parse's own benchmark: 200k
// conntrack lines in Cilium 1.20's format.
func ctLines200k() string { return parsetest.CTLines(200_000) }
