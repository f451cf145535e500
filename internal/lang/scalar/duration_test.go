package scalar

import (
	"errors"
	"math"
	"testing"
	"time"
)

// The rule, for every form a duration comes in: text, a whole number of
// seconds (int or int64, as YAML and expressions give them) or a
// fractional one.
func TestDuration(t *testing.T) {
	tests := []struct {
		x       any
		written string
		want    time.Duration
		err     string // "" when x is a duration; ErrNotDuration's text when it is none
	}{
		{"250ms", "250ms", 250 * time.Millisecond, ""},
		{"1h30m", "1h30m", 90 * time.Minute, ""},
		{30, "30", 30 * time.Second, ""},
		{int64(2), "2", 2 * time.Second, ""},
		{0.5, "0.5", 500 * time.Millisecond, ""},
		{1e-9, "1e-9", time.Nanosecond, ""},
		{9223372036, "9223372036", 9223372036 * time.Second, ""},

		{"0s", "0s", 0, "duration must be positive, found 0s"},
		{"0", "0", 0, "duration must be positive, found 0"},
		{"-2s", "-2s", 0, "duration must be positive, found -2s"},
		{0, "0", 0, "duration must be positive, found 0"},
		{-1, "-1", 0, "duration must be positive, found -1"},
		{int64(-1), "-1", 0, "duration must be positive, found -1"},
		{0.0, "0.0", 0, "duration must be positive, found 0.0"},
		{-0.5, "-0.5", 0, "duration must be positive, found -0.5"},
		{1e-12, "1e-12", 0, "duration must be positive, found 1e-12"}, // under a nanosecond
		{math.Inf(-1), "-.inf", 0, "duration must be positive, found -.inf"},

		{1e300, "1e300", 0, "duration 1e300 is too long; the longest is 9223372036 seconds (about 292 years)"},
		{9223372037, "9223372037", 0, "duration 9223372037 is too long; the longest is 9223372036 seconds (about 292 years)"},
		{math.MaxInt64, "9223372036854775807", 0, "duration 9223372036854775807 is too long; the longest is 9223372036 seconds (about 292 years)"},
		{math.Inf(1), ".inf", 0, "duration .inf is too long; the longest is 9223372036 seconds (about 292 years)"},

		{"fast", "fast", 0, ErrNotDuration.Error()},
		{"30", "30", 0, ErrNotDuration.Error()},             // text needs a unit
		{"3000000h", "3000000h", 0, ErrNotDuration.Error()}, // beyond time.Duration as text
		{"", "", 0, ErrNotDuration.Error()},
		{math.NaN(), "NaN", 0, ErrNotDuration.Error()},
		{true, "true", 0, ErrNotDuration.Error()},
		{nil, "", 0, ErrNotDuration.Error()},
		{[]any{1}, "[1]", 0, ErrNotDuration.Error()},
	}
	for _, tt := range tests {
		got, err := Duration(tt.x, tt.written)
		switch {
		case tt.err == "" && (err != nil || got != tt.want):
			t.Errorf("Duration(%#v) = %v, %v; want %v", tt.x, got, err, tt.want)
		case tt.err != "" && (err == nil || err.Error() != tt.err):
			t.Errorf("Duration(%#v) error = %v; want %q", tt.x, err, tt.err)
		case tt.err == ErrNotDuration.Error() && !errors.Is(err, ErrNotDuration):
			t.Errorf("Duration(%#v) error %v is not ErrNotDuration", tt.x, err)
		}
	}
}
