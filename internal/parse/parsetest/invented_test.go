package parsetest

import (
	"strings"
	"testing"
)

// A "" or 0 the source never printed is named; one it printed, under a
// key of a like name, and null are not.
func TestInvented(t *testing.T) {
	raw := []byte(`{"status": {"external-identifiers": {"cni-attachment-id": "x:eth0"}, "networking": {"interface-index": 0, "mac": ""}}}`)
	type res struct {
		PodName        string  `json:"podName"`
		Namespace      *string `json:"namespace"`
		InterfaceIndex int     `json:"interfaceIndex"`
		Mac            string  `json:"mac"`
		Identity       int     `json:"identity"`
	}
	got, err := Invented(raw, res{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`.identity is 0, and the source prints no 0 under a key like "identity"`,
		`.podName is "", and the source prints no "" under a key like "podName"`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("Invented = %q, want %q", got, want)
	}
	if _, err := Invented([]byte("not json"), res{}); err == nil {
		t.Error("a source that is not JSON was accepted")
	}
}
