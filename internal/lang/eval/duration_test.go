package eval

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

// durationSpec is a spec with a duration field, as an action declares one.
type durationSpec struct {
	Timeout time.Duration `yaml:"timeout"`
}

// A literal duration in a spec is held, before anything runs, to the rule
// of every duration in a playbook (scalar.Duration), and a refusal names
// the value's file:line:col.
func TestCheckDuration(t *testing.T) {
	tests := []struct{ value, want string }{
		{"30s", ""},
		{"2", ""},
		{"0.25", ""},
		{"~", ""}, // null leaves the field unset
		{`"${{ vars.n }}s"`, ""},
		{"0", "p.yaml:1:10: duration must be positive, found 0"},
		{"0s", "p.yaml:1:10: duration must be positive, found 0s"},
		{"-2s", "p.yaml:1:10: duration must be positive, found -2s"},
		{"-1", "p.yaml:1:10: duration must be positive, found -1"},
		{"1e300", "p.yaml:1:10: duration 1e300 is too long; the longest is 9223372036 seconds (about 292 years)"},
		{"99999999999", "p.yaml:1:10: duration 99999999999 is too long; the longest is 9223372036 seconds (about 292 years)"},
		{"soon", `p.yaml:1:10: expected a duration (e.g. 30s), found the string "soon"`},
		{"true", "p.yaml:1:10: expected a duration (e.g. 30s), found the boolean true"},
	}
	for _, tt := range tests {
		v := buildValue(t, testCompiler(), "timeout: "+tt.value)
		got := Check(v, reflect.TypeOf(durationSpec{})).Error()
		if got != tt.want {
			t.Errorf("timeout: %s: got %q, want %q", tt.value, got, tt.want)
		}
	}
}

// A duration an expression gives during the run is held to the same rule
// when the spec is decoded, and a refusal names the expression's place.
func TestDecodeDuration(t *testing.T) {
	tests := []struct {
		value string
		want  time.Duration
		err   string
	}{
		{"${{ vars.n }}", 4 * time.Second, ""},
		{`"${{ vars.n }}ms"`, 4 * time.Millisecond, ""},
		{"${{ vars.n / 8 }}", 500 * time.Millisecond, ""},
		{`${{ duration("5s") }}`, 5 * time.Second, ""},
		{`${{ duration("-5s") }}`, 0, "p.yaml:1:10: duration must be positive, found -5s"},
		{"${{ vars.n - 4 }}", 0, "p.yaml:1:10: duration must be positive, found 0"},
		{"${{ -vars.n }}", 0, "p.yaml:1:10: duration must be positive, found -4"},
		{`"-${{ vars.n }}s"`, 0, "p.yaml:1:10: duration must be positive, found -4s"},
		{"${{ vars.n * 1e300 }}", 0, "p.yaml:1:10: duration 4e+300 is too long; the longest is 9223372036 seconds (about 292 years)"},
		{"${{ vars.n * 9999999999 }}", 0, "p.yaml:1:10: duration 39999999996 is too long; the longest is 9223372036 seconds (about 292 years)"},
		{`"${{ vars.ns }}"`, 0, `p.yaml:1:10: expected a duration such as 30s or 2m, got "cca-dp"`},
		{"${{ vars.n > 1 }}", 0, "p.yaml:1:10: expected a duration such as 30s or 2m, got true"},
	}
	for _, tt := range tests {
		c := testCompiler()
		var s durationSpec
		err := buildValue(t, c, "timeout: "+tt.value).Decode(testEnv(t, c), reflect.ValueOf(&s).Elem())
		switch {
		case tt.err == "" && (err != nil || s.Timeout != tt.want):
			t.Errorf("timeout: %s = %v, %v; want %v", tt.value, s.Timeout, err, tt.want)
		case tt.err != "" && (err == nil || strings.TrimSpace(err.Error()) != tt.err):
			t.Errorf("timeout: %s: error %v, want %q", tt.value, err, tt.err)
		}
	}
}
