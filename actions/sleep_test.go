package actions

import (
	"testing"
)

// sleep's duration, like every spec duration, is held to the rule of every
// duration in a playbook (scalar.Duration) when the playbook is validated:
// a refusal names the value's file:line:col.
func TestSleepDurationChecked(t *testing.T) {
	tests := []struct{ spec, want string }{
		{"{duration: 2s}", ""},
		{"{duration: 0.5}", ""},
		{"{duration: -2s}", "p.yaml:1:12: duration must be positive, found -2s"},
		{"{duration: -1}", "p.yaml:1:12: duration must be positive, found -1"},
		{"{duration: 0}", "p.yaml:1:12: duration must be positive, found 0"},
		{"{duration: 1e300}", "p.yaml:1:12: duration 1e300 is too long; the longest is 9223372036 seconds (about 292 years)"},
	}
	info, _ := Lookup("sleep")
	for _, tt := range tests {
		_, errs := info.CheckSpec(literalSpec(t, tt.spec), &StaticContext{})
		if got := errs.Error(); got != tt.want {
			t.Errorf("sleep %s: got %q, want %q", tt.spec, got, tt.want)
		}
	}
}

// The other actions' durations are held to the same rule: a zero timeout
// is refused rather than read as "no limit" or "the default".
func TestSpecDurationsChecked(t *testing.T) {
	tests := []struct{ action, spec, want string }{
		{"run", "{argv: [true], timeout: 0}", "p.yaml:1:25: duration must be positive, found 0"},
		{"http", "{url: http://h/, timeout: 0s}", "p.yaml:1:27: duration must be positive, found 0s"},
		{"logs", "{pod: p, since: -5m}", "p.yaml:1:17: duration must be positive, found -5m"},
	}
	for _, tt := range tests {
		info, _ := Lookup(tt.action)
		_, errs := info.CheckSpec(literalSpec(t, tt.spec), &StaticContext{})
		if got := errs.Error(); got != tt.want {
			t.Errorf("%s %s: got %q, want %q", tt.action, tt.spec, got, tt.want)
		}
	}
}
