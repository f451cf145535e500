package main

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Series is one side of a measurement: N samples in Unit.
type Series struct {
	Label   string    `json:"label"`
	Unit    string    `json:"unit"` // "s", "ms" or "MB"
	Samples []float64 `json:"samples"`
	Median  float64   `json:"median"`
	Min     float64   `json:"min"`
	Max     float64   `json:"max"`
}

func newSeries(label, unit string, samples []float64) Series {
	s := Series{Label: label, Unit: unit, Samples: samples}
	if len(samples) == 0 {
		return s
	}
	sorted := slices.Clone(samples)
	slices.Sort(sorted)
	s.Min, s.Max = sorted[0], sorted[len(sorted)-1]
	if n := len(sorted); n%2 == 1 {
		s.Median = sorted[n/2]
	} else {
		s.Median = (sorted[n/2-1] + sorted[n/2]) / 2
	}
	return s
}

// durations converts durations to a series in milliseconds or seconds.
func durations(label, unit string, ds []time.Duration) Series {
	div := map[string]time.Duration{"s": time.Second, "ms": time.Millisecond}[unit]
	v := make([]float64, len(ds))
	for i, d := range ds {
		v[i] = float64(d) / float64(div)
	}
	return newSeries(label, unit, v)
}

func (s Series) String() string {
	if len(s.Samples) == 1 {
		return fmtNum(s.Median) + " " + s.Unit
	}
	return fmt.Sprintf("%s %s (%s–%s)", fmtNum(s.Median), s.Unit, fmtNum(s.Min), fmtNum(s.Max))
}

// Row is one line of the table.
type Row struct {
	Name   string  `json:"name"`
	Labrun Series  `json:"labrun"`
	Alt    *Series `json:"alternative,omitempty"`
	// Ratio is the alternative's median over labrun's: how many times
	// faster (or smaller) labrun is. Zero when there is no alternative.
	Ratio float64 `json:"ratio,omitempty"`
	Goal  string  `json:"goal,omitempty"`
	Met   *bool   `json:"met,omitempty"`
	Note  string  `json:"note,omitempty"`
}

// compare makes a row of labrun against an alternative, with the goal
// "ratio >= minRatio" when minRatio > 0.
func compare(name string, labrun, alt Series, minRatio float64) Row {
	r := Row{Name: name, Labrun: labrun, Alt: &alt}
	if labrun.Median > 0 {
		r.Ratio = alt.Median / labrun.Median
	}
	if minRatio > 0 {
		r.Goal = fmt.Sprintf("≥ %gx", minRatio)
		met := r.Ratio >= minRatio
		r.Met = &met
	}
	return r
}

// withLimit sets the goal "labrun's median < limit" (in labrun's unit).
func (r Row) withLimit(limit float64) Row {
	r.Goal = fmt.Sprintf("< %g %s", limit, r.Labrun.Unit)
	met := r.Labrun.Median < limit
	r.Met = &met
	return r
}

func (r Row) withNote(format string, args ...any) Row {
	r.Note = fmt.Sprintf(format, args...)
	return r
}

// Results is what testbed/bench/results.json holds.
type Results struct {
	Machine Machine `json:"machine"`
	N       int     `json:"n"`
	Started string  `json:"started"`
	Rows    []Row   `json:"rows"`
}

// Markdown renders the table, then the notes, numbered.
func (res Results) Markdown() string {
	var b strings.Builder
	m := res.Machine
	fmt.Fprintf(&b, "\nlabrun %s, %d CPUs (%s), %d GB, Linux %s, %s; median of %d runs (min–max)\n\n",
		m.Commit, m.CPUs, m.CPU, m.MemoryGB, m.Kernel, m.Go, res.N)
	b.WriteString("| measurement | labrun | alternative | ratio | goal |\n|---|---|---|---|---|\n")
	var notes []string
	for _, r := range res.Rows {
		name := r.Name
		if r.Note != "" {
			notes = append(notes, r.Note)
			name += fmt.Sprintf(" [%d]", len(notes))
		}
		alt, ratio := "—", "—"
		if r.Alt != nil {
			alt = r.Alt.Label + ": " + r.Alt.String()
		}
		if r.Ratio > 0 {
			ratio = fmtNum(r.Ratio) + "x"
		}
		goal := r.Goal
		if r.Met != nil {
			if *r.Met {
				goal += " met"
			} else {
				goal += " **missed**"
			}
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", name, r.Labrun.String(), alt, ratio, goal)
	}
	if len(notes) > 0 {
		b.WriteString("\n")
		for i, n := range notes {
			fmt.Fprintf(&b, "%d. %s\n", i+1, n)
		}
	}
	return b.String()
}

// fmtNum prints three significant digits, without exponent.
func fmtNum(v float64) string {
	a := math.Abs(v)
	digits := 0
	switch {
	case a == 0 || a >= 100:
		digits = 0
	case a >= 10:
		digits = 1
	case a >= 1:
		digits = 2
	default:
		digits = 2 - int(math.Floor(math.Log10(a)))
	}
	return strconv.FormatFloat(v, 'f', digits, 64)
}
