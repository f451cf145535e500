// Package scalar holds the one rule for each kind of scalar a playbook
// writes in more than one place, so that a value means the same and is
// refused in the same words wherever it stands: a duration is read alike
// as a step's timeout, as a field of an action's spec checked before the
// run, and as the value an expression gives that field during the run.
package scalar

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// ErrNotDuration says a value is not written as a duration at all. The
// caller adds what it found, in its own words (the YAML node, or the value
// an expression gave).
var ErrNotDuration = errors.New("expected a duration such as 30s or 2m")

// longestSeconds is the longest duration in whole seconds: time.Duration
// counts nanoseconds in an int64, about 292 years.
const longestSeconds = int64(math.MaxInt64 / time.Second)

// Duration reads a duration as a playbook writes it: a text such as
// "250ms", "2m" or "1h30m", or a number of seconds (an int, int64 or
// float64, as YAML and expressions give numbers), or the value of expr's
// duration("5s"), which the static check accepts for a duration field.
// written is the value as the playbook shows it, for the message.
//
// Every duration a playbook writes is a time to wait or a limit, so it
// must be positive: zero or a negative value is refused, as is a number
// of seconds too large for time.Duration (which would otherwise wrap
// round to a negative or tiny value). No field takes zero as a value of
// its own: where zero would mean "no limit", "the default" or "from the
// start" (run's timeout, http's, logs' since), leaving the key out says
// it, and a sleep of zero is a step that does nothing.
func Duration(x any, written string) (time.Duration, error) {
	switch x := x.(type) {
	case string:
		return durationText(x, written)
	case int:
		return seconds(float64(x), written)
	case int64:
		return seconds(float64(x), written)
	case float64:
		return seconds(x, written)
	case time.Duration:
		if x <= 0 {
			return 0, notPositive(written)
		}
		return x, nil
	}
	return 0, ErrNotDuration
}

// durationText reads a duration written as text: "250ms", "2m", "1h30m".
// A text beyond time.Duration's range is no duration to
// time.ParseDuration, and so none here either.
func durationText(text, written string) (time.Duration, error) {
	d, err := time.ParseDuration(text)
	if err != nil {
		return 0, ErrNotDuration
	}
	if d <= 0 {
		return 0, notPositive(written)
	}
	return d, nil
}

// seconds reads a duration written as a number of seconds.
func seconds(f float64, written string) (time.Duration, error) {
	ns := f * float64(time.Second)
	switch {
	case math.IsNaN(ns):
		return 0, ErrNotDuration
	case ns >= math.MaxInt64:
		return 0, fmt.Errorf("duration %s is too long; the longest is %d seconds (about 292 years)", written, longestSeconds)
	case ns < 1:
		// below one nanosecond a positive number would become zero
		return 0, notPositive(written)
	}
	return time.Duration(ns), nil
}

func notPositive(written string) error {
	return fmt.Errorf("duration must be positive, found %s", written)
}
