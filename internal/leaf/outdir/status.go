package outdir

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"time"
)

// StatusFile is the run manifest's path inside the output directory: which
// run wrote the directory's files, whether it finished, and which files it
// wrote. `labrun check` and platforms that collect a learner's outputs
// read it to tell a finished run's files from those a failed, interrupted
// or killed run left (schemas/run-status.schema.json).
const StatusFile = StateDir + "/status.json"

// The statuses of a run in its manifest. Running is also what a killed run
// (SIGKILL, a crash, a second Ctrl-C) leaves: it never got to write another.
const (
	RunRunning     = "running"
	RunPassed      = "passed"
	RunFailed      = "failed"
	RunInterrupted = "interrupted"
)

// RunStatus is the run manifest.
type RunStatus struct {
	// RunID names the run: its start time in UTC and random digits.
	RunID    string `json:"runId"`
	Playbook string `json:"playbook"`
	Status   string `json:"status"`
	// From is the step a resumed run (--from) started at; its files
	// include those the runs it resumes wrote.
	From    string     `json:"from,omitempty"`
	Started time.Time  `json:"started"`
	Ended   *time.Time `json:"ended,omitempty"`
	// Files are the files the run wrote, relative to the output
	// directory, sorted.
	Files []string `json:"files"`
}

// maxStatusFile bounds the manifest read back: check reads a learner's
// directory, where it could be anything.
const maxStatusFile = 4 << 20

// StartRun begins a run's manifest. A fresh run (from "") first removes
// the files the previous run's manifest lists, so that when this run
// fails or is killed, no file of an earlier run is left looking like one
// of its own; a resumed run keeps them, as the steps it restores wrote
// them. From then on every WriteFile is added to the manifest before it
// returns.
func (d *Dir) StartRun(playbook, from string) error {
	prev, err := d.ReadStatus()
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		if from != "" {
			return err
		}
		// A fresh run starts anew whatever an earlier one left.
		prev = nil
	}
	st := &RunStatus{RunID: NewRunID(time.Now()), Playbook: playbook, Status: RunRunning, From: from, Started: time.Now().UTC(), Files: []string{}}
	if prev != nil {
		if from != "" {
			st.Files = append(st.Files, prev.Files...)
		} else if err := d.removeFiles(prev.Files); err != nil {
			return err
		}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.run = st
	return d.saveStatus()
}

// FinishRun records how the run ended.
func (d *Dir) FinishRun(status string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.run == nil {
		return nil
	}
	now := time.Now().UTC()
	d.run.Status, d.run.Ended = status, &now
	return d.saveStatus()
}

// record adds rel to the manifest of a run started with StartRun.
func (d *Dir) record(rel string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.run == nil {
		return nil
	}
	i, found := slices.BinarySearch(d.run.Files, rel)
	if found {
		return nil
	}
	d.run.Files = slices.Insert(d.run.Files, i, rel)
	if err := d.saveStatus(); err != nil {
		return fmt.Errorf("wrote %s but cannot record it in %s: %w", d.Abs(rel), d.Abs(StatusFile), err)
	}
	return nil
}

// saveStatus writes the manifest atomically; d.mu is held.
func (d *Dir) saveStatus() error {
	data, err := json.MarshalIndent(d.run, "", "  ")
	if err != nil {
		return err
	}
	if err := d.root.MkdirAll(StateDir, 0o700); err != nil {
		return d.explain(StateDir, err)
	}
	return d.write(StatusFile, append(data, '\n'))
}

// removeFiles removes the files an earlier run's manifest lists: regular
// files only, inside the directory, never labrun's own state. The list is
// read from the directory, so a name that could not be one of the run's
// files is passed over.
func (d *Dir) removeFiles(files []string) error {
	for _, f := range files {
		rel, err := d.Resolve(f)
		if err != nil || rel != f {
			continue
		}
		fi, err := d.root.Lstat(rel)
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		if err := d.root.Remove(rel); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("cannot remove %s, written by the previous run: %w", d.Abs(rel), unwrap(err))
		}
	}
	return nil
}

// ReadStatus reads the run manifest. A missing one gives an error that
// wraps fs.ErrNotExist; one that is not a manifest labrun wrote (not
// JSON, no run id, an unknown status) gives an error saying so.
func (d *Dir) ReadStatus() (*RunStatus, error) {
	if d.root != nil {
		if fi, err := d.root.Lstat(StatusFile); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			return nil, fmt.Errorf("run status %s is a symbolic link; refusing to follow it", d.Abs(StatusFile))
		}
	}
	data, err := d.ReadFile(StatusFile, maxStatusFile)
	if err != nil {
		return nil, err
	}
	var st RunStatus
	if err := json.Unmarshal(data, &st); err != nil {
		return nil, fmt.Errorf("run status %s: %w", d.Abs(StatusFile), err)
	}
	switch {
	case st.RunID == "":
		return nil, fmt.Errorf("run status %s: no runId", d.Abs(StatusFile))
	case !slices.Contains([]string{RunRunning, RunPassed, RunFailed, RunInterrupted}, st.Status):
		return nil, fmt.Errorf("run status %s: status %q is none of running, passed, failed, interrupted", d.Abs(StatusFile), st.Status)
	}
	return &st, nil
}

// Stale says, for a manifest check reads, why the directory's files may
// not be a finished run's ("" when they are): check grades them all the
// same, but the learner and the platform should know.
func (st *RunStatus) Stale() string {
	switch st.Status {
	case RunRunning:
		return fmt.Sprintf("labrun run %s (started %s) never finished: it was killed, or is still running; its files may be incomplete", st.RunID, st.Started.Format(time.RFC3339))
	case RunFailed, RunInterrupted:
		return fmt.Sprintf("labrun run %s (started %s) %s; its files may be incomplete", st.RunID, st.Started.Format(time.RFC3339), st.Status)
	}
	return ""
}

// NewRunID names a run by its start and 8 random hexadecimal digits.
func NewRunID(t time.Time) string {
	var b [4]byte
	rand.Read(b[:])
	return t.UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(b[:])
}
