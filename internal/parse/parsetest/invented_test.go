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

// A stream of documents, one a line (hubble observe -o jsonpb), is read
// whole: a zero printed in any document counts, one printed in none is
// named.
func TestInventedStream(t *testing.T) {
	raw := []byte(`{"flow":{"is_reply":false,"l4":{"TCP":{"source_port":1}}}}` + "\n" + `{"flow":{"verdict":"DROPPED"}}` + "\n")
	type flow struct {
		IsReply *bool  `json:"isReply"`
		SrcPort int    `json:"srcPort"`
		DstPort int    `json:"dstPort"`
		Verdict string `json:"verdict"`
	}
	got, err := Invented(raw, []flow{{IsReply: new(bool), SrcPort: 1}, {Verdict: "DROPPED"}})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`[].dstPort is 0, and the source prints no 0 under a key like "dstPort"`,
		`[].srcPort is 0, and the source prints no 0 under a key like "srcPort"`,
		`[].verdict is "", and the source prints no "" under a key like "verdict"`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("Invented = %q, want %q", got, want)
	}
	if _, err := Invented([]byte(`{"a":1}`+"\n"+`{"b":`), flow{}); err == nil {
		t.Error("a stream cut inside its last document was accepted")
	}
}
