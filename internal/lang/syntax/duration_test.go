package syntax

import (
	"strings"
	"testing"
	"time"
)

// A step key's duration follows the rule of every duration in a playbook
// (scalar.Duration), and a refusal names the value's file:line:col.
func TestStepKeyDuration(t *testing.T) {
	tests := []struct {
		value string
		want  time.Duration
		err   string // the whole message, position included; "" when the value is kept
	}{
		{"30s", 30 * time.Second, ""},
		{"1.5", 1500 * time.Millisecond, ""},
		{"2", 2 * time.Second, ""},
		{"0", 0, "p.yaml:5:14: duration must be positive, found 0"},
		{"0s", 0, "p.yaml:5:14: duration must be positive, found 0s"},
		{"-1s", 0, "p.yaml:5:14: duration must be positive, found -1s"},
		{"-3", 0, "p.yaml:5:14: duration must be positive, found -3"},
		{"1e300", 0, "p.yaml:5:14: duration 1e300 is too long; the longest is 9223372036 seconds (about 292 years)"},
		{"fast", 0, `p.yaml:5:14: expected a duration such as 30s or 2m, found the string "fast"`},
		{"[1s]", 0, "p.yaml:5:14: expected a duration such as 30s or 2m, found a list"},
		{"true", 0, "p.yaml:5:14: expected a duration such as 30s or 2m, found the boolean true"},
	}
	for _, tt := range tests {
		src := "name: lab\nsteps:\n  - id: a\n    run: {argv: [true]}\n    timeout: " + tt.value + "\n"
		pb, err := Load("p.yaml", []byte(src), testActions)
		switch {
		case tt.err == "" && err != nil:
			t.Errorf("timeout: %s: %v", tt.value, err)
		case tt.err == "" && pb.Steps[0].Timeout.D != tt.want:
			t.Errorf("timeout: %s = %v, want %v", tt.value, pb.Steps[0].Timeout.D, tt.want)
		case tt.err != "" && (err == nil || strings.TrimSpace(err.Error()) != tt.err):
			t.Errorf("timeout: %s: error %v, want %q", tt.value, err, tt.err)
		}
	}
}
