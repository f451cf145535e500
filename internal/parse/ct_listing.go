package parse

// Reading a whole conntrack listing: ParseCTList, which parses a big table
// in chunks on all CPUs, and ScanCTList, which streams one entry at a time.
// Each line goes to ctParser.line (ct_line.go).

import (
	"bufio"
	"io"
	"runtime"
	"strconv"
	"strings"
	"sync"
)

// ParseCTList parses `cilium-dbg bpf ct list global`. Each map's dump is
// followed by an empty line (cilium-dbg prints every map with
// fmt.Println), so blank lines are skipped. Output cut mid-line is refused
// as truncated (see refuseCut). Strings in the result share the input's
// memory and optional fields are carved from shared blocks, so the parser
// allocates little beyond the entries slice.
func ParseCTList(text string) (CTList, error) {
	if err := refuseCut(kindCTList, "entries", text, ParseCTList, func(l CTList) int { return len(l.Entries) }); err != nil {
		return CTList{}, err
	}
	chunks := ctChunks(text)
	if len(chunks) == 1 {
		return parseCTLines(text, 0, make([]CTEntry, 0, strings.Count(text, "\n")+1))
	}
	// A big table (a busy node's is 200,000 lines) is parsed in chunks
	// of lines on all CPUs at once. First each chunk counts its lines
	// and its entries, so that the entries slice is allocated once at its
	// exact length and every chunk parses straight into its own part of
	// it: no pass over the whole text on one CPU, and nothing to move
	// afterwards. The first error in line order wins.
	type part struct {
		lines, entries int
		list           CTList
		err            error
	}
	parts := make([]part, len(chunks))
	var wg sync.WaitGroup
	for i, c := range chunks {
		wg.Go(func() { parts[i].lines, parts[i].entries = countCTLines(c) })
	}
	wg.Wait()
	total := 0
	for _, p := range parts {
		total += p.entries
	}
	all := make([]CTEntry, total)
	line, at := 0, 0
	for i, c := range chunks {
		p := &parts[i]
		dst, first := all[at:at:at+p.entries], line
		wg.Go(func() { p.list, p.err = parseCTLines(c, first, dst) })
		line, at = line+p.lines, at+p.entries
	}
	wg.Wait()
	l := CTList{Entries: all, Warnings: []string{}}
	for _, p := range parts {
		if p.err != nil {
			return CTList{}, p.err
		}
		l.Warnings = append(l.Warnings, p.list.Warnings...)
	}
	return l, nil
}

// ctChunks cuts a listing into the chunks ParseCTList parses at once:
// pieces of whole lines of at least 1 MB, four per CPU rather than one, so
// that on a machine whose CPUs also run other work a CPU that gets less
// time parses fewer chunks instead of holding up the whole table with its
// one.
func ctChunks(text string) []string { return splitLines(text, 4*runtime.GOMAXPROCS(0), 1<<20) }

// countCTLines counts the lines of text and those of them that are
// entries, as parseCTLines classifies them (ctSkip).
func countCTLines(text string) (lines, entries int) {
	r := newLineReader(text)
	for {
		line, ok := r.next()
		if !ok {
			return r.num, entries
		}
		if !ctSkip(line) {
			entries++
		}
	}
}

// ctSkip reports whether a line of the listing is not an entry: a blank
// line or a warning.
func ctSkip(line string) bool { return isBlank(line) || isCTWarning(line) }

// splitLines cuts text into at most n pieces of whole lines, each at least
// min bytes long (one piece when text is shorter than 2*min).
func splitLines(text string, n, min int) []string {
	var out []string
	for len(out) < n-1 && len(text) >= 2*min {
		cut := len(text) / (n - len(out))
		if cut < min {
			cut = min
		}
		nl := strings.IndexByte(text[cut:], '\n')
		if nl < 0 {
			break
		}
		out = append(out, text[:cut+nl+1])
		text = text[cut+nl+1:]
	}
	return append(out, text)
}

// parseCTLines parses the lines of text, the first of which is line
// firstLine+1 of the whole output, appending the entries to entries, whose
// capacity must be at least the number of entries (countCTLines).
func parseCTLines(text string, firstLine int, entries []CTEntry) (CTList, error) {
	l := CTList{Entries: entries, Warnings: []string{}}
	var p ctParser
	r := newLineReader(text)
	for {
		line, ok := r.next()
		if !ok {
			break
		}
		if ctSkip(line) {
			if !isBlank(line) {
				l.Warnings = append(l.Warnings, line)
			}
			continue
		}
		l.Entries = append(l.Entries, CTEntry{})
		if err := p.line(line, &l.Entries[len(l.Entries)-1]); err != nil {
			return CTList{}, newError(kindCTList, firstLine+r.num, line, err.Error())
		}
	}
	return l, nil
}

// ScanCTList reads `cilium-dbg bpf ct list global` from rd and calls fn for
// every entry, without holding the whole table in memory. It stops at the
// first parse error or error returned by fn; a last line without its
// newline is a truncation error, after fn has seen every complete entry.
// Warning lines are skipped.
func ScanCTList(rd io.Reader, fn func(CTEntry) error) error {
	br := bufio.NewReaderSize(rd, 64*1024)
	var p ctParser
	num, n := 0, 0
	for {
		line, err := br.ReadString('\n')
		if line == "" && err != nil {
			if err == io.EOF {
				return nil
			}
			return err
		}
		num++
		cut := err == io.EOF
		line = strings.TrimSuffix(strings.TrimSuffix(line, "\n"), "\r")
		if cut && !isBlank(line) {
			e := newError(kindCTList, num, line, "output ends mid-line, without a final newline (truncated); "+strconv.Itoa(n)+" complete entries before it")
			e.Truncated = true
			return e
		}
		if !isBlank(line) && !isCTWarning(line) {
			var e CTEntry
			if perr := p.line(line, &e); perr != nil {
				return newError(kindCTList, num, line, perr.Error())
			}
			if ferr := fn(e); ferr != nil {
				return ferr
			}
			n++
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

func isCTWarning(line string) bool {
	return strings.HasPrefix(line, "Unable to open ") && strings.HasSuffix(strings.TrimSpace(line), "Skipping.")
}
