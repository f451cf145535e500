package eval

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// Partial-object matching on a Deployment the test cluster returned while
// it scaled web from 2 to 4 (internal/leaf/k8sobj/testdata), decoded as the API client
// decodes it.
func TestMismatch(t *testing.T) {
	data, err := os.ReadFile("../../leaf/k8sobj/testdata/deployment_web_scaling_up.json")
	if err != nil {
		t.Fatal(err)
	}
	var deploy map[string]any
	if err := json.Unmarshal(data, &deploy); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		expected string // JSON
		want     string
	}{
		{"extra keys in actual are fine", `{"spec": {"replicas": 4}, "metadata": {"name": "web"}}`, ""},
		{"an int matches a JSON number", `{"status": {"readyReplicas": 2}}`, ""},
		{"a scalar differs", `{"status": {"readyReplicas": 4}}`, ".status.readyReplicas is 2, expected 4"},
		{"a missing key", `{"status": {"readyReplicasX": 4}}`, ".status.readyReplicasX is missing, expected 4"},
		{"null matches a missing key", `{"metadata": {"deletionTimestamp": null}}`, ""},
		{"null does not match a value", `{"metadata": {"name": null}}`, `.metadata.name is "web", expected null`},
		{"lists match item by item", `{"status": {"conditions": [{"type": "Progressing"}, {"type": "Available", "status": "False"}]}}`, ""},
		{"a list item differs", `{"status": {"conditions": [{"type": "Progressing"}, {"status": "True"}]}}`, `.status.conditions[1].status is "False", expected "True"`},
		{"a list of another length", `{"status": {"conditions": [{"type": "Progressing"}]}}`, ".status.conditions has 2 items, expected 1"},
		{"a mapping expected, a scalar found", `{"spec": {"replicas": {"x": 1}}}`, ".spec.replicas is 4, expected a mapping"},
		{"a list expected, a mapping found", `{"spec": []}`, `.spec is {"progressDeadlineSeconds":600,..., expected a list`},
		{"the whole value", `3`, `the value is {"apiVersion":"apps/v1",..., expected 3`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var expected any
			if err := json.Unmarshal([]byte(tc.expected), &expected); err != nil {
				t.Fatal(err)
			}
			got := Mismatch(deploy, expected)
			if !sameMessage(got, tc.want) {
				t.Errorf("Mismatch = %q, want %q", got, tc.want)
			}
		})
	}
}

// Typed results are compared by the names expressions use for them.
func TestMismatchTypedResult(t *testing.T) {
	type result struct {
		ExitCode int    `json:"exitCode"`
		Stdout   string `json:"stdout"`
	}
	r := &result{ExitCode: 0, Stdout: "ok\n"}
	if m := Mismatch(r, map[string]any{"exitCode": 0}); m != "" {
		t.Errorf("typed result: %q", m)
	}
	if m := Mismatch(r, map[string]any{"stdout": "no\n"}); m != `.stdout is "ok\n", expected "no\n"` {
		t.Errorf("typed result: %q", m)
	}
}

// sameMessage compares a message whose shown values may be cut: "..."
// in want stands for the part of a long value left out.
func sameMessage(got, want string) bool {
	prefix, suffix, cut := strings.Cut(want, "...")
	if !cut {
		return got == want
	}
	return strings.HasPrefix(got, prefix) && strings.HasSuffix(got, suffix) && len(got) > len(want)
}
