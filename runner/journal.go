package runner

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/labrun/labrun/internal/leaf/outdir"
	"github.com/labrun/labrun/internal/leaf/secret"
)

// Journal keeps the results of completed steps beside the outputs, one JSON
// line per step, so `--from STEP` can resume with the earlier results. An
// append-only file stays consistent when a run is interrupted: a torn last
// line is ignored when it is read back, and cut off before a resumed run
// appends, so that the next line starts on a line of its own.
//
// Lines are not fsynced: the journal is for resuming after a failed or
// interrupted run, which the page cache survives; surviving a machine
// crash is not worth a disk flush per step.
type Journal struct {
	path   string
	mu     sync.Mutex // branches of a parallel step append concurrently
	f      *os.File
	size   int64 // bytes of complete lines
	redact *secret.Redactor
	loaded map[string]journalEntry
}

type journalEntry struct {
	ID       string          `json:"id"`
	Action   string          `json:"action"`
	Finished time.Time       `json:"finished"`
	Result   json.RawMessage `json:"result,omitempty"`
}

func (e journalEntry) decode(into any) error { return json.Unmarshal(e.Result, into) }

// OpenJournal opens the journal of the output directory d, owner-only:
// results of steps may hold anything a step read. A fresh run (resume
// false) starts it anew; a resumed run reads it and appends after its
// last complete line.
func OpenJournal(d *outdir.Dir, resume bool) (*Journal, error) {
	j := &Journal{path: d.Abs(outdir.JournalFile), loaded: map[string]journalEntry{}}
	if resume {
		loaded, size, err := readJournal(d)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		j.loaded, j.size = loaded, size
	}
	f, err := d.OpenJournal(!resume)
	if err != nil {
		return nil, fmt.Errorf("cannot open journal: %w", err)
	}
	j.f = f
	if err := j.f.Truncate(j.size); err != nil {
		f.Close()
		return nil, fmt.Errorf("cannot cut the torn last line of journal %s: %w", j.path, err)
	}
	return j, nil
}

// readJournal reads the entries of d's journal by step id, the last one
// winning, and the length of its complete lines; a torn last line (a full
// disk, a crash) is left out.
func readJournal(d *outdir.Dir) (map[string]journalEntry, int64, error) {
	out := map[string]journalEntry{}
	data, err := d.ReadJournal()
	if err != nil {
		return out, 0, err
	}
	data = data[:bytes.LastIndexByte(data, '\n')+1]
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<20), 512<<20)
	for sc.Scan() {
		var e journalEntry
		if json.Unmarshal(sc.Bytes(), &e) == nil && e.ID != "" {
			out[e.ID] = e
		}
	}
	return out, int64(len(data)), nil
}

// Path is the journal file.
func (j *Journal) Path() string { return j.path }

// Loaded returns the entries read at open (resume only).
func (j *Journal) Loaded() map[string]journalEntry { return j.loaded }

// Append records a completed step. A line that cannot be written whole
// is cut off again, so that the journal keeps only complete lines.
func (j *Journal) Append(rec *StepRecord) error {
	res, err := rec.ResultJSON()
	if err != nil {
		return fmt.Errorf("cannot record step %s in journal %s: %w", rec.ID, j.path, err)
	}
	line, err := json.Marshal(journalEntry{ID: rec.ID, Action: rec.Action, Finished: time.Now(), Result: res})
	if err != nil {
		return fmt.Errorf("cannot record step %s in journal %s: %w", rec.ID, j.path, err)
	}
	line = append(j.redact.Bytes(line), '\n')
	j.mu.Lock()
	defer j.mu.Unlock()
	if _, err := j.f.Write(line); err != nil {
		j.f.Truncate(j.size)
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return fmt.Errorf("cannot write journal %s: %w", j.path, err)
	}
	j.size += int64(len(line))
	return nil
}

// Close closes the file.
func (j *Journal) Close() error { return j.f.Close() }

// restore loads results of the steps before --from out of the journal.
func (r *Runner) restore() (map[string]*StepRecord, error) {
	out := map[string]*StepRecord{}
	if r.From == "" {
		return out, nil
	}
	var target *StepPlan
	for _, s := range r.Plan.Steps {
		if s.ID == r.From && !s.Cleanup {
			target = s
		}
	}
	if target == nil {
		var ids []string
		for _, s := range r.Plan.Steps {
			if !s.Cleanup && s.Group == nil && s.Around == nil {
				ids = append(ids, s.ID)
			}
		}
		return nil, fmt.Errorf("--from %s: no such step; steps are: %s", r.From, strings.Join(ids, ", "))
	}
	if target.Group != nil {
		return nil, fmt.Errorf("--from %s: the step runs in branch %s of parallel step %s; resume from %s", r.From, target.Branch, target.Group.ID, target.Group.ID)
	}
	if target.Around != nil {
		return nil, fmt.Errorf("--from %s: the step runs during step %s; resume from %s", r.From, target.Around.ID, target.Around.ID)
	}
	if r.journal == nil {
		return nil, fmt.Errorf("--from needs the journal kept in the output directory, and this playbook has no outputDir")
	}
	saved := r.journal.Loaded()
	for _, s := range r.Plan.Steps {
		if s.Index >= target.Index || s.Cleanup {
			break
		}
		e, ok := saved[s.ID]
		if !ok {
			return nil, fmt.Errorf("--from %s: step %s has no completed result in the journal %s; run without --from first", r.From, s.ID, r.journal.Path())
		}
		res, err := r.decodeEntry(s, e)
		if err != nil {
			return nil, fmt.Errorf("--from %s: %w", r.From, err)
		}
		rec := newRecord(s)
		rec.Status, rec.Result = Restored, res
		out[s.ID] = rec
	}
	return out, nil
}

// decodeEntry turns a journal entry back into step s's typed result.
func (r *Runner) decodeEntry(s *StepPlan, e journalEntry) (any, error) {
	if len(e.Result) == 0 || s.Action == nil {
		return r.zero(s), nil
	}
	p := reflect.New(s.Result)
	if err := e.decode(p.Interface()); err != nil {
		return nil, fmt.Errorf("journal entry of step %s: %w", s.ID, err)
	}
	if s.Loop != nil {
		return p.Elem().Interface(), nil
	}
	return p.Interface(), nil
}
